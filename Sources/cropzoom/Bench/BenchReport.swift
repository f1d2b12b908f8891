import CropZoomKit
import Foundation

// `cropzoom bench`'s report: what was measured (`BenchRun`, `BenchPoint`, `BenchResults`) and the document the figures
// derived from it make (`BenchDocument`, whose rows every format shows). The figures are in BenchStatistics.swift, the
// four renderings in BenchFormats/: an aligned table for people, JSON and CSV for scripts (schema in
// docs/probe-and-bench.md, `version` field), and an SVG chart. Pure functions of the measurements, so tests can check
// them.

/// One measured run of one program at one thread count.
struct BenchRun: Equatable, Sendable {
    var wallSeconds: Double
    /// User + system CPU of the child process (`wait4`'s rusage).
    var cpuSeconds: Double
    /// Peak resident set of the child process (`ru_maxrss`).
    var peakRSSBytes: Int
    var frames: Int
    /// cropzoom's own statistics (`--stats`): busy seconds per stage and queue waits by the
    /// stage that waited. Empty for ffmpeg.
    var busySeconds: [String: Double] = [:]
    var waitSeconds: [String: Double] = [:]
    var poolHighWater: Int? = nil

    /// Frames over the wall time of the whole process, start-up included.
    var fps: Double { wallSeconds > 0 ? Double(frames) / wallSeconds : 0 }
}

/// The runs at one thread count (cropzoom's, and ffmpeg's when compared).
struct BenchPoint: Sendable {
    var threads: Int
    var runs: [BenchRun]
    var ffmpegRuns: [BenchRun] = []
    var ffmpegCommand: [String] = []
}

/// The document `--format json` prints (schema `cropzoom-bench`, version 1; docs/probe-and-bench.md,
/// "Benchmarking"). Keys are snake_case; values in the units their names say.
struct BenchDocument: Codable, Sendable {
    struct Machine: Codable, Sendable {
        var cores: Int
        var cpu: String
        var system: String
    }
    struct Input: Codable, Sendable {
        var path: String
        var bundledSample: Bool
    }
    struct Job: Codable, Sendable {
        /// The command each run executes, `--threads` left out (it varies per row).
        var command: [String]
        var codec: String
        var outputSize: String
        var window: String
        /// "null" (nothing written) or "file" (`--write`: each run writes, then the file is removed).
        var sink: String
        var framesPerRun: Int
        var repeats: Int
    }
    struct FFmpegResult: Codable, Sendable {
        var command: [String]
        var fps: Spread
        var wallSeconds: Spread
        var cpuCores: Double
        var peakRssMib: Double
        /// cropzoom's median fps over ffmpeg's: above 1, cropzoom is faster.
        var speedRatio: Double
    }
    struct Run: Codable, Sendable {
        var wallSeconds: Double
        var cpuSeconds: Double
        var frames: Int
        var fps: Double
        var peakRssMib: Double
    }
    struct Row: Codable, Sendable {
        var threads: Int
        /// min(threads, cores): what "per core" and efficiency divide by.
        var coresUsed: Int
        var oversubscribed: Bool
        var frames: Int
        var fps: Spread
        var fpsPerCore: Double
        /// fps per core over the baseline row's fps per core (1 = perfect scaling).
        var efficiency: Double
        var wallSeconds: Spread
        var cpuSeconds: Double
        /// Median CPU seconds per wall second: how many cores were busy.
        var cpuCores: Double
        /// cpu_cores / cores_used.
        var cpuUtilisation: Double
        var stageMsPerFrame: [String: Double]
        var waitMsPerFrame: [String: Double]
        var poolHighWater: Int
        var peakRssMib: Double
        var runs: [Run]
        var ffmpeg: FFmpegResult?
    }

    var schema = "cropzoom-bench"
    var version = 1
    var cropzoomVersion: String
    var date: String
    var machine: Machine
    var input: Input
    var job: Job
    /// The thread count efficiency is measured against (the smallest one run).
    var baselineThreads: Int
    var ffmpegVersion: String?
    var warnings: [String]
    var results: [Row]
}

/// Everything a bench run measured, and the figures derived from it.
struct BenchResults: Sendable {
    var cores: Int
    var cpuName: String
    var system: String
    var input: String
    var bundledSample: Bool
    var command: [String]
    var codec: String
    var outputSize: String
    var window: String
    var sinkIsFile: Bool
    var repeats: Int
    var ffmpegVersion: String?
    var points: [BenchPoint]
    var warnings: [String] = []
    var date = Date()

    var baseline: BenchPoint? { points.min { $0.threads < $1.threads } }
}
