import ArgumentParser
import CropZoomKit
import Foundation

/// A batch run by a scheduler (`batch submit`): its state folder in the output folder
/// (`OUT/cropzoom-batch/`: manifest.json, job.sh, submissions.json, reports/shard-I.json, logs/), the submission,
/// the wait with progress read from the shards' reports, resubmission of shards that did not finish, and the merged
/// report at the end.
struct ScheduledBatch {
    /// One `sbatch` of the array (the first, or a retry of some shards).
    struct Submission: Codable, Equatable {
        var job: String
        var array: String
        var submitted: String
    }

    let folder: String

    init(outDir: String) { folder = BatchManifest.folder(outDir: outDir) }

    var manifestPath: String { folder + "/manifest.json" }
    var scriptPath: String { folder + "/job.sh" }
    var submissionsPath: String { folder + "/submissions.json" }
    var reportsFolder: String { folder + "/reports" }
    var logsFolder: String { folder + "/logs" }
    func reportPath(shard: Int) -> String { BatchManifest.reportPath(manifest: manifestPath, shard: shard) }

    /// The submissions so far (none when the file is missing or unreadable).
    func submissions() -> [Submission] {
        (try? readSnakeCaseJSON([Submission].self, from: submissionsPath, what: "a list of submissions")) ?? []
    }

    func record(_ submission: Submission) throws {
        try Bench.writeAtomically(try snakeCaseJSON(submissions() + [submission]), to: submissionsPath)
    }

    /// Each shard's report as it stands (nil: none yet, or not readable).
    func reports(shards: Int) -> [Int: BatchReport] {
        var found: [Int: BatchReport] = [:]
        for i in 1...shards where RawPath.exists(reportPath(shard: i)) {
            found[i] = try? BatchReport.read(reportPath(shard: i))
        }
        return found
    }

    // MARK: Submission

    /// Writes the state folder for `manifest` and submits the array (`sbatch --array=1-N`). A folder that holds
    /// another batch is refused; when the submission fails, what was written is removed.
    func submit(_ manifest: BatchManifest, options: [String], executable: String) throws -> Submission {
        if RawPath.exists(manifestPath) {
            throw CommandError.usage(
                "\(folder) holds a batch submitted earlier (cropzoom batch status \(manifest.outDir) shows it; "
                    + "remove the folder to submit another into \(manifest.outDir))")
        }
        try Slurm.checkCommands()
        let outDir = URL(fileURLWithPath: folder).deletingLastPathComponent().path
        let created = (folder: !RawPath.exists(folder), outDir: !RawPath.exists(outDir))
        do {
            for dir in [reportsFolder, logsFolder] {
                do { try RawPath.makeDirectories(dir) } catch {
                    throw CommandError.usage("\(dir): cannot create the batch's state folder: \(error.reason)")
                }
            }
            try Bench.writeAtomically(try manifest.json(), to: manifestPath)
            let script = Slurm.jobScript(
                executable: executable, folder: folder, shards: manifest.shards, options: options,
                jobs: manifest.jobs, command: manifest.command)
            try Bench.writeAtomically(script, to: scriptPath)
            chmod(scriptPath, 0o755)
            let array = "1-\(manifest.shards)"
            let submission = Submission(
                job: try Slurm.submit(script: scriptPath, array: array), array: array, submitted: BatchManifest.now())
            try record(submission)
            return submission
        } catch {
            // Nothing was submitted (or the record of it could not be written): nothing is left behind.
            if created.folder { try? FileManager.default.removeItem(atPath: folder) }
            if created.outDir { rmdir(outDir) }
            throw error
        }
    }

    // MARK: Waiting

    /// Waits for the batch's jobs to leave the queue, showing progress from the shards' reports; resubmits the shards
    /// that did not finish, up to `retries` times; on SIGINT/SIGTERM cancels the jobs and waits for their end.
    /// Returns the merged report and the signal that stopped the wait (0 if none).
    ///
    /// The reports are read every `tick` (a finished one is kept, not read again); squeue is asked every `poll`, and
    /// at once when every shard has reported finished, so the end is seen within a tick of the last shard's.
    func wait(
        _ manifest: BatchManifest, retries: Int, style: StatusStyle, started: Double, poll: Double = 1,
        tick: Double = 0.2
    ) throws -> (report: BatchReport, signal: Int32) {
        var jobs = submissions().map(\.job)
        var retried = 0
        var signal: Int32 = 0
        var emptyPolls = 0
        var failingSince: Double? = nil
        var asked = -Double.infinity
        var finishedReports: [Int: BatchReport] = [:]
        var latest: [Int: BatchReport] = [:]
        var read = -Double.infinity
        var said = ""
        let total = manifest.files.count
        // The unfinished shards' reports, read again at most every tick, and more seldom the more there are (a
        // thousand shards on a shared file system: every 5 s); a finished one is kept.
        func readReports(force: Bool) {
            let unfinished = Double(manifest.shards - finishedReports.count)
            guard force || monotonicSeconds() - read >= max(tick, unfinished * 0.005) else { return }
            read = monotonicSeconds()
            for i in 1...manifest.shards where finishedReports[i] == nil && RawPath.exists(reportPath(shard: i)) {
                latest[i] = try? BatchReport.read(reportPath(shard: i))
                if latest[i]?.isFinished == true { finishedReports[i] = latest[i] }
            }
        }
        while true {
            if ProcessSignals.pending != 0 && signal == 0 {
                signal = ProcessSignals.pending
                style.clear()
                Stderr.write("cropzoom: cancelling job\(jobs.count == 1 ? "" : "s") \(jobs.joined(separator: ", "))\n")
                Slurm.cancel(jobs)
            }
            readReports(force: false)
            var allFinished = finishedReports.count == manifest.shards
            if !allFinished && monotonicSeconds() - asked < poll {
                pause(tick, wake: signal == 0)
                continue
            }
            asked = monotonicSeconds()
            guard let live = Slurm.liveTasks(jobs) else {
                let since = failingSince ?? asked
                failingSince = since
                if asked - since > 60 {
                    style.clear()
                    throw CommandError.failure(
                        "squeue has not answered for a minute: the batch may still be running "
                            + "(cropzoom batch status \(manifest.outDir))")
                }
                pause(tick, wake: signal == 0)
                continue
            }
            failingSince = nil
            let done = latest.values.reduce(0) { n, r in
                n + r.files.filter { BatchReport.isDecisive($0.result) }.count
            }
            let running = live.filter { $0.state == "RUNNING" || $0.state == "COMPLETING" }.count
            let text =
                "[\(done)/\(total)] \(finishedReports.count)/\(manifest.shards) shards finished; \(running) running, "
                + "\(live.count - running) queued"
            if text != said {
                style.say("batch", text)
                said = text
            }
            if live.isEmpty {
                // Whether every shard finished, from their reports as they are now.
                readReports(force: true)
                allFinished = finishedReports.count == manifest.shards
            }
            if live.isEmpty && allFinished { break }
            // A task between its end and its requeue may be missing from one listing: two empty ones in a row.
            emptyPolls = live.isEmpty ? emptyPolls + 1 : 0
            if emptyPolls < 2 {
                pause(tick, wake: signal == 0)
                continue
            }
            let unfinished = (1...manifest.shards).filter { finishedReports[$0] == nil }
            if signal != 0 { break }
            let list = unfinished.map(String.init).joined(separator: ",")
            let shards = "shard\(unfinished.count == 1 ? "" : "s") \(list)"
            if retried >= retries {
                style.clear()
                Stderr.write(
                    "cropzoom: \(shards) did not finish (retried \(retried) time\(retried == 1 ? "" : "s")): their "
                        + "files are not done; the logs are in \(logsFolder)\n")
                // No task of the batch runs any more: what a killed shard was writing is abandoned.
                for file in manifest.files {
                    for path in AtomicFile.removeTemporaries(of: file.output) {
                        Stderr.write("cropzoom: removed \(path), left by a shard that did not finish\n")
                    }
                }
                break
            }
            retried += 1
            let job = try Slurm.submit(script: scriptPath, array: list)
            try record(Submission(job: job, array: list, submitted: BatchManifest.now()))
            jobs.append(job)
            emptyPolls = 0
            style.clear()
            Stderr.write(
                "cropzoom: note: \(shards) did not finish: resubmitted as job \(job) (retry \(retried) of "
                    + "\(retries))\n")
        }
        style.clear()
        return (try merged(manifest, seconds: monotonicSeconds() - started), signal)
    }

    /// The shards' reports merged (`BatchReport.merge`), every file of the manifest in it.
    func merged(_ manifest: BatchManifest, seconds: Double? = nil) throws -> BatchReport {
        let found = reports(shards: manifest.shards).sorted { $0.key < $1.key }
        var report = try BatchReport.merge(
            found.map(\.value), names: found.map { reportPath(shard: $0.key) },
            expected: manifest.files.map { BatchItem(input: $0.input, output: $0.output) }, outDir: manifest.outDir)
        if let seconds { report.seconds = (seconds * 1000).rounded() / 1000 }
        return report
    }

    /// Sleeps `seconds`, or less when a signal comes and `wake` (the first signal; once the jobs are being
    /// cancelled, the wait goes on at its pace).
    private func pause(_ seconds: Double, wake: Bool) {
        for _ in 0..<max(1, Int(seconds * 10)) {
            if wake && ProcessSignals.pending != 0 { return }
            usleep(100_000)
        }
    }
}
