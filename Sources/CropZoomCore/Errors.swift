import Foundation

/// The one error type of CropZoomKit.
///
/// Every failure carries what was being done, the file it concerns, the reason (for FFmpeg
/// failures, `av_strerror`'s text) and a ``Kind`` that decides the process exit code. An error
/// about a setting names it (``setting``), and its reason refers to settings by reference
/// (`"\(setting: .crop) …"`), so that each front end shows them in its own words: the library
/// by their job-file keys (`crop`), the command line by their flags (`--crop`), through
/// ``description(naming:)``.
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
    /// The setting the error is about, when it is about one (a job file names it as the field).
    public var setting: Setting?

    public init(
        _ kind: Kind, what: String = "", path: String? = nil, setting: Setting? = nil, reason: String,
        code: Int32? = nil
    ) {
        self.kind = kind
        self.what = what
        self.path = path
        self.setting = setting
        self.reason = reason
        self.code = code
    }

    /// The process exit code documented in docs/failing-safely.md (and summed up in the README).
    public var exitCode: Int32 {
        switch kind {
        case .usage: return 2
        case .inputUnreadable: return 3
        case .processing: return 1
        case .interrupted(let signal): return 128 + signal
        case .cancelled: return 130
        }
    }

    /// One line: `<path>: <what>: <reason>`, settings named by their keys (the CLI prefixes
    /// `cropzoom: error: ` and names them by flag).
    public var description: String { description(naming: \.key) }

    /// One line, each setting the reason refers to written as `name` gives it.
    public func description(naming name: (Setting) -> String) -> String {
        var parts: [String] = []
        if let path { parts.append(path) }
        if !what.isEmpty { parts.append(Setting.render(what, naming: name)) }
        parts.append(Setting.render(reason, naming: name))
        return parts.joined(separator: ": ")
    }

    /// The reason alone, settings named as `name` gives them.
    public func reason(naming name: (Setting) -> String) -> String { Setting.render(reason, naming: name) }
}

/// Foundation's view of the error: its one-line ``CropZoomError/description`` (settings named by their job-file keys),
/// so `error.localizedDescription` and an app's alert show it as cropzoom would.
extension CropZoomError: LocalizedError {
    public var errorDescription: String? { description }
}

extension DefaultStringInterpolation {
    /// A reference to a setting in an error's text, written by each front end in its own words
    /// (``CropZoomError/description(naming:)``).
    public mutating func appendInterpolation(setting: Setting) {
        appendLiteral(Setting.marker(setting))
    }
}
