import ArgumentParser
import CropZoomKit
import Foundation

// A hand-written entry point so usage errors exit with 2 (ArgumentParser's default is 64) and
// every error is one line: `cropzoom: error: <path>: <reason>`.
// Freed picture buffers go back to the system (glibc would keep them: ProcessMemory).
ProcessMemory.returnLargeBlocksToTheSystem()
// A child of `batch`/`run`/`bench` ends with its parent, even one killed with SIGKILL. (`getenv`: building
// ProcessInfo's whole environment was half a millisecond of every run's start.)
if let parent = getenv(ProcessSignals.parentVariable).flatMap({ Int32(String(cString: $0)) }) {
    ProcessSignals.install()
    ProcessSignals.endWithParent(parent)
}
var routed = BatchSpellings.Routed(arguments: [])
do {
    // From the raw argv bytes: a file name that is not UTF-8 is kept losslessly.
    let arguments = ChildProcess.rawArguments()
    // `cropzoom help NAME`: ArgumentParser shows the overview for a NAME it does not know, and exits 0.
    if arguments.count >= 2, arguments[0] == "help", !arguments[1].hasPrefix("-") {
        let names: [String] = CropZoom.subcommands.map { $0._commandName } + ["help"]
        if !names.contains(arguments[1]) {
            throw CommandError.usage(
                "help: unknown command '\(arguments[1])' (commands: \(names.joined(separator: ", ")))")
        }
    }
    // Completion scripts that know the default command (Completions), either spelling of the option.
    let option = "--generate-completion-script"
    var completionShell: String? = nil
    if arguments.count == 2 && arguments[0] == option { completionShell = arguments[1] }
    if arguments.count == 1 && arguments[0].hasPrefix(option + "=") {
        completionShell = String(arguments[0].dropFirst(option.count + 1))
    }
    if let shell = completionShell, let script = Completions.script(for: shell) {
        print(script)
        exit(0)
    }
    if arguments == ["--generate-manual"] {
        print(ManualPage.text(), terminator: "")
        exit(0)
    }
    // ffmpeg's single-dash options (`-hide_banner`, `-threads`) are usage errors, not bundles of short flags.
    try FFmpegSpellings.check(arguments)
    // `batch --watch DIR …` and the other modes spelled as flags: the subcommands they are now.
    routed = try BatchSpellings.route(arguments)
    let normalized = Bench.normalize(routed.arguments)
    var command = try CropZoom.parseNamedSubcommand(normalized) ?? CropZoom.parseAsRoot(normalized)
    try command.run()
} catch let code as ExitCode {
    exit(code.rawValue)
} catch let e as CommandError {
    Stderr.write("cropzoom: error: \(e.description)\n")
    exit(e.exitCode)
} catch {
    let code = CropZoom.exitCode(for: error)
    if code == .success {
        print(CropZoom.fullMessage(for: error))
        exit(0)
    }
    let message = CropZoom.message(for: error).split(separator: "\n").first.map(String.init) ?? "bad usage"
    // (ffmpeg's spellings never get here: FFmpegSpellings.check refused them before parsing.) An old batch spelling
    // names the subcommand it is now, whose help has the options.
    let see = routed.new.map { "\(routed.old ?? "") is now \($0): see \($0) --help" } ?? "see cropzoom --help"
    Stderr.write("cropzoom: error: \(message) (\(see))\n")
    exit(2)
}
