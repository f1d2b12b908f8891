// The thread plan and `batch --jobs` count the CPUs the process may use: under `taskset -c 0`
// one, whatever the machine has.

import CropZoomKit
import Foundation
import Testing

@Suite("Usable CPUs")
struct UsableCPUTests {
    @Test(
        "under taskset -c 0: the plan is one thread, batch runs one file on one thread",
        .enabled(if: CLI.which("taskset") != nil && UsableCPUs.count > 1))
    func affinity() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let taskset = try #require(CLI.which("taskset"))
        let one = try CLI.run(taskset, ["-c", "0", try CLI.binary(), input, "--null", "--stats", "--progress", "none"])
        #expect(one.status == 0 && one.stderr.contains("cropzoom: stats: threads 1 "), "\(one)")
        let all = try CLI.cropzoom([input, "--null", "--stats", "--progress", "none"])
        let cores = UsableCPUs.count
        #expect(all.stderr.contains("cropzoom: stats: threads \(cores) "), "\(all)")
        let report = scratch.file("r.json")
        let batch = try CLI.run(
            taskset,
            [
                "-c", "0", try CLI.binary(), "batch", input,
                "--out-dir", scratch.file("out").path,
                "--report", report.path, "--progress", "none", "--jobs", "2",
            ])
        #expect(batch.status == 0 && batch.stderr.contains("more than the 1 cores"), "\(batch)")
        let r = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any])
        #expect(r["jobs"] as? Int == 1 && r["threads_per_job"] as? Int == 1, "\(r)")
    }
}
