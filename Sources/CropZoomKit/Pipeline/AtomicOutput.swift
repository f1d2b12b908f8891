import CFFmpeg
import Foundation

/// The output file's life: written under a temporary name beside the target, renamed into place
/// only on success, removed on any failure. An existing target is never touched unless
/// `overwrite` is set, and then only by the final atomic rename.
final class AtomicOutput: @unchecked Sendable {
    // @unchecked Sendable: used by the pipeline's controlling thread only.
    let target: String
    let temporary: String
    let overwrite: Bool
    private var committed = false

    /// Checks the target before any work: not the input, not existing (unless `overwrite`), in a
    /// folder that exists.
    init(target: String, input: String, overwrite: Bool) throws(CropZoomError) {
        self.target = target
        self.overwrite = overwrite
        let url = URL(fileURLWithPath: target)
        let dir = url.deletingLastPathComponent().path
        guard RawPath.isDirectory(dir) else {
            throw CropZoomError(.usage, path: target, reason: "the folder \(dir) does not exist")
        }
        if FileIdentity.same(target, input) {
            throw CropZoomError(.usage, path: target, reason: "the output is the input file; choose another name")
        }
        if RawPath.exists(target) {
            if RawPath.isDirectory(target) {
                throw CropZoomError(.usage, path: target, reason: "is a directory")
            }
            if !overwrite {
                throw CropZoomError(.usage, path: target, reason: "already exists (use -y to overwrite)")
            }
        }
        let name = url.lastPathComponent
        temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(name).cropzoom-tmp-\(getpid())").path
    }


    /// Moves the finished temporary file into place (`rename`, or `renameat2(RENAME_NOREPLACE)`
    /// when overwriting is not allowed, so a file created meanwhile is not clobbered).
    func commit() throws(CropZoomError) {
        let r: Int32 = RawPath.withCString(temporary) { from in
            RawPath.withCString(target) { to in
                overwrite ? (rename(from, to) == 0 ? 0 : -errno) : cz_rename_noreplace(from, to)
            }
        }
        if r != 0 {
            discard()
            let reason = r == -EEXIST ? "already exists (use -y to overwrite)" : String(cString: strerror(-r))
            throw CropZoomError(r == -EEXIST ? .usage : .processing, path: target, reason: reason)
        }
        committed = true
    }

    /// Removes the temporary file (if any).
    func discard() {
        if !committed { _ = RawPath.withCString(temporary) { unlink($0) } }
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
        let ra = URL(fileURLWithPath: a).standardizedFileURL.resolvingSymlinksInPath().path
        let rb = URL(fileURLWithPath: b).standardizedFileURL.resolvingSymlinksInPath().path
        return ra == rb
    }
}
