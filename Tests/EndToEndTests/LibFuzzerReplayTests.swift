// In-process fuzzing (issue 17; Benchmarks/RELIABILITY.md, "In-process fuzzing (libFuzzer)"): the plain build of
// the libFuzzer target, CropZoomFuzz (Tests/fuzz/libfuzzer), is a replay driver that runs each file through the fuzz
// entry as libFuzzer does — read from memory, planned, its first frames transcoded to the null output. The samples
// and every input libFuzzer has found crashing, once fixed (Tests/fuzz/libfuzzer-regressions/; none so far), must
// run to the end: no signal, exit 0, one answer per file.

import CropZoomCore
import CropZoomSystem
import Foundation
import Testing

@Suite("libFuzzer replay")
struct LibFuzzerReplayTests {
    /// CropZoomFuzz beside the cropzoom binary the tests run (`.build/debug`, or `CROPZOOM_TEST_BINARY`'s folder).
    static func driver() throws -> String {
        let path = URL(fileURLWithPath: try CLI.binary()).deletingLastPathComponent()
            .appendingPathComponent("CropZoomFuzz").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Oracle.Failure("the replay driver is missing at \(path): run `swift build` first")
        }
        return path
    }

    /// The files a folder holds (not hidden), in name order.
    static func files(in folder: URL) -> [String] {
        Files.names(in: folder).filter { !$0.hasPrefix(".") }
    }

    @Test("the samples and the saved libFuzzer inputs go through the fuzz entry without a crash")
    func replay() throws {
        let samples = try #require(Oracle.samplesDirectory, "samples/ is missing: run samples/generate.sh")
        let root = try #require(Oracle.packageRoot)
        let regressions = root.appendingPathComponent("Tests/fuzz/libfuzzer-regressions")
        let folders = [samples] + (Files.exists(regressions) ? [regressions] : [])
        let run = try CLI.run(try LibFuzzerReplayTests.driver(), folders.map(\.path), timeout: 600)
        #expect(!run.killedBySignal && run.status == 0, "\(run)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let expected = folders.flatMap { folder in
            LibFuzzerReplayTests.files(in: folder).map { folder.appendingPathComponent($0).path }
        }
        #expect(lines.count == expected.count, "one line per file: \(run)")
        for (line, file) in zip(lines, expected) {
            #expect(
                line.hasPrefix("\(file): transcoded ") || line.hasPrefix("\(file): refused: memory: "), "\(line)")
        }
        // The memory input really is read: a sound clip is transcoded, at most the fuzz entry's 10 frames.
        let clip = samples.appendingPathComponent("std-h264-aac.mp4").path
        #expect(lines.contains("\(clip): transcoded 10 frame(s)"), "\(run)")
        let damaged = samples.appendingPathComponent("not-media.mp4").path
        #expect(lines.contains { $0.hasPrefix("\(damaged): refused: memory: not a media file") }, "\(run)")
    }

    @Test("an input read from memory opens nothing else: an ffconcat list naming a sample is refused")
    func memoryOpensNoOtherFile() throws {
        let scratch = try Scratch()
        let root = try #require(Oracle.packageRoot)
        _ = try Files.sample("std-h264-aac.mp4")
        let list = scratch.file("list.ffconcat")
        // FFmpeg's concat demuxer takes a relative name as safe, and opens it beside the list: from memory, the
        // working folder.
        try Data("ffconcat version 1.0\nfile samples/std-h264-aac.mp4\n".utf8).write(to: list)
        let command = ChildProcess.shellQuoted([try LibFuzzerReplayTests.driver(), list.path])
        let run = try CLI.bash("cd \(ChildProcess.shellQuoted([root.path])) && \(command)")
        #expect(!run.killedBySignal && run.status == 0, "\(run)")
        #expect(run.stdout.hasPrefix("\(list.path): refused: memory: "), "\(run)")
    }
}
