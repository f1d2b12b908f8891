// Runs the cropzoom binary built by `swift build` (<package root>/.build/debug/cropzoom) and
// captures what it did: exit status (or the signal that killed it), stdout and stderr.

import CropZoomKit
import Foundation
import Testing

/// What one run of a program did.
struct CLIResult: Sendable, CustomStringConvertible {
    var command: [String]
    /// The exit status, or the signal number when `killedBySignal`.
    var status: Int32
    /// True when the process died from an uncaught signal (then `status` is the signal number).
    var killedBySignal: Bool
    var stdout: String
    var stderr: String
    /// Wall-clock seconds from start to exit.
    var seconds: Double

    /// The non-empty lines of stderr.
    var stderrLines: [String] {
        stderr.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    /// Lines cropzoom writes as errors (`cropzoom: error: …`).
    var errorLines: [String] { stderrLines.filter { $0.hasPrefix("cropzoom: error: ") } }

    /// The exit code a shell would report (128 + signal when killed by a signal).
    var shellStatus: Int32 { killedBySignal ? 128 + status : status }

    var description: String {
        "`\(ChildProcess.shellQuoted(command))` -> "
            + (killedBySignal ? "killed by signal \(status)" : "exit \(status)")
            + String(format: " after %.2f s", seconds)
            + "\n--- stderr ---\n\(stderr.suffix(3000))"
            + (stdout.isEmpty ? "" : "\n--- stdout ---\n\(stdout.suffix(1000))")
    }
}

enum CLI {
    /// `<package root>/.build/debug/cropzoom`, or `CROPZOOM_TEST_BINARY` when set (the sanitizer builds in their
    /// own scratch folders: `scripts/sanitize.sh`); throws with a clear message when it is missing.
    static func binary() throws -> String {
        guard let root = Oracle.packageRoot else {
            throw Oracle.Failure("cannot find the package root (no Package.swift above \(#filePath))")
        }
        let path =
            ProcessInfo.processInfo.environment["CROPZOOM_TEST_BINARY"]
            ?? root.appendingPathComponent(".build/debug/cropzoom").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Oracle.Failure("the cropzoom binary is missing at \(path): run `swift build` in \(root.path) first")
        }
        return path
    }

    /// An executable on PATH, or nil.
    static func which(_ name: String) -> String? { ChildProcess.which(name) }

    /// Runs `cropzoom args…` to completion (killed after `timeout` seconds, which throws).
    static func cropzoom(_ args: [String], timeout: TimeInterval = 300) throws -> CLIResult {
        try run(try binary(), args, timeout: timeout)
    }

    /// Runs cropzoom and sends `signal` to it `delay` seconds after it started, then waits
    /// for it to exit.
    static func cropzoom(
        _ args: [String], sending signal: Int32, after delay: TimeInterval,
        timeout: TimeInterval = 120
    ) throws -> CLIResult {
        try run(try binary(), args, signal: (signal, delay), timeout: timeout)
    }

    /// Runs cropzoom and sends `signal` to it once `ready` holds (asked every 5 ms: its temporary output is there,
    /// so it is working, however slowly it started — a sanitized build takes a while), then waits for it to exit.
    static func cropzoom(
        _ args: [String], sending signal: Int32, once ready: @escaping () -> Bool, timeout: TimeInterval = 120
    ) throws -> CLIResult {
        try run(try binary(), args, signal: (signal, 0), ready: ready, timeout: timeout)
    }

    /// Runs a shell command line with bash (`bash -c script`).
    static func bash(_ script: String, timeout: TimeInterval = 300) throws -> CLIResult {
        try run("/bin/bash", ["-c", script], timeout: timeout)
    }

    /// Runs `executable args…` with stdin from /dev/null; output goes to files (no pipe
    /// deadlocks). When `signal` is given, that signal is sent once after its delay.
    ///
    /// The child is started by `ChildProcess.spawn` with an EMPTY signal mask and default
    /// dispositions for the usual terminal signals, as a shell would start it.  (Foundation's
    /// `Process` passes on the mask of the calling thread, and the test runner's worker
    /// threads block nearly every signal, so a child started that way never sees SIGINT or
    /// SIGTERM.)
    /// `environment` replaces this process's (nil: the same); `watch` is called every 5 ms while it runs (a test
    /// that acts on what the run is doing).
    static func run(
        _ executable: String, _ args: [String],
        signal: (number: Int32, delay: TimeInterval)? = nil, ready: (() -> Bool)? = nil,
        environment: [String]? = nil, watch: (() -> Void)? = nil, timeout: TimeInterval = 300
    ) throws -> CLIResult {
        let command = [executable] + args
        let scratch = try Oracle.tempDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outPath = scratch.appendingPathComponent("stdout").path
        let errPath = scratch.appendingPathComponent("stderr").path

        let start = Date()
        let pid: Int32
        do throws(CropZoomError) {
            pid = try ChildProcess.spawn(
                command, stdout: .file(outPath), stderr: .file(errPath), environment: environment)
        } catch {
            throw Oracle.Failure(error.description)
        }

        var status: Int32 = 0
        var signalSent = false
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r == -1 && errno != EINTR {
                throw Oracle.Failure(
                    "waitpid for `\(ChildProcess.shellQuoted(command))`: \(String(cString: strerror(errno)))")
            }
            let elapsed = Date().timeIntervalSince(start)
            if let signal, !signalSent, elapsed >= signal.delay, ready?() ?? true {
                kill(pid, signal.number)
                signalSent = true
            }
            watch?()
            if elapsed > timeout {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                let stderr = String(
                    decoding: (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data(), as: UTF8.self)
                throw Oracle.Failure(
                    "`\(ChildProcess.shellQuoted(command))` timed out after \(timeout) s and was killed; "
                        + "stderr:\n\(stderr)"
                )
            }
            usleep(5_000)
        }
        let seconds = Date().timeIntervalSince(start)
        let termSignal = status & 0x7F
        return CLIResult(
            command: command,
            status: termSignal == 0 ? (status >> 8) & 0xFF : termSignal,
            killedBySignal: termSignal != 0,
            stdout: String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: outPath))) ?? Data(), as: UTF8.self),
            stderr: String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data(), as: UTF8.self),
            seconds: seconds)
    }
}

// MARK: - Small file-system helpers shared by the tests

enum Files {
    /// Names in `folder` (hidden ones included), sorted.
    static func names(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    /// cropzoom's temporary files (`.<name>.cropzoom-tmp-<pid>`) left in `folder`.
    static func temporaryLeftovers(in folder: URL) -> [String] {
        names(in: folder).filter { $0.contains(".cropzoom-tmp-") }
    }

    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    /// What this process's descriptors are open on (the targets of /proc/self/fd's links).
    static func openDescriptors() -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
    }

    /// A sample clip by name; throws when samples/ or the clip is missing.
    static func sample(_ name: String) throws -> URL {
        guard let folder = Oracle.samplesDirectory else {
            throw Oracle.Failure("samples/ not found in the package root")
        }
        let url = folder.appendingPathComponent(name)
        guard exists(url) else { throw Oracle.Failure("sample \(name) is missing from \(folder.path)") }
        return url
    }
}

/// A fresh temporary folder for one test, removed when the value goes away.
final class Scratch: Sendable {
    let url: URL

    init() throws { url = try Oracle.tempDirectory() }

    deinit { try? FileManager.default.removeItem(at: url) }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// A sub-folder, created.
    func folder(_ name: String) throws -> URL {
        let sub = url.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        return sub
    }
}

/// A value shared between a test and a thread it starts.
final class Locked<T: Sendable>: @unchecked Sendable {
    // @unchecked: every access holds `lock`.
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T { lock.withLock { stored } }
    func set(_ value: T) { lock.withLock { stored = value } }
}
