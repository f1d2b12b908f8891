// `cropzoom batch submit` (spelled `batch --scheduler slurm` before, which still works) on a real single-node Slurm
// cluster, started by the test with the project's script (scripts/slurm.sh: slurmctld, slurmd and munged on this
// machine, RequeueExit=75): a batch of good and bad clips as 4 shards; a shard preempted with `scancel --signal=TERM` mid-file and requeued by Slurm; a shard killed
// with SIGKILL and resubmitted by --retries; --no-wait, batch status and what is refused. Every good clip is written
// exactly once, the bad ones are in the merged report, no temporary file is left anywhere.

import CropZoomKit
import Foundation
import Testing

@Suite("Slurm", .serialized)
struct SlurmTests {
    /// The private cluster's slurm.conf, the cluster started (or found running) by scripts/slurm.sh.
    static func cluster() throws -> String {
        let root = try #require(Oracle.packageRoot)
        let run = try CLI.bash("bash '\(root.path)/scripts/slurm.sh' start", timeout: 600)
        let prefix = "export SLURM_CONF="
        guard run.status == 0, let line = run.stdout.split(separator: "\n").last(where: { $0.hasPrefix(prefix) })
        else { throw Oracle.Failure("scripts/slurm.sh start failed: \(run)") }
        return String(line.dropFirst(prefix.count))
    }

    /// Runs cropzoom against the cluster at `conf` (SLURM_CONF set), calling `watch` while it runs.
    static func cropzoom(
        _ args: [String], conf: String, watch: (() -> Void)? = nil, timeout: TimeInterval = 600
    ) throws -> CLIResult {
        try CLI.run(
            try CLI.binary(), args, environment: ChildProcess.environment(setting: "SLURM_CONF", to: conf),
            watch: watch, timeout: timeout)
    }

    /// A Slurm command against the cluster at `conf`.
    static func slurm(_ command: String, conf: String) throws -> CLIResult {
        try CLI.bash("SLURM_CONF='\(conf)' \(command)", timeout: 60)
    }

    /// cropzoom's temporary files anywhere under `folder`.
    static func leftovers(under folder: URL) -> [String] {
        let all = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        return all.filter { $0.contains(".cropzoom-tmp-") }
    }

    /// The job IDs the batch in `out` was submitted as, in order.
    static func jobs(_ out: URL) -> [String] {
        let path = out.appendingPathComponent("cropzoom-batch/submissions.json")
        guard let data = try? Data(contentsOf: path),
            let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else { return [] }
        return list.compactMap { $0["job"] as? String }
    }

    /// How many times each input is reported `ok` by the shards' runs (their logs: one line per finished file).
    static func okLines(_ out: URL) throws -> [String: Int] {
        let logs = out.appendingPathComponent("cropzoom-batch/logs")
        var counts: [String: Int] = [:]
        for name in Files.names(in: logs) {
            let text = try String(contentsOf: logs.appendingPathComponent(name), encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("batch: [") && line.contains("] ok ") {
                let input = String(line[line.range(of: "] ok ")!.upperBound...])
                counts[input, default: 0] += 1
            }
        }
        return counts
    }

    static func merged(_ path: URL) throws -> (files: [String: String], summary: [String: Int]) {
        let r = try BatchTests.report(path)
        let files = try #require(r["files"] as? [[String: Any]])
        var results: [String: String] = [:]
        for f in files { results[(f["input"] as? String) ?? ""] = f["result"] as? String }
        return (results, (r["summary"] as? [String: Int]) ?? [:])
    }

    @Test("4 shards of good and bad clips: each good clip written once, the bad one failed in the merged report")
    func fourShards() throws {
        let conf = try Self.cluster()
        let scratch = try Scratch()
        let dir = try scratch.folder("in")
        let fm = FileManager.default
        var good: [String] = []
        for (k, sample) in [
            "std-h264-aac.mp4", "vfr-h264.mp4", "rotate90.mp4", "one-frame.mp4", "two-audio.mp4",
            "no-audio.mp4", "std-h264-aac.mp4",
        ].enumerated() {
            let url = dir.appendingPathComponent("good\(k).mp4")
            try fm.copyItem(at: try Files.sample(sample), to: url)
            good.append(url.path)
        }
        let bad = dir.appendingPathComponent("bad.mkv")
        try fm.copyItem(at: try Files.sample("unknown-codec.mkv"), to: bad)
        try fm.copyItem(at: try Files.sample("not-media.mp4"), to: dir.appendingPathComponent("notes.mp4"))
        let out = scratch.file("out")
        let report = scratch.file("all.json")
        let run = try Self.cropzoom(
            [
                "batch", "submit", dir.path, "--out-dir", out.path, "--shards", "4", "--zoom", "1.5",
                "--preset", "ultrafast", "--report", report.path, "--progress", "lines",
            ], conf: conf)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("cropzoom: submitted job ") && run.stderr.contains("9 files in 4 shards"))
        #expect(run.stdout.contains("9 files: 7 ok, 1 failed, 1 skipped"), "\(run.stdout)")
        let (files, summary) = try Self.merged(report)
        #expect(summary["total"] == 9 && summary["ok"] == 7 && summary["failed"] == 1 && summary["skipped"] == 1)
        #expect(files[bad.path] == "failed")
        for input in good { #expect(files[input] == "ok", "\(input)") }
        // Written once each (one "ok" line in all the shards' logs), every frame there.
        let once = try Self.okLines(out)
        #expect(once.count == 7 && once.values.allSatisfy { $0 == 1 }, "\(once)")
        for (k, input) in good.enumerated() {
            let output = out.appendingPathComponent("good\(k)-zoom.mp4").path
            #expect(try Oracle.decodedFrameHashes(output).count == Oracle.decodedFrameHashes(input).count, "\(input)")
        }
        let state = out.appendingPathComponent("cropzoom-batch")
        #expect(Files.names(in: state.appendingPathComponent("reports")) == (1...4).map { "shard-\($0).json" })
        #expect(Set(Files.names(in: state)).isSuperset(of: ["job.sh", "manifest.json", "report.json", "logs"]))
        #expect(Self.jobs(out).count == 1)
        #expect(Self.leftovers(under: scratch.url).isEmpty, "\(Self.leftovers(under: scratch.url))")
        // batch status reads the same: every shard finished.
        let status = try Self.cropzoom(["batch", "status", out.path], conf: conf)
        #expect(status.status == 0 && status.stdout.components(separatedBy: ": finished:").count == 5, "\(status)")
        #expect(status.stdout.contains("9 files: 7 ok, 1 failed, 1 skipped, 0 to do"), "\(status)")
        // A second submission into the same folder is refused: the state folder holds this batch (spelled as before
        // batch submit).
        let again = try Self.cropzoom(
            ["batch", dir.path, "--out-dir", out.path, "--scheduler", "slurm", "--shards", "2", "--skip-existing"],
            conf: conf)
        #expect(again.status == 2 && again.errorLines.count == 1 && again.stderr.contains("submitted earlier"))
    }

    /// Two long clips (one per shard of 2), and the batch of them into `out` in 2 shards on Slurm (its merged report
    /// in all.json): the arguments, to which a test adds its own.
    /// Two copies of the 720p sample (150 frames, about 3.5 s a shard here) or, with `loops`, of it played that
    /// many times over (stream copy).
    static func longBatch(_ scratch: Scratch, loops: Int = 1) throws -> (inputs: [URL], out: URL, args: [String]) {
        let dir = try scratch.folder("in")
        let inputs = try ["p.mp4", "q.mp4"].map { name in
            let url = dir.appendingPathComponent(name)
            let sample = try Files.sample("bench-720p.mp4")
            if loops == 1 {
                try FileManager.default.copyItem(at: sample, to: url)
            } else {
                _ = try Oracle.runChecked(
                    "ffmpeg",
                    ["-v", "error", "-stream_loop", "\(loops - 1)", "-i", sample.path, "-c", "copy", url.path])
            }
            return url
        }
        let out = scratch.file("out")
        let args = [
            "batch", "submit", dir.path, "--out-dir", out.path, "--shards", "2", "--preset", "medium",
            "--report", scratch.file("all.json").path,
        ]
        return (inputs, out, args)
    }

    @Test("a shard preempted mid-file (scancel --signal=TERM) exits 75, Slurm requeues it, it finishes the batch")
    func preemptedShardIsRequeued() throws {
        let conf = try Self.cluster()
        let scratch = try Scratch()
        let (inputs, out, args) = try Self.longBatch(scratch)
        var signalled: String? = nil
        let run = try Self.cropzoom(
            args + ["--retries", "0", "--progress", "lines"], conf: conf,
            watch: {
                // Shard 1 (p.mp4) is writing: preempt it.
                guard signalled == nil, Files.temporaryLeftovers(in: out).contains(where: { $0.hasPrefix(".p-zoom") }),
                    let job = Self.jobs(out).first
                else { return }
                signalled = job
                _ = try? Self.slurm("scancel --signal=TERM \(job)_1", conf: conf)
            })
        let job = try #require(signalled, "never saw shard 1 writing: \(run)")
        #expect(run.status == 0 && run.stdout.contains("2 files: 2 ok"), "\(run)")
        // Slurm ran shard 1 twice: the first run exited 75 (jobcomp.log), the second finished.
        let log = try String(
            contentsOf: out.appendingPathComponent("cropzoom-batch/logs/shard-1.log"), encoding: .utf8)
        #expect(log.components(separatedBy: "cropzoom: shard 1/2 of").count == 3, "\(log)")
        #expect(log.contains("interrupted"), "\(log)")
        let comp = try String(
            contentsOf: URL(fileURLWithPath: conf).deletingLastPathComponent().appendingPathComponent("jobcomp.log"),
            encoding: .utf8)
        #expect(
            comp.split(separator: "\n").contains { $0.contains("ArrayJobId=\(job)") && $0.contains("ExitCode=75:0") })
        #expect(Self.jobs(out).count == 1, "no resubmission: Slurm requeued the shard")
        #expect(try Self.okLines(out) == [inputs[0].path: 1, inputs[1].path: 1])
        #expect(Self.leftovers(under: scratch.url).isEmpty)
    }

    /// A batch of two long clips in 2 shards whose shard 2 is killed with SIGKILL (its cropzoom batch process, the
    /// job step) once it is writing, with `--retries retries`.
    static func killingShard2(_ scratch: Scratch, retries: Int, conf: String) throws -> (CLIResult, [URL], URL) {
        let (inputs, out, args) = try Self.longBatch(scratch)
        var killed = false
        let run = try Self.cropzoom(
            args + ["--retries", "\(retries)", "--progress", "lines"], conf: conf,
            watch: {
                guard !killed, Files.temporaryLeftovers(in: out).contains(where: { $0.hasPrefix(".q-zoom") }) else {
                    return
                }
                let find = try? CLI.bash(
                    "for p in $(pgrep -f 'cropzoom batch shard '); do "
                        + "tr '\\0' '\\n' < /proc/$p/environ | grep -qx SLURM_ARRAY_TASK_ID=2 && echo $p; done")
                for pid in (find?.stdout ?? "").split(separator: "\n").compactMap({ Int32($0) }) {
                    kill(pid, SIGKILL)
                    killed = true
                }
            })
        if !killed { throw Oracle.Failure("never saw shard 2 writing: \(run)") }
        return (run, inputs, out)
    }

    @Test("a shard killed with SIGKILL does not finish; --retries resubmits it and the batch completes")
    func killedShardIsResubmitted() throws {
        let scratch = try Scratch()
        let (run, inputs, out) = try Self.killingShard2(scratch, retries: 1, conf: try Self.cluster())
        #expect(run.status == 0 && run.stdout.contains("2 files: 2 ok"), "\(run)")
        #expect(run.stderr.contains("shard 2 did not finish: resubmitted as job"), "\(run)")
        let jobs = Self.jobs(out)
        #expect(jobs.count == 2, "\(jobs)")
        let submissions = try String(
            contentsOf: out.appendingPathComponent("cropzoom-batch/submissions.json"), encoding: .utf8)
        #expect(submissions.contains("\"array\" : \"2\""), "\(submissions)")
        #expect(try Self.okLines(out) == [inputs[0].path: 1, inputs[1].path: 1])
        #expect(Self.leftovers(under: scratch.url).isEmpty, "\(Self.leftovers(under: scratch.url))")
    }

    @Test("with --retries 0 a killed shard's files are 'not started' in the merged report: exit 1, nothing left")
    func killedShardWithoutRetries() throws {
        let scratch = try Scratch()
        let (run, inputs, out) = try Self.killingShard2(scratch, retries: 0, conf: try Self.cluster())
        #expect(run.status == 1 && run.stdout.contains("2 files: 1 ok, 0 failed, 0 skipped, 0 interrupted, 1 not"))
        #expect(run.stderr.contains("shard 2 did not finish (retried 0 times)"), "\(run)")
        let (files, summary) = try Self.merged(scratch.file("all.json"))
        #expect(files[inputs[0].path] == "ok" && files[inputs[1].path] == "not started", "\(files)")
        #expect(summary["not_started"] == 1)
        #expect(Self.jobs(out).count == 1)
        #expect(Self.leftovers(under: scratch.url).isEmpty && !Files.exists(out.appendingPathComponent("q-zoom.mp4")))
    }

    @Test("Ctrl-C on the submitting cropzoom cancels the jobs: shards stop cleanly, exit 130, nothing left")
    func interruptCancelsTheJobs() throws {
        let conf = try Self.cluster()
        let scratch = try Scratch()
        // Long shards (1800 frames, about a minute each): `batch status` takes seconds on a loaded machine (12.8 s
        // in one CI run, while the desktop-capture suite ran), and 150- then 600-frame shards had finished by the
        // time it returned and the signal went. The signal ends them, so the length costs nothing.
        let (_, out, args) = try Self.longBatch(scratch, loops: 12)
        var status: CLIResult? = nil
        let run = try CLI.run(
            try CLI.binary(), args, signal: (SIGINT, 0),
            ready: {
                // Both shards are writing: batch status says so, then the signal.
                guard Files.temporaryLeftovers(in: out).count == 2 else { return false }
                status = try? Self.cropzoom(["batch", "status", out.path], conf: conf)
                return true
            }, environment: ChildProcess.environment(setting: "SLURM_CONF", to: conf), timeout: 300)
        let shown = try #require(status)
        #expect(shown.stdout.contains("shard 1/2: running") && shown.stdout.contains("shard 2/2: running"), "\(shown)")
        #expect(shown.stdout.contains("2 in the queue"), "\(shown)")
        #expect(run.status == 130 && run.stderr.contains("cancelling job"), "\(run)")
        #expect(run.stdout.contains("2 files: 0 ok"), "\(run)")
        let (files, _) = try Self.merged(scratch.file("all.json"))
        #expect(files.values.allSatisfy { $0 == "interrupted" || $0 == "not started" }, "\(files)")
        let queue = try Self.slurm("squeue -h -j \(Self.jobs(out).joined(separator: ","))", conf: conf)
        #expect(queue.stdout.isEmpty, "\(queue)")
        #expect(Self.leftovers(under: scratch.url).isEmpty && !Files.exists(out.appendingPathComponent("p-zoom.mp4")))
    }

    @Test("--aspect 9:16 --follow auto on shards: each clip reframed, its contact sheet and path in the folders")
    func reframedOnShards() throws {
        let conf = try Self.cluster()
        let scratch = try Scratch()
        _ = try scratch.folder("in")
        let one = try RealTime.ReframeTests.clip(scratch, "in/one.mp4", ["--seconds", "1"])
        _ = try RealTime.ReframeTests.clip(scratch, "in/two.mp4", scene: "two", ["--seconds", "1"])
        let (out, sheets, paths) = (scratch.file("out"), scratch.file("sheets").path, scratch.file("paths").path)
        let run = try Self.cropzoom(
            [
                "batch", "submit", scratch.file("in").path, "--out-dir", out.path, "--shards", "2", "--aspect", "9:16",
                "--follow", "auto", "--preview", sheets + "/", "--path-out", paths + "/", "--preset", "ultrafast",
                "--progress", "lines",
            ], conf: conf)
        // (The truth sidecars beside the clips are skipped: not media files.)
        #expect(run.status == 0 && run.stdout.contains("4 files: 2 ok, 0 failed, 2 skipped"), "\(run)")
        for name in ["one", "two"] {
            let output = out.appendingPathComponent("\(name)-zoom.mp4").path
            let v = try #require(try Oracle.streams(output).first { $0.codecType == "video" })
            #expect(v.width == 404 && v.height == 720, "\(name): \(v)")
            #expect(try Oracle.videoFramePTS(output) == Oracle.videoFramePTS(one), "\(name)")
            let sheet = try Data(contentsOf: URL(fileURLWithPath: "\(sheets)/\(name).png"))
            #expect(sheet.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(name).png is a PNG")
            let rows = try String(contentsOfFile: "\(paths)/\(name).csv", encoding: .utf8).split(separator: "\n")
            #expect(rows.first == "# cropzoom reframe path 1280x720" && rows.count == 2 + 30, "\(name).csv")
        }
        // Each shard wrote its own clip's files, once.
        #expect(try Self.okLines(out).values.sorted() == [1, 1])
        #expect(Self.leftovers(under: scratch.url).isEmpty, "\(Self.leftovers(under: scratch.url))")
    }

    @Test(
        """
        --no-wait returns at once; batch status (and the old batch --status) follows the batch; a failed sbatch \
        leaves no state folder
        """)
    func noWaitStatusAndRefusals() throws {
        let conf = try Self.cluster()
        let scratch = try Scratch()
        let dir = try ShardTests.clips(scratch)
        let out = scratch.file("out")
        // Submitted from the scratch folder, the files named by relative paths: the manifest holds absolute ones. (In
        // the spelling from before batch submit.)
        let submit = try CLI.bash(
            "cd '\(scratch.url.path)' && SLURM_CONF='\(conf)' '\(try CLI.binary())' batch ./in/*.mp4 --out-dir out "
                + "--scheduler slurm --shards 2 --no-wait")
        #expect(submit.status == 0 && submit.stdout.isEmpty && submit.stderr.contains("submitted job"), "\(submit)")
        let manifest = try BatchTests.report(out.appendingPathComponent("cropzoom-batch/manifest.json"))
        let inputs = try #require(manifest["files"] as? [[String: Any]]).compactMap { $0["input"] as? String }
        #expect(inputs == ["a", "b", "c", "d", "e"].map { dir.appendingPathComponent("\($0).mp4").path }, "\(inputs)")
        var status = try Self.cropzoom(["batch", "--status", out.path], conf: conf)
        #expect(status.status == 0 && status.stdout.contains("5 files in 2 shards"), "\(status)")
        let deadline = Date().addingTimeInterval(120)
        while !status.stdout.contains("0 to do") && Date() < deadline {
            usleep(500_000)
            status = try Self.cropzoom(["batch", "status", out.path], conf: conf)
        }
        #expect(status.stdout.contains("5 files: 5 ok, 0 failed, 0 skipped, 0 to do"), "\(status)")
        #expect(status.stdout.contains("shard 1/2: finished: 3 files") && status.stdout.contains("shard 2/2: finished"))
        // No batch in a folder: exit 2, one line.
        for spelling in [["batch", "status", dir.path], ["batch", "--status", dir.path]] {
            let none = try Self.cropzoom(spelling, conf: conf)
            #expect(none.status == 2 && none.errorLines.count == 1 && none.stderr.contains("no batch was submitted"))
        }
        // sbatch refuses the submission (no such partition): its message, exit 1, no state folder left.
        let other = scratch.file("other")
        let refused = try Self.cropzoom(
            [
                "batch", "submit", dir.path, "--out-dir", other.path, "--shards", "2",
                "--scheduler-option=--partition=nosuchpartition",
            ], conf: conf)
        #expect(refused.status == 1 && refused.errorLines.count == 1, "\(refused)")
        #expect(refused.stderr.contains("sbatch: ") && refused.stderr.contains("partition"), "\(refused)")
        #expect(!Files.exists(other.appendingPathComponent("cropzoom-batch")))
    }
}
