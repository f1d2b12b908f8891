import ArgumentParser
import CropZoomKit
import Foundation

/// Turns INPUT arguments into files.
enum BatchInputs {
    struct File: Equatable {
        var path: String
        /// Sub-folder to keep under --out-dir ("" for files named directly).
        var relativeFolder: String
        /// Found by scanning a folder or expanding a glob (not named directly).
        var scanned = false
    }

    static func hasGlob(_ s: String) -> Bool { s.contains("*") || s.contains("?") || s.contains("[") }

    /// The files `arguments` name. A folder scan does not enter `outDir` (a batch's output folder
    /// inside the scanned one), unless it is the scanned folder itself.
    static func resolve(_ arguments: [String], outDir: String? = nil) throws -> [File] {
        var files: [File] = []
        var seen = Set<String>()
        // Paths go to the system as the bytes they stand for (RawPath): a name that is not UTF-8 is found and kept.
        func identity(_ st: stat) -> String { "\(st.st_dev):\(st.st_ino)" }
        func add(_ path: String, _ rel: String, scanned: Bool) {
            let key = RawPath.status(path).map(identity) ?? URL(fileURLWithPath: path).standardized.path
            if seen.insert(key).inserted { files.append(File(path: path, relativeFolder: rel, scanned: scanned)) }
        }
        let skip = outDir.flatMap(RawPath.status).map(identity)
        for arg in arguments {
            var paths: [String]
            var globbed = false
            if RawPath.exists(arg) {
                paths = [arg]
            } else if hasGlob(arg) {
                paths = glob(arg)
                globbed = true
                if paths.isEmpty { throw CommandError.usage("\(arg): no file matches") }
            } else {
                throw CommandError.usage("\(arg): no such file or folder")
            }
            for path in paths {
                guard RawPath.exists(path) else { continue }
                if RawPath.isDirectory(path) {
                    let root = URL(fileURLWithPath: path).standardized.path
                    var inside: [(path: String, rel: String)] = []
                    // Regular files, and links to files (a folder of links to clips is a common
                    // way to pick them); links to folders are not descended (no loops). Hidden
                    // files and folders are skipped, and so is the output folder.
                    func walk(_ dir: String, _ rel: String) {
                        for name in RawPath.contents(ofDirectory: dir) ?? [] where !name.hasPrefix(".") {
                            let full = dir == "/" ? "/" + name : dir + "/" + name
                            var st = stat()
                            guard RawPath.withCString(full, { lstat($0, &st) }) == 0 else { continue }
                            switch st.st_mode & S_IFMT {
                            case S_IFDIR where skip != identity(st):
                                walk(full, rel.isEmpty ? name : rel + "/" + name)
                            case S_IFREG:
                                inside.append((full, rel))
                            case S_IFLNK where RawPath.status(full).map { $0.st_mode & S_IFMT == S_IFREG } == true:
                                inside.append((full, rel))
                            default:
                                break
                            }
                        }
                    }
                    walk(root, "")
                    for f in inside.sorted(by: { $0.path < $1.path }) { add(f.path, f.rel, scanned: true) }
                } else {
                    add(path, "", scanned: globbed)
                }
            }
        }
        return files
    }

    /// The files `--include`/`--exclude` keep: with includes, those matching one; never one matching
    /// an exclude. A pattern with "/" is matched against the path under the scanned folder (the
    /// name for a file named directly), one without against the file name; fnmatch(3) with
    /// FNM_PATHNAME ("*" stops at "/") and FNM_CASEFOLD.
    static func filter(_ files: [File], include: [String], exclude: [String]) -> [File] {
        func matches(_ f: File, _ pattern: String) -> Bool {
            let name = (f.path as NSString).lastPathComponent
            let subject = pattern.contains("/") && !f.relativeFolder.isEmpty ? f.relativeFolder + "/" + name : name
            // FNM_CASEFOLD (1 << 4, a GNU extension Glibc's module does not export).
            return fnmatch(pattern, subject, FNM_PATHNAME | 1 << 4) == 0
        }
        return files.filter { f in
            (include.isEmpty || include.contains { matches(f, $0) }) && !exclude.contains { matches(f, $0) }
        }
    }

    /// `files` without the scanned ones that are another file's output (`output`): a batch writing
    /// beside its inputs must not take its earlier outputs as inputs on a re-run.
    static func droppingOutputs(_ files: [File], output: (File) -> String) -> [File] {
        let key = { (p: String) in URL(fileURLWithPath: p).standardized.resolvingSymlinksInPath().path }
        let outputs = Dictionary(files.map { (key(output($0)), key($0.path)) }, uniquingKeysWith: { a, _ in a })
        return files.filter { f in
            let k = key(f.path)
            guard f.scanned, let source = outputs[k] else { return true }
            return source == k
        }
    }

    /// glob(3), sorted.
    static func glob(_ pattern: String) -> [String] {
        var g = glob_t()
        defer { globfree(&g) }
        guard RawPath.withCString(pattern, { Glibc.glob($0, 0, nil, &g) }) == 0 else { return [] }
        return (0..<Int(g.gl_pathc)).compactMap { g.gl_pathv[$0].map { RawPath.string(cString: $0) } }.sorted()
    }
}
