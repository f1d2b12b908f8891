// Soak — many jobs in one process through CropZoomKit, with the process's memory, open files and threads sampled
// every second: what a long-running app or server that embeds the library sees.
//
//     swift run -c release Soak --minutes 30 --out Benchmarks/results/soak
//
// Jobs cycle through four kinds on samples/bench-720p.mp4 (1280x720, 5 s): a zoom on the threaded engine, the
// same on one thread (--threads 1), one cancelled a quarter second in, and one that fails (its output folder does
// not exist). Every second it records seconds, RSS (MiB, /proc/self/statm), open file descriptors (/proc/self/fd)
// and threads (/proc/self/status), and the jobs done; at the end it writes OUT.csv, OUT.svg (the curves) and
// OUT.json (the summary: the median RSS of the second minute and of the last, their ratio, descriptors and threads
// after the first job and at the end). Exit 1 when RSS grew by more than 10 %, or descriptors or threads grew.
//
// As a long-running host should, it calls `ProcessMemory.returnLargeBlocksToTheSystem()` first; `--glibc-default`
// leaves glibc's dynamic mmap threshold on, to see the difference (RSS creeps: Benchmarks/RELIABILITY.md).

import CropZoomKit
import Foundation

struct Sample {
    var seconds: Double
    var rssMiB: Double
    var fds: Int
    var threads: Int
    var jobs: Int
}

func rssMiB() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Double(fields[1]) else { return 0 }
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

func openDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

func threadCount() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in text.split(separator: "\n") where line.hasPrefix("Threads:") {
        return Int(line.dropFirst(8).trimmingCharacters(in: .whitespaces)) ?? -1
    }
    return -1
}

func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    return s.isEmpty ? 0 : s[s.count / 2]
}

/// Shared between the job loop and the sampler; `@unchecked Sendable`: every access holds `lock`.
final class Counters: @unchecked Sendable {
    private let lock = NSLock()
    private var jobs = 0
    private var outcomes: [String: Int] = [:]
    var done: Int { lock.withLock { jobs } }
    var tally: [String: Int] { lock.withLock { outcomes } }
    func finished(_ kind: String) {
        lock.withLock {
            jobs += 1
            outcomes[kind, default: 0] += 1
        }
    }
}

func svg(_ samples: [Sample]) -> String {
    let (w, h, left, bottom) = (720.0, 300.0, 60.0, 40.0)
    let maxT = max(1, samples.last?.seconds ?? 1)
    let maxRSS = max(1, (samples.map(\.rssMiB).max() ?? 1) * 1.15)
    let maxCount = Double(max(1, (samples.map { max($0.fds, $0.threads) }.max() ?? 1))) * 1.15
    func x(_ t: Double) -> Double { left + (w - left - 20) * t / maxT }
    func y(_ v: Double, _ top: Double) -> Double { h - bottom - (h - bottom - 20) * v / top }
    func line(_ values: [(Double, Double)], _ top: Double, _ color: String) -> String {
        let points = values.map { String(format: "%.1f,%.1f", x($0.0), y($0.1, top)) }.joined(separator: " ")
        return "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\" points=\"\(points)\"/>"
    }
    var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(w))\" height=\"\(Int(h))\" "
    out += "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    out += line(samples.map { ($0.seconds, $0.rssMiB) }, maxRSS, "#1f77b4") + "\n"
    out += line(samples.map { ($0.seconds, Double($0.fds)) }, maxCount, "#2ca02c") + "\n"
    out += line(samples.map { ($0.seconds, Double($0.threads)) }, maxCount, "#d62728") + "\n"
    out += "<line x1=\"\(left)\" y1=\"\(h - bottom)\" x2=\"\(w - 20)\" y2=\"\(h - bottom)\" stroke=\"black\"/>\n"
    out += "<line x1=\"\(left)\" y1=\"20\" x2=\"\(left)\" y2=\"\(h - bottom)\" stroke=\"black\"/>\n"
    out += String(format: "<text x=\"%.0f\" y=\"%.0f\">%.0f s</text>\n", w - 60, h - 20, maxT)
    out += String(format: "<text x=\"4\" y=\"24\">%.0f MiB</text>\n", maxRSS)
    out += "<text x=\"4\" y=\"\(h - bottom)\">0</text>\n"
    let jobs = samples.last?.jobs ?? 0
    out += "<text x=\"\(left + 10)\" y=\"16\"><tspan fill=\"#1f77b4\">RSS (MiB)</tspan>  "
    out += "<tspan fill=\"#2ca02c\">open descriptors</tspan>  <tspan fill=\"#d62728\">threads</tspan>  "
    out += "(same scale, max \(Int(maxCount)))  \(jobs) jobs</text>\n</svg>\n"
    return out
}

// MARK: - Main

var minutes = 30.0
var outPrefix = "soak"
var input = "samples/bench-720p.mp4"
var kinds = ["threaded", "serial", "cancelled", "failed"]
var glibcDefault = false
var arguments = CommandLine.arguments.dropFirst()
while let a = arguments.popFirst() {
    switch a {
    case "--minutes": minutes = Double(arguments.popFirst() ?? "") ?? minutes
    case "--out": outPrefix = arguments.popFirst() ?? outPrefix
    case "--input": input = arguments.popFirst() ?? input
    case "--kinds": kinds = (arguments.popFirst() ?? "").split(separator: ",").map(String.init)
    case "--glibc-default": glibcDefault = true
    default:
        FileHandle.standardError.write(Data("Soak: unknown argument \(a)\n".utf8))
        exit(2)
    }
}
if !glibcDefault { ProcessMemory.returnLargeBlocksToTheSystem() }
guard FileManager.default.fileExists(atPath: input) else {
    FileHandle.standardError.write(Data("Soak: \(input): no such file (run from the package root)\n".utf8))
    exit(2)
}
let work = FileManager.default.temporaryDirectory.appendingPathComponent("cropzoom-soak-\(getpid())")
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: work) }

let counters = Counters()
let started = Date()
let deadline = started.addingTimeInterval(minutes * 60)
let samplesLock = NSLock()
nonisolated(unsafe) var samples: [Sample] = []
let sampler = Thread {
    while Date() < deadline.addingTimeInterval(2) {
        let s = Sample(
            seconds: Date().timeIntervalSince(started), rssMiB: rssMiB(), fds: openDescriptors(),
            threads: threadCount(), jobs: counters.done)
        samplesLock.withLock { samples.append(s) }
        Thread.sleep(forTimeInterval: 1)
    }
}
sampler.start()

var afterFirstJob: (fds: Int, threads: Int)? = nil
var n = 0
while Date() < deadline {
    let kind = kinds[n % kinds.count]
    let output = kind == "failed" ? work.appendingPathComponent("missing/o.mp4") : work.appendingPathComponent("o.mp4")
    var config = TranscodeConfiguration(input: input, output: output.path)
    config.geometry.zoom = 1.5
    config.preset = "ultrafast"
    config.overwrite = true
    if kind == "serial" { config.threads = 1 }
    let job = TranscodeJob(configuration: config)
    let events = Task { for await _ in job.events {} }
    if kind == "cancelled" {
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.25)
            job.cancel()
        }
    }
    let outcome: String
    do {
        _ = try await job.run()
        outcome = "done"
    } catch {
        outcome = error.kind == .cancelled ? "cancelled" : "failed"
    }
    await events.value
    counters.finished("\(kind): \(outcome)")
    if afterFirstJob == nil {
        // A moment for the first job's threads to go.
        try await Task.sleep(nanoseconds: 500_000_000)
        afterFirstJob = (openDescriptors(), threadCount())
    }
    n += 1
}
try await Task.sleep(nanoseconds: 3_000_000_000)
let endFDs = openDescriptors()
let endThreads = threadCount()
while sampler.isExecuting { try await Task.sleep(nanoseconds: 200_000_000) }

let all = samplesLock.withLock { samples }
let secondMinute = all.filter { $0.seconds >= 60 && $0.seconds < 120 }.map(\.rssMiB)
let lastMinute = all.filter { $0.seconds >= all.last!.seconds - 62 && $0.seconds < all.last!.seconds - 2 }.map(\.rssMiB)
let early = median(secondMinute.isEmpty ? all.prefix(all.count / 2).map(\.rssMiB) : secondMinute)
let late = median(lastMinute)
let ratio = early > 0 ? late / early : 0
var csv = "seconds,rss_mib,fds,threads,jobs\n"
for s in all { csv += String(format: "%.1f,%.1f,%d,%d,%d\n", s.seconds, s.rssMiB, s.fds, s.threads, s.jobs) }
try csv.write(toFile: outPrefix + ".csv", atomically: true, encoding: .utf8)
try svg(all).write(toFile: outPrefix + ".svg", atomically: true, encoding: .utf8)
let first = afterFirstJob ?? (endFDs, endThreads)
let summary: [String: Any] = [
    "minutes": minutes, "jobs": counters.done, "glibc_default_allocator": glibcDefault, "outcomes": counters.tally,
    "input": input,
    "rss_mib_median_early": early, "rss_mib_median_last_minute": late, "rss_ratio": ratio,
    "rss_mib_max": all.map(\.rssMiB).max() ?? 0,
    "fds_after_first_job": first.fds, "fds_end": endFDs, "threads_after_first_job": first.threads,
    "threads_end": endThreads,
]
let json = try JSONSerialization.data(withJSONObject: summary, options: [.prettyPrinted, .sortedKeys])
try json.write(to: URL(fileURLWithPath: outPrefix + ".json"))
print(String(decoding: json, as: UTF8.self))
let flat = ratio <= 1.10 && endFDs <= first.fds && endThreads <= first.threads
print(flat ? "Soak: flat" : "Soak: GROWTH")
exit(flat ? 0 : 1)
