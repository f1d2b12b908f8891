import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom batch watch FOLDER… --out-dir DIR` (before, `batch --watch`): scans the folders every second and
/// transcodes each media file once it is complete (``WatchedFiles``), one at a time with every thread, until a signal
/// ends the watch; then the table and the report.
struct BatchWatch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Watch folders: transcode each media file once it is complete, until Ctrl-C or SIGTERM.",
        discussion: """
            A file is complete when its size is unchanged for 2 s, no process is writing it, and it reads as a whole \
            media file; files already there come first, one at a time with every core. A file that failed is tried \
            again when it changes. Ctrl-C or SIGTERM ends the watch: exit 0, 1 when a file failed, 4 when one was \
            salvaged; 2 bad usage (nothing was started).
            """)

    @OptionGroup var files: BatchFileOptions
    @OptionGroup var outputs: BatchOutputOptions

    @Option(
        help: ArgumentHelp(
            "Take a file that does not read as whole media once it has been unchanged this long (default 30).",
            valueName: "SECONDS"))
    var settle: Double?

    @Option(help: "auto (a status line on a terminal, else none), bar, lines (one line per finished file), none.")
    var progress: StatusStyle = .auto

    @OptionGroup var settings: BatchSettingsOptions

    func validate() throws {
        for input in files.inputs where !RawPath.isDirectory(input) {
            throw ValidationError("batch watch watches folders: \(input) is not one")
        }
        if let settle, !(settle >= 0 && settle.isFinite) {
            throw ValidationError("--settle takes seconds ≥ 0 (got \(settle))")
        }
        try outputs.refuseExistingReport()
    }

    func run() throws {
        _ = try settings.configuration()  // the settings are checked before the watch starts
        let outRoot = files.outRoot
        let skipExisting = outputs.skipExisting
        let overwrite = outputs.overwrite
        ProcessSignals.install()
        let runner = BatchRunner(
            executable: Bench.executablePath(), arguments: settings.settings.arguments(), threadsPerJob: Batch.cores,
            jobs: 1, skipExisting: skipExisting, overwrite: overwrite, style: progress.resolved)
        Stderr.write("cropzoom: watching \(files.inputs.joined(separator: ", ")) (Ctrl-C ends the watch)\n")
        let started = monotonicSeconds()
        var seen: [String: WatchedFiles.Seen] = [:]
        var taken = Set<String>()
        // Files that failed, as they were when taken: one that changes since is tried again.
        var failedAs: [String: WatchedFiles.Seen] = [:]
        var done: [BatchItem] = []
        while ProcessSignals.pending == 0 {
            for (path, before) in failedAs {
                guard let now = WatchedFiles.look(path), !now.sameFile(as: before) else { continue }
                failedAs[path] = nil
                taken.remove(path)
                Stderr.write("cropzoom: \(path) changed since it failed: trying it again once it is complete\n")
            }
            let found = BatchInputs.droppingOutputs((try? files.scan()) ?? [], output: files.output)
            let byPath = Dictionary(found.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
            let fresh = found.map(\.path).filter { !taken.contains($0) }
            for path in WatchedFiles.complete(fresh, seen: &seen, settle: settle ?? WatchedFiles.defaultSettle) {
                guard let file = byPath[path], ProcessSignals.pending == 0 else { break }
                taken.insert(path)
                let takenAs = WatchedFiles.look(path)
                var item = Batch.probed(BatchItem(input: path, output: files.output(file)), scanned: true)
                if item.result == .pending && RawPath.exists(item.output) && !skipExisting && !overwrite {
                    item.result = .failed
                    item.error = "\(item.output): already exists (--skip-existing keeps it, -y replaces it)"
                    item.exitCode = 2
                }
                if item.result == .pending {
                    let dir = URL(fileURLWithPath: item.output).deletingLastPathComponent().path
                    do { try RawPath.makeDirectories(dir) } catch {
                        item.result = .failed
                        item.error = "\(dir): cannot create the output folder: \(error.reason)"
                    }
                }
                if item.result == .pending { item = runner.run([item])[0] }
                if item.result == .skipped || item.result == .failed || item.result == .salvaged {
                    Stderr.write(
                        "cropzoom: \(item.result.rawValue) \(path): \(item.reason ?? item.error ?? item.warning ?? "")\n"
                    )
                }
                if item.result == .failed, item.exitCode != 2, let takenAs { failedAs[path] = takenAs }
                // A file tried again replaces its earlier result in the table and the report.
                done.removeAll { $0.input == item.input }
                done.append(item)
            }
            for _ in 0..<Int(WatchedFiles.interval * 10) where ProcessSignals.pending == 0 { usleep(100_000) }
        }
        Stdout.write(Batch.table(done))
        if let report = outputs.report {
            try Bench.writeAtomically(
                try Batch.reportJSON(
                    done, outDir: outRoot.path, jobs: 1, threadsPerJob: Batch.cores, shard: nil,
                    seconds: monotonicSeconds() - started, interrupted: false), to: report)
        }
        try Batch.exit(for: done)
    }
}
