import CropZoomCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Starting other programs the way a shell does: what the commands that supervise runs (`batch`, `run`, `bench`)
/// and the tests both need, in one place.
public enum ChildProcess {
    /// Where one of the child's standard descriptors goes.
    public enum Redirect: Sendable {
        /// `/dev/null`.
        case null
        /// A file, created or truncated.
        case file(String)
        /// A descriptor of this process (duplicated onto the child's; mark it close-on-exec here).
        case descriptor(Int32)
    }

    /// The signals a child gets with their default dispositions (whatever this process ignores or handles).
    static let defaultSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ, SIGCHLD]

    /// Starts `command` (its first word a path, or a name looked up on `PATH`) with `posix_spawnp`: an empty
    /// signal mask and default dispositions for the usual terminal signals, as a shell starts a program, so
    /// SIGINT and SIGTERM reach it (Foundation's `Process` passes on the calling thread's mask, and a thread that
    /// blocks signals — a test runner's, a supervisor's worker — would start a child that never sees them).
    /// Arguments are written as `RawPath` bytes (a file name that is not UTF-8 is passed as it was given).
    /// `environment` nil passes this process's own. Returns the child's pid; throws the `errno` text.
    public static func spawn(
        _ command: [String], stdin: Redirect = .null, stdout: Redirect, stderr: Redirect,
        environment: [String]? = nil
    ) throws(CropZoomError) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, redirect) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch redirect {
            case .null: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                RawPath.withCString(path) {
                    _ = posix_spawn_file_actions_addopen(&actions, fd, $0, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                }
            case .descriptor(let source): posix_spawn_file_actions_adddup2(&actions, source, fd)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in defaultSignals { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var argv: [UnsafeMutablePointer<CChar>?] = command.map { RawPath.withCString($0) { strdup($0) } } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let spawned: Int32
        if let environment {
            var envp: [UnsafeMutablePointer<CChar>?] =
                environment.map { RawPath.withCString($0) { strdup($0) } } + [nil]
            defer { for p in envp { free(p) } }
            spawned = posix_spawnp(&pid, command[0], &actions, &attributes, &argv, &envp)
        } else {
            spawned = posix_spawnp(&pid, command[0], &actions, &attributes, &argv, environ)
        }
        guard spawned == 0 else {
            throw CropZoomError(
                .processing, what: "starting \(shellQuoted(command))", reason: String(cString: strerror(spawned)),
                code: spawned)
        }
        return pid
    }

    /// This process's environment with `name` set to `value` (replacing it if present).
    public static func environment(setting name: String, to value: String) -> [String] {
        [name + "=" + value] + environment(removing: name)
    }

    /// This process's environment without `name`.
    public static func environment(removing name: String) -> [String] {
        let marker = name + "="
        var entries: [String] = []
        var entry = environ
        while let e = entry.pointee {
            let text = RawPath.string(cString: e)
            if !text.hasPrefix(marker) { entries.append(text) }
            entry += 1
        }
        return entries
    }

    /// This process's arguments (without its name) as the bytes they were given: a file name that is not UTF-8 is
    /// kept losslessly (`RawPath`), where CommandLine.arguments would replace its bytes with U+FFFD.
    public static func rawArguments() -> [String] {
        (1..<Int(CommandLine.argc)).map { RawPath.string(cString: CommandLine.unsafeArgv[$0]!) }
    }

    /// An executable by name on `PATH` (or the path itself when it has a slash), or nil.
    public static func which(_ name: String) -> String? {
        if name.contains("/") { return isExecutableFile(name) ? name : nil }
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(name)"
            if isExecutableFile(path) { return path }
        }
        return nil
    }

    /// A file (not a folder) this process may execute.
    public static func isExecutableFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isExecutableFile(atPath: path)
    }

    /// A command line as a POSIX shell reads it back.
    public static func shellQuoted(_ args: [String]) -> String {
        args.map { a in
            if !a.isEmpty, a.allSatisfy({ $0.isLetter || $0.isNumber || "-_./=:,+%@".contains($0) }) { return a }
            return "'" + a.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
        .joined(separator: " ")
    }
}
