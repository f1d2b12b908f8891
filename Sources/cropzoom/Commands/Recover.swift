import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom recover [FOLDER…]`: lists and restores the recordings killed runs left behind.
struct Recover: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Restore the recordings that runs killed by a crash, kill -9 or a power cut left hidden.",
        discussion:
            "A live recording is written as .NAME.cropzoom-rec-PID beside its output and stays playable while it "
            + "grows. When its process is gone, this restores it as STEM-recovered-PID.EXT in the same folder (never "
            + "replacing a file). Exit codes: 0 ok (also when there is nothing to restore), 1 a recording could not "
            + "be moved, 2 bad usage.")

    @Argument(help: "The folders to look in (default: the current folder).")
    var folders: [String] = []

    @Flag(help: "Look in subfolders too.")
    var recursive = false

    @Flag(help: "Only list them; move nothing.")
    var list = false

    @Flag(help: "Print JSON: an array of {path, name, pid, bytes, restored_path, duration}.")
    var json = false

    func validate() throws {
        for folder in folders where !RawPath.isDirectory(folder) {
            throw ValidationError("\(folder): \(RawPath.exists(folder) ? "not a folder" : "no such folder")")
        }
    }

    struct Listed: Encodable {
        var path: String
        var name: String
        var pid: Int32
        var bytes: Int64
        var restoredPath: String
        var restored: Bool
        var duration: Double?
        var error: String?
    }

    func run() throws {
        try Self.restore(folders: folders, recursive: recursive, list: list, json: json)
    }

    /// Lists (`list`) or restores the unfinished recordings in `folders` (the current one when empty); a line each,
    /// or JSON. Shared with `cropzoom repair FOLDER`. Throws exit code 1 when one could not be moved.
    static func restore(folders: [String], recursive: Bool, list: Bool, json: Bool) throws {
        let found = (folders.isEmpty ? ["."] : folders).flatMap {
            UnfinishedRecordings.find(in: $0, recursive: recursive)
        }
        var listed: [Listed] = []
        var failed = false
        for r in found {
            var item = Listed(
                path: r.path, name: r.name, pid: r.pid, bytes: r.bytes, restoredPath: r.restoredPath, restored: false)
            if !list {
                do throws(CropZoomError) {
                    item.restoredPath = try UnfinishedRecordings.restore(r)
                    item.restored = true
                } catch {
                    item.error = error.message
                    failed = true
                    Stderr.write("cropzoom: error: \(error.message)\n")
                }
            }
            item.duration = try? MediaProbe.probe(item.restored ? item.restoredPath : item.path).duration
            listed.append(item)
            if !json && item.error == nil { print(line(item)) }
        }
        if json {
            print(try snakeCaseJSON(listed), terminator: "")
        } else if found.isEmpty {
            let places = (folders.isEmpty ? ["."] : folders).joined(separator: ", ")
            print("no unfinished recordings in \(places)\(recursive ? " or below" : "")")
        }
        if failed { throw ExitCode(1) }
    }

    static func line(_ item: Listed) -> String {
        let size = String(format: "%.1f MB", Double(item.bytes) / 1e6)
        let length = item.duration.map { String(format: ", %.1f s", $0) } ?? ", not readable"
        let what = "\(item.path) (the recording of \(item.name) by process \(item.pid), \(size)\(length))"
        return item.restored ? "restored \(what) as \(item.restoredPath)" : "\(what) would be \(item.restoredPath)"
    }
}
