import CropZoomSystem
import Foundation
import SystemPackage

// The core's types where they meet the file system: job files read from disk, configurations named by `FilePath`s.

extension JobFile {
    /// Reads and decodes the job file at `path` (`.json`, `.yaml` or `.yml`; `-`: standard input, JSON when it
    /// starts with `{`, else YAML, relative paths from the current folder).
    public static func load(_ path: String) throws(CropZoomError) -> JobFile {
        if path == "-" {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            return try JobFile(text: RawPath.string(fromBytes: data), path: path)
        }
        if RawPath.isDirectory(path) {
            throw CropZoomError(.usage, path: path, reason: "cannot read the job file (it is a folder)")
        }
        let fd = RawPath.withCString(path) { open($0, O_RDONLY) }
        guard fd >= 0 else {
            throw CropZoomError(
                .usage, path: path, reason: "cannot read the job file (\(String(cString: strerror(errno))))")
        }
        let data = FileHandle(fileDescriptor: fd, closeOnDealloc: true).readDataToEndOfFile()
        // A path that is not UTF-8 written in the file is kept as RawPath keeps it (not replaced by U+FFFD).
        return try JobFile(text: RawPath.string(fromBytes: data), path: path)
    }

    /// ``load(_:)-(String)`` for a `FilePath` (its bytes kept) or a file URL.
    public static func load(_ path: FilePath) throws(CropZoomError) -> JobFile { try load(RawPath.string(path)) }
    public static func load(_ url: URL) throws(CropZoomError) -> JobFile { try load(RawPath.string(url)) }
}

extension TranscodeConfiguration {
    /// A configuration for `input` → `output` as `FilePath`s (swift-system), every byte of a name kept (`RawPath`).
    public init(input: FilePath, output: FilePath) {
        self.init(input: RawPath.string(input), output: RawPath.string(output))
    }
}
