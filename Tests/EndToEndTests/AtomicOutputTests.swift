// Contract point 4: the output appears only when complete; an existing OUTPUT is untouched
// unless -y; failures and signals leave neither OUTPUT nor a `.…cropzoom-tmp-*` file; MP4
// output is faststart.

import CropZoomKit
import Foundation
import Testing

@Suite("Atomic output")
struct AtomicOutputTests {

    /// A 20 s 1280x720 testsrc2 clip with AAC (long enough to interrupt), made with the ffmpeg CLI.
    static func longInput(in scratch: Scratch) throws -> URL {
        let url = scratch.file("long.mp4")
        try Clip.video(seconds: 20, size: "1280x720", rate: 30).audio(.sine(frequency: 440, seconds: 20))
            .codec("libx264", preset: "ultrafast", options: ["-crf", "23"]).audioCodec("aac").shortest()
            .write(to: url.path)
        return url
    }

    @Test("an existing OUTPUT is refused without -y (exit 2) and left byte for byte")
    func existingOutputRefused() throws {
        let scratch = try Scratch()
        let output = scratch.file("out.mp4")
        let original = Data("precious bytes that must survive\n".utf8)
        try original.write(to: output)
        let input = try Files.sample("std-h264-aac.mp4").path
        let run = try CLI.cropzoom([input, "-o", output.path, "--zoom", "2"])
        #expect(run.status == 2, "expected exit 2: \(run)")
        #expect(
            run.errorLines.count == 1 && run.errorLines.first?.contains(output.path) == true,
            "expected one error line naming \(output.path): \(run.stderr)")
        #expect(try Data(contentsOf: output) == original, "the existing OUTPUT was modified")
        #expect(Files.names(in: scratch.url) == ["out.mp4"], "left behind: \(Files.names(in: scratch.url))")
    }

    @Test("OUTPUT == INPUT is refused (exit 2), the input untouched")
    func outputIsInput() throws {
        let scratch = try Scratch()
        let input = scratch.file("clip.mp4")
        try FileManager.default.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: input)
        let before = try Data(contentsOf: input)
        for (inputArg, outputArg) in [
            (input.path, input.path),
            (input.path, scratch.url.path + "/./clip.mp4"),
            (input.path, scratch.url.path + "/../" + scratch.url.lastPathComponent + "/clip.mp4"),
        ] {
            for extra in [[], ["-y"]] {
                let run = try CLI.cropzoom([inputArg, "-o", outputArg] + extra)
                #expect(run.status == 2, "OUTPUT \(outputArg) is INPUT \(inputArg) \(extra): \(run)")
                #expect(run.errorLines.count == 1, "expected one error line: \(run.stderr)")
            }
        }
        #expect(try Data(contentsOf: input) == before, "the input was modified")
        #expect(Files.names(in: scratch.url) == ["clip.mp4"], "left behind: \(Files.names(in: scratch.url))")
    }

    @Test("with -y an existing OUTPUT is replaced by the new file")
    func overwriteReplaces() throws {
        let scratch = try Scratch()
        let output = scratch.file("out.mp4")
        try Data("old".utf8).write(to: output)
        let input = try Files.sample("std-h264-aac.mp4").path
        let run = try CLI.cropzoom([input, "-o", output.path, "--zoom", "2", "-y"])
        #expect(run.status == 0, "\(run)")
        let frames = try Contract.checkFrames(input: input, output: output)
        #expect(frames.problems.isEmpty, "the replaced OUTPUT should be the new transcode: \(frames.problems)")
        #expect(Files.names(in: scratch.url) == ["out.mp4"], "left behind: \(Files.names(in: scratch.url))")
    }

    @Test("a failed run with -y leaves the existing OUTPUT untouched")
    func failureKeepsExistingOutput() throws {
        let scratch = try Scratch()
        let output = scratch.file("out.mp4")
        let original = Data("keep me".utf8)
        try original.write(to: output)
        let input = try Files.sample("truncated.mp4").path
        let run = try CLI.cropzoom([input, "-o", output.path, "-y", "--strict"])
        #expect(run.status == 3, "truncated input: \(run)")
        #expect(try Data(contentsOf: output) == original, "the existing OUTPUT was modified by a failed run")
        #expect(Files.names(in: scratch.url) == ["out.mp4"], "left behind: \(Files.names(in: scratch.url))")
    }

    @Test("MP4 and MOV outputs are faststart (moov before mdat)", arguments: ["mp4", "mov"])
    func faststart(_ ext: String) throws {
        let scratch = try Scratch()
        let output = scratch.file("out.\(ext)")
        let run = try CLI.cropzoom([try Files.sample("std-h264-aac.mp4").path, "-o", output.path, "--zoom", "2"])
        try #require(run.status == 0, "\(run)")
        let boxes = try Contract.topLevelBoxes(output)
        #expect(!boxes.isEmpty)
        let problems = try Contract.checkFaststart(output)
        #expect(problems.isEmpty, "\(problems.joined(separator: "; "))")
    }

    struct SignalCase: Sendable, CustomTestStringConvertible {
        var signal: Int32
        var name: String
        var expectedStatus: Int32
        var testDescription: String { "\(name) -> exit \(expectedStatus)" }
    }

    @Test(
        "a signal during a long run exits 130/143 and leaves nothing behind",
        arguments: [
            SignalCase(signal: SIGINT, name: "SIGINT", expectedStatus: 130),
            SignalCase(signal: SIGTERM, name: "SIGTERM", expectedStatus: 143),
        ])
    func signalLeavesNothing(_ c: SignalCase) throws {
        let scratch = try Scratch()
        let input = try Self.longInput(in: scratch)
        let outFolder = try scratch.folder("out")
        let output = outFolder.appendingPathComponent("out.mp4")
        // Sent once the run is writing (its temporary is there), however slowly it started (a sanitized build).
        let writing = { !Files.temporaryLeftovers(in: outFolder).isEmpty }
        let run = try CLI.cropzoom([input.path, "-o", output.path, "--zoom", "1.5"], sending: c.signal, once: writing)
        #expect(run.seconds < 15, "cropzoom took \(run.seconds) s; it should stop soon after the signal")
        #expect(
            !run.killedBySignal && run.status == c.expectedStatus,
            "expected exit \(c.expectedStatus) after \(c.name): \(run)")
        #expect(run.errorLines.count <= 1, "at most one error line: \(run.stderr)")
        #expect(Files.names(in: outFolder).isEmpty, "left behind after \(c.name): \(Files.names(in: outFolder))")

        // The same with an existing OUTPUT and -y: it survives the interruption.
        let original = Data("existing".utf8)
        try original.write(to: output)
        let again = try CLI.cropzoom([input.path, "-o", output.path, "-y"], sending: c.signal, once: writing)
        #expect(!again.killedBySignal && again.status == c.expectedStatus, "\(again)")
        #expect(try Data(contentsOf: output) == original, "the existing OUTPUT was modified by an interrupted run")
        #expect(Files.names(in: outFolder) == ["out.mp4"], "left behind: \(Files.names(in: outFolder))")
    }

    @Test("a write error (file size limit, EFBIG) exits 1 with one error line and leaves nothing")
    func writeError() throws {
        let scratch = try Scratch()
        let input = try Self.longInput(in: scratch)
        let outFolder = try scratch.folder("out")
        let output = outFolder.appendingPathComponent("out.mp4")
        let binary = try CLI.binary()
        // ulimit -f counts 512-byte blocks: 200 = 100 KB.
        let script =
            "ulimit -f 200; exec " + ChildProcess.shellQuoted([binary, input.path, "-o", output.path, "--zoom", "1.5"])
        let run = try CLI.bash(script)
        #expect(!run.killedBySignal, "cropzoom was killed (SIGXFSZ not ignored?): \(run)")
        #expect(run.status == 1, "expected exit 1: \(run)")
        let lines = run.stderrLines
        #expect(lines.count == 1, "expected exactly one stderr line: \(run.stderr)")
        #expect(
            lines.first?.hasPrefix("cropzoom: error: \(output.path): ") == true,
            "the error should name the output path: \(run.stderr)")
        #expect(Files.names(in: outFolder).isEmpty, "left behind after a write error: \(Files.names(in: outFolder))")
    }

    @Test("OUTPUT in a folder that does not exist fails cleanly, nothing created")
    func missingOutputFolder() throws {
        let scratch = try Scratch()
        let output = scratch.file("nope/out.mp4")
        let run = try CLI.cropzoom([try Files.sample("std-h264-aac.mp4").path, "-o", output.path])
        #expect(run.status == 2 || run.status == 1, "expected a usage (2) or processing (1) failure: \(run)")
        #expect(
            run.errorLines.count == 1 && run.errorLines.first?.contains(output.path) == true,
            "expected one error line naming \(output.path): \(run.stderr)")
        #expect(Files.names(in: scratch.url).isEmpty, "left behind: \(Files.names(in: scratch.url))")
    }
}
