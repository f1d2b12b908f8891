// `cropzoom recover` (issue 27 item 15): a live recording killed with SIGKILL stays hidden as
// `.NAME.cropzoom-rec-PID`; recover lists and restores it in any folder, never replacing a file, and any run in that
// folder says it is there.

import Foundation
import Testing

extension RealTime {
    @Suite("Recover")
    struct RecoverTests {
        static let source = "testsrc2=size=320x240:rate=25,realtime[out0];sine=frequency=440,arealtime[out1]"

        /// A live recording into `folder/name` killed with SIGKILL after about 3 s: its hidden file.
        static func killedRecording(_ name: String, in folder: URL) throws -> (path: String, pid: Int32) {
            let out = folder.appendingPathComponent(name).path
            var pid: Int32 = 0
            var seen: Date? = nil
            let run = try CLI.cropzoom(
                [Self.source, "--input-format", "lavfi", "-o", out, "--quiet"], sending: SIGKILL,
                once: {
                    // 3 s after its hidden file appeared: it holds a second or more (the encoder holds the rest).
                    guard let hidden = Files.names(in: folder).first(where: { $0.hasPrefix(".\(name).cropzoom-rec-") })
                    else { return false }
                    pid = Int32(hidden.split(separator: "-").last ?? "") ?? 0
                    seen = seen ?? Date()
                    return Date().timeIntervalSince(seen!) >= 3
                })
            #expect(run.status == SIGKILL, "\(run)")
            let hidden = folder.appendingPathComponent(".\(name).cropzoom-rec-\(pid)").path
            try #require(FileManager.default.fileExists(atPath: hidden), "\(Files.names(in: folder))")
            return (hidden, pid)
        }

        @Test(
            """
            a killed recording is listed (--list moves nothing), named by any run in its folder, restored as \
            STEM-recovered-PID.EXT beside it (-2 when that name is taken, the other file untouched), playable; \
            --recursive finds one in a subfolder; a missing folder is exit 2
            """)
        func recoverKilledRecordings() throws {
            let scratch = try Scratch()
            let sub = scratch.file("day2")
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
            let top = try Self.killedRecording("live.mkv", in: scratch.url)
            let deep = try Self.killedRecording("cam.mkv", in: sub)
            // A recording whose process still runs (this test's) is not one to restore.
            let running = scratch.file(".busy.mkv.cropzoom-rec-\(getpid())").path
            try Data("x".utf8).write(to: URL(fileURLWithPath: running))

            let listed = try CLI.cropzoom(["recover", "--list", scratch.url.path])
            #expect(listed.status == 0, "\(listed)")
            #expect(listed.stdout.contains(top.path) && listed.stdout.contains("live-recovered-\(top.pid).mkv"))
            #expect(!listed.stdout.contains("cam.mkv") && !listed.stdout.contains("busy"), "\(listed.stdout)")
            #expect(FileManager.default.fileExists(atPath: top.path), "--list moved it")

            // Another output written in the folder says the recording is there.
            let other = try CLI.cropzoom([try Files.sample("std-h264-aac.mp4").path, "-o", scratch.file("o.mp4").path])
            #expect(other.status == 0, "\(other)")
            #expect(other.stderr.contains(top.path) && other.stderr.contains("cropzoom recover"), "\(other.stderr)")
            #expect(FileManager.default.fileExists(atPath: top.path), "the other run moved it")

            // The name it would take is taken: it becomes -2, the file there stays as it was.
            let taken = scratch.file("live-recovered-\(top.pid).mkv")
            try Data("keep me".utf8).write(to: taken)
            let restored = try CLI.cropzoom(["recover", "--recursive", scratch.url.path])
            #expect(restored.status == 0, "\(restored)")
            #expect(try String(contentsOf: taken, encoding: .utf8) == "keep me")
            let second = scratch.file("live-recovered-\(top.pid)-2.mkv").path
            let cam = sub.appendingPathComponent("cam-recovered-\(deep.pid).mkv").path
            for path in [second, cam] {
                #expect(restored.stdout.contains("as \(path)"), "\(restored.stdout)")
                let frames = try Oracle.decodedFrameHashes(path).count
                #expect(frames >= 25, "\(path): \(frames) frames")
                #expect(try Oracle.decodeComplaints(path).status == 0)
            }
            #expect(
                !FileManager.default.fileExists(atPath: top.path) && !FileManager.default.fileExists(atPath: deep.path))
            #expect(FileManager.default.fileExists(atPath: running), "a running recording was moved")

            let again = try CLI.cropzoom(["recover", scratch.url.path])
            #expect(again.status == 0 && again.stdout.hasPrefix("no unfinished recordings"), "\(again)")
            let missing = try CLI.cropzoom(["recover", scratch.file("nope").path])
            #expect(
                missing.status == 2 && missing.stderrLines.count == 1 && missing.stderr.contains("nope"), "\(missing)")
        }
    }
}
