import CropZoomKit
import Foundation
import Testing

/// `--codec` takes ffmpeg's codec names (issue 16): the best installed encoder for the codec, as `-c:v h264` picks
/// one; ffmpeg's own option spellings get cropzoom's in the error.
@Suite("Codec names")
struct CodecNameTests {
    @Test(
        "a codec named as ffmpeg names it gets the best installed encoder",
        arguments: [
            ("h264", "mp4", "h264"), ("h265", "mp4", "hevc"), ("hevc", "mkv", "hevc"), ("x265", "mov", "hevc"),
            ("vp9", "webm", "vp9"),
            ("av1", "mkv", "av1"), ("prores", "mov", "prores"), ("libx264", "mkv", "h264"),
        ])
    func codecByName(name: String, container: String, codec: String) throws {
        let scratch = try Scratch()
        let out = scratch.file("out.\(container)").path
        let run = try CLI.cropzoom([
            try Files.sample("std-h264-aac.mp4").path, "-o", out, "--codec", name, "--duration", "0.5", "--zoom", "1.5",
        ])
        #expect(run.status == 0, "\(run)")
        let video = try #require(try Oracle.streams(out).first { $0.codecType == "video" })
        #expect(video.codecName == codec, "\(video)")
        // HEVC in MP4/MOV is tagged hvc1, which Apple's players require.
        if codec == "hevc" && container != "mkv" {
            let tag = try Oracle.runChecked(
                "ffprobe",
                [
                    "-v", "error", "-select_streams", "v", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0",
                    out,
                ])
            #expect(tag.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "hvc1", "\(tag.stdout)")
        }
    }

    @Test(
        """
        --tag sets the video's four-character code (hev1 instead of the default hvc1); one the container refuses \
        is named
        """)
    func tag() throws {
        let scratch = try Scratch()
        let sample = try Files.sample("std-h264-aac.mp4").path
        let out = scratch.file("hev1.mp4").path
        let run = try CLI.cropzoom([sample, "-o", out, "--codec", "hevc", "--tag", "hev1", "--duration", "0.3"])
        #expect(run.status == 0, "\(run)")
        let tag = try Oracle.runChecked(
            "ffprobe",
            ["-v", "error", "-select_streams", "v", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", out])
        #expect(tag.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "hev1", "\(tag.stdout)")
        let bad = try CLI.cropzoom([sample, "-o", scratch.file("bad.mp4").path, "--tag", "abc"])
        #expect(bad.status == 2 && bad.stderr.contains("--tag takes four ASCII characters"), "\(bad)")
        let refused = try CLI.cropzoom([sample, "-o", scratch.file("refused.mp4").path, "--tag", "xyz1"])
        #expect(
            refused.status == 2 && refused.stderr.contains("--tag xyz1: the mp4 container does not take it"),
            "\(refused)")
        #expect(Files.names(in: scratch.url) == ["hev1.mp4"])
    }

    @Test("an unknown name, and a codec this FFmpeg cannot encode, are refused by name")
    func refusals() throws {
        let sample = try Files.sample("std-h264-aac.mp4").path
        let unknown = try CLI.cropzoom([sample, "-o", "/tmp/never.mp4", "--codec", "nosuch"])
        #expect(unknown.status == 2 && unknown.stderr.contains("--codec nosuch: no such video encoder or codec"))
        let decodeOnly = try CLI.cropzoom([sample, "-o", "/tmp/never.mkv", "--codec", "vc1"])
        #expect(decodeOnly.status == 2 && decodeOnly.stderr.contains("--codec vc1: this FFmpeg has no vc1 encoder"))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/never.mp4"))
    }

    @Test(
        "ffmpeg's option spellings are answered with cropzoom's",
        arguments: [
            (["-c:v", "libx264"], "-c:v is ffmpeg's spelling; cropzoom's is --codec"),
            (["-vcodec", "libx264"], "-vcodec is ffmpeg's spelling; cropzoom's is --codec"),
            (["-crf", "20"], "-crf is ffmpeg's spelling; cropzoom's is --crf"),
            (["-ss", "1"], "-ss is ffmpeg's spelling; cropzoom's is --start"),
        ])
    func ffmpegSpellings(extra: [String], hint: String) throws {
        let run = try CLI.cropzoom([try Files.sample("std-h264-aac.mp4").path, "-o", "/tmp/never.mp4"] + extra)
        #expect(run.status == 2 && run.stderr.contains(hint), "\(run)")
    }
}
