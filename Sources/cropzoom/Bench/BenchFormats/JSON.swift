import CropZoomKit
import Foundation

// `--format json`: the report's document (`BenchDocument`, schema `cropzoom-bench`), snake_case keys.

extension BenchResults {
    func document() -> BenchDocument {
        let iso = ISO8601DateFormatter()
        let rows = rows()
        return BenchDocument(
            cropzoomVersion: CropZoom.configuration.version, date: iso.string(from: date),
            machine: .init(cores: cores, cpu: cpuName, system: system),
            input: .init(path: input, bundledSample: bundledSample),
            job: .init(
                command: command, codec: codec, outputSize: outputSize, window: window,
                sink: sinkIsFile ? "file" : "null", framesPerRun: rows.first?.frames ?? 0, repeats: repeats),
            baselineThreads: baseline?.threads ?? 0, ffmpegVersion: ffmpegVersion, warnings: warnings, results: rows)
    }
}

extension BenchDocument {
    func json() throws -> String { try snakeCaseJSON(self) }
}
