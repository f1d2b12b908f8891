// `cropzoom repair` of recordings whose frame rate changed (issue 31; docs/design/repair.md, "Session 6"): a phone
// drops from 30 to 20 or 24 fps in low light, and the reference was recorded at a constant rate. The sound, timed by
// its count, keeps the recording's clock; a writer that interleaves by time stores each picture after the sound up to
// its time, so the repair times the pictures by the sound stored before them. The recordings are FFmpeg's (its mov
// muxer interleaves packets by decode time), the originals kept as the truth.

import Foundation
import Testing

@Suite("Repair: frame rate changed", .serialized)
struct RepairFrameRateTests {
    /// A recording whose rate changes from `rates.0` (4 s) to `rates.1` (6 s), with 10 s of sound.
    struct Change: Sendable, CustomTestStringConvertible {
        var rates: (Int, Int)
        var video: [String]
        var sound = ["-c:a", "aac", "-b:a", "128k"]
        var ext = "mp4"
        var testDescription: String {
            "\(rates.0) → \(rates.1) fps, \(video.joined(separator: " ")), \(sound[1]), \(ext)"
        }
        static let x264 = ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p"]
        static let all = [
            Change(rates: (30, 20), video: x264 + ["-bf", "0"]),
            // B-frames: a picture is shown at the decode time of the one two places on (x264's decode times are its
            // sorted presentation times, delayed).
            Change(rates: (30, 20), video: x264 + ["-bf", "3"]),
            Change(rates: (20, 30), video: x264 + ["-bf", "3"]),
            Change(rates: (30, 20), video: x264 + ["-bf", "0"], sound: ["-c:a", "pcm_s16le"], ext: "mov"),
            Change(
                rates: (30, 24),
                video: [
                    "-c:v", "libx265", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-tag:v", "hvc1",
                    "-x265-params", "log-level=error",
                ], ext: "mov"),
        ]
    }

    /// The recording of `change` as `file` (variable frame rate), or its first rate for 3 s as a reference.
    static func record(_ change: Change, _ file: URL, reference: Bool = false, chunks: [String] = []) throws {
        let (first, then) = change.rates
        let input: [String] =
            reference
            ? [
                "-f", "lavfi", "-i", "testsrc=size=640x360:rate=\(first):duration=3", "-f", "lavfi", "-i",
                "sine=frequency=880:sample_rate=48000:duration=3",
            ]
            : [
                "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=\(first):duration=4", "-f", "lavfi", "-i",
                "testsrc2=size=640x360:rate=\(then):duration=6", "-f", "lavfi", "-i",
                "sine=frequency=440:sample_rate=48000:duration=10", "-filter_complex",
                "[0:v][1:v]concat=n=2:v=1:a=0[v]", "-map", "[v]", "-map", "2:a", "-fps_mode", "vfr",
            ]
        _ = try Oracle.runChecked(
            "ffmpeg",
            ["-v", "error", "-y"] + input + change.video + change.sound + ["-ac", "2"] + chunks + [file.path])
    }

    /// `original` cut before its index and repaired with `reference`: exit 0, more than 100 pictures timed by the
    /// sound's clock (the pictures after the change; the ones before are not), said on the line and in the report,
    /// and the pictures ending with the sound; the scorer's figures (`--vfr`) and the decode's complaints.
    static func repairedByClock(_ original: URL, reference: URL, in scratch: Scratch) throws -> (
        streams: [[String: Any]], decode: String
    ) {
        let (run, broken, fixed) = try RepairTests.repairCut(original, reference: reference, in: scratch)
        #expect(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let moved = report["pictures_timed_by_sound"] as? Int ?? 0
        #expect(moved > 100, "\(report)")
        #expect(run.stderr.contains("\(moved) pictures timed by the sound's clock"), "\(run.stderr)")
        #expect(report["video_minus_audio"] == nil, "the pictures end with the sound: \(report)")
        return try RepairTests.score(original: original, broken: broken, repaired: fixed, vfr: true)
    }

    @Test(
        """
        a recording whose frame rate changed, repaired with a reference at its first rate: every picture and sound \
        frame back with its bytes, each picture within one sound frame (21.3 ms) of its time — B-frames too — the \
        sound exact, a clean decode; the line and the report count the pictures timed by the sound's clock
        """, arguments: Change.all)
    func timedBySound(_ change: Change) throws {
        let scratch = try Scratch()
        let original = scratch.file("original.\(change.ext)")
        let reference = scratch.file("reference.\(change.ext)")
        try Self.record(change, original)
        try Self.record(change, reference, reference: true)
        let (streams, decode) = try Self.repairedByClock(original, reference: reference, in: scratch)
        let pictures = 4 * change.rates.0 + 6 * change.rates.1
        #expect(streams.first?["whole"] as? Int == pictures, "\(streams)")
        #expect(streams.allSatisfy { $0["recovered"] as? Int == $0["whole"] as? Int }, "\(streams)")
        #expect(streams.allSatisfy { $0["foreign"] as? Int == 0 }, "\(streams)")
        let video = try #require(streams.first?["pts_error"] as? Double)
        #expect(video <= 1024.0 / 48000 + 1e-6, "\(streams)")
        #expect(streams.dropFirst().allSatisfy { $0["pts_error"] as? Double == 0 }, "\(streams)")
        #expect(decode.isEmpty, "\(decode)")
    }

    /// A recording from a writer of one-second chunks (ffmpeg's `-chunk_duration`): 10 s at 30 fps with every third
    /// picture left out before or after 4 s (`select`: 20 fps, its pictures 33 and 67 ms apart), and how far its
    /// pictures may be from their times once repaired (the largest, the median).
    struct Chunked: Sendable, CustomTestStringConvertible {
        var slowUntil: Bool
        var bFrames: Int
        var largest: Double
        var median: Double
        /// PCM in MOV: from a 3 s reference, whose chunks of 93 and 48 packets of 1024 sample frames do not show the
        /// granularity (3,072 sample frames), and whose sound ends 16 ms before the last chunk of pictures.
        var pcm = false
        var testDescription: String {
            (slowUntil ? "20 → 30 fps" : "30 → 20 fps") + ", \(bFrames) B-frames, " + (pcm ? "PCM in MOV" : "AAC")
                + ", within \(largest) s"
        }
        static let all = [
            // FFmpeg chunks by its packets' durations, in step with the sound: each chunk's first picture lies as
            // the reference's do.
            Chunked(slowUntil: false, bFrames: 0, largest: 0.1, median: 0.025),
            Chunked(slowUntil: false, bFrames: 0, largest: 0.1, median: 0.025, pcm: true),
            // With B-frames, and starting at 20 fps, its chunks of pictures come out of step with the sound's (the
            // first holds 58 pictures, 1.9 s): a chunk's first picture is known to within the sound stored before
            // it (a second).
            Chunked(slowUntil: false, bFrames: 3, largest: 0.5, median: 0.1),
            Chunked(slowUntil: true, bFrames: 0, largest: 0.5, median: 0.4),
        ]
    }

    @Test(
        """
        a writer of one-second chunks whose frame rate changed: each chunk's pictures spread between its first \
        picture's place on the sound's clock and the next chunk's — every picture back with its bytes, within a tenth \
        of a second of its time where the chunks keep step with the sound (1.97 s off before), half a second where \
        they do not, the sound exact, a clean decode; the line counts the pictures timed by the clock
        """, arguments: Chunked.all)
    func chunksTimedBySound(_ chunked: Chunked) throws {
        let scratch = try Scratch()
        let ext = chunked.pcm ? "mov" : "mp4"
        let (original, reference) = (scratch.file("original.\(ext)"), scratch.file("reference.\(ext)"))
        let keep = chunked.slowUntil ? "gte(t\\,4)" : "lt(t\\,4)"
        let sound = chunked.pcm ? ["-c:a", "pcm_s16le"] : ["-c:a", "aac", "-b:a", "128k"]
        let encode =
            Change.x264 + ["-bf", "\(chunked.bFrames)"] + sound + ["-ac", "2", "-chunk_duration", "1000000"]
        _ = try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=10", "-f", "lavfi",
                "-i", "sine=frequency=440:sample_rate=48000:duration=10", "-vf",
                "select='\(keep)+not(eq(mod(n\\,3)\\,2))'", "-fps_mode", "vfr",
            ] + encode + [original.path])
        _ = try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=640x360:rate=30:duration=3", "-f", "lavfi",
                "-i", "sine=frequency=880:sample_rate=48000:duration=3",
            ] + encode + [reference.path])
        let (streams, decode) = try Self.repairedByClock(original, reference: reference, in: scratch)
        #expect(streams.first?["whole"] as? Int == 240 + (chunked.slowUntil ? 20 : 0), "\(streams)")
        #expect(streams.allSatisfy { $0["foreign"] as? Int == 0 }, "\(streams)")
        #expect(streams.allSatisfy { $0["recovered"] as? Int == $0["whole"] as? Int }, "\(streams)")
        let video = try #require(streams.first?["pts_error"] as? Double)
        let median = try #require(streams.first?["pts_error_median"] as? Double)
        #expect(video <= chunked.largest && median <= chunked.median, "\(streams)")
        #expect(streams.dropFirst().allSatisfy { $0["pts_error"] as? Double == 0 }, "\(streams)")
        #expect(decode.isEmpty, "\(decode)")
    }

    @Test(
        """
        a constant rate is left to the tick and nothing is said, also with a reference of half a second and from a \
        writer of one-second chunks; a writer that put every picture in one chunk (ffmpeg's chunks of a stream made by \
        `concat`: no picture's time bounded by the sound beside it) keeps the reference's rate and says how far the \
        pictures end from the sound
        """)
    func steadyAndChunked() throws {
        let scratch = try Scratch()
        let steady = Change(rates: (30, 30), video: Change.x264 + ["-bf", "3"])
        let original = scratch.file("steady.mp4")
        let reference = scratch.file("reference.mp4")
        try Self.record(steady, original)
        try Self.record(steady, reference, reference: true)
        let fine = try RepairTests.repairCut(original, reference: reference, in: scratch)
        #expect(fine.run.status == 0, "\(fine.run)")
        #expect(!fine.run.stdout.contains("pictures_timed_by_sound"), "\(fine.run.stdout)")
        #expect(!fine.run.stderr.contains("sound's clock") && !fine.run.stderr.contains("the video lasts"))
        let (streams, _) = try RepairTests.score(original: original, broken: fine.broken, repaired: fine.fixed)
        #expect(streams.allSatisfy { $0["pts_error"] as? Double == 0 }, "\(streams)")
        // A reference of half a second (12 pictures at 23.976 fps with 48 kHz sound) does not show every phase of
        // the pictures against the sound: its bound is widened, and the steady recording is left as it is (before:
        // 464 of its 480 pictures moved, up to 17 ms).
        let film = try Scratch()
        let (whole, short) = (film.file("film.mp4"), film.file("short.mp4"))
        for (file, content, seconds) in [(whole, "testsrc2", "20"), (short, "testsrc", "0.5")] {
            _ = try Oracle.runChecked(
                "ffmpeg",
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "\(content)=size=320x240:rate=24000/1001", "-f", "lavfi",
                    "-i", "sine=frequency=440:sample_rate=48000", "-t", seconds, "-c:v", "libx264", "-preset",
                    "ultrafast", "-pix_fmt", "yuv420p", "-bf", "3", "-c:a", "aac", "-b:a", "96k", "-ac", "2", file.path,
                ])
        }
        let exact = try RepairTests.repairCut(whole, reference: short, in: film)
        #expect(exact.run.status == 0 && !exact.run.stderr.contains("sound's clock"), "\(exact.run)")
        let (films, _) = try RepairTests.score(original: whole, broken: exact.broken, repaired: exact.fixed)
        #expect(films.first?["recovered"] as? Int == 480, "\(films)")
        #expect(films.allSatisfy { $0["pts_error"] as? Double == 0 }, "\(films)")

        // One-second chunks at a constant rate: each chunk's first picture within the reference's bound.
        let steadyChunks = try Scratch()
        let (steadyOriginal, steadyReference) = (steadyChunks.file("steady.mp4"), steadyChunks.file("reference.mp4"))
        let chunks = ["-chunk_duration", "1000000"]
        try Self.record(steady, steadyOriginal, chunks: chunks)
        try Self.record(steady, steadyReference, reference: true, chunks: chunks)
        let even = try RepairTests.repairCut(steadyOriginal, reference: steadyReference, in: steadyChunks)
        #expect(even.run.status == 0 && !even.run.stderr.contains("sound's clock"), "\(even.run)")
        let (evens, _) = try RepairTests.score(original: steadyOriginal, broken: even.broken, repaired: even.fixed)
        #expect(evens.first?["recovered"] as? Int == 300, "\(evens)")
        #expect(evens.allSatisfy { $0["pts_error"] as? Double == 0 }, "\(evens)")

        let chunked = try Scratch()
        let change = Change(rates: (30, 20), video: Change.x264 + ["-bf", "0"])
        let long = chunked.file("original.mp4")
        let longReference = chunked.file("reference.mp4")
        try Self.record(change, long, chunks: ["-chunk_duration", "1000000"])
        try Self.record(change, longReference, reference: true, chunks: ["-chunk_duration", "1000000"])
        let (run, broken, fixed) = try RepairTests.repairCut(long, reference: longReference, in: chunked)
        #expect(run.status == 0, "\(run)")
        #expect(
            run.stderr.contains(
                "240 video frames (8.00 s), 470 audio frames (10.01 s), the video lasts 2.03 s less than the sound "
                    + "(timed at the reference's 30 fps: the recording's frame rate was not constant, or not the "
                    + "reference's)"), "\(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(abs((report["video_minus_audio"] as? Double ?? 0) + 2.027) < 0.001, "\(report)")
        #expect(report["video_rate"] as? Double == 30, "\(report)")
        let (scores, _) = try RepairTests.score(original: long, broken: broken, repaired: fixed)
        #expect(scores.map { $0["recovered"] as? Int } == [240, 470], "\(scores)")
    }
}
