import ArgumentParser
import CropZoomKit
import Foundation

// A hand-written entry point so usage errors exit with 2 (ArgumentParser's default is 64) and
// every error is one line: `cropzoom: error: <path>: <reason>`.
// A child of `batch`/`run`/`bench` ends with its parent, even one killed with SIGKILL.
if let parent = ProcessInfo.processInfo.environment[Pipeline.parentVariable].flatMap({ Int32($0) }) {
    Pipeline.installSignalHandlers()
    Pipeline.endWithParent(parent)
}
do {
    var command = try CropZoom.parseAsRoot(Bench.normalize(Array(CommandLine.arguments.dropFirst())))
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
    Stderr.write("cropzoom: error: \(message) (see cropzoom --help)\n")
    exit(2)
}
