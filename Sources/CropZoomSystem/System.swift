import CCropZoomSystem
import CropZoomCore
import Foundation

/// The one door to the operating-system shims of `CCropZoomSystem` (as swift-nio sends every system call through
/// `Sources/NIOPosix/System.swift`): the rest of cropzoom calls these, never a C function, and sees no C type.

/// SIGINT and SIGTERM, as the process's own handlers record them.
package enum ProcessSignal {
    /// Installs cropzoom's handlers: SIGINT/SIGTERM are recorded (and a blocked read is woken), SIGPIPE is ignored so
    /// that write failures come back as errors (`cz_install_signal_handlers`).
    package static func installHandlers() { cz_install_signal_handlers() }

    /// The signal received and not taken yet, or 0 (`cz_pending_signal`).
    package static var pending: Int32 { cz_pending_signal() }

    /// Takes the pending signal (0: none): the next `pending` is 0 until another comes (`cz_take_pending_signal`).
    package static func take() -> Int32 { cz_take_pending_signal() }
}

/// The process's threads, by kernel thread id.
package enum ThreadControl {
    /// The calling thread's id (`cz_thread_id`: gettid).
    package static var currentID: Int32 { cz_thread_id() }

    /// Every thread of the process (`cz_thread_ids`: /proc/self/task), at most 1024.
    package static func allIDs() -> [Int32] {
        var ids = [Int32](repeating: 0, count: 1024)
        let n = ids.withUnsafeMutableBufferPointer { cz_thread_ids($0.baseAddress, Int32($0.count)) }
        return Array(ids.prefix(Int(max(0, min(n, 1024)))))
    }

    /// Lowers thread `id`'s priority by `steps` nice steps (`cz_lower_priority_of`); false if it could not.
    package static func lowerPriority(of id: Int32, by steps: Int32) -> Bool { cz_lower_priority_of(id, steps) == 0 }

    /// Lowers the calling thread's priority by `steps` nice steps (`cz_lower_thread_priority`).
    @discardableResult
    package static func lowerCurrentPriority(by steps: Int32) -> Bool { cz_lower_thread_priority(steps) == 0 }
}

/// The process as a whole.
package enum ProcessControl {
    /// Ends this process with SIGTERM once the process `parent` dies, even by SIGKILL (`cz_end_with_parent`:
    /// `prctl(PR_SET_PDEATHSIG)`).
    package static func endWithParent(_ parent: Int32) { _ = cz_end_with_parent(parent) }

    /// Fixes glibc's mmap and trim thresholds at `bytes` (`cz_fix_mmap_threshold`: `mallopt`); true if it did.
    package static func fixMmapThreshold(_ bytes: Int) -> Bool { cz_fix_mmap_threshold(Int32(bytes)) == 1 }

    /// CPUs in the process's affinity mask (`cz_affinity_cpu_count`: sched_getaffinity); 0 if unknown.
    package static var affinityCPUCount: Int { Int(cz_affinity_cpu_count()) }
}

/// Files.
package enum FileSystem {
    /// rename(2) that never replaces an existing file (`cz_rename_noreplace`: renameat2 RENAME_NOREPLACE, or
    /// link + unlink where the file system lacks it), on raw paths (``RawPath``). 0 or -errno.
    package static func renameWithoutReplacing(_ from: String, _ to: String) -> Int32 {
        RawPath.withCString(from) { f in RawPath.withCString(to) { cz_rename_noreplace(f, $0) } }
    }
}

/// Whole writes to a file descriptor.
package enum Descriptor {
    /// Writes all of `data` to `fd` with write(2), again after EINTR; stops at the first other failure (a reader
    /// that went away: EPIPE, SIGPIPE being ignored). Whether it all went.
    @discardableResult
    package static func writeAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { (b: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < b.count {
                let n = Foundation.write(fd, b.baseAddress! + offset, b.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
    }
}
