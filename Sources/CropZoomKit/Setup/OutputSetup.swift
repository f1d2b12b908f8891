import CropZoomFFmpeg
import Foundation

/// The output, claimed and opened: where it is written (``AtomicOutput``: a temporary beside
/// it, renamed into place at the end; nil for standard output and `--null`), its container, and
/// the container whose rules decide codecs and stream routes (with `--null` the packets go to
/// FFmpeg's null muxer, but decisions are the ones the named container would get, so `--null`
/// measures, and a plan shows, the real job).
struct OutputSetup {
    let atomic: AtomicOutput?
    let output: OutputFormat
    let container: OutputFormat
    /// The container's muxer name ("mp4", "matroska" …).
    let containerName: String

    /// Claims the output path (standard output, "-", is written as it comes: a pipe has no
    /// temporary name to rename). Refuses one image name for a whole clip.
    static func claim(_ cfg: TranscodeConfiguration, notices: NoticeLog) throws(CropZoomError) -> AtomicOutput? {
        if cfg.null || cfg.output == "-" { return nil }
        var muxerName = OutputFormat.guessMuxer(format: cfg.format, path: cfg.output)
        var target = cfg.output
        if cfg.segment != nil && muxerName != "hls" {
            guard let inner = muxerName, !AtomicOutput.multiFileMuxers.contains(inner), !RawPath.isAddress(cfg.output)
            else {
                throw CropZoomError(
                    .usage, path: cfg.output, setting: .segment,
                    reason: "\(setting: .segment) writes files of one container (mp4, mkv, ts …) or HLS, not "
                        + (muxerName.map { "\($0) output" } ?? "this output"))
            }
            muxerName = "segment"
            target = cfg.segmentPattern
            notices.add("writing a file every \(String(format: "%g", cfg.segment ?? 0)) s: \(target)")
        }
        // One image file cannot hold every frame (image2 fails at the second one).
        if muxerName == "image2", !OutputFormat.isNumberedPattern(cfg.output) {
            let name = URL(fileURLWithPath: cfg.output).deletingPathExtension().lastPathComponent
            let ext = URL(fileURLWithPath: cfg.output).pathExtension
            throw CropZoomError(
                .usage, path: cfg.output,
                reason: "names one image, but every frame is written: use a pattern such as "
                    + "\(name)_%04d.\(ext) (one image per frame)")
        }
        let multiFile = muxerName.map(AtomicOutput.multiFileMuxers.contains) ?? false
        return try AtomicOutput(
            target: target, input: cfg.input, overwrite: cfg.overwrite, force: cfg.force, multiFile: multiFile,
            recording: cfg.isLive, direct: cfg.isLive && multiFile, notice: notices.add)
    }

    init(_ cfg: TranscodeConfiguration, atomic: AtomicOutput?) throws(CropZoomError) {
        self.atomic = atomic
        if cfg.segment != nil && !cfg.null && OutputFormat.guessMuxer(format: cfg.format, path: cfg.output) != "hls" {
            // FFmpeg's segment muxer, writing files of the container the output's name or --format gives.
            container = try OutputFormat(path: "", displayPath: cfg.output, formatName: cfg.format)
            containerName = container.formatName
            output = try OutputFormat(
                path: atomic?.writePath ?? cfg.segmentPattern, displayPath: cfg.segmentPattern, formatName: "segment")
            return
        }
        output = try OutputFormat(
            path: cfg.output == "-" && !cfg.null ? "pipe:1" : atomic?.writePath ?? "",
            displayPath: cfg.output == "-" ? "stdout" : cfg.output,
            formatName: cfg.null ? "null" : cfg.format,
            streaming: cfg.output == "-" || atomic?.kind == .stream)
        // SRT in live mode drops what is still unsent when the connection closes (linger 0): the last second of a
        // stream never arrived (55 of 75 frames, measured). Closing waits up to 3 s for the receiver instead.
        if cfg.output.lowercased().hasPrefix("srt://") && !cfg.output.contains("linger=") {
            output.protocolOptions["linger"] = "3"
        }
        containerName =
            cfg.null
            ? (cfg.format ?? OutputFormat.guessMuxer(format: nil, path: cfg.output) ?? "matroska")
            : output.formatName
        container =
            cfg.null ? (try? OutputFormat(path: "", displayPath: cfg.output, formatName: cfg.format)) ?? output : output
    }
}

/// The notices of a job's set-up, in order, each also passed on as it comes.
///
/// `@unchecked Sendable`: written by the thread that sets the job up, read after.
final class NoticeLog: @unchecked Sendable {
    private(set) var all: [String] = []
    private let onNotice: (String) -> Void

    init(_ onNotice: @escaping (String) -> Void) { self.onNotice = onNotice }

    func add(_ notice: String) {
        all.append(notice)
        onNotice(notice)
    }
}
