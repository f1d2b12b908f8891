import CropZoomKit
import Foundation
import Testing

/// `--profile`, `--level`, `--tune`, `--gop`/`--keyint` and `--encoder-option` (issue 16): what ffprobe reads back,
/// and refusals that name the setting.
@Suite("Encoder tuning")
struct EncoderTuningTests {
    static func encode(_ extra: [String], in scratch: Scratch, to name: String = "out.mp4") throws -> (
        CLIResult, String
    ) {
        let out = scratch.file(name).path
        let run = try CLI.cropzoom([try Files.sample("std-h264-aac.mp4").path, "-o", out, "--zoom", "1.2"] + extra)
        return (run, out)
    }

    /// ffprobe's `profile,level` of the video stream.
    static func profileLevel(_ path: String) throws -> String {
        try Oracle.runChecked(
            "ffprobe",
            ["-v", "error", "-select_streams", "v", "-show_entries", "stream=profile,level", "-of", "csv=p=0", path]
        ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The indices of the video's keyframes (from the packets' flags).
    static func keyframes(_ path: String) throws -> [Int] {
        try Oracle.packets(path, streamIndex: 0).enumerated().filter { $0.element.flags.hasPrefix("K") }.map(\.offset)
    }

    @Test("x264: profile, level, tune and a keyframe every --gop frames")
    func x264Tuning() throws {
        let scratch = try Scratch()
        let (run, out) = try Self.encode(
            [
                "--profile", "baseline", "--level", "3.1", "--tune", "film", "--gop", "12",
            ], in: scratch)
        #expect(run.status == 0, "\(run)")
        #expect(try Self.profileLevel(out) == "Constrained Baseline,31")
        #expect(try Self.keyframes(out) == [0, 12, 24, 36, 48])
        let (alias, aliasOut) = try Self.encode(["--keyint", "20"], in: scratch, to: "alias.mp4")
        #expect(alias.status == 0, "\(alias)")
        #expect(try Self.keyframes(aliasOut) == [0, 20, 40])
    }

    @Test("x265: its level goes in its parameters; HEVC profile kept")
    func x265Level() throws {
        let scratch = try Scratch()
        let (run, out) = try Self.encode(["--codec", "hevc", "--level", "4.1", "--profile", "main"], in: scratch)
        #expect(run.status == 0, "\(run)")
        #expect(try Self.profileLevel(out) == "Main,123")
    }

    @Test("--encoder-option reaches the encoder (x264-params keyint=7)")
    func encoderOption() throws {
        let scratch = try Scratch()
        let (run, out) = try Self.encode(["--encoder-option", "x264-params=keyint=7:bframes=0"], in: scratch)
        #expect(run.status == 0, "\(run)")
        #expect(try Self.keyframes(out) == [0, 7, 14, 21, 28, 35, 42, 49, 56])
    }

    @Test(
        "--preset on encoders without named presets: x264's names become their speed setting, a number is their own",
        arguments: [("vp9", "webm", "ultrafast", "veryslow"), ("av1", "mkv", "ultrafast", "5")])
    func presetsMapped(codec: String, container: String, fast: String, slow: String) throws {
        let scratch = try Scratch()
        var hashes: [[String]] = []
        for preset in [fast, slow] {
            let (run, out) = try Self.encode(
                ["--codec", codec, "--preset", preset, "--duration", "0.3"], in: scratch, to: "\(preset).\(container)")
            #expect(run.status == 0, "\(run)")
            hashes.append(try Oracle.packets(out, streamIndex: 0).map(\.hash))
        }
        // The speed setting reached the encoder: the two encodes differ.
        #expect(hashes[0].count == 9 && hashes[0] != hashes[1])
    }

    @Test("ProRes by codec name is prores_ks, and takes its profiles")
    func proresProfile() throws {
        let scratch = try Scratch()
        let (run, out) = try Self.encode(
            ["--codec", "prores", "--profile", "hq", "--duration", "0.3"], in: scratch, to: "out.mov")
        #expect(run.status == 0 && run.stderr.contains("prores_ks"), "\(run)")
        #expect(try Self.profileLevel(out).hasPrefix("HQ"))
    }

    @Test(
        "refused with the setting named, nothing written",
        arguments: [
            (["--encoder-option", "nosuch=1"], "--encoder-option nosuch: not an option of the libx264 encoder"),
            (["--codec", "av1", "--level", "4.0"], "--level: the libsvtav1 encoder has no such setting"),
            (["--codec", "vp9", "--tune", "film"], "the libvpx-vp9 encoder refused --tune film"),
            (["--gop", "0"], "--gop takes a number of frames from 1 to 100000"),
            (["--encoder-option", "crf"], "--encoder-option takes KEY=VALUE"),
            (["--codec", "vp9", "--preset", "turbo"], "--preset turbo: for libvpx-vp9, one of ultrafast"),
        ])
    func refusals(extra: [String], message: String) throws {
        let scratch = try Scratch()
        let (run, out) = try Self.encode(extra, in: scratch, to: extra.contains("vp9") ? "out.webm" : "out.mkv")
        #expect(run.status == 2 && run.stderr.contains(message), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(Files.names(in: scratch.url).filter { $0.contains("cropzoom") }.isEmpty)
    }
}
