// `-` as INPUT reads standard input and `-o -` writes standard output (`--format` names the
// container; MP4 to a pipe is fragmented), so cropzoom sits inside shell pipelines.

import CropZoomKit
import Foundation
import Testing

@Suite("Pipes")
struct PipeTests {
    static func counts(_ path: String) throws -> String {
        try Oracle.runChecked(
            "ffprobe",
            [
                "-v", "error", "-count_frames", "-show_entries", "stream=codec_type,nb_read_frames",
                "-of", "csv=p=0", path,
            ]
        ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("stdin → stdout through a shell pipe (MPEG-TS and Matroska): every frame, audio packets copied bit for bit")
    func roundTrip() throws {
        let scratch = try Scratch()
        let cz = try CLI.binary()
        for (sample, format, ext) in [("start-offset.ts", "mpegts", "ts"), ("hevc10.mkv", "matroska", "mkv")] {
            let input = try Files.sample(sample).path
            let out = scratch.file("out.\(ext)").path
            let run = try CLI.bash(
                "set -o pipefail; cat \(input) | \(cz) - -o - --format \(format) --zoom 1.5 --quiet | cat > \(out)")
            #expect(run.status == 0 && run.stderr.isEmpty, "\(sample): \(run)")
            let framesIn = try Oracle.decodedFrameHashes(input).count
            let framesOut = try Oracle.decodedFrameHashes(out).count
            #expect(framesIn == 60 && framesOut == framesIn, "\(sample): \(framesOut) of \(framesIn) frames")
            let audioIn = try Oracle.packets(input, streamIndex: 1).map(\.hash)
            let audioOut = try Oracle.packets(out, streamIndex: 1).map(\.hash)
            #expect(!audioIn.isEmpty && audioOut == audioIn, "\(sample): audio packets differ")
        }
    }

    @Test("-o - --format mp4 is fragmented MP4 (moof boxes), readable from the pipe by ffprobe")
    func fragmentedMP4() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let out = scratch.file("frag.mp4").path
        let run = try CLI.bash(
            "set -o pipefail; \(try CLI.binary()) \(input) -o - --format mp4 --zoom 1.4 --quiet | tee \(out) | "
                + "ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 -"
        )
        #expect(run.status == 0 && run.stdout.split(separator: "\n").first == "60", "\(run)")
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(data.range(of: Data("moof".utf8)) != nil && data.range(of: Data("mvex".utf8)) != nil, "not fragmented")
    }

    @Test(
        """
        an MP4 on stdin with its index at the end is spooled (unlinked, nothing left) and read whole; over \
        CROPZOOM_SPOOL_LIMIT, one line naming stdin, exit 3; with its index in front, or redirected, read directly
        """)
    func mp4FromStdin() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        try #require(try Data(contentsOf: URL(fileURLWithPath: input)).range(of: Data("moov".utf8))!.lowerBound > 1000)
        let front = scratch.file("front.mp4").path
        _ = try Oracle.runChecked(
            "ffmpeg", ["-v", "error", "-y", "-i", input, "-c", "copy", "-movflags", "+faststart", front])
        let spool = scratch.file("spool").path
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        let cz = "TMPDIR=\(spool) \(try CLI.binary())"
        let reference = scratch.file("ref.mkv").path
        _ = try CLI.cropzoom([input, "-o", reference, "--quiet"])
        let expected = try Oracle.packets(reference, streamIndex: 1).map(\.hash)
        for (name, command) in [
            ("end.mkv", "cat \(input) | \(cz) -"), ("front.mkv", "cat \(front) | \(cz) -"),
            ("redirected.mkv", "\(cz) - < \(input)"),
        ] {
            let out = scratch.file(name).path
            let run = try CLI.bash("\(command) -o \(out) --quiet")
            #expect(run.status == 0, "\(name): \(run)")
            #expect(try Self.counts(out).hasPrefix("video,60"), "\(name)")
            #expect(try Oracle.packets(out, streamIndex: 1).map(\.hash) == expected, "\(name): audio differs")
        }
        #expect(Files.names(in: URL(fileURLWithPath: spool)).isEmpty, "left in TMPDIR")
        let big = try CLI.bash("cat \(input) | CROPZOOM_SPOOL_LIMIT=100k \(cz) - -o \(scratch.file("b.mkv").path)")
        #expect(
            big.status == 3 && big.stderrLines.count == 1 && big.stderr.contains("stdin")
                && big.stderr.contains("larger than the limit (100 KiB, CROPZOOM_SPOOL_LIMIT)"), "\(big)")
        #expect(!Files.exists(scratch.file("b.mkv")) && Files.temporaryLeftovers(in: scratch.url).isEmpty)
        #expect(Files.names(in: URL(fileURLWithPath: spool)).isEmpty, "left in TMPDIR after the refusal")
    }

    @Test(
        """
        an MP4 with its index at the end from an HTTP server without byte ranges (python3 -m http.server) is spooled \
        like stdin and read whole; over CROPZOOM_SPOOL_LIMIT, one line naming the URL, exit 3
        """)
    func mp4OverHTTPWithoutRanges() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let served = scratch.file("www")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: input, toPath: served.appendingPathComponent("clip.mp4").path)
        let port = RealTime.LiveTests.freePort()
        let server = try ChildProcess.spawn(
            ["python3", "-m", "http.server", "\(port)", "--bind", "127.0.0.1", "--directory", served.path],
            stdout: .null, stderr: .null)
        defer { RealTime.LiveTests.stop(server) }
        let url = "http://127.0.0.1:\(port)/clip.mp4"
        let start = Date()
        while try CLI.bash("curl -sfI \(url) > /dev/null").status != 0 && Date().timeIntervalSince(start) < 10 {
            usleep(100_000)
        }
        // The server takes no byte ranges: FFmpeg sees a stream it cannot seek in.
        let head = try CLI.bash("curl -sI \(url)")
        #expect(!head.stdout.lowercased().contains("accept-ranges: bytes"), "\(head.stdout)")
        let spool = scratch.file("spool").path
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        let cz = "TMPDIR=\(spool) \(try CLI.binary())"
        let reference = scratch.file("ref.mkv").path
        _ = try CLI.cropzoom([input, "-o", reference, "--quiet"])
        let out = scratch.file("http.mkv").path
        let run = try CLI.bash("\(cz) \(url) -o \(out) --quiet")
        #expect(run.status == 0, "\(run)")
        #expect(try Self.counts(out).hasPrefix("video,60"), "\(run)")
        #expect(
            try Oracle.packets(out, streamIndex: 1).map(\.hash)
                == Oracle.packets(reference, streamIndex: 1).map(\.hash),
            "audio differs")
        #expect(Files.names(in: URL(fileURLWithPath: spool)).isEmpty, "left in TMPDIR")
        let big = try CLI.bash("CROPZOOM_SPOOL_LIMIT=100k \(cz) \(url) -o \(scratch.file("b.mkv").path)")
        #expect(
            big.status == 3 && big.stderrLines.count == 1 && big.stderr.contains(url)
                && big.stderr.contains("larger than the limit (100 KiB, CROPZOOM_SPOOL_LIMIT)"), "\(big)")
        #expect(!Files.exists(scratch.file("b.mkv")) && Files.temporaryLeftovers(in: scratch.url).isEmpty)
    }

    @Test("-o - needs --format (exit 2); an unknown --format is refused in one line")
    func usage() throws {
        let input = try Files.sample("std-h264-aac.mp4").path
        let cz = try CLI.binary()
        let noFormat = try CLI.bash("\(cz) \(input) -o - | cat > /dev/null")
        #expect(
            noFormat.status == 0 && noFormat.stderr.contains("needs --format") && noFormat.stderrLines.count == 1,
            "\(noFormat)")
        let direct = try CLI.cropzoom([input, "-o", "-", "--format", "nosuchformat"])
        #expect(direct.status == 2 && direct.stderrLines.count == 1, "\(direct)")
    }
}
