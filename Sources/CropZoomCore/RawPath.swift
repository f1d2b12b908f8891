import Foundation
import SystemPackage

/// File names are bytes; a Swift `String` holds Unicode only. So that a name that is not valid
/// UTF-8 (`bad\xffname.mp4`) survives from the command line to the system calls, every byte that
/// is not part of a valid UTF-8 sequence is held in the string as the private-use scalar
/// U+10FF00 + byte (U+10FF80…U+10FFFF), and turned back into that byte wherever a path goes to
/// the system (`withCString`). A name that really contains one of those scalars keeps its UTF-8
/// bytes the same way, so the mapping is lossless both ways.
public enum RawPath {
    package static let base: UInt32 = 0x10FF00

    /// `bytes` as a string, invalid UTF-8 kept as U+10FF00 + byte.
    public static func string<C: Collection>(fromBytes bytes: C) -> String where C.Element == UInt8 {
        let all = Array(bytes)
        var scalars = String.UnicodeScalarView()
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = all.makeIterator()
        var offset = 0
        func keep(_ count: Int) {
            for b in all[offset..<offset + count] { scalars.append(Unicode.Scalar(base + UInt32(b))!) }
        }
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                if scalar.value >= base + 0x80 { keep(encoded.count) } else { scalars.append(scalar) }
                offset += encoded.count
            case .error(let length):
                keep(length)
                offset += length
            case .emptyInput:
                return String(scalars)
            }
        }
    }

    /// A C string (argv, `readdir`, `glob`) as a string, losslessly.
    public static func string(cString: UnsafePointer<CChar>) -> String {
        string(fromBytes: UnsafeRawBufferPointer(start: cString, count: strlen(cString)))
    }

    /// The bytes `path` stands for (without a terminating NUL).
    public static func bytes(_ path: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(path.utf8.count)
        for scalar in path.unicodeScalars {
            if scalar.value >= base + 0x80 {
                out.append(UInt8(scalar.value - base))
            } else {
                out.append(contentsOf: String(scalar).utf8)
            }
        }
        return out
    }

    /// Calls `body` with the NUL-terminated bytes `path` stands for.
    public static func withCString<R>(_ path: String, _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        var b = bytes(path).map { CChar(bitPattern: $0) }
        b.append(0)
        return try b.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }

    /// `stat(2)` of the file `path` names (links followed); nil when it does not exist.
    public static func status(_ path: String) -> stat? {
        var st = stat()
        return withCString(path) { stat($0, &st) } == 0 ? st : nil
    }

    /// Whether `path` names something (a file, a folder, …; links followed).
    public static func exists(_ path: String) -> Bool { status(path) != nil }

    /// Whether `path` names a folder (links followed).
    public static func isDirectory(_ path: String) -> Bool {
        status(path).map { $0.st_mode & S_IFMT == S_IFDIR } ?? false
    }

    /// Creates the folder `path` and the folders above it that are missing (`mkdir -p`).
    public static func makeDirectories(_ path: String) throws(CropZoomError) {
        if isDirectory(path) { return }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path { try makeDirectories(parent) }
        if withCString(path, { mkdir($0, 0o777) }) != 0 && errno != EEXIST {
            throw CropZoomError(
                .usage, what: "creating the folder", path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// The names in the folder `path` (`readdir`), without "." and ".."; nil when it cannot be read.
    public static func contents(ofDirectory path: String) -> [String]? {
        guard let dir = withCString(path, { opendir($0) }) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                string(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The path `path` holds, losslessly (`FilePath.string` would replace bytes that are not UTF-8 by U+FFFD).
    public static func string(_ path: FilePath) -> String {
        path.withPlatformString { string(cString: $0) }
    }

    /// `path` as a `FilePath` of the bytes it stands for.
    public static func filePath(_ path: String) -> FilePath {
        withCString(path) { FilePath(platformString: $0) }
    }

    /// A URL as a path or address: a file URL is its path (`URL.path`), any other (http, rtmp, srt …) goes to FFmpeg
    /// as it is written (`absoluteString`).
    public static func string(_ url: URL) -> String { url.isFileURL ? url.path : url.absoluteString }

    /// `text` for a terminal or log: each byte kept as U+10FF00 + byte written as that byte again.
    public static func data(_ text: String) -> Data { Data(bytes(text)) }
}
