import CropZoomFFmpeg
import CropZoomSystem
import Foundation

/// The CPUs this process may use, as a scheduler gives them: the CPU affinity mask
/// (`taskset`, `sched_setaffinity`, a cpuset) and the cgroup's CPU quota (cgroup v2 `cpu.max`,
/// v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`; a quota of 1.5 CPUs counts as 2), whichever is
/// smaller, at least 1. `activeProcessorCount` counts the machine's online CPUs and sees
/// neither, so a job limited to one CPU planned for all of them.
public enum UsableCPUs {
    /// The count for this process, read once.
    public static let count: Int = compute()

    /// min(affinity, cgroup quota, online CPUs), at least 1.
    static func compute(cgroupRoot: String = "/sys/fs/cgroup", procCgroup: String = "/proc/self/cgroup") -> Int {
        var n = ProcessInfo.processInfo.activeProcessorCount
        if let a = affinityCount() { n = min(n, a) }
        if let q = cgroupQuota(root: cgroupRoot, procCgroup: procCgroup) { n = min(n, q) }
        return max(1, n)
    }

    /// CPUs in the calling thread's affinity mask (`sched_getaffinity`), nil when unknown.
    static func affinityCount() -> Int? {
        let n = ProcessControl.affinityCPUCount
        return n > 0 ? n : nil
    }

    /// The smallest CPU quota on the way from the process's cgroup up to the root, rounded up;
    /// nil when there is none (or no cgroup file system).
    static func cgroupQuota(root: String, procCgroup: String) -> Int? {
        guard let text = try? String(contentsOfFile: procCgroup, encoding: .utf8) else { return nil }
        var quotas: [Int] = []
        for line in text.split(separator: "\n") {
            // "0::/path" (v2), "4:cpu,cpuacct:/path" (v1).
            let f = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard f.count == 3 else { continue }
            let v2 = f[0] == "0" && f[1].isEmpty
            let v1 = f[1].split(separator: ",").contains("cpu")
            guard v2 || v1 else { continue }
            let base = v2 ? root : root + "/" + f[1]
            var dir = String(f[2])
            while true {
                let cpuMax = v2 ? try? String(contentsOfFile: base + dir + "/cpu.max", encoding: .utf8) : nil
                if let q = cpuMax.flatMap(quota(cpuMax:)) { quotas.append(q) }
                if v1, let q = v1Quota(base + dir) { quotas.append(q) }
                if dir == "/" || dir.isEmpty { break }
                dir = (dir as NSString).deletingLastPathComponent
            }
        }
        return quotas.min()
    }

    /// cgroup v2 `cpu.max` ("QUOTA PERIOD", or "max PERIOD" for none) → CPUs, rounded up.
    static func quota(cpuMax text: String) -> Int? {
        let f = text.split(whereSeparator: \.isWhitespace)
        guard f.count >= 1, let quota = Double(f[0]), quota > 0 else { return nil }
        let period = f.count >= 2 ? Double(f[1]) ?? 100_000 : 100_000
        guard period > 0 else { return nil }
        return max(1, Int((quota / period).rounded(.up)))
    }

    /// cgroup v1 `cpu.cfs_quota_us` (-1: none) over `cpu.cfs_period_us`, rounded up.
    private static func v1Quota(_ dir: String) -> Int? {
        guard let q = try? String(contentsOfFile: dir + "/cpu.cfs_quota_us", encoding: .utf8),
            let p = try? String(contentsOfFile: dir + "/cpu.cfs_period_us", encoding: .utf8)
        else { return nil }
        return quota(cpuMax: q.trimmingCharacters(in: .whitespacesAndNewlines) + " " + p)
    }
}
