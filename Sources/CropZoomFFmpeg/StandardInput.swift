import CropZoomCore
import CropZoomSystem
import Foundation

/// Standard input as FFmpeg should open it: a redirected file directly (seekable), an MP4/MOV whose index (`moov`)
/// comes after its media (`mdat`) spooled to a temporary file first (FFmpeg cannot seek back in a pipe to read
/// it), anything else streamed through as it comes. The same for a URL whose server cannot seek (HTTP without byte
/// ranges, `python3 -m http.server`): such an MP4/MOV is spooled (``init(spooling:options:interrupt:)``).
///
/// To tell, it reads the top-level ISO BMFF box headers at the start (`ftyp`, `free` … up to the first `moov`,
/// `moof` or `mdat`); those bytes are then handed on before the rest. The temporary file is unlinked as soon as
/// it is made (FFmpeg opens it again through `/proc/self/fd`), so nothing is left behind, whatever happens.
///
/// `@unchecked Sendable`: its state is set in `init`; the relay thread owns the socket's write end alone.
package final class StandardInput: @unchecked Sendable {
    /// What FFmpeg opens (`pipe:N`, `file:/proc/self/fd/N`).
    package let url: String
    /// Bytes spooled (0 when not spooled).
    package let spooled: Int64
    private let fd: Int32

    /// The most spooled before refusing: `CROPZOOM_SPOOL_LIMIT` bytes (k, M, G suffixes), default 16 GiB.
    package static var spoolLimit: Int64 {
        guard let text = ProcessInfo.processInfo.environment["CROPZOOM_SPOOL_LIMIT"], let last = text.last else {
            return 16 << 30
        }
        let shift: Int64? = ["k": 10, "K": 10, "m": 20, "M": 20, "g": 30, "G": 30][last]
        let digits = shift == nil ? text : String(text.dropLast())
        guard let n = Int64(digits), n > 0 else { return 16 << 30 }
        return n << (shift ?? 0)
    }

    /// "16 GiB", "300 MiB", "100 KiB".
    package static func size(_ bytes: Int64) -> String {
        if bytes >= 1 << 30 && bytes % (1 << 30) == 0 { return "\(bytes >> 30) GiB" }
        if bytes >= 1 << 20 { return "\(bytes >> 20) MiB" }
        return "\(bytes >> 10) KiB"
    }

    /// How bytes come: up to `count` appended to `bytes`, fewer only at the end.
    package typealias Read = (_ count: Int, _ bytes: inout [UInt8]) throws(CropZoomError) -> Int

    /// `url` (HTTP, HTTPS, FTP) spooled when its server cannot seek and it is an MP4/MOV with its index at the end;
    /// nil when FFmpeg can read it as it is (the server seeks, or the media streams), and then opens it again.
    package init?(spooling url: String, options: [String: String], interrupt: IOWatch?) throws(CropZoomError) {
        let reader = try URLReader(url, options: options, interrupt: interrupt)
        if reader.isSeekable { return nil }
        let read: Read = { (count: Int, bytes: inout [UInt8]) throws(CropZoomError) in
            try reader.read(count, onto: &bytes)
        }
        var prefix: [UInt8] = []
        guard try StandardInput.scanBoxes(into: &prefix, read) else { return nil }
        let (file, count) = try StandardInput.spool(prefix, from: url, read)
        fd = file
        spooled = count
        self.url = "file:/proc/self/fd/\(file)"
    }

    package init() throws(CropZoomError) {
        var st = stat()
        if fstat(0, &st) == 0 && st.st_mode & S_IFMT == S_IFREG {
            // `< file.mp4`: the file itself, which FFmpeg can seek in.
            url = "file:/proc/self/fd/0"
            spooled = 0
            fd = -1
            return
        }
        var prefix: [UInt8] = []
        let spool = try StandardInput.scanBoxes(into: &prefix, StandardInput.read)
        if spool {
            let (file, count) = try StandardInput.spool(prefix, from: "stdin", StandardInput.read)
            fd = file
            spooled = count
            url = "file:/proc/self/fd/\(file)"
        } else {
            let read = try StandardInput.relay(prefix)
            fd = read
            spooled = 0
            url = "pipe:\(read)"
        }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Reads up to `count` bytes of standard input onto `bytes` (fewer at its end).
    private static func read(_ count: Int, _ bytes: inout [UInt8]) throws(CropZoomError) -> Int {
        var chunk = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let (n, error) = BlockedReads.shared.duringSignalWatch {
                let n = chunk.withUnsafeMutableBytes { Foundation.read(0, $0.baseAddress! + got, count - got) }
                return (n, errno)
            }
            if n < 0 && error == EINTR {
                // A stalled writer must not hold off a signal (BlockedReads wakes this read).
                let signal = ProcessSignal.pending
                if signal != 0 { throw CropZoomError(.interrupted(signal: signal), reason: "interrupted") }
                continue
            }
            if n < 0 {
                throw CropZoomError(.inputUnreadable, path: "stdin", reason: String(cString: strerror(error)))
            }
            if n == 0 { break }
            got += n
        }
        bytes += chunk.prefix(got)
        return got
    }

    /// Reads the top-level box headers (and the small boxes before the media) onto `prefix`; true when the file is
    /// ISO BMFF with `mdat` before `moov`.
    private static func scanBoxes(into prefix: inout [UInt8], _ read: Read) throws(CropZoomError) -> Bool {
        let starts: Set<String> = ["ftyp", "styp", "moov", "mdat", "free", "skip", "wide", "pdin", "uuid", "moof"]
        var first = true
        while true {
            let at = prefix.count
            guard try read(8, &prefix) == 8 else { return false }
            let type = String(decoding: prefix[(at + 4)..<(at + 8)], as: UTF8.self)
            if first && !starts.contains(type) { return false }
            first = false
            switch type {
            case "mdat": return true
            case "moov", "moof", "sidx": return false
            default: break
            }
            var size = prefix[at..<(at + 4)].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            var header: Int64 = 8
            if size == 1 {
                guard try read(8, &prefix) == 8 else { return false }
                size = prefix[(at + 8)..<(at + 16)].reduce(Int64(0)) { $0 << 8 | Int64($1) }
                header = 16
            }
            // A box to the end, or one too large to hold: not a small header box; let FFmpeg read on.
            guard size >= header, size - header <= 16 << 20 else { return false }
            guard try read(Int(size - header), &prefix) == Int(size - header) else { return false }
        }
    }

    /// Writes `prefix` and the rest of standard input (or of `name`'s bytes) to an unlinked temporary file; its
    /// descriptor and size.
    private static func spool(
        _ prefix: [UInt8], from name: String, _ read: Read
    ) throws(CropZoomError) -> (Int32, Int64) {
        let what = name == "stdin" ? "spooling standard input" : "spooling the download"
        let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(folder)/cropzoom-stdin-XXXXXX".utf8CString)
        let file = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard file >= 0 else {
            throw CropZoomError(
                .processing, what: what, path: folder, reason: String(cString: strerror(errno)))
        }
        _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
        let limit = spoolLimit
        var total: Int64 = 0
        var chunk = prefix
        func fail(_ reason: String, _ kind: CropZoomError.Kind = .processing) -> CropZoomError {
            close(file)
            return CropZoomError(kind, what: what, path: name, reason: reason)
        }
        while true {
            var offset = 0
            while offset < chunk.count {
                let n = chunk.withUnsafeBytes { write(file, $0.baseAddress! + offset, chunk.count - offset) }
                if n < 0 && errno == EINTR { continue }
                if n < 0 { throw fail("\(folder): \(String(cString: strerror(errno)))") }
                offset += n
            }
            total += Int64(chunk.count)
            if total > limit {
                let source = name == "stdin" ? "" : " from a server that cannot seek (no byte ranges)"
                throw fail(
                    "an MP4/MOV with its index at the end\(source) is spooled to \(folder) to be read, and this one is "
                        + "larger than the limit (\(StandardInput.size(limit)), CROPZOOM_SPOOL_LIMIT); "
                        + (name == "stdin" ? "name the file instead" : "download it first"),
                    .inputUnreadable)
            }
            chunk.removeAll(keepingCapacity: true)
            guard try read(1 << 20, &chunk) > 0 else { break }
        }
        return (file, total)
    }

    /// A stream socket (`socketpair`; FFmpeg's `pipe:` protocol reads it as a pipe) that receives `prefix` and
    /// then the rest of standard input, copied by a thread as it comes, until standard input ends or the reader
    /// closes its end (`send` with `MSG_NOSIGNAL`: no SIGPIPE, whoever embeds the library); its read end.
    private static func relay(_ prefix: [UInt8]) throws(CropZoomError) -> Int32 {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw CropZoomError(
                .processing, what: "reading standard input", path: "stdin", reason: String(cString: strerror(errno)))
        }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let thread = Thread {
            defer { close(writeEnd) }
            var buffer = [UInt8](repeating: 0, count: max(1 << 16, prefix.count))
            buffer.replaceSubrange(0..<prefix.count, with: prefix)
            var count = prefix.count
            while true {
                var offset = 0
                while offset < count {
                    let n = buffer.withUnsafeBytes {
                        send(writeEnd, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL))
                    }
                    if n < 0 && errno == EINTR { continue }
                    // EPIPE: the reader is done with it.
                    if n < 0 { return }
                    offset += n
                }
                let n = buffer.withUnsafeMutableBytes { Foundation.read(0, $0.baseAddress!, $0.count) }
                if n < 0 && errno == EINTR {
                    count = 0
                    continue
                }
                if n <= 0 { return }
                count = n
            }
        }
        thread.name = "cropzoom stdin relay"
        thread.start()
        return readEnd
    }
}
