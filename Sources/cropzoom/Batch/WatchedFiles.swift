import CropZoomKit
import Foundation

/// What `batch watch` (``BatchWatch``) sees of its folders: a HandBrake-style queue for camera offload folders. The
/// folders are scanned every second; a media file is taken once it is complete — its size and modification time
/// unchanged for two scans, no process holding it open for writing, and it reads as a whole media file
/// (``MediaProbe/incompleteness(_:)``: a file copied in pieces with pauses is not taken between pieces) — or once it
/// has been unchanged for `--settle` seconds whatever it reads as; it is transcoded as `batch run` would. A file that
/// failed is tried again when its size or time changes. The watch goes on until SIGINT or SIGTERM, which end it
/// normally (a file being transcoded then is stopped and leaves nothing behind).
struct WatchedFiles {
    /// Seconds between scans.
    static let interval = 1.0
    /// Scans a file's size and time must stay the same before it is taken.
    static let stableScans = 2

    /// What a scan saw of a file not taken yet.
    struct Seen: Equatable {
        var size: Int64
        var modified: Int
        var stable = 0
        /// Monotonic seconds when it was first seen as it is now.
        var since = 0.0

        /// The same size and modification time.
        func sameFile(as other: Seen) -> Bool { size == other.size && modified == other.modified }
    }

    /// Seconds a file must stay unchanged before it is taken even though it does not read as whole (`--settle`'s
    /// default).
    static let defaultSettle = 30.0

    /// What a scan sees of `path` now, or nil when it is gone.
    static func look(_ path: String, now: Double = monotonicSeconds()) -> Seen? {
        guard let st = RawPath.status(path) else { return nil }
        return Seen(
            size: Int64(st.st_size), modified: st.st_mtim.tv_sec * 1_000_000_000 + st.st_mtim.tv_nsec, since: now)
    }

    /// Whether a process other than this one has `path` open for writing (`/proc/PID/fd` links to it, with a write
    /// access mode in `/proc/PID/fdinfo/FD`): a copy or a camera still writing it.
    static func openForWriting(_ path: String) -> Bool {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let me = String(getpid())
        guard let pids = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return false }
        for pid in pids where pid != me && pid.allSatisfy(\.isNumber) {
            guard let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { continue }
            for fd in fds {
                guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                    link == target,
                    let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8),
                    let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
                    let flags = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8)
                else { continue }
                if flags & Int(O_ACCMODE) != Int(O_RDONLY) { return true }
            }
        }
        return false
    }

    /// Updates `seen` with this scan of `files` and returns those complete now, in path order: unchanged for
    /// ``stableScans`` scans, not open for writing, and reading as whole (`isWhole`) or unchanged for `settle` seconds.
    static func complete(
        _ files: [String], seen: inout [String: Seen], settle: Double = defaultSettle, now: Double = monotonicSeconds(),
        isWhole: (String) -> Bool = { MediaProbe.incompleteness($0) == nil }
    ) -> [String] {
        var ready: [String] = []
        for path in files.sorted() {
            guard let current = look(path, now: now) else {
                seen[path] = nil
                continue
            }
            if var before = seen[path], before.sameFile(as: current) {
                before.stable += 1
                seen[path] = before
                if before.stable >= stableScans && current.size > 0 && !openForWriting(path)
                    && (now - before.since >= settle || isWhole(path))
                {
                    ready.append(path)
                }
            } else {
                seen[path] = current
            }
        }
        return ready
    }
}
