/// The one error type of CropZoomKit.
///
/// Every failure carries what was being done, the file it concerns, the reason (for FFmpeg
/// failures, `av_strerror`'s text) and a ``Kind`` that decides the process exit code.
public struct CropZoomError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What class of failure this is; decides the command's exit code.
    public enum Kind: Sendable, Equatable {
        /// The command line or configuration is wrong (exit 2).
        case usage
        /// The input cannot be read as media cropzoom can process (exit 3).
        case inputUnreadable
        /// Processing started and failed: an encoder, the muxer, a write error (exit 1).
        case processing
        /// A signal stopped the work (exit 128 + signal: 130 for SIGINT, 143 for SIGTERM).
        case interrupted(signal: Int32)
        /// The caller cancelled the job (`TranscodeJob.cancel`, or the
        /// Swift task running it); as a process exit code, 130 like Ctrl-C.
        case cancelled
    }

    public var kind: Kind
    /// What was being done, e.g. "opening the input" (may be empty when `reason` says it all).
    public var what: String
    /// The file concerned, if any.
    public var path: String?
    /// Why it failed, e.g. FFmpeg's "Invalid data found when processing input".
    public var reason: String
    /// The FFmpeg or errno code behind it, if any (negative AVERROR).
    public var code: Int32?

    public init(_ kind: Kind, what: String = "", path: String? = nil, reason: String, code: Int32? = nil) {
        self.kind = kind
        self.what = what
        self.path = path
        self.reason = reason
        self.code = code
    }

    /// The process exit code documented in the README.
    public var exitCode: Int32 {
        switch kind {
        case .usage: return 2
        case .inputUnreadable: return 3
        case .processing: return 1
        case .interrupted(let signal): return 128 + signal
        case .cancelled: return 130
        }
    }

    /// One line: `<path>: <what>: <reason>` (the CLI prefixes `cropzoom: error: `).
    public var description: String {
        var parts: [String] = []
        if let path { parts.append(path) }
        if !what.isEmpty { parts.append(what) }
        parts.append(reason)
        return parts.joined(separator: ": ")
    }
}
