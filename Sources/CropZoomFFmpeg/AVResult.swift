import CFFmpeg
import CropZoomCore

/// Result of a send/receive call on a codec or a read from a demuxer: EAGAIN and EOF are
/// control flow, not errors.
package enum AVStep<Value> {
    case value(Value)
    /// AVERROR(EAGAIN): feed more input (or drain output) first.
    case again
    /// AVERROR_EOF: nothing more will come.
    case endOfStream

    /// The same step with its value transformed.
    package func map<T>(_ transform: (Value) -> T) -> AVStep<T> {
        switch self {
        case .value(let v): return .value(transform(v))
        case .again: return .again
        case .endOfStream: return .endOfStream
        }
    }
}

package enum AVCode {
    package static let again = cz_averror_eagain()
    package static let eof = cz_averror_eof()
    package static let invalidData = cz_averror_invaliddata()
    package static let patchWelcome = cz_averror_patchwelcome()
    package static let invalidArgument = cz_averror(EINVAL)
    package static let noPTS = cz_nopts()

    /// `av_strerror` text for an FFmpeg error code.
    package static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        return buffer.withUnsafeMutableBufferPointer { buf in
            String(cString: cz_strerror(code, buf.baseAddress, buf.count))
        }
    }
}

extension CropZoomError {
    /// An error from an FFmpeg return code, with `av_strerror`'s text as the reason.
    package static func ffmpeg(_ code: Int32, _ kind: Kind, what: String, path: String?) -> CropZoomError {
        CropZoomError(kind, what: what, path: path, reason: AVCode.message(code), code: code)
    }
}

/// Throws a `CropZoomError` when `code` is negative; returns it otherwise.
@discardableResult
package func check(
    _ code: Int32, _ kind: CropZoomError.Kind = .processing, _ what: @autoclosure () -> String,
    path: String? = nil
) throws(CropZoomError) -> Int32 {
    if code < 0 { throw CropZoomError.ffmpeg(code, kind, what: what(), path: path) }
    return code
}

/// `check` for processing failures (the common case).
@discardableResult
package func check(_ code: Int32, _ what: @autoclosure () -> String, path: String? = nil) throws(CropZoomError) -> Int32
{
    try check(code, .processing, what(), path: path)
}

/// FFmpeg's log (`cz_log_install`: its messages counted, printed only when verbose).
package enum FFmpegLog {
    /// Routes FFmpeg's log: warnings and worse printed when `verbose`, nothing otherwise.
    package static func install(verbose: Bool) { cz_log_install(verbose ? AV_LOG_WARNING : AV_LOG_QUIET) }
}

extension FFmpegLog {
    /// Nothing of FFmpeg's log is printed (`cz_log_install(AV_LOG_QUIET)`): one-line errors stay one line.
    package static func silence() { cz_log_install(AV_LOG_QUIET) }
}
