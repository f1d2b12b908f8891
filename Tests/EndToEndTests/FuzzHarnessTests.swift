// The mutation harness (Tests/fuzz/harness.py, issue 17) is itself tested: each of its checks fails on a fake
// cropzoom that breaks it (a crash, a hang, a usage exit, two error lines, a file left behind, a success whose file
// does not hold what it says), and a short run of the real binary on mutated samples passes every check.

import CropZoomCore
import CropZoomSystem
import Foundation
import Testing

@Suite("Fuzz harness")
struct FuzzHarnessTests {
    /// A stand-in for cropzoom that misbehaves as `mode` says; otherwise it writes a real MP4 copy as its output
    /// with a truthful `done` event (and JSON for probe).
    static func fake(_ mode: String, sample: String) -> String {
        """
        #!/usr/bin/env python3
        import json, os, shutil, signal, sys, time
        args = sys.argv[1:]
        mode = "\(mode)"
        if mode == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if mode == "hang":
            time.sleep(600)
        if mode == "usage":
            print("cropzoom: error: unexpected argument", file=sys.stderr)
            sys.exit(2)
        if args[0] == "probe":
            print(json.dumps({"path": args[-1], "streams": []}))
            sys.exit(0)
        out = args[args.index("-o") + 1]
        name = "stdin" if args[0] == "-" else args[0]
        if mode == "two-lines":
            print(f"cropzoom: error: {name}: damaged", file=sys.stderr)
            print(f"cropzoom: error: {name}: damaged again", file=sys.stderr)
            sys.exit(3)
        if mode == "leave":
            open(out + ".part", "w").write("x")
            print(f"cropzoom: error: {name}: damaged", file=sys.stderr)
            sys.exit(1)
        shutil.copy("\(sample)", out)
        frames = 61 if mode == "silent" else 60
        print(json.dumps({"event": "done", "frames_out": frames}), file=sys.stderr)
        """
    }

    /// The harness's summary (its JSON names are snake_case).
    struct Summary: Decodable {
        var files: Int
        var crashes: Int
        var hangs: Int
        var leftBehind: Int
        var silentFailures: Int
        var problems: Int

        enum CodingKeys: String, CodingKey {
            case files, crashes, hangs, problems
            case leftBehind = "left_behind"
            case silentFailures = "silent_failures"
        }
    }

    static func harness(_ arguments: [String], in scratch: Scratch) throws -> (CLIResult, Summary?) {
        let root = try #require(Oracle.packageRoot)
        let summaryPath = scratch.file("summary-\(UUID().uuidString).json").path
        let run = try CLI.run(
            "/usr/bin/env",
            [
                "python3", root.appendingPathComponent("Tests/fuzz/harness.py").path, "--summary", summaryPath,
                "--out", scratch.file("fuzz-out").path,
            ] + arguments,
            timeout: 600)
        let data = FileManager.default.contents(atPath: summaryPath)
        return (run, try data.map { try JSONDecoder().decode(Summary.self, from: $0) })
    }

    @Test(
        """
        each check fails on a fake cropzoom that breaks it: crash, hang, exit 2, two error lines, a file left \
        behind, a done event the file does not match
        """,
        arguments: ["crash", "hang", "usage", "two-lines", "leave", "silent"])
    func checksCatchTheirFault(_ mode: String) throws {
        let scratch = try Scratch()
        // std-h264-aac.mp4 holds 60 video packets: the fake's truthful done event says 60.
        let sample = try Files.sample("std-h264-aac.mp4").path
        // Written here as text, made an executable by another process: a file this (multi-threaded) process had
        // open for writing can be inherited by a child another test forks meanwhile, and executing it then fails
        // with "Text file busy".
        let text = scratch.file("fake-cropzoom.txt")
        try Self.fake(mode, sample: sample).write(to: text, atomically: true, encoding: .utf8)
        let fake = scratch.file("fake-cropzoom")
        let made = try CLI.bash("install -m 755 \(ChildProcess.shellQuoted([text.path, fake.path]))")
        try #require(made.status == 0, "\(made)")
        let (run, summary) = try Self.harness(
            ["--binary", fake.path, "--count", "12", "--jobs", "2", "--no-corpus", "--timeout", "3", "--seed", "7"],
            in: scratch)
        let s = try #require(summary, "no summary: \(run)")
        #expect(s.files == 12)
        switch mode {
        case "crash": #expect(s.crashes == 12 && run.status == 1, "\(run)")
        case "hang": #expect(s.hangs == 12 && run.status == 1, "\(run)")
        case "usage": #expect(s.problems == 12 && run.stdout.contains("exit code 2"), "\(run)")
        case "two-lines": #expect(s.problems >= 1 && run.stdout.contains("2 error lines"), "\(run)")
        case "leave": #expect(s.leftBehind >= 1 && run.status == 1, "\(run)")
        default: #expect(s.silentFailures >= 1 && run.stdout.contains("done says 61 frames"), "\(run)")
        }
    }

    @Test("the real binary on mutated samples: no crash, no hang, one error line, nothing left, no silent failure")
    func realBinaryPasses() throws {
        let scratch = try Scratch()
        let (run, summary) = try Self.harness(
            ["--binary", try CLI.binary(), "--count", "40", "--jobs", "2", "--no-corpus", "--seed", "17"],
            in: scratch)
        let s = try #require(summary, "no summary: \(run)")
        #expect(s.files == 40 && s.problems == 0 && run.status == 0, "\(run)")
    }

    @Test(
        """
        every case the harness found (Tests/fuzz/regressions) passes every check again, with the exit code its fix \
        gives; corpus cases are skipped, and said to be, when ../shared/corpus is absent
        """)
    func regressionsReplay() throws {
        let scratch = try Scratch()
        let folder = try #require(Oracle.packageRoot).appendingPathComponent("Tests/fuzz/regressions")
        let recipes = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        let sampleCases = try recipes.filter {
            let text = try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)
            return text.contains(#""source": "samples/"#)
        }
        let expected = Oracle.corpusDirectory == nil ? sampleCases.count : recipes.count
        if Oracle.corpusDirectory == nil {
            print("../shared/corpus is absent: \(recipes.count - sampleCases.count) corpus cases are not replayed")
        }
        try #require(!sampleCases.isEmpty && recipes.count >= 20, "the saved cases are gone: \(recipes)")
        let (run, summary) = try Self.harness(
            ["--binary", try CLI.binary(), "--replay", folder.path, "--jobs", "2"], in: scratch)
        let s = try #require(summary, "no summary: \(run)")
        #expect(s.files == expected && s.problems == 0 && run.status == 0, "\(run)")
    }
}
