// The multi-core engine: the same output whatever the thread count, a pool that stops
// allocating after warm-up, --null / --codec none, --stats.

import Foundation
import Testing

@Suite("Engine")
struct EngineTests {
    /// A clip of `frames` frames (320x240, 30 fps, H.264 with B-frames, AAC), made with the
    /// ffmpeg CLI into `folder`.
    static func clip(frames: Int, in folder: URL, name: String = "in.mp4") throws -> String {
        // The sound ends with the video, at the millisecond.
        let seconds = (Double(frames) / 30 * 1000).rounded() / 1000
        return try Clip.video(size: "320x240", rate: 30).audio(.sine(frequency: 440, sampleRate: 48000))
            .frames(frames).duration(seconds)
            .codec("libx264", pixelFormat: "yuv420p", preset: "ultrafast", options: ["-bf", "3"]).audioCodec("aac")
            .write(to: folder.appendingPathComponent(name).path)
    }

    static func doneEvent(_ run: CLIResult) throws -> [String: Any] {
        let events = run.stderrLines.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        return try #require(events.last { $0["event"] as? String == "done" }, "no done event: \(run.stderr)")
    }

    @Test("transform output is bit-identical for --threads 1, 2 and 4 (lossless FFV1, decoded frame hashes)")
    func bitIdenticalAcrossThreadCounts() throws {
        let scratch = try Scratch()
        let input = try Self.clip(frames: 90, in: scratch.url)
        var hashes: [Int: [String]] = [:]
        for threads in [1, 2, 4] {
            let out = scratch.file("t\(threads).mkv")
            let run = try CLI.cropzoom([
                input, "-o", out.path, "--zoom", "1.65", "--center", "0.4,0.6",
                "--rotate", "90", "--codec", "ffv1", "--threads", "\(threads)",
            ])
            try #require(run.status == 0, "--threads \(threads): \(run)")
            hashes[threads] = try Oracle.decodedFrameHashes(out.path)
        }
        let inputFrames = try Oracle.videoFramePTS(input).count
        #expect(
            hashes[1]?.count == inputFrames,
            "--threads 1 wrote \(hashes[1]?.count ?? 0) frames, the input has \(inputFrames)")
        #expect(Set(hashes[1] ?? []).count > 1, "the frames should differ from each other (a moving test picture)")
        #expect(hashes[2] == hashes[1], "--threads 2 differs from --threads 1")
        #expect(hashes[4] == hashes[1], "--threads 4 differs from --threads 1")
    }

    @Test(
        "after warm-up the pool allocates nothing: the same allocations for 60 and 400 frames, every frame a reuse",
        arguments: [1, 2])
    func poolStaysFlat(threads: Int) throws {
        let scratch = try Scratch()
        var allocations: [Int] = []
        var capacities: [Int] = []
        for frames in [60, 400] {
            let input = try Self.clip(frames: frames, in: scratch.url, name: "in\(frames).mp4")
            let run = try CLI.cropzoom([
                input, "-o", scratch.file("out\(frames).mp4").path, "--zoom", "2",
                "--preset", "ultrafast", "--threads", "\(threads)", "--progress", "json",
            ])
            try #require(run.status == 0, "\(run)")
            let done = try Self.doneEvent(run)
            let pool = try #require(done["pool"] as? [String: Any])
            let alloc = try #require((pool["allocations"] as? NSNumber)?.intValue)
            let reuses = try #require((pool["reuses"] as? NSNumber)?.intValue)
            let capacity = try #require((pool["capacity"] as? NSNumber)?.intValue)
            let highWater = try #require((pool["high_water"] as? NSNumber)?.intValue)
            let framesOut = try #require((done["frames_out"] as? NSNumber)?.intValue)
            #expect(framesOut == frames, "frames_out \(framesOut), expected \(frames)")
            // The pool allocates its frames before the first one is needed; every output frame is a reuse.
            #expect(
                reuses == framesOut,
                "every output frame comes from the pool's own frames: \(reuses) reuses for \(framesOut) frames")
            #expect(
                alloc == capacity,
                "the pool allocates its capacity up front and nothing after: \(alloc) allocations, capacity \(capacity)"
            )
            #expect(
                alloc <= capacity && highWater <= capacity,
                "pool bounded: allocations \(alloc), high-water \(highWater), capacity \(capacity)")
            allocations.append(alloc)
            capacities.append(capacity)
        }
        #expect(capacities[0] == capacities[1], "the pool's size depends on the clip: \(capacities)")
        #expect(
            allocations[0] == allocations[1],
            "allocations grew with the clip: \(allocations[0]) for 60 frames, \(allocations[1]) for 400")
    }

    @Test("--null --codec none runs every stage, writes nothing, counts every frame")
    func nullRun() throws {
        let scratch = try Scratch()
        let input = try Self.clip(frames: 45, in: scratch.url)
        let before = Files.names(in: scratch.url)
        for extra in [["--codec", "none"], []] {
            let run = try CLI.cropzoom([input, "--null", "--zoom", "1.5", "--progress", "json"] + extra)
            try #require(run.status == 0, "\(run)")
            #expect((try Self.doneEvent(run)["frames_out"] as? NSNumber)?.intValue == 45)
            #expect(Files.names(in: scratch.url) == before, "--null wrote files: \(Files.names(in: scratch.url))")
        }
        // A clip without audio: nothing at all to mux.
        let silent = try Files.sample("no-audio.mp4").path
        let frames = try Oracle.videoFramePTS(silent).count
        for threads in ["1", "2"] {
            let run = try CLI.cropzoom([
                silent, "--null", "--codec", "none", "--threads", threads, "--progress", "json",
            ])
            try #require(run.status == 0, "video-only clip, --threads \(threads): \(run)")
            #expect((try Self.doneEvent(run)["frames_out"] as? NSNumber)?.intValue == frames)
        }
        let refused = try CLI.cropzoom([input, "-o", scratch.file("x.mp4").path, "--codec", "none"])
        #expect(refused.status == 2, "--codec none without --null must be refused: \(refused)")
        #expect(refused.stderrLines.count == 1 && refused.stderr.contains("--codec none"), "\(refused.stderr)")
    }

    @Test("--stats reports threads, per-stage time and the pool")
    func stats() throws {
        let scratch = try Scratch()
        let input = try Self.clip(frames: 30, in: scratch.url)
        for threads in [1, 2] {
            let run = try CLI.cropzoom([
                input, "-o", scratch.file("o\(threads).mp4").path, "--threads", "\(threads)", "--stats",
            ])
            try #require(run.status == 0, "\(run)")
            let lines = run.stderrLines.filter { $0.hasPrefix("cropzoom: stats: ") }
            #expect(lines.first?.contains("threads \(threads) ") == true, "\(lines)")
            #expect(
                lines.contains {
                    $0.contains("busy:") && $0.contains("decode") && $0.contains("transform") && $0.contains("encode")
                }, "\(lines)")
            #expect(lines.contains { $0.contains("pool: capacity") }, "\(lines)")
        }
        // JSON: stages and waits under their stable names, every stage of this job measured.
        let stages: Set<String> = ["demux", "decode", "transform", "encode", "mux", "audio"]
        let waitNames: Set<String> = [
            "demux_queue_full", "decode_waiting_for_packets", "work_queue_full", "workers_waiting_for_frames",
            "encode_waiting_for_frames", "mux_waiting_for_packets",
        ]
        for threads in [1, 2] {
            let run = try CLI.cropzoom([
                input, "-o", scratch.file("j\(threads).mp4").path, "--threads", "\(threads)", "--stats",
                "--progress", "json",
            ])
            try #require(run.status == 0, "\(run)")
            let events = run.stderrLines.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let stats = try #require(events.last { $0["event"] as? String == "stats" }, "\(run.stderr)")
            let busy = try #require(stats["busy_seconds"] as? [String: Double], "\(stats)")
            #expect(Set(busy.keys) == ["demux", "decode", "transform", "encode", "mux"], "\(busy)")
            #expect(Set(busy.keys).isSubset(of: stages))
            let waits = try #require(stats["wait_seconds"] as? [String: Double], "\(stats)")
            #expect(Set(waits.keys) == (threads == 1 ? [] : waitNames), "\(waits)")
        }
        let bad = try CLI.cropzoom([input, "-o", scratch.file("x.mp4").path, "--threads", "0"])
        #expect(bad.status == 2, "\(bad)")
    }

    @Test(
        "an error in one stage stops every stage: a write error mid-run exits 1 promptly, nothing left",
        arguments: [1, 2, 4])
    func stageErrorStopsAll(threads: Int) throws {
        let scratch = try Scratch()
        let input = try Self.clip(frames: 600, in: scratch.url)
        let out = scratch.file("out.mkv")
        let binary = try CLI.binary()
        // 300 KB file size limit: the mux stage fails while decode and encode are busy.
        let run = try CLI.bash(
            "ulimit -f 300; exec '\(binary)' '\(input)' -o '\(out.path)' --codec ffv1 --threads \(threads)", timeout: 60
        )
        #expect(run.status == 1, "expected exit 1: \(run)")
        #expect(
            run.stderrLines.count == 1 && run.stderr.contains(out.path),
            "one error line naming the output: \(run.stderr)")
        #expect(Files.names(in: scratch.url) == ["in.mp4"], "left behind: \(Files.names(in: scratch.url))")
    }
}
