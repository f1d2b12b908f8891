// A batch's shards as a scheduler runs them, without the scheduler: `--shard auto` from each scheduler's variable,
// a shard of a manifest run again (requeued, resubmitted) doing only what is left, SIGTERM with --requeue-exit,
// and `cropzoom report merge`. The real Slurm cluster is in SlurmTests.

import CropZoomKit
import Foundation
import Testing

@Suite("Shards")
struct ShardTests {
    /// Five small clips, a.mp4 … e.mp4.
    static func clips(_ scratch: Scratch) throws -> URL {
        let dir = try scratch.folder("in")
        for name in ["a", "b", "c", "d", "e"] {
            try FileManager.default.copyItem(
                at: try Files.sample("one-frame.mp4"), to: dir.appendingPathComponent("\(name).mp4"))
        }
        return dir
    }

    /// The inputs a `--dry-run` line names, by file name.
    static func planned(_ run: CLIResult) -> [String] {
        run.stdout.split(separator: "\n").compactMap { line in
            line.split(separator: ":").first.map { String($0.split(separator: "/").last ?? "") }
        }
    }

    @Test("--shard auto: SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX give --shard I/N's files")
    func shardAutoFromEachVariable() throws {
        let scratch = try Scratch()
        let dir = try Self.clips(scratch)
        let out = scratch.file("out").path
        let binary = try CLI.binary()
        for i in 1...3 {
            let explicit = try CLI.cropzoom(["batch", dir.path, "--out-dir", out, "--dry-run", "--shard", "\(i)/3"])
            let want = Self.planned(explicit)
            let names = ["a.mp4", "b.mp4", "c.mp4", "d.mp4", "e.mp4"]
            #expect(explicit.status == 0 && want == stride(from: i - 1, to: 5, by: 3).map { names[$0] }, "\(explicit)")
            let settings = [
                "SLURM_ARRAY_TASK_ID=\(i) SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=3",
                "SLURM_ARRAY_TASK_ID=\(i) --shards 3",
                "JOB_COMPLETION_INDEX=\(i - 1) --shards 3",
                "AWS_BATCH_JOB_ARRAY_INDEX=\(i - 1) --shards 3",
            ]
            for setting in settings {
                let parts = setting.components(separatedBy: " --")
                let extra = parts.count > 1 ? "--" + parts[1] : ""
                let run = try CLI.bash(
                    "env -u SLURM_ARRAY_TASK_ID \(parts[0]) '\(binary)' batch '\(dir.path)' --out-dir '\(out)' "
                        + "--dry-run --shard auto \(extra)")
                #expect(run.status == 0 && Self.planned(run) == want, "\(setting): \(run)")
            }
        }
        // Kubernetes gives no count: without --shards, one error line, exit 2.
        let run = try CLI.bash("JOB_COMPLETION_INDEX=0 '\(binary)' batch '\(dir.path)' --out-dir '\(out)' --shard auto")
        #expect(run.status == 2 && run.errorLines.count == 1 && run.stderr.contains("add --shards N"), "\(run)")
        #expect(!Files.exists(scratch.file("out")))
    }

    /// A manifest as `batch submit` writes it, for the files in `dir` (sorted) into `out`.
    /// With `skipExisting` or `overwrite`, each output there now is recorded as existing at submission (device,
    /// inode, size), as `batch submit` does.
    static func manifest(
        _ files: [(input: URL, output: URL)], out: URL, shards: Int, arguments: [String] = ["--preset", "ultrafast"],
        skipExisting: Bool = false, overwrite: Bool = false
    ) throws -> URL {
        let state = out.appendingPathComponent("cropzoom-batch")
        try FileManager.default.createDirectory(
            at: state.appendingPathComponent("reports"), withIntermediateDirectories: true)
        let entries = files.map { f in
            var entry: [String: Any] = ["input": f.input.path, "output": f.output.path, "scanned": false]
            var st = stat()
            if stat(f.output.path, &st) == 0 {
                entry["existing"] = ["device": st.st_dev, "inode": st.st_ino, "bytes": st.st_size]
            }
            return entry
        }
        let manifest: [String: Any] = [
            "schema": "cropzoom-batch-manifest", "version": 1, "created": "2026-11-25T19:00:00Z",
            "command": ["cropzoom", "batch"], "out_dir": out.path, "shards": shards, "arguments": arguments,
            "skip_existing": skipExisting, "overwrite": overwrite, "files": entries,
        ]
        let path = state.appendingPathComponent("manifest.json")
        try JSONSerialization.data(withJSONObject: manifest).write(to: path)
        return path
    }

    @Test(
        """
        a shard run again does only what is left: written files kept (same inode), their entries carried over; \
        batch status reads the shards' reports
        """)
    func shardRunAgain() throws {
        let scratch = try Scratch()
        let dir = try scratch.folder("in")
        let out = try scratch.folder("out")
        let fm = FileManager.default
        try fm.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: dir.appendingPathComponent("a.mp4"))
        try fm.copyItem(at: try Files.sample("unknown-codec.mkv"), to: dir.appendingPathComponent("b.mkv"))
        try fm.copyItem(at: try Files.sample("vfr-h264.mp4"), to: dir.appendingPathComponent("c.mp4"))
        let files = ["a.mp4", "b.mkv", "c.mp4"].map {
            (dir.appendingPathComponent($0), out.appendingPathComponent("z-" + $0))
        }
        let manifest = try Self.manifest(files, out: out, shards: 2)
        let report = out.appendingPathComponent("cropzoom-batch/reports/shard-1.json")
        // Shard 1 of 2: a.mp4 and c.mp4.
        let first = try CLI.cropzoom(["batch", "shard", manifest.path, "--shard", "1/2"])
        #expect(first.status == 0, "\(first)")
        var r = try BatchTests.report(report)
        #expect(r["finished"] as? Bool == true && r["shard"] as? String == "1/2", "\(r)")
        let entries = try #require(r["files"] as? [[String: Any]])
        #expect(entries.map { $0["result"] as? String } == ["ok", "ok"])
        let inode = { (url: URL) in try? fm.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int }
        let before = files.map { inode($0.1) }
        #expect(before[0] != nil && before[1] == nil && before[2] != nil)
        // Again (a requeued task), spelled as a job script from before `batch shard` spells it: nothing is
        // transcoded, the report is the same files with the same frames.
        let again = try CLI.cropzoom(["batch", "--manifest", manifest.path, "--shard", "1/2"])
        #expect(again.status == 0 && again.stderr.contains("2 files, 0 to do"), "\(again)")
        #expect(files.map { inode($0.1) } == before)
        r = try BatchTests.report(report)
        let carried = try #require(r["files"] as? [[String: Any]])
        #expect(carried.map { $0["frames"] as? Int } == entries.map { $0["frames"] as? Int })
        #expect(carried.allSatisfy { $0["result"] as? String == "ok" })
        // Shard 2 of 2 (b.mkv, an unknown codec): fails, exit 1; its report finished, the file failed.
        let second = try CLI.cropzoom(["batch", "shard", manifest.path, "--shard", "2/2"])
        #expect(second.status == 1, "\(second)")
        let r2 = try BatchTests.report(out.appendingPathComponent("cropzoom-batch/reports/shard-2.json"))
        #expect(r2["finished"] as? Bool == true && (r2["summary"] as? [String: Int])?["failed"] == 1)
        // A shard of another count than the manifest's is refused.
        let wrong = try CLI.cropzoom(["batch", "--manifest", manifest.path, "--shard", "1/3"])
        #expect(wrong.status == 2 && wrong.errorLines.count == 1 && wrong.stderr.contains("has 2"), "\(wrong)")
        #expect(Files.temporaryLeftovers(in: out).isEmpty)
        // Where the batch stands, read from its state folder (no job was submitted: no queue is asked), spelled as
        // the subcommand and as before it: the same lines.
        let status = try CLI.cropzoom(["batch", "status", out.path])
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("shard 1/2: finished: 2 files, 2 ok, 0 failed, 0 skipped"), "\(status)")
        #expect(status.stdout.contains("shard 2/2: finished: 1 file, 0 ok, 1 failed, 0 skipped"), "\(status)")
        #expect(status.stdout.hasSuffix("3 files: 2 ok, 1 failed, 0 skipped, 0 to do\n"), "\(status)")
        let old = try CLI.cropzoom(["batch", "--status", out.path])
        #expect(old.status == 0 && old.stdout == status.stdout, "\(old)")
    }

    @Test("an output there at submission: -y replaces it once (a rerun keeps the new one), --skip-existing keeps it")
    func existingOutputs() throws {
        let scratch = try Scratch()
        let dir = try scratch.folder("in")
        let fm = FileManager.default
        let input = dir.appendingPathComponent("a.mp4")
        try fm.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: input)
        let inode = { (url: URL) in try? fm.attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int }
        let size = { (url: URL) in try? fm.attributesOfItem(atPath: url.path)[.size] as? Int }
        for overwrite in [true, false] {
            let out = try scratch.folder(overwrite ? "replace" : "keep")
            let output = out.appendingPathComponent("a-zoom.mp4")
            try fm.copyItem(at: try Files.sample("one-frame.mp4"), to: output)
            let old = (inode(output), size(output))
            let manifest = try Self.manifest(
                [(input, output)], out: out, shards: 1, skipExisting: !overwrite, overwrite: overwrite)
            let report = out.appendingPathComponent("cropzoom-batch/reports/shard-1.json")
            let first = try CLI.cropzoom(["batch", "shard", manifest.path, "--shard", "1/1"])
            #expect(first.status == 0, "\(first)")
            let results = try #require(try BatchTests.report(report)["files"] as? [[String: Any]])
            if overwrite {
                // Replaced: a new file (another inode) with every frame of the input.
                #expect(inode(output) != old.0 && results.first?["result"] as? String == "ok", "\(results)")
                #expect(try Oracle.decodedFrameHashes(output.path).count == Oracle.decodedFrameHashes(input.path).count)
                let replaced = inode(output)
                let again = try CLI.cropzoom(["batch", "shard", manifest.path, "--shard", "1/1"])
                #expect(again.status == 0 && again.stderr.contains("1 file, 0 to do"), "\(again)")
                #expect(inode(output) == replaced, "a rerun must not replace what this batch wrote")
            } else {
                #expect(inode(output) == old.0 && size(output) == old.1)
                #expect(results.first?["result"] as? String == "skipped", "\(results)")
            }
        }
    }

    @Test("SIGTERM with --requeue-exit 75: exit 75, nothing left, the report not finished; the next run finishes")
    func sigtermRequeueExit() throws {
        let scratch = try Scratch()
        let dir = try scratch.folder("in")
        let out = try scratch.folder("out")
        try FileManager.default.copyItem(
            at: try Files.sample("bench-720p.mp4"), to: dir.appendingPathComponent("long.mp4"))
        let output = out.appendingPathComponent("long-zoom.mp4")
        let manifest = try Self.manifest(
            [(dir.appendingPathComponent("long.mp4"), output)], out: out, shards: 1,
            arguments: ["--preset", "medium", "--zoom", "1.5"])
        let args = ["batch", "shard", manifest.path, "--shard", "1/1", "--requeue-exit", "75", "--jobs", "1"]
        let stopped = try CLI.cropzoom(
            args, sending: SIGTERM, once: { !Files.temporaryLeftovers(in: out).isEmpty }, timeout: 300)
        #expect(stopped.status == 75 && !stopped.killedBySignal, "\(stopped)")
        #expect(Files.temporaryLeftovers(in: out).isEmpty && !Files.exists(output))
        let report = out.appendingPathComponent("cropzoom-batch/reports/shard-1.json")
        var r = try BatchTests.report(report)
        #expect(r["finished"] as? Bool == false && r["interrupted"] as? Bool == true, "\(r)")
        let resumed = try CLI.cropzoom(Array(args.prefix(5)), timeout: 300)
        #expect(resumed.status == 0 && Files.exists(output), "\(resumed)")
        r = try BatchTests.report(report)
        #expect(r["finished"] as? Bool == true && (r["summary"] as? [String: Int])?["ok"] == 1, "\(r)")
        // Without --requeue-exit, SIGTERM is 143 as for any batch.
        try FileManager.default.removeItem(at: output)
        let plain = try CLI.cropzoom(
            Array(args.prefix(5)), sending: SIGTERM, once: { !Files.temporaryLeftovers(in: out).isEmpty },
            timeout: 300)
        #expect(plain.shellStatus == 143, "\(plain)")
    }

    @Test("report merge: the shards' reports into one (table printed); refusals are one line, exit 2")
    func reportMerge() throws {
        let scratch = try Scratch()
        let dir = try Self.clips(scratch)
        let out = scratch.file("out").path
        var reports: [String] = []
        for i in 1...2 {
            let path = scratch.file("r\(i).json").path
            let run = try CLI.cropzoom([
                "batch", dir.path, "--out-dir", out, "--shard", "\(i)/2", "--report", path, "--preset", "ultrafast",
            ])
            #expect(run.status == 0, "\(run)")
            reports.append(path)
        }
        let all = scratch.file("all.json").path
        let merge = try CLI.cropzoom(["report", "merge"] + reports + ["-o", all])
        #expect(merge.status == 0 && merge.stdout.contains("5 files: 5 ok, 0 failed, 0 skipped"), "\(merge)")
        let r = try BatchTests.report(URL(fileURLWithPath: all))
        let files = try #require(r["files"] as? [[String: Any]])
        #expect(
            files.compactMap { ($0["input"] as? String)?.split(separator: "/").last.map(String.init) }
                == ["a.mp4", "b.mp4", "c.mp4", "d.mp4", "e.mp4"])
        #expect(r["merged_from"] as? [String] == reports && (r["summary"] as? [String: Int])?["ok"] == 5)
        // Refused: the output exists; a missing report; a file that is not a report; another folder's report.
        let exists = try CLI.cropzoom(["report", "merge"] + reports + ["-o", all])
        #expect(exists.status == 2 && exists.errorLines.count == 1 && exists.stderr.contains("exists"), "\(exists)")
        let missing = try CLI.cropzoom(["report", "merge", reports[0], scratch.file("nope.json").path, "-o", all, "-y"])
        #expect(missing.status == 2 && missing.errorLines.first?.contains("nope.json: cannot read it") == true)
        let notReport = try CLI.cropzoom([
            "report", "merge", reports[0], try Files.sample("one-frame.mp4").path,
            "-o", scratch.file("x.json").path,
        ])
        #expect(notReport.status == 2 && notReport.stderr.contains("not a cropzoom batch report"), "\(notReport)")
        let other = scratch.file("other.json").path
        let otherRun = try CLI.cropzoom([
            "batch", dir.path, "--out-dir", scratch.file("out2").path, "--shard", "1/5", "--report", other,
            "--preset", "ultrafast",
        ])
        #expect(otherRun.status == 0)
        let mixed = try CLI.cropzoom(["report", "merge", reports[0], other, "-o", scratch.file("y.json").path])
        #expect(mixed.status == 2 && mixed.stderr.contains("a report of another output folder"), "\(mixed)")
        #expect(!Files.exists(scratch.file("x.json")) && !Files.exists(scratch.file("y.json")))
    }
}
