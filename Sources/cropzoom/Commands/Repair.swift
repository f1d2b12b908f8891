import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom repair BROKEN -o FIXED --reference GOOD`: brings back a recording whose writer never wrote its index.
struct Repair: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Bring back an MP4/MOV recording whose writer crashed before writing its index (moov).",
        discussion:
            "The broken file's media data is read sample by sample with what a complete recording from the same "
            + "camera and settings (--reference) teaches, and the samples are copied byte for byte into FIXED with "
            + "their times (docs/repair.md). Exit codes: 0 something playable was recovered (a line says what, and "
            + "what was not), 1 failed while writing, 2 bad usage, a reference that cannot serve, or an input that is "
            + "not broken, 3 the input is not an MP4/MOV/3GP or nothing could be recovered. A fragmented recording "
            + "cut mid-fragment needs no reference: its whole fragments are copied into a regular file. Given "
            + "folders, it lists and restores what cropzoom's killed live recordings left (as `cropzoom recover`).")

    @Argument(
        help: ArgumentHelp(
            "The recording to repair; or folders to look in for the recordings cropzoom's own killed runs left "
                + "(as `cropzoom recover` does).", valueName: "recording|folder"))
    var inputs: [String]

    @Option(name: [.short, .customLong("output")], help: "The repaired file (MP4/MOV).")
    var output: String?

    @Option(
        help: "A complete recording from the same camera and settings (not needed for a cut fragmented recording).")
    var reference: String?

    @Flag(help: "Folders: only list the recordings that can be restored; move nothing.")
    var list = false

    @Flag(help: "Folders: look in subfolders too.")
    var recursive = false

    @Flag(name: [.customShort("y"), .customLong("overwrite")], help: "Replace an existing output.")
    var overwrite = false

    @Flag(help: "Print the report as JSON on stdout (stable snake_case field names).")
    var json = false

    @Option(
        help: ArgumentHelp(
            "How progress is shown: json (NDJSON events on stderr: progress, then done with the report or error), "
                + "or none (the summary line only).", valueName: "json|none"))
    var progress: ProgressStyle = .none

    enum ProgressStyle: String, ExpressibleByArgument, CaseIterable {
        case json, none
    }

    /// One NDJSON event of `--progress json`.
    struct Event: Encodable {
        var event: String
        var percent: Double? = nil
        var bytes: Int64? = nil
        var samples: Int? = nil
        var repair: RepairReport? = nil
        var message: String? = nil
        var exitCode: Int32? = nil
    }

    private func emit(_ e: Event) {
        guard progress == .json, let line = try? snakeCaseJSON(e, pretty: false) else { return }
        Stderr.write(line)
    }

    /// Folders: the leftovers of cropzoom's own recordings; a file: one repair.
    private var folders: Bool { inputs.contains { RawPath.isDirectory($0) } }

    func validate() throws {
        if folders {
            if let file = inputs.first(where: { !RawPath.isDirectory($0) }) {
                throw ValidationError("\(file): give either one recording to repair or folders, not both")
            }
            if output != nil || reference != nil {
                throw ValidationError(
                    "folders are searched for cropzoom's own recordings: -o and --reference are for a file")
            }
            return
        }
        if inputs.count != 1 { throw ValidationError("one recording at a time (\(inputs.count) given)") }
        if output == nil { throw ValidationError("missing -o FIXED: where the repaired recording goes") }
        if list || recursive { throw ValidationError("--list and --recursive are for folders") }
    }

    func run() throws {
        if folders {
            try Recover.restore(folders: inputs, recursive: recursive, list: list, json: json)
            return
        }
        guard let input = inputs.first, let output else { throw ExitCode(2) }
        var config = RepairConfiguration(input: input, reference: reference, output: output)
        config.overwrite = overwrite
        ProcessSignals.install()
        let job = RepairJob(configuration: config) { Stderr.write("cropzoom: \($0)\n") }
        // The repair on this thread (nothing else to do meanwhile); its progress events, when shown, printed by a task
        // as they come, which ends with them.
        let printed = DispatchSemaphore(value: 0)
        if progress == .json {
            Task {
                for await case .progress(let fraction, let bytes, let samples) in job.events {
                    emit(
                        Event(
                            event: "progress", percent: (fraction * 1000).rounded() / 10, bytes: bytes, samples: samples
                        ))
                }
                printed.signal()
            }
        }
        let outcome = Result { () throws(CropZoomError) in try job.runHere() }
        if progress == .json { printed.wait() }
        switch outcome {
        case .success(let report):
            emit(Event(event: "done", repair: report))
            Stderr.write("cropzoom: \(report.line)\n")
            if json { print(try snakeCaseJSON(report), terminator: "") }
        case .failure(let error):
            emit(Event(event: "error", message: error.message, exitCode: error.exitCode))
            Stderr.write("cropzoom: error: \(error.message)\n")
            throw ExitCode(error.exitCode)
        }
    }
}
