import CropZoomFFmpeg
import CropZoomSystem

/// How a process running jobs stops cleanly: on SIGINT/SIGTERM/SIGHUP every running job stops,
/// leaves nothing at its output path and fails with `.interrupted` (exit 130/143/129); a child
/// of `batch`, `run` or `bench` also ends with its parent.
public enum ProcessSignals {
    /// Installs the handlers that record SIGINT/SIGTERM/SIGHUP (and ignores SIGPIPE and SIGXFSZ,
    /// so write failures come back as errors) (`cz_install_signal_handlers`).
    public static func install() { ProcessSignal.installHandlers() }

    /// The signal received since `install`, or 0 (`ProcessSignal.pending`).
    public static var pending: Int32 { ProcessSignal.pending }

    /// The environment variable through which `batch`, `run` and `bench` give their children
    /// their own process id (see ``endWithParent(_:)``).
    public static let parentVariable = "CROPZOOM_PARENT_PID"

    /// Makes this process receive SIGTERM — and so stop cleanly, leaving nothing behind — when
    /// the process `parent` dies, even by SIGKILL (`prctl(PR_SET_PDEATHSIG)`, `cz_end_with_parent`).
    public static func endWithParent(_ parent: Int32) { ProcessControl.endWithParent(parent) }
}

extension CropZoomError {
    /// What a job that failed with this error was stopped by: its cancellation (`cancelled`: the path the error names),
    /// the signal the process received — FFmpeg's I/O gives up once the interrupt callback fires, whatever it was doing,
    /// and nothing is left at `output` — or nothing (the error itself).
    func ofStoppedJob(cancelled: String?, output: String) -> CropZoomError {
        if let cancelled { return CropZoomError(.cancelled, path: cancelled, reason: "cancelled") }
        let signal = ProcessSignal.pending
        if signal != 0 {
            return CropZoomError(.interrupted(signal: signal), path: output, reason: "interrupted; nothing written")
        }
        return self
    }
}
