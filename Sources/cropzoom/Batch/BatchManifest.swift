import ArgumentParser
import CropZoomKit
import Foundation

/// What a batch submitted to a scheduler is, fixed at submission and kept in its state folder
/// (`OUT/cropzoom-batch/manifest.json`): the sorted file list with each output, the settings, the number of shards.
/// Every shard reads it, so all of them see the same list even if the input folders change meanwhile, and a shard
/// that runs again (requeued, resubmitted) does the same files.
struct BatchManifest: Codable, Equatable {
    /// One input and its output.
    struct Entry: Codable, Equatable {
        var input: String
        var output: String
        /// Found by scanning a folder or expanding a glob (what is not media is then skipped, not failed).
        var scanned: Bool
        /// The output that existed at submission (device, inode, size): a file there later that is not this one
        /// was written by this batch.
        var existing: FileStamp? = nil
    }

    /// A file's identity and size.
    struct FileStamp: Codable, Equatable {
        var device: UInt64
        var inode: UInt64
        var bytes: Int64

        init?(_ path: String) {
            guard let st = RawPath.status(path) else { return nil }
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
            bytes = Int64(st.st_size)
        }
    }

    var schema = "cropzoom-batch-manifest"
    var version = 1
    /// When it was written (ISO 8601, UTC).
    var created: String
    /// The command that submitted the batch, as typed (for people reading the folder).
    var command: [String]
    var outDir: String
    var shards: Int
    /// The `transcode` settings every file gets.
    var arguments: [String]
    /// `--jobs` of the submission (nil: each shard's default for the CPUs it is given).
    var jobs: Int?
    var skipExisting: Bool
    var overwrite: Bool
    var files: [Entry]

    /// The state folder of a batch whose outputs go to `outDir`.
    static func folder(outDir: String) -> String {
        URL(fileURLWithPath: outDir).appendingPathComponent("cropzoom-batch").standardized.path
    }

    static func path(outDir: String) -> String { folder(outDir: outDir) + "/manifest.json" }

    /// Where shard `index` writes its report, beside the manifest at `manifestPath`.
    static func reportPath(manifest manifestPath: String, shard index: Int) -> String {
        URL(fileURLWithPath: manifestPath).deletingLastPathComponent()
            .appendingPathComponent("reports/shard-\(index).json").path
    }

    /// The manifest at `path`; what is not one is refused with the path and the reason (exit 2).
    static func read(_ path: String) throws -> BatchManifest {
        let what = "a cropzoom batch manifest"
        let manifest = try readSnakeCaseJSON(BatchManifest.self, from: path, what: what)
        guard manifest.schema == "cropzoom-batch-manifest", manifest.version == 1, manifest.shards >= 1 else {
            throw CommandError.usage("\(path): not \(what) (schema \(manifest.schema))")
        }
        return manifest
    }

    func json() throws -> String { try snakeCaseJSON(self) }

    /// The entries of shard `index` of `shards` (`Batch.select`: every N-th by sorted input path).
    func entries(shard index: Int) -> [Entry] {
        Batch.select(files, path: \.input, shard: (index, shards))
    }

    /// Whether `entry`'s output is there and is not the file that was there at submission: this batch wrote it
    /// (an earlier run of the shard, requeued or resubmitted).
    static func writtenByBatch(_ entry: Entry) -> Bool {
        guard let now = FileStamp(entry.output) else { return false }
        guard let before = entry.existing else { return true }
        return now.device != before.device || now.inode != before.inode
    }

    static func now() -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: Date())
    }
}
