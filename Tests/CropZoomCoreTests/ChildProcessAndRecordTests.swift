import CropZoomSystem
import Foundation
import Testing

@testable import CropZoomCore

/// The NDJSON records a transcode writes and its supervisors read, and the child-process helpers both sides use.
@Suite("Job records and child processes")
struct ChildProcessAndRecordTests {
    @Test("records keep their documented JSON names and read back as they were written")
    func recordsRoundTrip() throws {
        let done = JobRecord.Done(
            output: "/o/ü.mp4", width: 640, height: 360, codec: "libx264", pixFmt: "yuv420p", framesIn: 60,
            framesOut: 60, corruptSkipped: 1, duplicateTimestampsDropped: 0, audioStreamsCopied: 1,
            audioStreamsReencoded: 0, audioPackets: 94, seconds: 0.5, fps: 120, speed: 4,
            window: PixelRect(x: 2, y: 4, width: 320, height: 180), ffmpegFilter: "crop=320:180:2:4",
            pool: .init(allocations: 4, reuses: 56, highWater: 4, capacity: 8), truncated: nil)
        let records: [JobRecord] = [
            .progress(.init(frames: 3, time: 0.1, elapsed: 0.2, fps: 15, speed: 0.5, percent: 5, duration: 2)),
            .notice(.init(message: "a note")), .warning(.init(message: "cut short")), .done(done),
            .stats(
                .init(
                    threads: 2, decoderThreads: 1, encoderThreads: 2, transformWorkers: 1, upstreamNice: 0,
                    cpuSeconds: 1.5, busySeconds: ["decode": 0.25], waitSeconds: ["mux_waiting_for_packets": 0.5])),
            .error(.init(message: "in.mp4: not a media file", exitCode: 3)),
        ]
        for record in records {
            let line = String(decoding: record.jsonLine, as: UTF8.self)
            #expect(!line.contains("\n") && JobRecord(jsonLine: line) == record, "\(line)")
        }
        let line = String(decoding: JobRecord.done(done).jsonLine, as: UTF8.self)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "done" && object["frames_out"] as? Int == 60)
        #expect(object["pix_fmt"] as? String == "yuv420p" && object["ffmpeg_filter"] as? String == "crop=320:180:2:4")
        #expect((object["pool"] as? [String: Int])?["high_water"] == 4 && object["truncated"] == nil)
        #expect(line.hasPrefix("{\"audio_packets\":94,"), "sorted keys: \(line)")
        // What an older or newer writer sends: unknown fields are ignored, other lines are not records.
        let progress = #"{"event":"progress","frames":7,"time":0.3,"elapsed":0.1,"fps":70,"speed":3,"extra":1}"#
        #expect(
            JobRecord(jsonLine: progress) == .progress(.init(frames: 7, time: 0.3, elapsed: 0.1, fps: 70, speed: 3)))
        #expect(JobRecord(jsonLine: "cropzoom: error: x") == nil && JobRecord(jsonLine: #"{"event":"nope"}"#) == nil)
        // --reference: the repair's report rides along, in snake_case.
        var repaired = done
        repaired.repair = RepairReport(
            input: "in.mp4", reference: "good.mp4", output: "/o/ü.mp4",
            tracks: [
                .init(index: 0, type: "video", codec: "h264", samples: 60, keyframes: 1, seconds: 2, recovered: true)
            ],
            gaps: [RepairGap(offset: 100, bytes: 7, reason: "cut")], skippedBeforeKeyframe: 0, mediaBytes: 1000,
            recoveredBytes: 993, audioStartOffset: -0.02, seconds: 0.1)
        let repairLine = String(decoding: JobRecord.done(repaired).jsonLine, as: UTF8.self)
        #expect(JobRecord(jsonLine: repairLine) == .done(repaired), "\(repairLine)")
        #expect(repairLine.contains(#""repair":{"audio_start_offset":-0.02,"#), "\(repairLine)")
    }

    @Test("a child starts with an empty signal mask: SIGTERM reaches it from a thread that blocks it")
    func spawnUnblocksSignals() throws {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let pid = try ChildProcess.spawn(["sleep", "20"], stdout: .null, stderr: .null)
        usleep(100_000)
        kill(pid, SIGTERM)
        var status: Int32 = 0
        let started = Date()
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        #expect(status & 0x7F == SIGTERM && Date().timeIntervalSince(started) < 5, "status \(status)")
    }

    @Test("redirects, the environment, which and shell quoting")
    func redirectsAndHelpers() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cz-child-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out").path
        let env = ChildProcess.environment(setting: "CZ_TEST_VALUE", to: "a b")
        let pid = try ChildProcess.spawn(
            ["sh", "-c", "echo \"$CZ_TEST_VALUE\"; echo err >&2"], stdout: .file(out), stderr: .null, environment: env)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let written = try String(contentsOfFile: out, encoding: .utf8)
        #expect(status == 0 && written == "a b\n")
        #expect(ChildProcess.which("sh")?.hasSuffix("/sh") == true && ChildProcess.which("no-such-program-cz") == nil)
        #expect(ChildProcess.which("/tmp") == nil, "a folder is not an executable")
        #expect(
            ChildProcess.shellQuoted(["ffmpeg", "-vf", "crop=1:2", "a b", "it's", ""])
                == "ffmpeg -vf crop=1:2 'a b' 'it'\\''s' ''")
        #expect(throws: CropZoomError.self) {
            try ChildProcess.spawn(["/no/such/program"], stdout: .null, stderr: .null)
        }
    }
}
