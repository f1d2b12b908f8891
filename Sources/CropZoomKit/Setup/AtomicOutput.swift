import CropZoomFFmpeg
import CropZoomSystem
import Foundation

/// The output's life. What the user had at OUTPUT is never lost:
///
/// - a regular file (or nothing) is written under a temporary name beside it, locked while it is
///   written, and renamed into place only on success — keeping the replaced file's mode and
///   owner; a read-only file is replaced only with `force`;
/// - a symbolic link is followed: the file it points to is replaced as above, the link stays;
/// - a FIFO or character device (`/dev/null`, a terminal, `/proc/self/fd/1` on a pipe) is written
///   straight through, as a shell's `>` would, never replaced;
/// - multi-file outputs (image sequences `frame_%04d.png`, HLS/DASH playlists with their
///   segments) are written into a temporary folder beside the target and moved into place file by
///   file on success.
///
/// Temporary names are `.NAME.cropzoom-tmp-PID` (NAME shortened so the whole fits in 255 bytes).
/// One left by a run that was killed (its lock is free) is removed, with a notice, by the next run
/// on the same output.
///
/// A live recording is written under `.NAME.cropzoom-rec-PID` instead, as a file that stays
/// playable while it grows (fragmented MP4, Matroska clusters: see `Muxer`). One left by a recording
/// that was killed (kill -9, a power cut) is the recording up to its last second or two: the next
/// run on the same output keeps it, renamed `STEM-recovered-PID.EXT` beside the output, and says so.
final class AtomicOutput: @unchecked Sendable {
    // @unchecked Sendable: used by the pipeline's controlling thread only.

    enum Kind: Equatable {
        /// A regular file: temporary file, renamed into place.
        case file
        /// A FIFO or character device: written directly.
        case stream
        /// Several files (image sequence, HLS, DASH): temporary folder, moved into place.
        case folder
    }

    /// The path the user named (for messages).
    let target: String
    /// The path the muxer opens: the temporary file, the temporary folder's copy of the
    /// target's name, or the target itself for a stream.
    let writePath: String
    let kind: Kind
    /// Where a finished file or folder's files go (the link's target for a symbolic link).
    private let destination: String
    /// The temporary file or folder (empty for a stream).
    private let temporary: String
    private let overwrite: Bool
    /// The replaced file's mode and owner, given to the new file.
    private let keep: (mode: mode_t, uid: uid_t, gid: gid_t)?
    /// Holds the temporary's `flock` while this run lives (-1 when none).
    private var lockDescriptor: Int32 = -1
    private var committed = false

    /// The muxers that write several files next to the one named.
    static let multiFileMuxers: Set<String> = ["image2", "hls", "dash", "segment", "ssegment", "stream_segment"]

    /// The longest file name the common Linux file systems take, in bytes.
    static let nameLimit = 255

    /// Checks the target before any work (not the input, a folder that exists, nothing replaced
    /// without `overwrite`, no read-only file without `force`), removes stale temporaries of
    /// killed runs (`notice` says so), and creates and locks this run's temporary.
    init(
        target: String, input: String, overwrite: Bool, force: Bool, multiFile: Bool, recording: Bool = false,
        direct: Bool = false, notice: (String) -> Void
    ) throws(CropZoomError) {
        self.target = target
        self.overwrite = overwrite || force
        // A network URL, and a live recording's segments or HLS files, are written through: a receiver or a
        // player reads them while they are written, and each finished file is kept as it is finished.
        let isAddress = RawPath.isAddress(target)
        if isAddress || direct {
            if !isAddress && !self.overwrite {
                let (dir, name) = RawPath.folderAndName(target)
                guard RawPath.isDirectory(dir) else {
                    throw CropZoomError(.usage, path: target, reason: "the folder \(dir) does not exist")
                }
                let clash =
                    multiFile
                    ? AtomicOutput.existingFiles(matching: name, in: dir).first
                    : (RawPath.status(target) != nil ? name : nil)
                if let clash {
                    throw CropZoomError(.usage, path: target, reason: "\(clash) already exists (use -y to overwrite)")
                }
            }
            kind = .stream
            writePath = target
            destination = target
            temporary = ""
            keep = nil
            return
        }
        var link = stat()
        let exists = RawPath.withCString(target) { lstat($0, &link) } == 0
        let isLink = exists && link.st_mode & S_IFMT == S_IFLNK
        let status = RawPath.status(target)
        let resolves = status != nil
        let info = status ?? stat()
        if isLink && !resolves {
            throw CropZoomError(.usage, path: target, reason: "is a symbolic link to a file that does not exist")
        }
        if FileIdentity.same(target, input) {
            throw CropZoomError(.usage, path: target, reason: "the output is the input file; choose another name")
        }
        let type = resolves ? info.st_mode & S_IFMT : 0
        if resolves && (type == S_IFIFO || type == S_IFCHR) && !multiFile {
            // Written through: there is nothing there to lose, and nothing may replace it.
            kind = .stream
            writePath = target
            destination = target
            temporary = ""
            keep = nil
            return
        }
        if resolves {
            switch type {
            case S_IFDIR: throw CropZoomError(.usage, path: target, reason: "is a directory")
            case S_IFREG: break
            case S_IFBLK:
                throw CropZoomError(
                    .usage, path: target,
                    reason: "is a block device; cropzoom writes files, FIFOs and character devices")
            default:
                throw CropZoomError(.usage, path: target, reason: "is not a regular file, FIFO or character device")
            }
            if !self.overwrite {
                throw CropZoomError(.usage, path: target, reason: "already exists (use -y to overwrite)")
            }
            // On a read-only file system nothing can replace it, --force or not.
            if RawPath.withCString(target, { access($0, W_OK) }) != 0 && errno == EROFS {
                throw CropZoomError(
                    .processing, what: "replacing the output file", path: target,
                    reason: String(cString: strerror(EROFS)))
            }
            if info.st_mode & 0o222 == 0 || RawPath.withCString(target, { access($0, W_OK) }) != 0, !force {
                throw CropZoomError(
                    .usage, path: target, setting: .force, reason: "is read-only (use \(setting: .force) to replace it)"
                )
            }
        }
        // A link's target is what gets replaced; the link stays.
        let real = isLink ? RawPath.realPath(target) ?? target : target
        destination = real
        keep = resolves ? (info.st_mode & 0o7777, info.st_uid, info.st_gid) : nil
        let (dir, name) = RawPath.folderAndName(real)
        guard RawPath.isDirectory(dir) else {
            throw CropZoomError(.usage, path: target, reason: "the folder \(dir) does not exist")
        }
        let prefix = AtomicOutput.temporaryPrefix(for: name, recording: recording && !multiFile)
        AtomicOutput.removeStale(in: dir, prefix: AtomicOutput.temporaryPrefix(for: name), notice: notice)
        AtomicOutput.recoverStale(in: dir, target: name, notice: notice)
        temporary = RawPath.joined(dir, prefix + AtomicOutput.uniqueSuffix())
        if multiFile {
            kind = .folder
            writePath = RawPath.joined(temporary, name)
            if !self.overwrite, let clash = AtomicOutput.existingFiles(matching: name, in: dir).first {
                throw CropZoomError(.usage, path: target, reason: "\(clash) already exists (use -y to overwrite)")
            }
            guard RawPath.withCString(temporary, { mkdir($0, 0o777) }) == 0 else {
                throw CropZoomError(
                    .processing, what: "creating a temporary folder", path: temporary,
                    reason: String(cString: strerror(errno)))
            }
            lockDescriptor = RawPath.withCString(temporary) { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        } else {
            kind = .file
            writePath = temporary
            lockDescriptor = RawPath.withCString(temporary) { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666) }
            if lockDescriptor < 0 {
                throw CropZoomError(
                    .processing, what: "creating the output file", path: target,
                    reason: String(cString: strerror(errno)))
            }
        }
        if lockDescriptor >= 0 { _ = flock(lockDescriptor, LOCK_EX | LOCK_NB) }
    }

    /// `.NAME.cropzoom-tmp-`, with NAME cut (on a character boundary) so that the prefix and any
    /// process id fit in ``nameLimit`` bytes, and `%` made `_` (a muxer would expand a pattern in
    /// the folder's name).
    static func temporaryPrefix(for name: String, recording: Bool = false) -> String {
        let suffix = recording ? UnfinishedRecordings.marker : ".cropzoom-tmp-"
        // Room for the process id and a job number (``uniqueSuffix()``).
        let room = nameLimit - 1 - suffix.utf8.count - 21
        var kept = ""
        var bytes = 0
        let safe = String(String.UnicodeScalarView(name.unicodeScalars.map { $0 == "%" ? "_" : $0 }))
        for ch in safe {
            let n = String(ch).utf8.count
            if bytes + n > room { break }
            kept.append(ch)
            bytes += n
        }
        return "." + kept + suffix
    }

    private static let counter = NSLock()
    nonisolated(unsafe) private static var made = 0

    /// What follows a temporary's prefix: this process's id, then `-N` for its second and later temporaries, so
    /// that jobs of one process (the library's) never share one — a job on the same output right after another
    /// would otherwise take the name the other is still letting go of.
    static func uniqueSuffix() -> String {
        let n = counter.withLock {
            made += 1
            return made - 1
        }
        return n == 0 ? "\(getpid())" : "\(getpid())-\(n)"
    }

    /// The temporaries named `prefix` + PID in `dir` whose run was killed: its process is gone and no one holds
    /// the file's lock (an older cropzoom did not lock its temporaries, so a live process keeps its own).
    private static func stale(in dir: String, prefix: String) -> [(path: String, pid: Int32)] {
        guard let names = RawPath.contents(ofDirectory: dir) else { return [] }
        return names.compactMap { name in
            let id = name.dropFirst(prefix.count).split(separator: "-", omittingEmptySubsequences: false).first ?? ""
            guard name.hasPrefix(prefix), let pid = Int32(id) else { return nil }
            let path = RawPath.joined(dir, name)
            return isAbandoned(path, by: pid) ? (path, pid) : nil
        }
    }

    /// Whether the temporary at `path`, named for process `pid`, was left by a run that was killed: the process is
    /// gone (not this one) and no one holds the file's lock (an older cropzoom did not lock its temporaries, so a
    /// live process keeps its own).
    static func isAbandoned(_ path: String, by pid: Int32) -> Bool {
        guard pid > 0, pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { return false }
        let fd = RawPath.withCString(path) { open($0, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return flock(fd, LOCK_EX | LOCK_NB) == 0
    }

    /// Removes the temporaries named `prefix` + PID in `dir` that killed runs left, and says so.
    static func removeStale(in dir: String, prefix: String, notice: (String) -> Void) {
        for (path, pid) in stale(in: dir, prefix: prefix) where removeTree(path) {
            notice("removed \(path), left by an earlier run (process \(pid)) that did not finish")
        }
    }

    /// Keeps the recordings of `target` in `dir` that killed runs left: each is restored as
    /// `STEM-recovered-PID.EXT` (never replacing a file, ``UnfinishedRecordings``), and `notice` says where it is.
    /// Then `notice` names any other output's unfinished recordings there (`cropzoom recover` restores them).
    static func recoverStale(in dir: String, target: String, notice: (String) -> Void) {
        var others: [UnfinishedRecording] = []
        // (The name in a recording's file is the output's as temporaryPrefix cut it.)
        let mine = temporaryPrefix(for: target, recording: true)
        for r in UnfinishedRecordings.find(in: dir) {
            guard mine == "." + r.name + UnfinishedRecordings.marker else {
                others.append(r)
                continue
            }
            if let kept = try? UnfinishedRecordings.restore(r) {
                notice(
                    "found the unfinished recording of an earlier run (process \(r.pid), stopped by a crash or kill): "
                        + "kept as \(kept)")
            }
        }
        if let first = others.first {
            let more = others.count == 1 ? "" : " and \(others.count - 1) more"
            notice(
                "\(dir) holds the unfinished recording of a run that was killed (\(first.path)\(more)): "
                    + "`cropzoom recover \(dir)` restores it as \(RawPath.folderAndName(first.restoredPath).name)"
            )
        }
    }

    /// Files in `dir` an image2/segment pattern (`%d`, `%03d`) or a playlist name would write.
    static func existingFiles(matching pattern: String, in dir: String) -> [String] {
        guard let names = RawPath.contents(ofDirectory: dir) else { return [] }
        guard let regex = patternExpression(pattern) else {
            return names.contains(pattern) ? [pattern] : []
        }
        return names.filter { $0.wholeMatch(of: regex) != nil }.sorted()
    }

    /// A pattern's `%d`/`%0Nd` as digits; nil for a name without one.
    private static func patternExpression(_ pattern: String) -> Regex<AnyRegexOutput>? {
        guard pattern.contains("%") else { return nil }
        var expression = ""
        var rest = Substring(pattern)
        var found = false
        while let i = rest.firstIndex(of: "%") {
            expression += NSRegularExpression.escapedPattern(for: String(rest[..<i]))
            let spec = rest[rest.index(after: i)...].prefix { $0.isNumber || $0 == "d" }
            if spec.last == "d" {
                expression += "[0-9]+"
                found = true
                rest = rest[rest.index(rest.index(after: i), offsetBy: spec.count)...]
            } else if rest[rest.index(after: i)...].first == "%" {
                expression += "%"
                rest = rest[rest.index(i, offsetBy: 2)...]
            } else {
                expression += "%"
                rest = rest[rest.index(after: i)...]
            }
        }
        expression += NSRegularExpression.escapedPattern(for: String(rest))
        return found ? try? Regex(expression) : nil
    }

    /// For a live recording written to a file: a path beside it (`.NAME.cropzoom-tmp-PID`) for a rewritten copy
    /// that ``adopt(_:)`` then puts in its place; nil for other outputs.
    var rewritePath: String? {
        guard kind == .file, temporary.contains(UnfinishedRecordings.marker) else { return nil }
        let (folder, file) = RawPath.folderAndName(temporary)
        let name = RawPath.folderAndName(destination).name
        let recording = AtomicOutput.temporaryPrefix(for: name, recording: true)
        let suffix = file.hasPrefix(recording) ? String(file.dropFirst(recording.count)) : "\(getpid())"
        return RawPath.joined(folder, AtomicOutput.temporaryPrefix(for: name) + suffix)
    }

    /// Throws, naming the output, when what this run writes has gone: its temporary file or folder was deleted, or
    /// the folder it is in was removed (`fstat` of the locked temporary: no links left). The mux stage asks every
    /// few dozen packets, so such a run stops within a second instead of encoding to its end for nothing.
    func checkPresent() throws(CropZoomError) {
        guard kind != .stream, lockDescriptor >= 0, !committed else { return }
        var info = stat()
        guard fstat(lockDescriptor, &info) == 0, info.st_nlink == 0 else { return }
        throw CropZoomError(.processing, what: "writing", path: target, reason: vanishedReason)
    }

    /// Why a temporary has no links: its folder was removed, or it was deleted.
    private var vanishedReason: String {
        let dir = RawPath.folderAndName(destination).folder
        if !RawPath.isDirectory(dir) { return "the folder \(dir) was removed during the run" }
        return "the temporary \(temporary) was deleted during the run"
    }

    /// Renames `path` (``rewritePath``) over the recording (`rename(2)`: the recording is whole, old or new, at
    /// every moment).
    func adopt(_ path: String) throws(CropZoomError) {
        let r = RawPath.withCString(path) { f in RawPath.withCString(temporary) { rename(f, $0) == 0 ? 0 : errno } }
        if r != 0 { throw CropZoomError(.processing, path: target, reason: String(cString: strerror(r))) }
    }

    /// Moves the finished output into place: the temporary file by `rename` (or
    /// `renameat2(RENAME_NOREPLACE)` when overwriting is not allowed, so a file created
    /// meanwhile is not clobbered), with the replaced file's mode and owner; a temporary
    /// folder's files one by one, then the folder is removed.
    func commit() throws(CropZoomError) {
        switch kind {
        case .stream:
            committed = true
            return
        case .file:
            if let keep {
                _ = RawPath.withCString(temporary) { chmod($0, keep.mode) }
                _ = RawPath.withCString(temporary) { chown($0, keep.uid, keep.gid) }
            }
            try move(temporary, to: destination)
        case .folder:
            let (dir, playlist) = RawPath.folderAndName(destination)
            let names = RawPath.contents(ofDirectory: temporary) ?? []
            // Segments first, the playlist (the name the user gave) last.
            let ordered = names.filter { $0 != playlist }.sorted() + names.filter { $0 == playlist }
            if !overwrite {
                for name in ordered where RawPath.exists(RawPath.joined(dir, name)) {
                    discard()
                    throw CropZoomError(
                        .usage, path: RawPath.joined(dir, name), reason: "already exists (use -y to overwrite)")
                }
            }
            for name in ordered {
                try move(RawPath.joined(temporary, name), to: RawPath.joined(dir, name))
            }
            _ = RawPath.withCString(temporary) { rmdir($0) }
        }
        committed = true
        releaseLock()
    }

    private func move(_ from: String, to: String) throws(CropZoomError) {
        let r: Int32 =
            overwrite
            ? RawPath.withCString(from) { f in RawPath.withCString(to) { rename(f, $0) == 0 ? 0 : -errno } }
            : FileSystem.renameWithoutReplacing(from, to)
        if r != 0 {
            discard()
            let folder = RawPath.folderAndName(to).folder
            let reason =
                r == -EEXIST
                ? "already exists (use -y to overwrite)"
                : r == -ENOENT && !RawPath.isDirectory(folder)
                    ? "the folder \(folder) was removed during the run" : String(cString: strerror(-r))
            throw CropZoomError(r == -EEXIST ? .usage : .processing, path: to, reason: reason)
        }
    }

    private func releaseLock() {
        if lockDescriptor >= 0 {
            close(lockDescriptor)
            lockDescriptor = -1
        }
    }

    /// Removes a file, or a folder with the files in it (`unlink`, `rmdir`); true when it is gone.
    @discardableResult
    static func removeTree(_ path: String) -> Bool {
        if RawPath.withCString(path, { unlink($0) }) == 0 { return true }
        for name in RawPath.contents(ofDirectory: path) ?? [] {
            _ = RawPath.withCString(RawPath.joined(path, name)) { unlink($0) }
        }
        return RawPath.withCString(path) { rmdir($0) } == 0
    }

    /// Removes the temporary file or folder (if any); a stream is left as it is.
    func discard() {
        if !committed && kind != .stream {
            _ = AtomicOutput.removeTree(temporary)
        }
        releaseLock()
    }

    deinit { discard() }
}

/// Whether two paths name one file: the same device and inode, or — when one does not exist
/// yet — the same path once symlinks are resolved. (Outputs are checked against inputs with it.)
public enum FileIdentity {
    public static func same(_ a: String, _ b: String) -> Bool {
        if let sa = RawPath.status(a), let sb = RawPath.status(b) {
            return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
        }
        return RawPath.resolved(a) == RawPath.resolved(b)
    }
}

/// Small files a command writes beside its media (a report, a chart), with the same guarantee as
/// `AtomicOutput`: written under the same temporary name (`.NAME.cropzoom-tmp-PID`) in the
/// target's folder and renamed into place, so the file is whole or absent, and a file it replaces
/// is replaced in one step.
public enum AtomicFile {
    /// Removes the temporaries a killed run left for `output` (`.NAME.cropzoom-tmp-PID…` beside it) whatever their
    /// process: for a caller that knows no run of it is alive any more (a batch whose scheduler lists none of its
    /// tasks; the process ids of other machines mean nothing here). Returns the paths removed.
    public static func removeTemporaries(of output: String) -> [String] {
        let (dir, name) = RawPath.folderAndName(output)
        let prefix = AtomicOutput.temporaryPrefix(for: name)
        return (RawPath.contents(ofDirectory: dir) ?? []).compactMap { name in
            let id = name.dropFirst(prefix.count).split(separator: "-", omittingEmptySubsequences: false).first ?? ""
            guard name.hasPrefix(prefix), Int32(id) != nil else { return nil }
            let path = RawPath.joined(dir, name)
            return AtomicOutput.removeTree(path) ? path : nil
        }
    }

    /// Writes `data` to `path` (its bytes as `RawPath` keeps them); throws `.processing` with the
    /// system's reason.
    public static func write(_ data: Data, to path: String) throws(CropZoomError) {
        let (dir, name) = RawPath.folderAndName(path)
        let tmp = RawPath.joined(dir, AtomicOutput.temporaryPrefix(for: name) + AtomicOutput.uniqueSuffix())
        let fd = RawPath.withCString(tmp) { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        var failure = fd < 0 ? errno : 0
        var done = 0
        while failure == 0 && done < data.count {
            let n = data.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + done, data.count - done) }
            if n > 0 {
                done += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                failure = n < 0 ? errno : EIO
            }
        }
        if fd >= 0 && close(fd) != 0 && failure == 0 { failure = errno }
        // rename(2) replaces an old file in one step: whole or untouched.
        if failure == 0 && RawPath.withCString(tmp, { t in RawPath.withCString(path) { rename(t, $0) } }) != 0 {
            failure = errno
        }
        if failure != 0 {
            _ = RawPath.withCString(tmp) { unlink($0) }
            throw CropZoomError(
                .processing, what: "cannot write it", path: path, reason: String(cString: strerror(failure)),
                code: failure)
        }
    }
}
