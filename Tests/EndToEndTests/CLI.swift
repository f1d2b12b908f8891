// Runs the cropzoom binary built by `swift build` (<package root>/.build/debug/cropzoom) and
// captures what it did: exit status (or the signal that killed it), stdout and stderr.

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
        "`\(Oracle.shellQuoted(command))` -> "
            + (killedBySignal ? "killed by signal \(status)" : "exit \(status)")
            + String(format: " after %.2f s", seconds)
            + "\n--- stderr ---\n\(stderr.suffix(3000))"
            + (stdout.isEmpty ? "" : "\n--- stdout ---\n\(stdout.suffix(1000))")
    }
}

enum CLI {
    /// `<package root>/.build/debug/cropzoom`; throws with a clear message when it is missing.
    static func binary() throws -> String {
        guard let root = Oracle.packageRoot else {
            throw Oracle.Failure("cannot find the package root (no Package.swift above \(#filePath))")
        }
        let path = root.appendingPathComponent(".build/debug/cropzoom").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Oracle.Failure("the cropzoom binary is missing at \(path): run `swift build` in \(root.path) first")
        }
        return path
    }

    /// Runs `cropzoom args…` to completion (killed after `timeout` seconds, which throws).
    static func cropzoom(_ args: [String], timeout: TimeInterval = 300) throws -> CLIResult {
        try run(try binary(), args, timeout: timeout)
    }

    /// Runs cropzoom and sends `signal` to it `delay` seconds after it started, then waits
    /// for it to exit.
    static func cropzoom(_ args: [String], sending signal: Int32, after delay: TimeInterval,
                         timeout: TimeInterval = 120) throws -> CLIResult
    {
        try run(try binary(), args, signal: (signal, delay), timeout: timeout)
    }

    /// Runs a shell command line with bash (`bash -c script`).
    static func bash(_ script: String, timeout: TimeInterval = 300) throws -> CLIResult {
        try run("/bin/bash", ["-c", script], timeout: timeout)
    }

    /// Runs `executable args…` with stdin from /dev/null; output goes to files (no pipe
    /// deadlocks). When `signal` is given, that signal is sent once after its delay.
    static func run(_ executable: String, _ args: [String],
                    signal: (number: Int32, delay: TimeInterval)? = nil,
                    timeout: TimeInterval = 300) throws -> CLIResult
    {
        let command = [executable] + args
        let scratch = try Oracle.tempDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        defer {
            try? outHandle.close()
            try? errHandle.close()
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = outHandle
        process.standardError = errHandle
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        let start = Date()
        do {
            try process.run()
        } catch {
            throw Oracle.Failure("cannot start `\(Oracle.shellQuoted(command))`: \(error)")
        }

        if let signal {
            if exited.wait(timeout: .now() + signal.delay) == .timedOut {
                kill(process.processIdentifier, signal.number)
            } else {
                // Exited before the signal could be sent: report it as it is (the caller's
                // expectations on the status then fail with this evidence).
                exited.signal()
            }
        }
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            exited.wait()
            let stderr = String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self)
            throw Oracle.Failure("`\(Oracle.shellQuoted(command))` timed out after \(timeout) s and was killed; stderr:\n\(stderr)")
        }
        let seconds = Date().timeIntervalSince(start)
        return CLIResult(
            command: command,
            status: process.terminationStatus,
            killedBySignal: process.terminationReason == .uncaughtSignal,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self),
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
