// File names that are not valid UTF-8 survive from the command line to the files: transcode,
// batch (folder scan) and job files read and write them byte for byte.

import CropZoomKit
import Foundation
import Testing

@Suite("Raw file names")
struct RawFileNameTests {
    /// Runs a bash script in `folder` with `cz` bound to the cropzoom binary.
    static func bash(_ script: String, in folder: URL) throws -> CLIResult {
        let cz = ChildProcess.shellQuoted([try CLI.binary()])
        return try CLI.bash("cd \(ChildProcess.shellQuoted([folder.path])) && cz() { \(cz) \"$@\"; } && \(script)")
    }

    /// Frames in `name` (a bash word such as $'out\xfe.mp4'), counted by ffprobe.
    static func frames(_ name: String, in folder: URL) throws -> String {
        let r = try bash(
            "ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames "
                + "-of csv=p=0 \(name)", in: folder)
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("transcode: an input and an output named with bytes that are not UTF-8")
    func transcode() throws {
        let scratch = try Scratch()
        try FileManager.default.copyItem(at: try Files.sample("one-frame.mp4"), to: scratch.file("src.mp4"))
        let run = try Self.bash(
            "cp src.mp4 $'in\\xff.mp4' && cz $'in\\xff.mp4' -o $'out\\xfe.mp4' --progress none",
            in: scratch.url)
        #expect(run.status == 0, "\(run)")
        #expect(try Self.frames("$'out\\xfe.mp4'", in: scratch.url) == "1")
        // Messages carry the name's own bytes (read back here with U+FFFD for each).
        #expect(run.stderr.contains("wrote out\u{FFFD}.mp4:"), "\(run)")
        // NDJSON stays valid UTF-8: the byte is the private-use character U+10FF00 + byte there.
        let json = try Self.bash("cz $'in\\xff.mp4' -o $'j\\xfe.mp4' --progress json", in: scratch.url)
        #expect(json.status == 0 && json.stderr.contains("\"output\":\"j\u{10FFFE}.mp4\""), "\(json)")
        let missing = try Self.bash("cz $'gone\\xff.mp4' -o x.mp4", in: scratch.url)
        #expect(
            missing.status == 3 && missing.stderr.contains("gone\u{FFFD}.mp4: No such file or directory"),
            "\(missing)")
    }

    @Test("batch and run: a folder scan and a job file find the file and write its output under its own bytes")
    func batchAndRun() throws {
        let scratch = try Scratch()
        let dir = try scratch.folder("in")
        let source = dir.appendingPathComponent("src.mp4")
        try FileManager.default.copyItem(at: try Files.sample("one-frame.mp4"), to: source)
        let batch = try Self.bash(
            "mv in/src.mp4 $'in/bad\\xffname.mp4' && cz batch in --out-dir out --progress none",
            in: scratch.url)
        #expect(batch.status == 0 && batch.stdout.contains("1 file: 1 ok"), "\(batch)")
        #expect(try Self.frames("$'out/bad\\xffname-zoom.mp4'", in: scratch.url) == "1")
        let job = "printf 'clips:\\n  - {input: \"in/bad\\xffname.mp4\", output: \"o/\\xfe.mkv\"}\\n' > j.yaml"
        let run = try Self.bash(job + " && cz run j.yaml --progress none", in: scratch.url)
        #expect(run.status == 0 && run.stdout.contains("1 file: 1 ok"), "\(run)")
        #expect(try Self.frames("$'o/\\xfe.mkv'", in: scratch.url) == "1")
    }

    @Test("a --report file named with bytes that are not UTF-8 is written under those bytes")
    func reportName() throws {
        let scratch = try Scratch()
        let dir = try scratch.folder("in")
        try FileManager.default.copyItem(at: try Files.sample("one-frame.mp4"), to: dir.appendingPathComponent("a.mp4"))
        let read = "python3 -c 'import json,sys; print(json.load(open(sys.argv[1], \"rb\"))[\"summary\"][\"ok\"])'"
        let run = try Self.bash(
            "cz batch in --out-dir out --progress none --report $'r\\xfe.json' && "
                + read + " $'r\\xfe.json'", in: scratch.url)
        // Python opens the file by the very bytes bash gives it ($'r\xfe.json') and reads the report.
        #expect(run.status == 0 && run.stdout.hasSuffix("1\n"), "\(run)")
    }
}
