import ArgumentParser
import CropZoomKit
import Foundation

/// The `--report` JSON of a batch (schema `cropzoom-batch`, version 1), and the merge of several: the shards of one
/// batch, or the runs of one shard (`cropzoom report merge`, and the scheduler path at the end of a batch).
struct BatchReport: Codable, Equatable {
    var schema = "cropzoom-batch"
    var version = 1
    var outDir: String
    var jobs: Int
    var threadsPerJob: Int
    var shard: String?
    var seconds: Double
    var interrupted: Bool
    /// The run went through its whole list (a shard's report written before the end, or by a shard stopped by a
    /// signal, says false: that shard has not finished). Absent in reports of earlier versions: read as
    /// `!interrupted`.
    var finished: Bool?
    var summary: [String: Int]
    var files: [BatchItem]
    /// The reports a merged report was made from, in the order given.
    var mergedFrom: [String]? = nil

    init(
        _ items: [BatchItem], outDir: String, jobs: Int, threadsPerJob: Int, shard: String?, seconds: Double,
        interrupted: Bool, finished: Bool
    ) {
        self.outDir = outDir
        self.jobs = jobs
        self.threadsPerJob = threadsPerJob
        self.shard = shard
        self.seconds = (seconds * 1000).rounded() / 1000
        self.interrupted = interrupted
        self.finished = finished
        self.summary = BatchReport.summary(items)
        self.files = items
    }

    /// `total` and the count of each result (`not_started` for "not started").
    static func summary(_ items: [BatchItem]) -> [String: Int] {
        var summary: [String: Int] = ["total": items.count]
        for r in BatchItem.Result.allCases where r != .pending {
            summary[r.rawValue.replacingOccurrences(of: " ", with: "_")] = items.filter { $0.result == r }.count
        }
        return summary
    }

    /// Whether the run went through its whole list.
    var isFinished: Bool { finished ?? !interrupted }

    func json() throws -> String { try snakeCaseJSON(self) }

    /// The report in `path`; a file that is not one is refused with its path and the reason.
    static func read(_ path: String) throws -> BatchReport {
        let report = try readSnakeCaseJSON(BatchReport.self, from: path, what: "a cropzoom batch report")
        guard report.schema == "cropzoom-batch", report.version == 1 else {
            throw CommandError.usage(
                "\(path): not a cropzoom batch report (schema \(report.schema) version \(report.version))")
        }
        return report
    }

    /// Whether `result` is what became of the file (it ran, or it was skipped), rather than a run that did not get
    /// to it (interrupted, not started).
    static func isDecisive(_ result: BatchItem.Result) -> Bool {
        result.wrote || result == .failed || result == .skipped
    }

    /// One report from `reports` (each named by its path in `names`), all of one output folder (`outDir`, or the
    /// first report's; with `outDir`, no report at all is a merge too). Each file gets the
    /// entry of the last report in which it has a decisive result (ok, failed, skipped), or else of the last report
    /// that names it; files come sorted by input path. `expected` (the list a batch was submitted with) adds each
    /// file no report names as "not started". Jobs and threads are the largest, seconds the longest run's;
    /// interrupted when a file is left interrupted or not started; finished when every report finished and no file
    /// is left not started.
    static func merge(
        _ reports: [BatchReport], names: [String], expected: [BatchItem] = [], outDir: String? = nil
    ) throws -> BatchReport {
        guard let outDir = outDir ?? reports.first?.outDir else {
            throw CommandError.usage("report merge: no report to merge")
        }
        for (k, r) in reports.enumerated() where r.outDir != outDir {
            throw CommandError.usage("\(names[k]): a report of another output folder (\(r.outDir), not \(outDir))")
        }
        var byInput: [String: BatchItem] = [:]
        for item in expected {
            var notRun = item
            notRun.result = .notRun
            byInput[item.input] = notRun
        }
        for r in reports {
            for item in r.files {
                if let earlier = byInput[item.input], isDecisive(earlier.result), !isDecisive(item.result) {
                    continue
                }
                byInput[item.input] = item
            }
        }
        let files = byInput.values.map { item in
            var item = item
            if item.result == .pending { item.result = .notRun }
            return item
        }
        .sorted { $0.input < $1.input }
        let left = files.contains { $0.result == .interrupted || $0.result == .notRun }
        var merged = BatchReport(
            files, outDir: outDir, jobs: reports.map(\.jobs).max() ?? 1,
            threadsPerJob: reports.map(\.threadsPerJob).max() ?? 1, shard: nil,
            seconds: reports.map(\.seconds).max() ?? 0, interrupted: left,
            finished: reports.allSatisfy(\.isFinished) && !files.contains { $0.result == .notRun })
        merged.mergedFrom = names
        return merged
    }
}
