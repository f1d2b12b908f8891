// Timestamps the way a player sees them (issue 13, items 13–15): an MPEG clock's origin is not
// presentation; times a container cannot hold apart are counted; trims that find no video say why.

import Foundation
import Testing

@Suite("Timestamps")
struct TimestampTests {
    static func starts(_ path: String) throws -> (format: Double, video: Double, audio: Double?) {
        let streams = try Oracle.streams(path)
        let video = try #require(streams.first { $0.codecType == "video" }?.startTime)
        return (
            try Oracle.format(path).formatStartTime ?? 0, video, streams.first { $0.codecType == "audio" }?.startTime
        )
    }

    @Test(
        "an MPEG-TS starting at 11.4 s becomes an output starting at 0, the A/V offset kept",
        arguments: ["mp4", "mkv", "ts"])
    func transportStreamOrigin(_ ext: String) throws {
        let scratch = try Scratch()
        let input = try Files.sample("start-offset.ts").path
        let output = scratch.file("out.\(ext)").path
        let run = try CLI.cropzoom([input, "-o", output])
        try #require(run.status == 0, "\(run)")
        let inStart = try Self.starts(input)
        let outStart = try Self.starts(output)
        let inAudio = try #require(inStart.audio)
        let outAudio = try #require(outStart.audio)
        #expect(inStart.format > 11, "the sample should start at a clock reading: \(inStart)")
        // The earliest stream (audio, 11.379 s) starts at 0; the video keeps its 21.3 ms lead-in.
        // (The MPEG-TS muxer moves all streams on by the video's decode delay, 45 ms here.)
        let lead = ext == "ts" ? 0.2 : 0.002
        #expect(
            min(outStart.video, outAudio) > -0.002 && min(outStart.video, outAudio) < lead,
            "output starts at \(outStart), not 0")
        #expect(
            abs((outStart.video - outAudio) - (inStart.video - inAudio)) < 0.001,
            "A/V offset: input \(inStart.video - inAudio), output \(outStart.video - outAudio)")
        let duration = try #require(try Oracle.format(output).duration)
        #expect(duration < 3, "an empty edit or gap of the clock's origin remains: duration \(duration) s")
    }

    @Test("--keep-start-time keeps the MPEG clock's absolute times")
    func keepStartTime() throws {
        let scratch = try Scratch()
        let input = try Files.sample("start-offset.ts").path
        let output = scratch.file("out.mkv").path
        let run = try CLI.cropzoom([input, "-o", output, "--keep-start-time"])
        try #require(run.status == 0, "\(run)")
        let inStart = try Self.starts(input)
        let outStart = try Self.starts(output)
        #expect(abs(outStart.video - inStart.video) < 0.002, "video start \(outStart.video), input \(inStart.video)")
    }

    @Test("an MP4's deliberate start (an empty edit of 10 s) is kept")
    func mp4StartKept() throws {
        let scratch = try Scratch()
        let input = scratch.file("offset.mp4").path
        try Clip.video(.testsrc, seconds: 2, size: "160x120", rate: 30).extra(["-output_ts_offset", "10"])
            .write(to: input)
        let output = scratch.file("out.mp4").path
        let run = try CLI.cropzoom([input, "-o", output])
        try #require(run.status == 0, "\(run)")
        #expect(abs(try Self.starts(output).video - 10) < 0.002)
    }

    @Test("2000 fps into Matroska (1 ms steps): the frames that share a timestamp are counted in a note")
    func coarseContainerTimes() throws {
        let scratch = try Scratch()
        let input = scratch.file("fast.mp4").path
        try Clip.video(.testsrc, seconds: 0.1, size: "160x120", rate: 2000).write(to: input)
        let mkv = scratch.file("out.mkv").path
        let run = try CLI.cropzoom([input, "-o", mkv])
        try #require(run.status == 0, "\(run)")
        let packets = try Oracle.packets(mkv, streamIndex: 0).compactMap(\.pts)
        let merged = packets.count - Set(packets).count
        #expect(merged > 0, "the sample should not fit 1 ms steps")
        let note = run.stderrLines.first { $0.contains("share a timestamp") }
        #expect(note?.contains("\(merged) packets") == true && note?.contains("1 ms") == true, "\(run.stderr)")

        let mp4 = try CLI.cropzoom([input, "-o", scratch.file("out.mp4").path])
        #expect(mp4.status == 0 && !mp4.stderr.contains("share a timestamp"), "\(mp4)")
    }

    /// The decoded sound of `path` as 16-bit stereo at 48 kHz: its MD5 and its length in samples.
    static func sound(_ path: String) throws -> (md5: String, samples: Int) {
        let md5 = try Oracle.runChecked(
            "ffmpeg", ["-v", "error", "-i", path, "-map", "0:a", "-ac", "2", "-ar", "48000", "-f", "md5", "-"]
        ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let raw = path + ".s16"
        try Oracle.runChecked(
            "ffmpeg", ["-v", "error", "-y", "-i", path, "-map", "0:a", "-ac", "2", "-ar", "48000", "-f", "s16le", raw])
        let bytes = try FileManager.default.attributesOfItem(atPath: raw)[.size] as? Int ?? 0
        try FileManager.default.removeItem(atPath: raw)
        return (md5, bytes / 4)
    }

    @Test(
        """
        sound in packets of 0.5 ms (a sound device's) into containers with 1 ms and 90 kHz clocks: every packet kept, \
        none counted as damaged; copied sound decodes to the input's samples exactly
        """, arguments: ["mkv", "mov", "webm", "flv", "ts", "mp4"])
    func soundFinerThanTheContainer(_ ext: String) throws {
        let scratch = try Scratch()
        let input = scratch.file("tiny.nut").path
        // NUT keeps the 24-sample packets (0.5 ms at 48 kHz) and their times as they are.
        try Clip.video(.testsrc, seconds: 2, size: "160x120", rate: 30)
            .audio(.sine(frequency: 440, sampleRate: 48000, seconds: 2, samplesPerFrame: 24)).audioCodec("pcm_s16le")
            .write(to: input)
        let output = scratch.file("out.\(ext)").path
        let run = try CLI.cropzoom([input, "-o", output])
        try #require(run.status == 0, "\(run)")
        #expect(!run.stderr.contains("damaged"), "\(run.stderr)")
        let source = try Self.sound(input)
        let written = try Self.sound(output)
        if ["mkv", "mov"].contains(ext) {
            // Copied (PCM): every packet, byte for byte.
            #expect(run.stderr.contains("1 audio copied"), "\(run.stderr)")
            if ext == "mkv" { #expect(try Oracle.packets(output, streamIndex: 1).count == 4000) }
            #expect(written.md5 == source.md5, "the sound differs from the input's")
        } else {
            // Re-encoded: as long as the input's, to within one encoder frame and its priming.
            #expect(abs(written.samples - source.samples) <= 2 * 1024, "\(written.samples) of \(source.samples)")
        }
    }

    /// The 2 s sample as MPEG-TS, whose clock starts at 1.4 s.
    static func transportStream(in scratch: Scratch, name: String = "part.ts", offset: Double = 0) throws -> String {
        let path = scratch.file(name).path
        _ = try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-i", try Files.sample("std-h264-aac.mp4").path, "-c", "copy", "-output_ts_offset",
                String(offset), "-f", "mpegts", path,
            ])
        return path
    }

    /// Checks a recording of the 2 s sample sent twice: every frame (120) and audio packet (both ADTS halves, byte
    /// for byte), times only going forward, the second half's A/V offset as the first's, the clock's restart
    /// counted once; the gap between the halves, in seconds.
    static func checkTwice(_ output: String, sent part: String, run: String) throws -> Double {
        let done = try #require(RealTime.LiveTests.done(run), "\(run)")
        #expect(done.framesOut == 120 && done.duplicateTimestampsDropped == 0 && done.corruptSkipped == 0, "\(run)")
        #expect(done.clockRestarts == 1, "\(run)")
        #expect(run.contains("the input's clock restarted 1 time"), "\(run)")
        let half = try RealTime.LiveTests.adts(part)
        #expect(try RealTime.LiveTests.adts(output) == half + half, "the audio is not both halves, byte for byte")
        let video = try Oracle.videoFramePTS(output)
        #expect(video.count == 120 && zip(video, video.dropFirst()).allSatisfy { $0 < $1 }, "\(video)")
        let audio = try Oracle.packets(output, streamIndex: 1).compactMap(\.ptsTime).sorted()
        #expect(audio.count == 190, "\(audio.count) audio packets")
        guard video.count == 120, audio.count == 190 else { return 0 }
        let offsets = (video[0] - audio[0], video[60] - audio[95])
        #expect(abs(offsets.0 - offsets.1) < 0.002, "A/V offset \(offsets.0) s, then \(offsets.1) s")
        return video[60] - video[59]
    }

    @Test(
        """
        an MPEG-TS whose clock restarts (two recordings joined) or jumps 1000 s ahead: both parts kept, re-based \
        to follow on (FFmpeg's CLI dropped the second part's 60 frames and 95 audio packets as repeats)
        """, arguments: [0.0, 1000.0])
    func transportStreamRestarts(_ jump: Double) throws {
        let scratch = try Scratch()
        let part = try Self.transportStream(in: scratch)
        let second = try Self.transportStream(in: scratch, name: "second.ts", offset: jump)
        let joined = scratch.file("joined.ts").path
        _ = FileManager.default.createFile(
            atPath: joined,
            contents: try Data(contentsOf: URL(fileURLWithPath: part)) + Data(contentsOf: URL(fileURLWithPath: second)))
        let output = scratch.file("out.mp4").path
        let run = try CLI.cropzoom([joined, "-o", output, "--progress", "json"])
        try #require(run.status == 0, "\(run)")
        let gap = try Self.checkTwice(output, sent: part, run: run.stderr)
        #expect(gap > 0.03 && gap < 0.3, "the parts are \(gap) s apart")
    }

    @Test("--start past the end of a file that starts at 10 s says so, counted from its first timestamp")
    func startPastEnd() throws {
        let scratch = try Scratch()
        let input = scratch.file("offset.mp4").path
        try Clip.video(.testsrc, seconds: 4, size: "160x120", rate: 30).extra(["-output_ts_offset", "10"])
            .write(to: input)
        let run = try CLI.cropzoom([input, "-o", scratch.file("out.mp4").path, "--start", "10"])
        #expect(run.status == 2, "\(run)")
        #expect(
            run.errorLines.count == 1 && run.errorLines[0].contains("past the end of the file (4.000 s"),
            "\(run.stderr)")
        #expect(Files.names(in: scratch.url) == ["offset.mp4"])
    }

    @Test("a trim range with audio but no video says there is no video there and where it runs")
    func rangeWithoutVideo() throws {
        let scratch = try Scratch()
        let input = scratch.file("av.mp4").path
        try Clip.video(.testsrc, seconds: 2, size: "160x120", rate: 30).audio(.sine(seconds: 5)).audioCodec("aac")
            .write(to: input)
        let run = try CLI.cropzoom([input, "-o", scratch.file("out.mp4").path, "--start", "3", "--end", "4"])
        #expect(run.status == 2, "\(run)")
        #expect(
            run.errorLines.count == 1
                && run.errorLines[0].contains("no video frame between 3.000 s and 4.000 s")
                && run.errorLines[0].contains("the video runs from 0.000 s to 2.000 s"), "\(run.stderr)")
        #expect(Files.names(in: scratch.url) == ["av.mp4"])
    }

    @Test("a Matroska file whose times start at 10 s: complete (no truncation warning); its 4 s are the range")
    func matroskaStartingLate() throws {
        let scratch = try Scratch()
        let input = scratch.file("late.mkv").path
        // Matroska's Duration counts from 0 (14 s here), not from the first timestamp.
        try Clip.video(.testsrc, seconds: 4, size: "160x120", rate: 25).extra(["-output_ts_offset", "10"])
            .write(to: input)
        let run = try CLI.cropzoom([input, "-o", scratch.file("out.mkv").path])
        #expect(run.status == 0 && !run.stderr.contains("truncated"), "\(run)")
        let strict = try CLI.cropzoom([input, "-o", scratch.file("strict.mkv").path, "--strict", "-y"])
        #expect(strict.status == 0, "\(strict)")
        let past = try CLI.cropzoom([input, "-o", scratch.file("past.mkv").path, "--start", "4.5"])
        #expect(
            past.status == 2 && past.errorLines.first?.contains("past the end of the file (4.000 s") == true,
            "\(past)")
    }
}
