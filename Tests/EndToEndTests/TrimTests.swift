// --start / --end / --duration: the frames kept are exactly those in [start, end), the first
// output frame's time is (its input time − start), copied audio keeps the packets that start in
// [start, end) bit for bit, shifted by the same amount (A/V offset kept), on both engines.

import Foundation
import Testing

@Suite("Trim")
struct TrimTests {
    /// Video frame presentation times (seconds) of the first video stream, in output order.
    static func frameTimes(_ path: String) throws -> [Double] {
        let out = try Oracle.runChecked(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time",
                "-of", "csv=p=0", path,
            ]
        ).stdout
        return out.split(separator: "\n").compactMap { Double($0.split(separator: ",").first ?? "") }
    }

    @Test("frame-exact video, packet-exact audio, timestamps shifted by --start", arguments: ["1", "2"])
    func exactCut(threads: String) throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path  // 60 frames at 30 fps, B-frames, key frames at 0 and 1 s
        let out = scratch.file("cut.mkv").path
        let run = try CLI.cropzoom([
            input, "-o", out, "--codec", "ffv1", "--start", "0.5", "--end", "1.5", "--threads", threads, "--quiet",
        ])
        try #require(run.status == 0, "\(run)")
        // Video: frames 15…44 of the input, exactly (zoom 1 to ffv1 is lossless).
        let all = try Oracle.decodedFrameHashes(input)
        #expect(try Oracle.decodedFrameHashes(out) == Array(all[15...44]))
        let times = try Self.frameTimes(out)
        #expect(times.count == 30 && abs(times[0] - 0.0) < 0.0011, "first frame at \(times.first ?? -1)")
        // Audio: the packets that start in [0.5, 1.5), same bytes, 0.5 s earlier.
        let inAudio = try Oracle.packets(input, streamIndex: 1).filter {
            ($0.ptsTime ?? -1) >= 0.5 - 1e-9 && ($0.ptsTime ?? 9) < 1.5 - 1e-9
        }
        let outAudio = try Oracle.packets(out, streamIndex: 1)
        #expect(outAudio.map(\.hash) == inAudio.map(\.hash), "\(outAudio.count) packets out, \(inAudio.count) expected")
        for (o, i) in zip(outAudio, inAudio) {
            #expect(
                abs((o.ptsTime ?? 0) - ((i.ptsTime ?? 0) - 0.5)) < 0.0011,
                "audio \(i.ptsTime ?? -1) → \(o.ptsTime ?? -1)")
        }
        // The A/V offset: first audio − first video, in and out.
        let inVideo = try Self.frameTimes(input)
        let inFirstKept = try #require(inVideo.first { $0 >= 0.5 - 1e-9 })
        #expect(
            abs(((outAudio.first?.ptsTime ?? 0) - times[0]) - ((inAudio.first?.ptsTime ?? 0) - inFirstKept)) < 0.0011)
    }

    @Test("--duration and hh:mm:ss times; a file that starts late (MPEG-TS at 11.38 s): --start counts from its start")
    func durationAndStartOffset() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let a = scratch.file("a.mp4").path
        let b = scratch.file("b.mp4").path
        #expect(try CLI.cropzoom([input, "-o", a, "--start", "0.5", "--end", "1.5", "--quiet"]).status == 0)
        #expect(
            try CLI.cropzoom([input, "-o", b, "--start", "00:00:00.500", "--duration", "0:01", "--quiet"]).status == 0)
        #expect(try Self.frameTimes(a) == Self.frameTimes(b) && Self.frameTimes(a).count == 30)

        let ts = try Files.sample("start-offset.ts").path
        let fileStart = try #require(
            Double(
                try Oracle.runChecked(
                    "ffprobe",
                    [
                        "-v", "error", "-show_entries", "format=start_time",
                        "-of", "csv=p=0", ts,
                    ]
                ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        let inTimes = try Self.frameTimes(ts)
        let out = scratch.file("ts.mp4").path
        let run = try CLI.cropzoom([ts, "-o", out, "--start", "0.5", "--duration", "0.5", "--quiet"])
        try #require(run.status == 0, "\(run)")
        let s = fileStart + 0.5
        let e = s + 0.5
        let kept = inTimes.filter { $0 >= s - 1e-6 && $0 < e - 1e-6 }
        let outTimes = try Self.frameTimes(out)
        #expect(outTimes.count == kept.count && kept.count >= 14, "\(outTimes.count) vs \(kept.count)")
        #expect(
            abs((outTimes.first ?? -1) - (kept[0] - s)) < 0.0015,
            "first frame \(outTimes.first ?? -1), expected \(kept[0] - s)")
    }

    @Test(
        """
        a start seconds into the file (the demuxer seeks to a key frame before it) is still frame-exact, and --end at \
        a key frame too
        """
    )
    func seekStaysExact() throws {
        let scratch = try Scratch()
        let input = try Files.sample("bench-720p.mp4").path  // 150 frames, key frames every 60
        let all = try Oracle.decodedFrameHashes(input)
        for (start, end, first, last) in [("3.3", "4.1", 99, 122), ("2", "4", 60, 119), ("3.95", "4.2", 119, 125)] {
            let out = scratch.file("s\(start).mkv").path
            let run = try CLI.cropzoom([input, "-o", out, "--codec", "ffv1", "--start", start, "--end", end, "--quiet"])
            try #require(run.status == 0, "\(run)")
            #expect(try Oracle.decodedFrameHashes(out) == Array(all[first...last]), "--start \(start) --end \(end)")
        }
    }

    @Test("bad trims: one line, exit 2, nothing written")
    func refused() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        for args in [
            ["--start", "5"], ["--start", "1", "--end", "0.5"], ["--end", "1", "--duration", "1"],
            ["--start", "1:2:3:4"], ["--start", "abc"], ["--duration", "0"], ["--start", "0:75"],
        ] {
            let out = scratch.file("x.mp4")
            let run = try CLI.cropzoom([input, "-o", out.path] + args)
            #expect(run.status == 2 && run.stderrLines.count == 1, "\(args): \(run)")
            #expect(!Files.exists(out) && Files.temporaryLeftovers(in: scratch.url).isEmpty, "\(args)")
        }
    }

    @Test("subtitles shown across --start or --end are kept, cut to the range", arguments: ["1", "2"])
    func subtitlesCut(threads: String) throws {
        let scratch = try Scratch()
        let srt = scratch.file("s.srt")
        try Data("1\n00:00:00,500 --> 00:00:02,500\nhello\n\n2\n00:00:03,000 --> 00:00:04,000\nlater\n".utf8).write(
            to: srt)
        let input = scratch.file("sub.mkv").path
        try Clip.video(.testsrc, seconds: 5, size: "160x120", rate: 25).input(srt.path).subtitleCodec("srt")
            .write(to: input)
        let output = scratch.file("out.mkv").path
        let run = try CLI.cropzoom([input, "-o", output, "--start", "1", "--end", "3.5", "--threads", threads])
        try #require(run.status == 0, "\(run)")
        let subtitles = try Oracle.packets(output, streamIndex: 1)
        let shown = subtitles.map { [($0.ptsTime ?? -1), ($0.durationTime ?? -1)] }
        // 0.5–2.5 s becomes 0–1.5 s of the output; 3.0–4.0 s becomes 2.0–2.5 s.
        #expect(shown == [[0, 1.5], [2, 0.5]], "subtitle (start, duration) in the output: \(shown)")
    }

    @Test("chapters are cut to the range and moved with the streams")
    func chaptersCut() throws {
        let scratch = try Scratch()
        let metadata = scratch.file("chapters.txt")
        var text = ";FFMETADATA1\n"
        for (start, end, title) in [(0, 1000, "one"), (1000, 3000, "two"), (3000, 5000, "three")] {
            text += "[CHAPTER]\nTIMEBASE=1/1000\nSTART=\(start)\nEND=\(end)\ntitle=\(title)\n"
        }
        try Data(text.utf8).write(to: metadata)
        let input = scratch.file("chapters.mkv").path
        try Clip.video(.testsrc, seconds: 5, size: "160x120", rate: 25).input(metadata.path)
            .extra(["-map_metadata", "1", "-map_chapters", "1"]).write(to: input)
        let output = scratch.file("out.mkv").path
        let run = try CLI.cropzoom([input, "-o", output, "--start", "1.5", "--end", "3.5"])
        try #require(run.status == 0, "\(run)")
        let lines = try Oracle.runChecked(
            "ffprobe",
            [
                "-v", "error", "-show_entries",
                "chapter=start_time,end_time:chapter_tags=title", "-of", "csv=p=0",
                output,
            ]
        ).stdout
            .split(separator: "\n").map(String.init)
        // "two" (1–3 s) becomes 0–1.5 s, "three" (3–5 s) 1.5–2 s; "one" (0–1 s) is outside.
        #expect(lines == ["0.000000,1.500000,two", "1.500000,2.000000,three"], "\(lines)")
    }
}
