import CropZoomCore
import Foundation
import Testing

/// `batch --watch` (issue 16): files already in the folder and files that arrive are transcoded once each, a file
/// still being written (open for writing, even while its size stands still) is left until it is closed, and
/// SIGINT ends the watch with the table, exit 0.
@Suite("Batch watch")
struct BatchWatchTests {
    /// Waits up to `seconds` for `path` to exist.
    static func appears(_ path: String, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: path) { return true }
            usleep(100_000)
        }
        return false
    }

    @Test("a folder watched: the file there, then one written slowly (held open 4 s), each once; SIGINT ends it")
    func watchFolder() throws {
        let scratch = try Scratch()
        let input = scratch.file("in").path
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        let sample = try Files.sample("std-h264-aac.mp4").path
        try FileManager.default.copyItem(atPath: sample, toPath: input + "/a.mp4")
        let out = scratch.file("out").path
        let run = try BackgroundRun.start(
            ["batch", input, "--watch", "--out-dir", out, "--progress", "lines", "--zoom", "1.2"],
            in: scratch.url)
        defer { kill(run.pid, SIGKILL) }
        #expect(Self.appears(out + "/a-zoom.mp4", within: 60), "a.mp4 was not transcoded: \(run.stderr)")

        // A copy in progress: half the file, then 4 s with nothing written but the file still open, then the rest.
        let writer = scratch.file("write.py")
        try """
        import sys, time
        data = open(sys.argv[1], "rb").read()
        with open(sys.argv[2], "wb") as f:
            f.write(data[: len(data) // 2])
            f.flush()
            time.sleep(4)
            f.write(data[len(data) // 2 :])
        open(sys.argv[3], "w").write("closed")
        """.write(to: writer, atomically: true, encoding: .utf8)
        let closed = scratch.file("closed").path
        let copy = try ChildProcess.spawn(
            ["python3", writer.path, sample, input + "/b.mp4", closed], stdout: .null, stderr: .null)
        var status: Int32 = 0
        while waitpid(copy, &status, WNOHANG) == 0 {
            #expect(
                !FileManager.default.fileExists(atPath: out + "/b-zoom.mp4"),
                "b.mp4 was taken while still being written")
            usleep(100_000)
        }
        #expect(FileManager.default.fileExists(atPath: closed))
        #expect(Self.appears(out + "/b-zoom.mp4", within: 60), "b.mp4 was not transcoded: \(run.stderr)")
        usleep(3_000_000)  // more scans: nothing is taken twice
        kill(run.pid, SIGINT)
        let end = try run.wait(timeout: 30)
        #expect(end.status == 0, "\(end.stderr)")
        let table = (try? String(contentsOfFile: run.stdoutPath, encoding: .utf8)) ?? ""
        let lines = table.split(separator: "\n").filter { $0.contains("a.mp4") || $0.contains("b.mp4") }
        #expect(lines.count == 2 && lines.allSatisfy { $0.contains("ok") }, "\(table)")
        for name in ["a-zoom.mp4", "b-zoom.mp4"] {
            #expect(try Oracle.videoFramePTS(out + "/" + name).count == 60, "\(name)")
        }
        #expect(Files.names(in: URL(fileURLWithPath: out)) == ["a-zoom.mp4", "b-zoom.mp4"])
    }

    @Test("--watch takes folders only, and not with --dry-run or --shard (exit 2)")
    func usage() throws {
        let sample = try Files.sample("std-h264-aac.mp4").path
        let scratch = try Scratch()
        for args in [
            ["batch", sample, "--watch", "--out-dir", scratch.url.path],
            ["batch", scratch.url.path, "--watch", "--dry-run", "--out-dir", scratch.file("o").path],
        ] {
            let run = try CLI.cropzoom(args)
            #expect(run.status == 2 && run.stderr.contains("--watch"), "\(args): \(run)")
        }
    }
}
