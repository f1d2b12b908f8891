import CropZoomCore
import Foundation

/// A file's bytes for ``ByteSource`` readers (`cropzoom repair` walking a broken recording): opened read-only
/// (`open`, `O_CLOEXEC`), read at offsets (`pread`), the kernel told the reads go forward (`posix_fadvise`
/// sequential); closed in `deinit`.
package final class FileBytes: ByteSource {
    private let descriptor: Int32
    package let size: Int64
    /// The path as the user named it (for messages).
    package let path: String

    /// Opens `path`; a file that cannot be opened or is not a regular file throws (`what` says what it was for).
    package init(path: String, what: String) throws(CropZoomError) {
        self.path = path
        let fd = RawPath.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            throw CropZoomError(.inputUnreadable, what: what, path: path, reason: String(cString: strerror(errno)))
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw CropZoomError(.inputUnreadable, what: what, path: path, reason: "not a regular file")
        }
        descriptor = fd
        size = Int64(info.st_size)
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
    }

    deinit { close(descriptor) }

    package func read(at offset: Int64, count: Int) throws(CropZoomError) -> [UInt8] {
        var bytes: [UInt8] = []
        let n = try read(at: offset, count: count, into: &bytes)
        return n == bytes.count ? bytes : Array(bytes.prefix(n))
    }

    /// `pread` into the start of `buffer`, replaced by a larger one only when it is shorter: a window refilled as a
    /// walk moves on, a sample read after another, keep their storage (its pages are not faulted in and zeroed again).
    package func read(at offset: Int64, count: Int, into buffer: inout [UInt8]) throws(CropZoomError) -> Int {
        let wanted = Int(max(0, min(Int64(count), size - offset)))
        // Grown without zero-filling first (what it held is read over anyway; bytes past the count returned are
        // undefined): the pages are touched once, by the read.
        if buffer.count < wanted { buffer = [UInt8](unsafeUninitializedCapacity: wanted) { $1 = wanted } }
        var done = 0
        var failure: Int32 = 0
        buffer.withUnsafeMutableBytes { storage in
            while done < wanted {
                let n = pread(descriptor, storage.baseAddress! + done, wanted - done, off_t(offset) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 {
                    if n < 0 { failure = errno }
                    break
                }
                done += n
            }
        }
        if failure != 0 {
            throw CropZoomError(.processing, what: "reading", path: path, reason: String(cString: strerror(failure)))
        }
        return done
    }
}
