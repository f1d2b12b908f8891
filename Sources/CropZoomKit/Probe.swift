import CropZoomFFmpeg
import Foundation
import SystemPackage

public enum MediaProbe {
    /// Video packets read to decide whether the frame rate varies (≈ 30 s at 30 fps).
    public static let rateWindow = 900

    /// Opens `path` and describes it. Fails like a transcode would (`.inputUnreadable`, one line).
    /// `frameRate: false` skips reading the first `rateWindow` video packets (the variable frame
    /// rate check) when only the streams are wanted, as `batch` wants them.
    /// ``probe(_:frameRate:)-(String,_)`` for a `FilePath` (its bytes kept) or a URL (a file URL's path, any other
    /// as written).
    public static func probe(_ path: FilePath, frameRate: Bool = true) throws(CropZoomError) -> MediaInfo {
        try probe(RawPath.string(path), frameRate: frameRate)
    }
    public static func probe(_ url: URL, frameRate: Bool = true) throws(CropZoomError) -> MediaInfo {
        try probe(RawPath.string(url), frameRate: frameRate)
    }

    /// Why `path` does not read as a whole media file yet, or nil when it does: it opens, its streams are found,
    /// and its index (MP4/MOV) places no sample past the file's end. What `batch watch` asks before it takes a
    /// file that is still being copied in pieces.
    public static func incompleteness(_ path: String) -> String? {
        FFmpegLog.silence()
        do {
            let input = try InputFormat(path: path)
            return input.indexPointsPastEnd() ? "its index points past its end (still being written?)" : nil
        } catch {
            return error.reason
        }
    }

    public static func probe(_ path: String, frameRate: Bool = true) throws(CropZoomError) -> MediaInfo {
        FFmpegLog.silence()  // FFmpeg's own messages would break the one-line errors
        try InputSetup.check(path)
        let input = try InputFormat(path: path)
        return MediaReading.describe(input, path: path, frameRate: frameRate ? rateWindow : nil)
    }

    /// Whether sorted presentation times are unevenly spaced (``MediaReading/isVariable(_:)``).
    static func isVariable(_ raw: [Int64]) -> (Bool, Int) { MediaReading.isVariable(raw) }
}
