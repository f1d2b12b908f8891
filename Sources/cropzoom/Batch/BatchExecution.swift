import ArgumentParser
import CropZoomKit
import Foundation

// What the batch commands (`batch run`, `watch`, `submit`, `shard`) and `run` share once they know their files: the
// cores and the split into files at once, sharding, output names, the look at each input, the conflicts refused
// before any work, the run itself and its exit code.
extension Batch {
    /// The CPUs this process may use (affinity, cgroup quota), and in a Slurm job no more than Slurm gave it
    /// (SLURM_CPUS_ON_NODE: a cluster without task binding leaves every CPU visible).
    static var cores: Int {
        let slurm = ProcessInfo.processInfo.environment["SLURM_CPUS_ON_NODE"].flatMap { Int($0) } ?? Int.max
        return max(1, min(UsableCPUs.count, slurm))
    }

    /// "I/N" → (I, N), 1 ≤ I ≤ N.
    static func parseShard(_ text: String) throws -> (index: Int, count: Int) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, (1...n).contains(i) else {
            throw ValidationError("--shard takes I/N with 1 ≤ I ≤ N, e.g. 2/4 (got '\(text)')")
        }
        return (i, n)
    }

    /// The shard's part of `paths` (sorted by path first): positions I-1, I-1+N, I-1+2N, …
    static func select<T>(_ items: [T], path: (T) -> String, shard: (index: Int, count: Int)?) -> [T] {
        let sorted = items.sorted { path($0) < path($1) }
        guard let shard else { return sorted }
        return sorted.enumerated().filter { $0.offset % shard.count == shard.index - 1 }.map(\.element)
    }

    /// Default files at once: one per two cores (each with two threads: the thread plan's best
    /// per-file efficiency, Benchmarks/README.md "Batch"), at least one.
    static func defaultJobs(cores: Int) -> Int { max(1, cores / 2) }

    /// The output name for `input` from `template`.
    static func outputName(_ template: String, input: String) -> String {
        let file = (input as NSString).lastPathComponent
        let ext = (file as NSString).pathExtension
        let stem = ext.isEmpty ? file : String(file.dropLast(ext.count + 1))
        return template.replacingOccurrences(of: "{stem}", with: stem)
            .replacingOccurrences(of: "{ext}", with: ext)
            .replacingOccurrences(of: "{name}", with: file)
    }

    /// `item` after a look at its input (`MediaProbe.probe`, streams only): a file found by scanning (`scanned`)
    /// that is not media or has no video is skipped with the reason; one named directly fails; what cannot be
    /// read fails with its error, except a recording without its index (repaired by its transcode's --reference).
    static func probed(_ item: BatchItem, scanned: Bool) -> BatchItem {
        var item = item
        do {
            let info = try MediaProbe.probe(item.input, frameRate: false)
            if !info.hasVideo && scanned {
                item.result = .skipped
                item.reason = "no video stream"
            } else if !info.hasVideo {
                item.result = .failed
                item.error = "\(item.input): no video stream"
                item.exitCode = 3
            }
        } catch  where RepairJob.isIndexless(item.input) {
            // A recording without its index: its own transcode repairs it with --reference (or says how to).
        } catch  where scanned && error.kind == .inputUnreadable && error.reason.hasPrefix("not a media file") {
            item.result = .skipped
            item.reason = "not a media file"
        } catch {
            item.result = .failed
            item.error = error.message
            item.exitCode = error.exitCode
        }
        return item
    }

    /// Files at once and threads per file on `cores` cores: `requested` (at most one file per
    /// core: a larger request is capped, with a note) or the default.
    static func split(requested: Int?, cores: Int) -> (jobs: Int, threadsPerJob: Int) {
        var jobs = requested ?? defaultJobs(cores: cores)
        if jobs > cores {
            Stderr.write("cropzoom: note: --jobs \(jobs) is more than the \(cores) cores: running \(cores) at once\n")
            jobs = cores
        }
        return (jobs, max(1, cores / jobs))
    }

    /// What `batch` and `run` share once the items are known: runs the pending ones (signals
    /// passed on to running files), prints the table, writes the report; exits 128+signal when
    /// interrupted, 1 when an item failed.
    static func execute(
        _ items: [BatchItem], runner: BatchRunner, report: String?, outDir: String, shard: String?,
        requeueExit: Int32? = nil
    ) throws {
        ProcessSignals.install()
        let started = monotonicSeconds()
        let done = runner.run(items)
        let seconds = monotonicSeconds() - started
        let signal = ProcessSignals.pending
        Stdout.write(table(done))
        if let report {
            try Bench.writeAtomically(
                try reportJSON(
                    done, outDir: outDir, jobs: runner.jobs, threadsPerJob: runner.threadsPerJob,
                    shard: shard, seconds: seconds, interrupted: signal != 0), to: report)
        }
        if signal == SIGTERM, let requeueExit { throw ExitCode(requeueExit) }
        if signal != 0 { throw ExitCode(128 + signal) }
        try exit(for: done)
    }

    /// Exit code 4 when nothing failed but some inputs were damaged (`salvaged`: their outputs hold what could be
    /// read), so that a script can tell it from a clean batch.
    static let damagedExit: Int32 = 4

    /// A finished batch's exit: 1 when a file's result `fails`, else 4 when one was salvaged, else 0.
    static func exit(for items: [BatchItem], fails: (BatchItem.Result) -> Bool = { $0 == .failed }) throws {
        if items.contains(where: { fails($0.result) }) { throw ExitCode(1) }
        if items.contains(where: { $0.result == .salvaged }) { throw ExitCode(damagedExit) }
    }

    /// Refuses, before any work (batch and job files alike): two inputs with one output, an
    /// output that is an input, an existing output the item may not replace (`mayReplace`).
    /// Messages start with `prefix` and end with the hints that say how to resolve them.
    static func checkConflicts(
        _ items: [BatchItem], inputs: [String], mayReplace: (Int) -> Bool, prefix: String = "",
        renameHint: String, existsHint: String
    ) throws {
        var owner: [String: String] = [:]
        for (k, item) in items.enumerated() where item.result == .pending {
            if let other = owner[item.output] {
                throw CommandError.usage(
                    "\(prefix)\(other) and \(item.input) would both be written to \(item.output) (\(renameHint))")
            }
            owner[item.output] = item.input
            if inputs.contains(where: { FileIdentity.same($0, item.output) }) {
                throw CommandError.usage(
                    "\(prefix)\(item.output) is an input: an output never replaces an input (\(renameHint))")
            }
            if !mayReplace(k) && RawPath.exists(item.output) {
                throw CommandError.usage("\(prefix)\(item.output) already exists (\(existsHint))")
            }
        }
    }
}
