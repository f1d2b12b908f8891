import CropZoomKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process measured the way `/usr/bin/time -v` measures it: wall time from the parent,
/// CPU time and peak RSS from `wait4`'s rusage of that very child. One of its outputs is read
/// line by line as it arrives (stderr: cropzoom's NDJSON events); the other goes to /dev/null.
struct MeasuredChild {
    var status: Int32
    var signaled: Bool
    var wallSeconds: Double
    var cpuSeconds: Double
    var peakRSSBytes: Int
    /// The lines of the output that was read.
    var lines: [String]

    var succeeded: Bool { !signaled && status == 0 }

    /// Starts `executable args…` with `ChildProcess.spawn` — empty signal mask and default
    /// dispositions, as a shell would, so Ctrl-C reaches it — and waits for it. A SIGINT/SIGTERM this process
    /// receives meanwhile (with `ProcessSignals.install`) is passed on to the child.
    /// `reading` is the child's descriptor that is read (2, stderr, or 1, stdout; with `both`, the other one goes
    /// into the same pipe instead of /dev/null). A `supervised` child learns who its parent is, to end with it; one
    /// that is not (a scheduler's command: sbatch passes its environment on to the job) gets no such variable.
    static func run(
        _ executable: String, _ args: [String], reading: Int32 = 2, both: Bool = false, supervised: Bool = true,
        onStart: (pid_t) -> Void = { _ in }, onLine: (String) -> Void = { _ in }
    ) throws -> MeasuredChild {
        var fds: [Int32] = [0, 0]
        // Close-on-exec, and made under one lock with the spawn: batch starts children from
        // several threads, and a child must not inherit another child's pipe (that reader would
        // then wait for the wrong process to exit).
        spawnLock.lock()
        guard pipe(&fds) == 0 else {
            spawnLock.unlock()
            throw CommandError.failure("cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)

        // A supervised child learns who its parent is, to end with it (`ProcessSignals.endWithParent`).
        let environment =
            supervised
            ? ChildProcess.environment(setting: ProcessSignals.parentVariable, to: String(getpid()))
            : ChildProcess.environment(removing: ProcessSignals.parentVariable)
        let start = monotonicSeconds()
        let pid: Int32
        do throws(CropZoomError) {
            pid = try ChildProcess.spawn(
                [executable] + args, stdout: reading == 1 || both ? .descriptor(writeEnd) : .null,
                stderr: reading == 2 || both ? .descriptor(writeEnd) : .null, environment: environment)
        } catch {
            close(writeEnd)
            spawnLock.unlock()
            close(readEnd)
            throw CommandError.failure("cannot start \(executable): \(error.reason)")
        }
        close(writeEnd)
        spawnLock.unlock()

        onStart(pid)
        // Read to EOF, handing over complete lines.
        var lines: [String] = []
        var pending = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        var forwarded = false
        while true {
            let n = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR {
                // A signal while this child runs goes on to it (one that came before it started is the caller's
                // to handle: a batch's queue commands started after a Ctrl-C must not get it).
                let signal = ProcessSignals.pending
                if signal != 0 && !forwarded {
                    kill(pid, signal)
                    forwarded = true
                }
                continue
            }
            if n <= 0 { break }
            pending.append(contentsOf: buffer[0..<n])
            while let nl = pending.firstIndex(of: 10) {
                let line = RawPath.string(fromBytes: pending[..<nl])
                pending.removeSubrange(...nl)
                lines.append(line)
                onLine(line)
            }
        }
        close(readEnd)
        if !pending.isEmpty {
            let line = String(decoding: pending, as: UTF8.self)
            lines.append(line)
            onLine(line)
        }

        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw CommandError.failure("wait4: \(String(cString: strerror(errno)))") }
        }
        let wall = monotonicSeconds() - start
        let cpu =
            Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) * 1e-6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) * 1e-6
        let termSignal = status & 0x7F
        return MeasuredChild(
            status: termSignal == 0 ? (status >> 8) & 0xFF : termSignal, signaled: termSignal != 0,
            wallSeconds: wall, cpuSeconds: cpu, peakRSSBytes: Int(usage.ru_maxrss) * 1024,
            lines: lines)
    }
}

/// Serialises pipe creation and spawning (see `MeasuredChild.run`).
private let spawnLock = NSLock()

/// What one cropzoom run reported on stderr (`--progress json --stats`).
struct ChildReport {
    var frames = 0
    var busy: [String: Double] = [:]
    var waits: [String: Double] = [:]
    var poolHighWater: Int? = nil
    var codec = ""
    var outputSize = ""
    var window = ""
    var ffmpegFilter = ""
    var pixelFormat = ""
    var audioCopied = 0
    var audioReencoded = 0
    var error: String? = nil
    /// The last `progress` event: frames so far and fps.
    var progress: (frames: Int, fps: Double)? = nil

    /// Folds one NDJSON event line into the report (other lines are ignored).
    mutating func read(_ line: String) {
        switch JobRecord(jsonLine: line) {
        case .done(let d):
            frames = d.framesOut
            codec = d.codec
            pixelFormat = d.pixFmt
            outputSize = "\(d.width)x\(d.height)"
            window = "\(d.window.width)x\(d.window.height)+\(d.window.x)+\(d.window.y)"
            ffmpegFilter = d.ffmpegFilter
            audioCopied = d.audioStreamsCopied
            audioReencoded = d.audioStreamsReencoded
            poolHighWater = d.pool.highWater
        case .stats(let s):
            busy = s.busySeconds
            var w: [String: Double] = [:]
            for (k, v) in s.waitSeconds { w[benchWaitingStage(k), default: 0] += v }
            waits = w
        case .error(let f):
            error = f.message
        case .progress(let p):
            progress = (p.frames, p.fps)
        default:
            break
        }
    }
}

/// Runs the plan: a warm-up, then `repeats` rounds over the thread counts, cropzoom and ffmpeg
/// alternating (A B A B), each run its own process.
struct BenchRunner {
    var executable: String
    /// cropzoom's arguments for one run, without `--threads`.
    var arguments: [String]
    var threadCounts: [Int]
    var repeats: Int
    /// Builds ffmpeg's command for a thread count from the warm-up's report (nil: no comparison).
    var ffmpegCommand: ((ChildReport, Int) -> [String])?
    var progress: (String) -> Void
    /// With `--write`: the file each run writes (removed after each run).
    var writtenFile: String?

    /// Throws the interruption when a signal came (before a run starts, or after one ended: a signal between two
    /// runs would otherwise be lost, and the bench go on).
    static func stopIfSignalled() throws {
        let signal = ProcessSignals.pending
        if signal != 0 { throw CommandError.failure("interrupted", exitCode: 128 + signal) }
    }

    func cropzoomRun(threads: Int, label: String) throws -> (BenchRun, ChildReport) {
        try Self.stopIfSignalled()
        var report = ChildReport()
        var lastFrames = 0
        let child = try MeasuredChild.run(
            executable, arguments + ["--threads", "\(threads)"],
            onLine: { line in
                report.read(line)
                if let p = report.progress, p.frames != lastFrames {
                    lastFrames = p.frames
                    progress("\(label): frame \(p.frames), \(String(format: "%.0f", p.fps)) fps")
                }
            })
        if let writtenFile { try? FileManager.default.removeItem(atPath: writtenFile) }
        try Self.stopIfSignalled()
        guard child.succeeded else {
            let message =
                report.error ?? child.lines.last { !$0.hasPrefix("{") } ?? "cropzoom failed (exit \(child.status))"
            throw CommandError.failure(message, exitCode: child.signaled ? 128 + child.status : child.status)
        }
        let run = BenchRun(
            wallSeconds: child.wallSeconds, cpuSeconds: child.cpuSeconds, peakRSSBytes: child.peakRSSBytes,
            frames: report.frames, busySeconds: report.busy, waitSeconds: report.waits,
            poolHighWater: report.poolHighWater)
        return (run, report)
    }

    func ffmpegRun(_ command: [String]) throws -> BenchRun {
        try Self.stopIfSignalled()
        var frames = 0
        let child = try MeasuredChild.run(
            command[0], Array(command.dropFirst()),
            onLine: { line in
                if line.hasPrefix("frame="), let f = Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces)) {
                    frames = f
                }
            })
        if let writtenFile { try? FileManager.default.removeItem(atPath: writtenFile) }
        try Self.stopIfSignalled()
        guard child.succeeded else {
            let last = child.lines.last { !$0.contains("=") } ?? ""
            throw CommandError.failure(
                "ffmpeg failed (exit \(child.status))\(last.isEmpty ? "" : ": \(last)"); command: "
                    + "\(ChildProcess.shellQuoted(command))"
            )
        }
        return BenchRun(
            wallSeconds: child.wallSeconds, cpuSeconds: child.cpuSeconds, peakRSSBytes: child.peakRSSBytes,
            frames: frames)
    }

    /// Returns the points (one per thread count, in the order given) and the warm-up's report.
    func run() throws -> (points: [BenchPoint], report: ChildReport) {
        let top = threadCounts.max() ?? 1
        let (_, warm) = try cropzoomRun(threads: top, label: "warm-up (\(top) threads)")
        var points = threadCounts.map { BenchPoint(threads: $0, runs: []) }
        for round in 1...repeats {
            for (i, t) in threadCounts.enumerated() {
                let (run, _) = try cropzoomRun(
                    threads: t, label: "run \(round)/\(repeats), \(t) thread\(t == 1 ? "" : "s")")
                points[i].runs.append(run)
                if let make = ffmpegCommand {
                    let command = make(warm, t)
                    progress("run \(round)/\(repeats), \(t) thread\(t == 1 ? "" : "s"): ffmpeg")
                    points[i].ffmpegRuns.append(try ffmpegRun(command))
                    points[i].ffmpegCommand = command
                }
            }
        }
        return (points, warm)
    }
}
