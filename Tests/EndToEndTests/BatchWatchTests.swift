import CropZoomCore
import CropZoomSystem
import Foundation
import Testing

/// `batch watch` (issue 16; spelled `batch --watch` before it was a subcommand, which still works): files already in
/// the folder and files that arrive are transcoded once each, a file still being written (open for writing, even while
/// its size stands still) is left until it is closed, and SIGINT ends the watch with the table, exit 0.
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
            ["batch", "watch", input, "--out-dir", out, "--progress", "lines", "--zoom", "1.2"],
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

    /// Starts copying `source` to `target` in `pieces` pieces, each written by its own open and close, `pause`
    /// seconds apart (a slow card reader, a network share): the copying process.
    static func copyInPieces(
        _ source: String, to target: String, pieces: Int, pause: Double, scratch: Scratch
    ) throws -> Int32 {
        let writer = scratch.file("pieces.py")
        try """
        import sys, time
        data = open(sys.argv[1], "rb").read()
        n = \(pieces)
        for k in range(n):
            with open(sys.argv[2], "ab") as f:
                f.write(data[len(data) * k // n : len(data) * (k + 1) // n])
            if k < n - 1:
                time.sleep(\(pause))
        """.write(to: writer, atomically: true, encoding: .utf8)
        return try ChildProcess.spawn(["python3", writer.path, source, target], stdout: .null, stderr: .null)
    }

    /// Lets a watch scan a few more times (nothing may be taken twice), then ends it with SIGINT: its end.
    static func stop(_ run: BackgroundRun) throws -> (status: Int32, stderr: String, seconds: Double) {
        usleep(2_500_000)
        kill(run.pid, SIGINT)
        return try run.wait(timeout: 30)
    }

    /// The sample with its index (moov) at the end, as a camera writes it.
    static func moovAtEnd(_ scratch: Scratch) throws -> String {
        let path = scratch.file("camera.mp4").path
        _ = try Oracle.runChecked(
            "ffmpeg", ["-v", "error", "-i", try Files.sample("std-h264-aac.mp4").path, "-c", "copy", path])
        return path
    }

    @Test(
        """
        a file copied in three pieces 3 s apart, closed between them (index at the end): not taken until it reads \
        whole, then transcoded once, every frame; no failure on the way
        """)
    func copiedInPieces() throws {
        let scratch = try Scratch()
        let input = try scratch.folder("in").path
        let out = scratch.file("out").path
        let source = try Self.moovAtEnd(scratch)
        let run = try BackgroundRun.start(
            ["batch", "watch", input, "--out-dir", out, "--progress", "lines"], in: scratch.url)
        defer { kill(run.pid, SIGKILL) }
        usleep(1_000_000)
        let copy = try Self.copyInPieces(source, to: input + "/c.mp4", pieces: 3, pause: 3, scratch: scratch)
        var status: Int32 = 0
        while waitpid(copy, &status, WNOHANG) == 0 {
            #expect(!FileManager.default.fileExists(atPath: out + "/c-zoom.mp4"), "c.mp4 was taken between pieces")
            usleep(100_000)
        }
        #expect(Self.appears(out + "/c-zoom.mp4", within: 60), "c.mp4 was not transcoded: \(run.stderr)")
        let end = try Self.stop(run)
        #expect(end.status == 0, "\(end.stderr)")
        #expect(!end.stderr.contains("failed"), "\(end.stderr)")
        #expect(try Oracle.videoFramePTS(out + "/c-zoom.mp4").count == 60)
    }

    @Test(
        """
        --settle 2: half a file left alone 2 s is taken and fails (no index); when the rest arrives it is tried \
        again and succeeds: one row, ok, exit 0
        """)
    func failedFileRetriedWhenItChanges() throws {
        let scratch = try Scratch()
        let input = try scratch.folder("in").path
        let out = scratch.file("out").path
        let source = try Self.moovAtEnd(scratch)
        let run = try BackgroundRun.start(
            // (The spelling from before `batch watch`: routed to it.)
            ["batch", input, "--watch", "--settle", "2", "--out-dir", out, "--progress", "lines"], in: scratch.url)
        defer { kill(run.pid, SIGKILL) }
        let copy = try Self.copyInPieces(source, to: input + "/d.mp4", pieces: 2, pause: 7, scratch: scratch)
        var status: Int32 = 0
        waitpid(copy, &status, 0)
        #expect(run.stderr.contains("failed \(input)/d.mp4"), "the half file was not taken: \(run.stderr)")
        #expect(Self.appears(out + "/d-zoom.mp4", within: 60), "d.mp4 was not tried again: \(run.stderr)")
        let end = try Self.stop(run)
        #expect(end.status == 0, "\(end.stderr)")
        #expect(end.stderr.contains("changed since it failed"), "\(end.stderr)")
        let table = (try? String(contentsOfFile: run.stdoutPath, encoding: .utf8)) ?? ""
        let rows = table.split(separator: "\n").filter { $0.contains("d.mp4") }
        #expect(rows.count == 1 && rows[0].contains(" ok "), "\(table)")
        #expect(try Oracle.videoFramePTS(out + "/d-zoom.mp4").count == 60)
    }

    @Test(
        """
        batch watch takes folders only, and no option of another mode (exit 2, one line); with the old spelling \
        (batch --watch) the line names batch watch
        """)
    func usage() throws {
        let sample = try Files.sample("std-h264-aac.mp4").path
        let scratch = try Scratch()
        let out = scratch.file("o").path
        for (args, needle) in [
            (["batch", "watch", sample, "--out-dir", out], "batch watch watches folders: \(sample) is not one"),
            (["batch", "watch", scratch.url.path, "--dry-run", "--out-dir", out], "Unknown option '--dry-run'"),
            (["batch", "watch", scratch.url.path, "--shard=1/2", "--out-dir", out], "Unknown option '--shard'"),
            (["batch", sample, "--watch", "--out-dir", out], "(cropzoom batch --watch is now cropzoom batch watch"),
            (["batch", scratch.url.path, "--watch", "--dry-run", "--out-dir", out], "is now cropzoom batch watch"),
        ] {
            let run = try CLI.cropzoom(args)
            #expect(
                run.status == 2 && run.errorLines.count == 1 && run.stderr.contains(needle) && run.stdout.isEmpty,
                "\(args): \(run)")
        }
        #expect(!Files.exists(scratch.file("o")))
    }
}
