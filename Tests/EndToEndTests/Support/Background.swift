// Runs in the background for tests that act while cropzoom records or serves: a cropzoom run whose output goes to
// files, and readiness waits on what the kernel says is listening (instead of fixed sleeps, which a loaded 2-core
// machine outlasts).

import CropZoomKit
import Foundation
import Testing

/// A cropzoom run in the background (its output in files), for tests that act while it records.
struct BackgroundRun {
    let pid: Int32
    let stdoutPath: String
    let stderrPath: String
    let started = Date()

    /// `cpus`: run on these CPUs only (`taskset -c`, which execs cropzoom: the pid is cropzoom's). `foreground`: at
    /// the priority of the program a person is watching (``Foreground/prefix``).
    static func start(
        _ args: [String], in folder: URL, environment: [String]? = nil, cpus: String? = nil, foreground: Bool = false
    ) throws -> BackgroundRun {
        let out = folder.appendingPathComponent("cz-stdout").path
        let err = folder.appendingPathComponent("cz-stderr").path
        let pinning = try cpus.map { [try #require(CLI.which("taskset")), "-c", $0] } ?? []
        let priority = foreground ? Foreground.prefix : []
        let pid = try ChildProcess.spawn(
            priority + pinning + [try CLI.binary()] + args, stdout: .file(out), stderr: .file(err),
            environment: environment)
        return BackgroundRun(pid: pid, stdoutPath: out, stderrPath: err)
    }

    /// Waits for the exit (killed after `timeout` seconds, which throws): the exit status and stderr.
    func wait(timeout: TimeInterval) throws -> (status: Int32, stderr: String, seconds: Double) {
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if Date().timeIntervalSince(started) > timeout {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw Oracle.Failure("cropzoom did not end within \(timeout) s: \(stderr)")
            }
            usleep(20_000)
        }
        let exit = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (exit, stderr, Date().timeIntervalSince(started))
    }

    /// Waits (up to 30 s) until the run's `--progress json` events report `frames` frames; the last count seen.
    @discardableResult
    func waitForFrames(_ frames: Int) -> Int {
        var recorded = 0
        while Date().timeIntervalSince(started) < 30 && recorded < frames {
            usleep(100_000)
            recorded =
                stderr.split(separator: "\n").compactMap { line -> Int? in
                    if case .progress(let p) = JobRecord(jsonLine: String(line)) { return p.frames }
                    return nil
                }.last ?? 0
        }
        return recorded
    }

    var stderr: String {
        String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: stderrPath))) ?? Data(), as: UTF8.self)
    }
}

/// The desktop suite's programs — the X server, the sound server, the recording and its receiver — run at the
/// priority of what a person is watching (nice -10, as root; `nice` execs the program, so the pid is the program's and
/// every thread it starts inherits it). The other suites run beside the real-time ones on 2 cores, several of the
/// library's jobs at once: a CI run starved the X server for 1.7 s (x11grab then delivered 51 frames in a burst, thinned
/// as late) and delayed a recording's start past 6 s. What these tests check — the set-up's frames recorded, a killed
/// recording playable — is then cropzoom's, not the load's; how a recording behaves when the machine cannot keep up
/// is the overload tests' (LiveTests), which keep the default priority. LiveTests' source read ahead of real time
/// runs this way too: it checks that such frames are not aged, not how long an encoder takes to start on a loaded
/// machine.
enum Foreground {
    static let prefix = ["nice", "-n", "-10"]
}

/// Waits for a socket to be there before a peer talks to it: the kernel's own tables (`/proc/net/udp`, `udp6`, `tcp`,
/// `tcp6`), not a guess of how long set-up takes.
enum Listening {
    enum Transport: String {
        case udp
        case tcp
    }

    /// Whether some socket is bound to `port` (UDP: bound at all, which is when a UDP reader or an SRT listener
    /// receives; TCP: in the LISTEN state).
    static func isBound(_ port: Int, _ transport: Transport) -> Bool {
        let hexPort = String(format: ":%04X", port)
        for table in [transport.rawValue, transport.rawValue + "6"] {
            guard let text = try? String(contentsOfFile: "/proc/net/\(table)", encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 3, fields[1].hasSuffix(hexPort) else { continue }
                if transport == .udp || fields[3] == "0A" { return true }
            }
        }
        return false
    }

    /// Waits (polling every 20 ms) until `port` is bound, or throws after `timeout` seconds naming what was awaited.
    static func wait(for port: Int, _ transport: Transport, timeout: TimeInterval = 20, what: String = "the listener")
        throws
    {
        let deadline = Date().addingTimeInterval(timeout)
        while !isBound(port, transport) {
            if Date() > deadline {
                throw Oracle.Failure("\(what) did not bind \(transport.rawValue) port \(port) within \(timeout) s")
            }
            usleep(20_000)
        }
    }
}
