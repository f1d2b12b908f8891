import Foundation
import Testing

@testable import CropZoomFFmpeg
@testable import CropZoomKit

@Suite("Usable CPUs")
struct UsableCPUsTests {
    /// A fake cgroup file system: `files` (path under the root → contents) and /proc/self/cgroup.
    static func tree(_ files: [String: String], self cgroup: String) throws -> (root: String, proc: String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cz-cgroup-\(UUID().uuidString)").path
        for (path, text) in files {
            let full = root + path
            try FileManager.default.createDirectory(
                atPath: (full as NSString).deletingLastPathComponent,
                withIntermediateDirectories: true)
            try text.write(toFile: full, atomically: true, encoding: .utf8)
        }
        try cgroup.write(toFile: root + "/self-cgroup", atomically: true, encoding: .utf8)
        return (root, root + "/self-cgroup")
    }

    @Test("cpu.max: quota over period, rounded up; max is no limit")
    func cpuMax() {
        #expect(UsableCPUs.quota(cpuMax: "150000 100000\n") == 2)
        #expect(UsableCPUs.quota(cpuMax: "100000 100000") == 1)
        #expect(UsableCPUs.quota(cpuMax: "50000 100000") == 1)
        #expect(UsableCPUs.quota(cpuMax: "400000 100000") == 4)
        #expect(UsableCPUs.quota(cpuMax: "max 100000") == nil)
        #expect(UsableCPUs.quota(cpuMax: "-1 100000") == nil)
    }

    @Test("cgroup v2: the smallest quota from the process's cgroup up to the root")
    func cgroupV2() throws {
        let files = ["/cpu.max": "max 100000\n", "/a/cpu.max": "250000 100000\n", "/a/b/cpu.max": "max 100000\n"]
        let t = try Self.tree(files, self: "0::/a/b\n")
        defer { try? FileManager.default.removeItem(atPath: t.root) }
        #expect(UsableCPUs.cgroupQuota(root: t.root, procCgroup: t.proc) == 3)
        #expect(UsableCPUs.compute(cgroupRoot: t.root, procCgroup: t.proc) == min(3, UsableCPUs.affinityCount()!))
        let none = try Self.tree(["/cpu.max": "max 100000\n"], self: "0::/\n")
        defer { try? FileManager.default.removeItem(atPath: none.root) }
        #expect(UsableCPUs.cgroupQuota(root: none.root, procCgroup: none.proc) == nil)
    }

    @Test("cgroup v1: cpu.cfs_quota_us over cpu.cfs_period_us in the cpu controller's hierarchy")
    func cgroupV1() throws {
        let t = try Self.tree(
            [
                "/cpu,cpuacct/job/cpu.cfs_quota_us": "50000\n",
                "/cpu,cpuacct/job/cpu.cfs_period_us": "100000\n",
                "/cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
            ],
            self: "4:memory:/x\n3:cpu,cpuacct:/job\n0::/\n")
        defer { try? FileManager.default.removeItem(atPath: t.root) }
        #expect(UsableCPUs.cgroupQuota(root: t.root, procCgroup: t.proc) == 1)
    }

    @Test("the affinity mask is counted: it never exceeds the online CPUs")
    func affinity() throws {
        let n = try #require(UsableCPUs.affinityCount())
        #expect(n >= 1 && n <= ProcessInfo.processInfo.activeProcessorCount)
    }
}
