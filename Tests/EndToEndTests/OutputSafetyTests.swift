// What the user had at OUTPUT is never lost (issue 13, items 1–5): devices and FIFOs are written
// through, never replaced; links are followed; a replaced file keeps its mode; a read-only one
// needs --force; image sequences and HLS land under their own names; temporaries always fit and
// a killed run's are cleaned up; batch children end with their parent.

import CropZoomKit
import Foundation
import Testing

@Suite("Output safety")
struct OutputSafetyTests {
    static func fileType(_ path: String) -> mode_t? {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & S_IFMT : nil
    }

    static func mode(_ path: String) -> mode_t? {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o7777 : nil
    }

    static func frameCount(_ path: String) throws -> Int {
        try Oracle.videoFramePTS(path).count
    }

    @Test("a character device named as OUTPUT is written to, not replaced (even with -y)")
    func characterDevice() throws {
        let scratch = try Scratch()
        // A private node equal to /dev/null (major 1, minor 3; root only — CI runs as root), else
        // /dev/null itself.
        var device = "/dev/null"
        if geteuid() == 0 {
            device = scratch.file("null").path
            try #require(mknod(device, S_IFCHR | 0o666, dev_t((1 << 8) | 3)) == 0, "mknod: \(errno)")
        }
        let input = try Files.sample("std-h264-aac.mp4").path
        let run = try CLI.cropzoom([input, "-o", device, "--format", "mp4", "-y"])
        #expect(run.status == 0, "\(run)")
        #expect(Self.fileType(device) == S_IFCHR, "\(device) is no longer a character device")
        #expect(Files.temporaryLeftovers(in: URL(fileURLWithPath: device).deletingLastPathComponent()).isEmpty)
    }

    @Test("a FIFO named as OUTPUT is written through: its reader gets every frame, the FIFO stays")
    func fifo() throws {
        let scratch = try Scratch()
        let fifo = scratch.file("out.mkv").path
        let received = scratch.file("received.mkv").path
        try #require(mkfifo(fifo, 0o644) == 0)
        let input = try Files.sample("std-h264-aac.mp4").path
        let script =
            "cat \(ChildProcess.shellQuoted([fifo])) > \(ChildProcess.shellQuoted([received])) & reader=$!; "
            + ChildProcess.shellQuoted([try CLI.binary(), input, "-o", fifo])
            + "; status=$?; wait $reader; exit $status"
        let run = try CLI.bash(script, timeout: 120)
        #expect(run.status == 0, "\(run)")
        #expect(Self.fileType(fifo) == S_IFIFO, "the FIFO was replaced")
        #expect(try Self.frameCount(received) == (try Self.frameCount(input)), "the reader did not get every frame")
        #expect(Files.temporaryLeftovers(in: scratch.url).isEmpty)
    }

    @Test("a link to /proc/self/fd/1 writes to standard output; the link stays a link")
    func linkToStandardOutput() throws {
        let scratch = try Scratch()
        let link = scratch.file("out.mkv").path
        let piped = scratch.file("piped.mkv").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/proc/self/fd/1")
        let input = try Files.sample("std-h264-aac.mp4").path
        let run = try CLI.bash(
            ChildProcess.shellQuoted([try CLI.binary(), input, "-o", link, "-y"]) + " > "
                + ChildProcess.shellQuoted([piped]))
        #expect(run.status == 0, "\(run)")
        #expect(Self.fileType(link) == S_IFLNK, "the link was replaced")
        #expect(try Self.frameCount(piped) == (try Self.frameCount(input)))
    }

    @Test("a symbolic link is followed: its target is replaced, the link stays; a dangling one is refused")
    func symbolicLink() throws {
        let scratch = try Scratch()
        let real = scratch.file("real.mp4").path
        let link = scratch.file("link.mp4").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: real))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real.mp4")
        let input = try Files.sample("std-h264-aac.mp4").path
        let run = try CLI.cropzoom([input, "-o", link, "-y"])
        #expect(run.status == 0, "\(run)")
        #expect(Self.fileType(link) == S_IFLNK, "the link was replaced by a file")
        #expect(try Self.frameCount(real) == (try Self.frameCount(input)), "the link's target is not the new file")

        let dangling = scratch.file("dangling.mp4").path
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: "nowhere/x.mp4")
        let refused = try CLI.cropzoom([input, "-o", dangling, "-y"])
        #expect(refused.status == 2 && refused.errorLines.count == 1, "\(refused)")
        #expect(Self.fileType(dangling) == S_IFLNK)
        #expect(Files.temporaryLeftovers(in: scratch.url).isEmpty)
    }

    @Test("-y keeps the replaced file's mode; a read-only file needs --force, and stays read-only")
    func modeAndReadOnly() throws {
        let scratch = try Scratch()
        let output = scratch.file("out.mp4").path
        let input = try Files.sample("std-h264-aac.mp4").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: output))
        chmod(output, 0o600)
        let run = try CLI.cropzoom([input, "-o", output, "-y"])
        #expect(run.status == 0, "\(run)")
        #expect(Self.mode(output) == 0o600, "mode after -y: \(String(Self.mode(output) ?? 0, radix: 8))")

        let original = Data("read-only".utf8)
        try FileManager.default.removeItem(atPath: output)
        try original.write(to: URL(fileURLWithPath: output))
        chmod(output, 0o444)
        let refused = try CLI.cropzoom([input, "-o", output, "-y"])
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.errorLines.first?.contains("read-only") == true, "\(refused.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == original)

        let forced = try CLI.cropzoom([input, "-o", output, "--force"])
        #expect(forced.status == 0, "\(forced)")
        #expect(try Self.frameCount(output) == (try Self.frameCount(input)))
        #expect(Self.mode(output) == 0o444)
        #expect(Files.names(in: scratch.url) == ["out.mp4"], "left behind: \(Files.names(in: scratch.url))")
    }

    @Test("an image sequence lands as its own files, nothing hidden left; a second run refuses without -y")
    func imageSequence() throws {
        let scratch = try Scratch()
        let folder = try scratch.folder("frames")
        let pattern = folder.appendingPathComponent("g_%03d.jpg").path
        let input = try Files.sample("std-h264-aac.mp4").path
        let run = try CLI.cropzoom([input, "-o", pattern, "--codec", "mjpeg", "--end", "0.5", "--audio", "none"])
        #expect(run.status == 0, "\(run)")
        let expected = try Oracle.videoFramePTS(input).filter { $0 < 0.5 }.count
        let names = Files.names(in: folder)
        #expect(names.count == expected && names.first == "g_001.jpg", "\(names)")
        #expect(Files.temporaryLeftovers(in: folder).isEmpty)
        let before = try Data(contentsOf: folder.appendingPathComponent("g_001.jpg"))

        let again = try CLI.cropzoom([
            input, "-o", pattern, "--codec", "mjpeg", "--zoom", "2", "--end", "0.5",
            "--audio", "none",
        ])
        #expect(again.status == 2 && again.errorLines.first?.contains("g_001.jpg") == true, "\(again)")
        #expect(try Data(contentsOf: folder.appendingPathComponent("g_001.jpg")) == before)
        #expect(Files.names(in: folder) == names, "left behind: \(Files.names(in: folder))")
    }

    @Test("an image sequence is encoded as its extension says (PNG, JPEG); one image name for every frame is refused")
    func imageSequenceCodec() throws {
        let scratch = try Scratch()
        let folder = try scratch.folder("frames")
        let input = try Files.sample("std-h264-aac.mp4").path
        for (ext, codec) in [("png", "png"), ("jpg", "mjpeg")] {
            let run = try CLI.cropzoom([
                input, "-o", folder.appendingPathComponent("f_%03d.\(ext)").path, "--end", "0.2",
            ])
            #expect(run.status == 0, "\(run)")
            let first = folder.appendingPathComponent("f_001.\(ext)").path
            #expect(try Oracle.streams(first).first?.codecName == codec, "f_001.\(ext)")
        }
        let single = folder.appendingPathComponent("still.png").path
        let refused = try CLI.cropzoom([input, "-o", single, "--end", "0.2"])
        #expect(refused.status == 2 && refused.errorLines.first?.contains("still_%04d.png") == true, "\(refused)")
        #expect(!Files.exists(URL(fileURLWithPath: single)) && Files.temporaryLeftovers(in: folder).isEmpty)
    }

    @Test("a container whose own codec refuses the picture (DV at 640x360): exit 2, one line, nothing written")
    func containerCodecRefusesPicture() throws {
        let scratch = try Scratch()
        let run = try CLI.cropzoom([try Files.sample("std-h264-aac.mp4").path, "-o", scratch.file("out.dv").path])
        #expect(run.status == 2, "\(run)")
        #expect(
            run.errorLines.count == 1 && run.errorLines[0].contains("dvvideo cannot encode 640x360"), "\(run.stderr)")
        #expect(Files.names(in: scratch.url).isEmpty)
    }

    @Test("an HLS playlist names segments that exist under their own names")
    func hlsSegments() throws {
        let scratch = try Scratch()
        let folder = try scratch.folder("hls")
        let playlist = folder.appendingPathComponent("out.m3u8")
        let input = try Files.sample("std-h264-aac.mp4").path
        let run = try CLI.cropzoom([input, "-o", playlist.path])
        #expect(run.status == 0, "\(run)")
        let text = try String(contentsOf: playlist, encoding: .utf8)
        let segments = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        #expect(!segments.isEmpty)
        for s in segments {
            #expect(!s.hasPrefix(".") && Files.exists(folder.appendingPathComponent(s)), "segment \(s)")
        }
        #expect(Files.temporaryLeftovers(in: folder).isEmpty, "\(Files.names(in: folder))")
    }

    @Test("an output name of 244 bytes works (the temporary name is shortened to fit)")
    func longName() throws {
        let scratch = try Scratch()
        let name = String(repeating: "é", count: 60) + String(repeating: "n", count: 120) + ".mp4"
        #expect(name.utf8.count == 244)
        let output = scratch.file(name)
        let run = try CLI.cropzoom([try Files.sample("std-h264-aac.mp4").path, "-o", output.path])
        #expect(run.status == 0, "\(run)")
        #expect(Files.names(in: scratch.url) == [name])
    }

    @Test("a temporary left by a killed run is removed, with a note, by the next run on that output")
    func staleTemporary() throws {
        let scratch = try Scratch()
        let input = try AtomicOutputTests.longInput(in: scratch)
        let out = try scratch.folder("out")
        let output = out.appendingPathComponent("clip.mkv").path
        let killed = try CLI.cropzoom([input.path, "-o", output, "--threads", "1"], sending: SIGKILL, after: 1.0)
        #expect(killed.killedBySignal && killed.status == SIGKILL, "\(killed)")
        let left = Files.temporaryLeftovers(in: out)
        try #require(left.count == 1, "a killed run leaves its temporary: \(Files.names(in: out))")

        let next = try CLI.cropzoom([try Files.sample("std-h264-aac.mp4").path, "-o", output])
        #expect(next.status == 0, "\(next)")
        #expect(next.stderrLines.contains { $0.contains("removed") && $0.contains(left[0]) }, "\(next.stderr)")
        #expect(Files.names(in: out) == ["clip.mkv"], "\(Files.names(in: out))")
    }

    @Test("killing batch (SIGKILL) ends its running children, which leave nothing behind")
    func batchChildrenEndWithParent() throws {
        let scratch = try Scratch()
        let inputs = try scratch.folder("in")
        let long = try AtomicOutputTests.longInput(in: scratch)
        try FileManager.default.moveItem(at: long, to: inputs.appendingPathComponent("a.mp4"))
        let out = try scratch.folder("out")
        // "[t]ranscode" matches the children's command lines, not this script's own.
        let script =
            ChildProcess.shellQuoted([
                try CLI.binary(), "batch", inputs.path, "--out-dir", out.path,
                "--jobs", "1", "--progress", "none",
            ])
            + " & batch=$!; for i in $(seq 100); do pgrep -f -- "
            + ChildProcess.shellQuoted(["[t]ranscode " + inputs.path]) + " >/dev/null && break; sleep 0.05; done; "
            + "sleep 0.3; kill -9 $batch; for i in $(seq 100); do pgrep -f -- "
            + ChildProcess.shellQuoted(["[t]ranscode " + inputs.path])
            + " >/dev/null || exit 0; sleep 0.1; done; echo ORPHAN; exit 0"
        let run = try CLI.bash(script, timeout: 120)
        #expect(!run.stdout.contains("ORPHAN"), "a batch child outlived its parent: \(run)")
        #expect(Files.temporaryLeftovers(in: out).isEmpty, "\(Files.names(in: out))")
    }
}
