import ArgumentParser
import CropZoomKit
import Foundation

/// Slurm's commands, as `batch submit` uses them: `sbatch` to submit the array, `squeue` to see which
/// tasks are still queued or running, `scancel` to cancel. Nothing else of Slurm is assumed (no accounting
/// database): whether a shard finished is read from its report, not from the scheduler.
enum Slurm {
    /// The commands `--scheduler slurm` needs, found on PATH, or the usage error that names what is missing.
    static func checkCommands() throws {
        let missing = ["sbatch", "squeue", "scancel"].filter { ChildProcess.which($0) == nil }
        if !missing.isEmpty {
            throw CommandError.usage(
                "--scheduler slurm: \(missing.joined(separator: ", ")) not found on PATH (Slurm's client commands: "
                    + "Debian's slurm-client)")
        }
    }

    /// The array job script for the batch whose state folder is `folder`: each task runs its shard of the manifest
    /// (`--shard auto`: SLURM_ARRAY_TASK_ID, the count from the manifest) as a job step, and exits 75 when SIGTERM
    /// stops it, which Slurm requeues when its slurm.conf says `RequeueExit=75`. `options` are the user's
    /// `--scheduler-option`s, as `#SBATCH` lines so that the script can be resubmitted by hand as it is.
    static func jobScript(
        executable: String, folder: String, shards: Int, options: [String], jobs: Int?, command: [String]
    ) -> String {
        let manifest = folder + "/manifest.json"
        var run = [executable, "batch", "shard", manifest, "--shard", "auto", "--requeue-exit", "75"]
        run += ["--progress", "lines"]
        if let jobs { run += ["--jobs", "\(jobs)"] }
        let q = ChildProcess.shellQuoted
        var lines = [
            "#!/bin/bash",
            "# A cropzoom batch as a Slurm job array: one task per shard, numbered 1-\(shards). Each task runs its",
            "# shard of manifest.json (the file list and settings, fixed at submission); a task that runs again",
            "# (requeued after SIGTERM, or resubmitted) skips the files it already wrote.",
            "# Submitted by: \(q(command))",
            "# Resubmit by hand, e.g. shards 2 and 4: sbatch --array=2,4 \(q([folder + "/job.sh"]))",
            "#SBATCH --job-name=\(q(["cropzoom-" + jobName(folder: folder)]))",
            "#SBATCH --output=\(q([folder + "/logs/shard-%a.log"]))",
            "#SBATCH --open-mode=append",
            "#SBATCH --requeue",
        ]
        lines += options.map { "#SBATCH \($0)" }
        lines += [
            "# A variable of a supervising cropzoom must not reach the shard (it would end with that process).",
            "unset \(ProcessSignals.parentVariable)",
            "# As a job step (srun), so that 'scancel --signal=TERM JOB_TASK' (a preemption) reaches it: the batch",
            "# shell itself gets only SIGKILL.",
            "exec srun \(q(run))",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The job's name after the output folder (`cropzoom-NAME` in squeue), letters, digits, `.-_` only.
    static func jobName(folder: String) -> String {
        let outDir = URL(fileURLWithPath: folder).deletingLastPathComponent().lastPathComponent
        let name = String(outDir.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
        return name.isEmpty ? "batch" : String(name.prefix(40))
    }

    /// Submits `script` as the array `array` ("1-4", "2,4"): `sbatch --parsable --array=ARRAY SCRIPT`. Returns the
    /// job ID; throws sbatch's own message.
    static func submit(script: String, array: String) throws -> String {
        let run = try SchedulerCommand.run(["sbatch", "--parsable", "--array=\(array)", script])
        let id = run.lines.last.map { String($0.split(separator: ";").first ?? "") } ?? ""
        guard run.status == 0, !id.isEmpty, id.allSatisfy(\.isNumber) else {
            throw CommandError.failure("sbatch: \(run.message)")
        }
        return id
    }

    /// A task of an array job that is still queued or running.
    struct Task: Equatable {
        var job: String
        /// The array index (the shard), or nil when squeue did not give one.
        var index: Int?
        var state: String
    }

    /// The tasks of `jobs` that squeue still lists (pending, running, completing, requeued): none when every task
    /// has ended. Nil when squeue failed (slurmctld not answering); a job squeue no longer knows has ended.
    static func liveTasks(_ jobs: [String]) -> [Task]? {
        guard !jobs.isEmpty else { return [] }
        guard
            let run = try? SchedulerCommand.run([
                "squeue", "-h", "-r", "-j", jobs.joined(separator: ","), "-o", "%F %K %T",
            ])
        else { return nil }
        if run.status != 0 {
            // An ended job that slurmctld has purged (MinJobAge) is refused as an invalid ID.
            return run.message.contains("Invalid job id") ? [] : nil
        }
        return run.lines.compactMap { line in
            let words = line.split(separator: " ").map(String.init)
            guard words.count == 3 else { return nil }
            return Task(job: words[0], index: Int(words[1]), state: words[2])
        }
    }

    /// Cancels `jobs` (`scancel`): Slurm sends SIGTERM to the tasks, which stop their current file cleanly, then
    /// SIGKILL after its KillWait. A cancelled task is not requeued.
    static func cancel(_ jobs: [String]) {
        guard !jobs.isEmpty else { return }
        _ = try? SchedulerCommand.run(["scancel"] + jobs)
    }
}

/// One of the scheduler's commands, run to its end: its exit status and what it printed (stdout and stderr together).
struct SchedulerCommand {
    var status: Int32
    var lines: [String]

    /// Its output in one line, for an error message.
    var message: String {
        let text = lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
        return text.isEmpty ? "exit \(status)" : text
    }

    /// Runs `command` (looked up on PATH) with `MeasuredChild`, without cropzoom's supervising variable in its
    /// environment (sbatch passes the environment on to the job, whose shard would end with this process).
    static func run(_ command: [String]) throws -> SchedulerCommand {
        let child = try MeasuredChild.run(
            command[0], Array(command.dropFirst()), reading: 1, both: true, supervised: false)
        return SchedulerCommand(status: child.signaled ? 128 + child.status : child.status, lines: child.lines)
    }
}
