import ArgumentParser
import CropZoomKit
import Foundation
import Testing

@testable import cropzoom

/// The pieces of a batch spread over a scheduler that need no scheduler: which shard a task is (`--shard auto`),
/// merging reports, the job script, the batch options' checks.
@Suite("Shards, reports and the job script")
struct ShardAndReportTests {
    typealias Shard = (index: Int, count: Int)

    func resolve(_ text: String, _ count: Int?, _ env: [String: String]) throws -> Shard {
        try ShardIndex.resolve(text, count: count, environment: env)
    }

    @Test("--shard auto reads Slurm's task ID (1-based) and count, Kubernetes' and AWS Batch's index (0-based)")
    func autoFromEachScheduler() throws {
        let slurm = [
            "SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "1",
            "SLURM_ARRAY_TASK_MAX": "4",
        ]
        #expect(try resolve("auto", nil, slurm) == (3, 4))
        // Resubmitted alone (--array=3): Slurm says 1 task, 3-3; the count comes from the manifest or --shards.
        let alone = [
            "SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_ARRAY_TASK_MIN": "3",
            "SLURM_ARRAY_TASK_MAX": "3",
        ]
        #expect(try resolve("auto", 4, alone) == (3, 4))
        #expect(throws: ValidationError.self) { try resolve("auto", nil, alone) }
        #expect(try resolve("auto", 8, ["JOB_COMPLETION_INDEX": "0"]) == (1, 8))
        #expect(try resolve("auto", 8, ["JOB_COMPLETION_INDEX": "7"]) == (8, 8))
        #expect(try resolve("auto", 5, ["AWS_BATCH_JOB_ARRAY_INDEX": "2"]) == (3, 5))
        // Slurm first when several are set.
        #expect(try resolve("auto", 4, alone.merging(["JOB_COMPLETION_INDEX": "0"]) { a, _ in a }) == (3, 4))
        #expect(try resolve("2/4", 4, [:]) == (2, 4))
    }

    @Test("--shard auto refuses what does not name a shard: no variable, no count, out of range, not a number")
    func autoRefusals() throws {
        func message(_ text: String, _ count: Int?, _ env: [String: String]) -> String {
            do {
                _ = try resolve(text, count, env)
                return "accepted"
            } catch let e as ValidationError {
                return e.message
            } catch {
                return "\(error)"
            }
        }
        #expect(message("auto", 4, [:]).contains("none of SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX"))
        #expect(message("auto", nil, ["JOB_COMPLETION_INDEX": "1"]).contains("add --shards N"))
        #expect(message("auto", nil, ["AWS_BATCH_JOB_ARRAY_INDEX": "1"]).contains("add --shards N"))
        #expect(message("auto", 8, ["JOB_COMPLETION_INDEX": "8"]).contains("not a shard of 1…8"))
        #expect(message("auto", 4, ["SLURM_ARRAY_TASK_ID": "0"]).contains("number the array 1-N"))
        #expect(message("auto", 4, ["SLURM_ARRAY_TASK_ID": "x"]).contains("not a number"))
        #expect(message("2/3", 4, [:]).contains("the batch has 4"))
    }

    func item(_ input: String, _ result: BatchItem.Result, frames: Int? = nil) -> BatchItem {
        var i = BatchItem(input: input, output: "/out/\(input)")
        i.result = result
        i.frames = frames
        return i
    }

    func report(_ items: [BatchItem], outDir: String = "/out", finished: Bool = true, seconds: Double = 1)
        -> BatchReport
    {
        BatchReport(
            items, outDir: outDir, jobs: 1, threadsPerJob: 2, shard: "1/2", seconds: seconds,
            interrupted: !finished, finished: finished)
    }

    @Test("merge: a decisive result beats interrupted/not started in either order; the later decisive one wins")
    func mergePrecedence() throws {
        let first = report([item("a", .ok, frames: 10), item("b", .interrupted), item("c", .failed)], finished: false)
        let second = report([item("a", .interrupted), item("b", .ok, frames: 7), item("c", .ok, frames: 3)])
        let merged = try BatchReport.merge([first, second], names: ["1.json", "2.json"])
        #expect(merged.files.map(\.input) == ["a", "b", "c"])
        #expect(merged.files.map(\.result) == [.ok, .ok, .ok])
        #expect(merged.files.map(\.frames) == [10, 7, 3])
        #expect(merged.summary["ok"] == 3 && merged.summary["total"] == 3 && merged.summary["interrupted"] == 0)
        #expect(!merged.interrupted && merged.finished == false && merged.mergedFrom == ["1.json", "2.json"])
        // The same reports in the other order: c's last decisive entry is now "failed".
        let reversed = try BatchReport.merge([second, first], names: ["2.json", "1.json"])
        #expect(reversed.files.map(\.result) == [.ok, .ok, .failed])
    }

    @Test("merge: files of the submitted list that no report names are 'not started'; other folders are refused")
    func mergeExpectedAndFolders() throws {
        let r = report([item("b", .ok)], seconds: 4)
        let merged = try BatchReport.merge(
            [r, report([item("a", .skipped)], seconds: 9)], names: ["x", "y"],
            expected: [item("a", .pending), item("b", .pending), item("z", .pending)])
        #expect(merged.files.map(\.result) == [.skipped, .ok, .notRun])
        #expect(merged.interrupted && merged.finished == false && merged.seconds == 9)
        #expect(merged.summary["not_started"] == 1)
        #expect(throws: CommandError.self) {
            try BatchReport.merge([r, report([], outDir: "/elsewhere")], names: ["x", "y"])
        }
        #expect(throws: CommandError.self) { try BatchReport.merge([], names: []) }
        // No report yet (no shard ran), the folder given: every file not started.
        let none = try BatchReport.merge([], names: [], expected: [item("a", .pending)], outDir: "/out")
        #expect(none.files.map(\.result) == [.notRun] && none.interrupted && none.finished == false)
        #expect(throws: CommandError.self) { try BatchReport.merge([r], names: ["x"], outDir: "/elsewhere") }
    }

    @Test("a report round-trips through its JSON; what is not a report is refused naming the file")
    func reportReadBack() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cz-report-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = report([item("a", .ok, frames: 5), item("b", .failed)])
        let path = dir.appendingPathComponent("r.json").path
        try r.json().write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try BatchReport.read(path) == r)
        let bad = dir.appendingPathComponent("bad.json").path
        try "{\"schema\": \"cropzoom-bench\"}".write(toFile: bad, atomically: true, encoding: .utf8)
        #expect(throws: CommandError.self) { try BatchReport.read(bad) }
        do {
            _ = try BatchReport.read(bad)
        } catch let e as CommandError {
            #expect(e.description.hasPrefix("\(bad): not a cropzoom batch report") && e.exitCode == 2, "\(e)")
        }
    }

    @Test("the job script: #SBATCH lines with the user's options, the shard command with --requeue-exit 75")
    func jobScript() {
        let script = Slurm.jobScript(
            executable: "/opt/cz/cropzoom", folder: "/data/out dir/cropzoom-batch", shards: 4,
            options: ["--partition=video", "--time=1:00:00"], jobs: 2, command: ["cropzoom", "batch", "in"])
        let lines = script.split(separator: "\n").map(String.init)
        #expect(lines.first == "#!/bin/bash")
        #expect(lines.contains("#SBATCH --partition=video") && lines.contains("#SBATCH --time=1:00:00"))
        // Named after the output folder (its characters that a job name may hold), before the user's options.
        #expect(
            lines.firstIndex(of: "#SBATCH --job-name=cropzoom-out_dir")! < lines.firstIndex(
                of: "#SBATCH --partition=video")!)
        #expect(lines.contains("#SBATCH --output='/data/out dir/cropzoom-batch/logs/shard-%a.log'"))
        #expect(lines.contains("unset \(ProcessSignals.parentVariable)"))
        #expect(
            lines.last
                == "exec srun /opt/cz/cropzoom batch shard '/data/out dir/cropzoom-batch/manifest.json' "
                + "--shard auto "
                + "--requeue-exit 75 --progress lines --jobs 2")
        // Every #SBATCH line comes before the first command (sbatch stops reading them there).
        let firstCommand = lines.firstIndex { !$0.hasPrefix("#") }!
        #expect(lines.lastIndex { $0.hasPrefix("#SBATCH") }! < firstCommand)
    }

    @Test("each batch subcommand checks its own options before anything runs; the old spellings are checked alike")
    func batchOptionChecks() throws {
        /// nil when `args` (after `cropzoom batch`) parse, else the message.
        func refused(_ args: [String]) -> String? {
            do {
                _ = try CropZoom.parseAsRoot(try BatchSpellings.route(["batch"] + args).arguments)
                return nil
            } catch {
                return CropZoom.message(for: error)
            }
        }
        #expect(refused(["submit", "in", "--out-dir", "o"])?.contains("needs --shards N") == true)
        #expect(refused(["in", "--out-dir", "o", "--scheduler", "slurm"])?.contains("needs --shards N") == true)
        #expect(refused(["submit", "in", "--out-dir", "o", "--shards", "2", "--shard", "1/2"]) != nil)
        #expect(refused(["in", "--out-dir", "o", "--shards", "2"])?.contains("--shards N is for") == true)
        #expect(refused(["submit", "in", "--out-dir", "o", "--shards", "0"])?.contains("1 to 1000") == true)
        #expect(
            refused(["submit", "in", "--out-dir", "o", "--shards", "2", "--scheduler-option", "x"])?.contains(
                "one option of sbatch") == true)
        #expect(refused(["submit", "in", "--out-dir", "o", "--shards", "2", "--retries", "101"]) != nil)
        #expect(refused(["shard", "m.json"])?.contains("--shard") == true)
        #expect(refused(["--manifest", "m.json"])?.contains("--shard") == true)
        #expect(refused(["shard", "m.json", "--shard", "auto", "--zoom", "2"])?.contains("--zoom") == true)
        #expect(refused(["shard", "m.json", "--shard", "0/2"])?.contains("1 ≤ I ≤ N") == true)
        #expect(refused(["status", "o", "in"]) != nil)
        #expect(refused(["--status", "o", "in"]) != nil)
        #expect(refused(["in", "--out-dir", "o", "--requeue-exit", "0"])?.contains("1 to 255") == true)
        #expect(refused(["run", "in", "--out-dir", "o", "--jobs", "300"])?.contains("1 to 256") == true)
        #expect(refused(["run", "in", "--out-dir", "o", "-y", "--skip-existing"])?.contains("contradict") == true)
        #expect(refused(["run", "in"])?.contains("missing --out-dir") == true)
        #expect(refused(["run", "--out-dir", "o"])?.contains("no INPUT") == true)
        #expect(refused(["in", "--out-dir", "o", "--name", "x.mp4"])?.contains("neither {stem} nor {name}") == true)
        #expect(refused(["in", "--out-dir", "o", "--codec", "none"])?.contains("writes nothing") == true)
        #expect(refused(["watch", ".", "--out-dir", "o", "--settle", "nan"])?.contains("--settle") == true)
        #expect(refused(["watch", ".", "--out-dir", "o", "--dry-run"])?.contains("--dry-run") == true)
        #expect(refused(["submit", "in", "--out-dir", "o", "--shards", "2"]) == nil)
        #expect(refused(["in", "--out-dir", "o", "--scheduler", "slurm", "--shards", "2"]) == nil)
        #expect(refused(["in", "--out-dir", "o", "--shard", "auto", "--shards", "2", "--requeue-exit", "75"]) == nil)
        #expect(refused(["shard", "m.json", "--shard", "auto"]) == nil)
        #expect(refused(["--manifest", "m.json", "--shard", "auto"]) == nil)
        #expect(refused(["status", "o"]) == nil)
        #expect(refused(["--status", "o"]) == nil)
        #expect(refused(["watch", ".", "--out-dir", "o", "--settle", "5"]) == nil)
    }
}
