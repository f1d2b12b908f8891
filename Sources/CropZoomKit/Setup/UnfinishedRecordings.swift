import CropZoomFFmpeg
import CropZoomSystem
import Foundation

/// A recording a killed run left behind: a live recording is written under `.NAME.cropzoom-rec-PID` beside its output
/// (`AtomicOutput`) and stays playable while it grows; when its process is gone and no one holds its lock, it is
/// an unfinished recording, restored as `STEM-recovered-PID.EXT` beside it (`cropzoom recover`).
public struct UnfinishedRecording: Sendable, Equatable, Codable {
    /// The hidden file (its path).
    public var path: String
    /// The output it was recording (its file name).
    public var name: String
    /// The process that was writing it.
    public var pid: Int32
    /// Its size in bytes.
    public var bytes: Int64
    /// Where ``UnfinishedRecordings/restore(_:)`` puts it: `STEM-recovered-PID.EXT` in the same folder (`-2`, `-3` …
    /// after the PID when that name is taken).
    public var restoredPath: String
}

/// Finds and restores the recordings killed runs left (``UnfinishedRecording``).
public enum UnfinishedRecordings {
    static let marker = ".cropzoom-rec-"

    /// The unfinished recordings in `folder` (and its subfolders with `recursive`), by path. A recording whose
    /// process still runs, or whose lock is held, is not one.
    public static func find(in folder: String, recursive: Bool = false) -> [UnfinishedRecording] {
        var found: [UnfinishedRecording] = []
        var folders = [folder]
        while let dir = folders.popLast() {
            guard let names = RawPath.contents(ofDirectory: dir) else { continue }
            let base = RawPath.absolute(dir)
            for name in names {
                // Only a recording's name, or a folder to search, needs its path.
                let candidate = name.hasPrefix(".") && name.utf8.contains(marker.utf8)
                guard candidate || (recursive && !name.hasPrefix(".")) else { continue }
                let path = RawPath.joined(base, name)
                if candidate, let r = recording(path, name: name) {
                    found.append(r)
                } else if recursive, !name.hasPrefix("."), isRealFolder(path) {
                    folders.append(path)
                }
            }
        }
        return found.sorted { $0.path < $1.path }
    }

    /// A folder, not a link to one (`lstat`): a search never loops.
    private static func isRealFolder(_ path: String) -> Bool {
        var st = stat()
        return RawPath.withCString(path) { lstat($0, &st) } == 0 && st.st_mode & S_IFMT == S_IFDIR
    }

    /// Moves `recording` to its ``UnfinishedRecording/restoredPath`` (never replacing a file: the next free
    /// `-recovered-PID-N` name); where it went.
    public static func restore(_ recording: UnfinishedRecording) throws(CropZoomError) -> String {
        let dir = RawPath.folderAndName(recording.path).folder
        for n in 1...1000 {
            let target = n == 1 ? recording.restoredPath : restoredPath(recording.name, pid: recording.pid, in: dir, n)
            let moved = FileSystem.renameWithoutReplacing(recording.path, target)
            if moved == 0 { return target }
            if errno != EEXIST {
                throw CropZoomError(
                    .processing, what: "restoring the recording", path: recording.path,
                    reason: String(cString: strerror(errno)))
            }
        }
        throw CropZoomError(
            .processing, what: "restoring the recording", path: recording.path,
            reason: "\(recording.restoredPath) and the next 999 names are taken")
    }

    /// `STEM-recovered-PID.EXT` (with `-N` after the PID from the second) in `dir`.
    static func restoredPath(_ name: String, pid: Int32, in dir: String, _ n: Int = 1) -> String {
        let last = RawPath.folderAndName(name).name
        let ext = RawPath.pathExtension(last)
        let stem = ext.isEmpty ? last : String(last.dropLast(ext.count + 1))
        let file = stem + "-recovered-\(pid)" + (n > 1 ? "-\(n)" : "") + (ext.isEmpty ? "" : ".\(ext)")
        return RawPath.joined(dir, file)
    }

    /// `.NAME.cropzoom-rec-PID[-N]` at `path`, when its run is gone and no one holds its lock.
    static func recording(_ path: String, name: String) -> UnfinishedRecording? {
        guard name.hasPrefix("."), let range = name.ranges(of: marker).last else { return nil }
        let output = String(name[name.index(after: name.startIndex)..<range.lowerBound])
        let id = name[range.upperBound...].split(separator: "-", omittingEmptySubsequences: false).first ?? ""
        guard !output.isEmpty, let pid = Int32(id), let info = RawPath.status(path), info.st_mode & S_IFMT == S_IFREG,
            AtomicOutput.isAbandoned(path, by: pid)
        else { return nil }
        let dir = RawPath.folderAndName(path).folder
        return UnfinishedRecording(
            path: path, name: output, pid: pid, bytes: Int64(info.st_size),
            restoredPath: restoredPath(output, pid: pid, in: dir))
    }
}
