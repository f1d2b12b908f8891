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
        """
        --encoder-option x265-params merges with cropzoom's own, the user's keys winning: the level stays 4.1, x265 \
        stays quiet, an HDR10 input keeps its mastering display and light levels, and the user's bframes reaches x265
        """)
    func x265ParamsMerged() throws {
        let scratch = try Scratch()
        let (run, out) = try Self.encode(
            ["--codec", "hevc", "--level", "4.1", "--encoder-option", "x265-params=bframes=2"], in: scratch)
        #expect(run.status == 0 && !run.stderr.contains("x265 [info]"), "\(run)")
        #expect(try Self.profileLevel(out) == "Main,123")
        let params =
            "log-level=none:hdr10=1:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)"
            + "L(10000000,50):max-cll=1000,400:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc"
        let hdr = try Clip.video(seconds: 1, size: "320x240", rate: 25)
            .codec("libx265", pixelFormat: "yuv420p10le", options: ["-x265-params", params])
            .colors(primaries: "bt2020", transfer: "smpte2084", space: "bt2020nc").write(in: scratch, name: "hdr10.mkv")
        let hdrOut = scratch.file("hdr-out.mkv").path
        let merged = try CLI.cropzoom([hdr, "-o", hdrOut, "--encoder-option", "x265-params=bframes=0"])
        #expect(merged.status == 0 && !merged.stderr.contains("x265 [info]"), "\(merged)")
        let frame = try Oracle.runChecked(
            "ffprobe", ["-v", "error", "-select_streams", "v", "-read_intervals", "%+#1", "-show_frames", hdrOut]
        ).stdout
        #expect(frame.contains("max_luminance=10000000/10000") && frame.contains("max_content=1000"), "\(frame)")
        let bframes = try Oracle.runChecked(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v", "-show_entries", "stream=has_b_frames", "-of",
                "default=nw=1:nk=1", hdrOut,
            ]
        ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // (x265's default is 4 B-frames: a reorder delay of 2.)
        #expect(bframes == "0", "has_b_frames \(bframes)")
    }

    @Test(
        "--profile reaches libvpx-vp9 (0–3, with the sampling its profile needs) and SVT-AV1 (main, high, professional)",
        arguments: [
            ("vp9", "1", "webm", "Profile 1,yuv444p"), ("vp9", "2", "webm", "Profile 2,yuv420p10le"),
            ("av1", "main", "mkv", "Main,yuv420p"),
        ])
    func numberedProfiles(codec: String, profile: String, container: String, expected: String) throws {
        let scratch = try Scratch()
        let (run, out) = try Self.encode(
            ["--codec", codec, "--profile", profile, "--duration", "0.3"], in: scratch, to: "out.\(container)")
        #expect(run.status == 0, "\(run)")
        let got = try Oracle.runChecked(
            "ffprobe",
            ["-v", "error", "-select_streams", "v", "-show_entries", "stream=profile,pix_fmt", "-of", "csv=p=0", out]
        ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(got == expected)
    }

    @Test(
        """
        refused before any encoder speaks, in one line (exit 2, nothing written): x264's tunes and profiles (x264 \
        printed its own [error] line first), a profile that cannot hold the picture, channel layouts the audio \
        encoder does not take ("Invalid argument", exit 1, before)
        """,
        arguments: [
            (["--tune", "nonsense"], "out.mp4", "--tune nonsense: libx264 takes film, animation"),
            (["--profile", "nonsense"], "out.mp4", "--profile nonsense: libx264 takes baseline, main, high"),
            (
                ["--profile", "main", "--pix-fmt", "yuv420p10le"], "out.mp4",
                "--profile main holds 4:2:0 at 8 bits, not yuv420p10le (4:2:0, 10 bits): use --profile high10"
            ),
            (
                ["--audio-channels", "9"], "out.mp4",
                "--audio-channels 9: the aac encoder does not take 9 channels; it takes mono, stereo"
            ),
            (["--audio-channels", "9"], "out.mkv", "the aac encoder does not take 9 channels"),
            (
                ["--audio-channels", "2.1"], "out.webm",
                "--audio-channels 2.1: the libopus encoder does not take 2.1; it takes mono, stereo, 3.0"
            ),
        ])
    func oneLineRefusals(extra: [String], name: String, message: String) throws {
        let scratch = try Scratch()
        let (run, out) = try Self.encode(
            extra + (name.hasSuffix("mkv") ? ["--audio", "aac"] : []), in: scratch, to: name)
        #expect(run.status == 2 && run.stderrLines.count == 1 && run.stderr.contains(message), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("x264 takes a tune with fastdecode added; a 10-bit picture with --profile high10")
    func x264TuneAndProfileAccepted() throws {
        let scratch = try Scratch()
        let (run, _) = try Self.encode(["--tune", "film,fastdecode", "--duration", "0.2"], in: scratch)
        #expect(run.status == 0, "\(run)")
        let deep = try CLI.cropzoom([
            try Files.sample("hevc10.mkv").path, "-o", scratch.file("deep.mp4").path, "--profile", "high10",
            "--duration", "0.2",
        ])
        #expect(deep.status == 0, "\(deep)")
        #expect(try Self.profileLevel(scratch.file("deep.mp4").path).hasPrefix("High 10"))
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
            (["--codec", "vp9", "--profile", "7"], "--profile 7: libvpx-vp9 takes 0, 1, 2, 3"),
            (
                ["--codec", "av1", "--profile", "baseline"],
                "--profile baseline: libsvtav1 takes main, high, professional"
            ),
        ])
    func refusals(extra: [String], message: String) throws {
        let scratch = try Scratch()
        let (run, out) = try Self.encode(extra, in: scratch, to: extra.contains("vp9") ? "out.webm" : "out.mkv")
        #expect(run.status == 2 && run.stderr.contains(message), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(Files.names(in: scratch.url).filter { $0.contains("cropzoom") }.isEmpty)
    }
}
