/// An error of the commands that supervise runs (`batch`, `run`, `bench`), not of a transcode
/// (which throws CropZoomKit's `CropZoomError`): main.swift prints `cropzoom: error: <description>`
/// and exits with `exitCode`.
struct CommandError: Error, CustomStringConvertible {
    var description: String
    var exitCode: Int32

    /// Bad usage or an invalid job file, found before any work started: exit 2.
    static func usage(_ message: String) -> CommandError { CommandError(description: message, exitCode: 2) }

    /// The command failed: exit 1, or the failed run's own exit code.
    static func failure(_ message: String, exitCode: Int32 = 1) -> CommandError {
        CommandError(description: message, exitCode: exitCode)
    }
}
