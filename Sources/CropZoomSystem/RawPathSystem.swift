import CropZoomCore
import Foundation
import SystemPackage

/// Where a ``RawPath`` meets the system: its NUL-terminated bytes for a system call, C strings back into strings,
/// `stat`, `mkdir -p`, `readdir`, and swift-system's `FilePath`. (The mapping itself, bytes ↔ string, is the core's.)
extension RawPath {
    /// A C string (argv, `readdir`, `glob`) as a string, losslessly.
    public static func string(cString: UnsafePointer<CChar>) -> String {
        string(fromBytes: UnsafeRawBufferPointer(start: cString, count: strlen(cString)))
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

    /// `path` from the working folder when it is relative (as `URL(fileURLWithPath:).path`, without collapsing
    /// "..", which the system resolves through links).
    public static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return joined(string(cString: cwd), path)
    }

    /// `path`'s folder, absolute, and its last name: what `URL(fileURLWithPath:)`'s `deletingLastPathComponent()`
    /// and `lastPathComponent` gave, without Foundation's URL, whose first use cost a repair of a 2 MB file a
    /// millisecond on its critical path (docs/design/repair.md, "Session 14"). Repeated and trailing slashes and "."
    /// are dropped; "/" is the folder "/" and the name "".
    public static func folderAndName(_ path: String) -> (folder: String, name: String) {
        var parts = path.split(separator: "/").filter { $0 != "." }
        let name = parts.popLast().map(String.init) ?? ""
        let folder = parts.joined(separator: "/")
        return (path.hasPrefix("/") ? "/" + folder : absolute(folder), name)
    }

    /// `realpath(3)`: the absolute path with every link resolved; nil when `path` does not exist.
    public static func realPath(_ path: String) -> String? {
        guard let p = withCString(path, { realpath($0, nil) }) else { return nil }
        defer { free(p) }
        return string(cString: p)
    }

    /// Where `path` leads: ``realPath(_:)``, or for a name that does not exist yet, its folder's real path and the
    /// name (as `URL.resolvingSymlinksInPath()`).
    public static func resolved(_ path: String) -> String {
        if let real = realPath(path) { return real }
        let (folder, name) = folderAndName(path)
        return joined(realPath(folder) ?? folder, name)
    }

    /// The path `path` holds, losslessly (`FilePath.string` would replace bytes that are not UTF-8 by U+FFFD).
    public static func string(_ path: FilePath) -> String {
        path.withPlatformString { string(cString: $0) }
    }

    /// `path` as a `FilePath` of the bytes it stands for.
    public static func filePath(_ path: String) -> FilePath {
        withCString(path) { FilePath(platformString: $0) }
    }
}
