import CFFmpeg
import Foundation

/// The input, opened: its demuxer, the video stream cropzoom transforms, and that stream's
/// decoder, set up from the stream's parameters (opened later, once the thread plan gives it its
/// threads). Refuses, with the reason, an input that has no video to transform.
struct InputSetup {
    let demuxer: Demuxer
    let videoIndex: Int
    let decoder: VideoDecoder

    init(_ cfg: TranscodeConfiguration, watch: IOWatch? = nil) throws(CropZoomError) {
        // A live source has the live timeout to send what the probe needs.
        watch?.arm(cfg.liveTimeout)
        demuxer = try Demuxer(
            path: cfg.input, format: cfg.inputFormat, options: InputSetup.options(cfg), watch: watch,
            timeout: cfg.liveTimeout)
        let input = demuxer.input
        guard let videoIndex = input.bestVideoStream() else {
            let cover = (0..<input.streamCount).contains(where: input.isAttachedPicture)
            throw CropZoomError(
                .inputUnreadable, path: cfg.input == "-" ? "stdin" : cfg.input,
                reason: cover ? "no video stream (only a cover picture)" : "no video stream")
        }
        self.videoIndex = videoIndex
        decoder = try VideoDecoder(input: input, streamIndex: videoIndex)
        let dec = decoder.context
        guard dec.width > 0, dec.height > 0, dec.pixelFormat != .none else {
            if cfg.input == "-" && input.formatName.contains("mp4") {
                throw CropZoomError(
                    .inputUnreadable, path: "stdin",
                    reason:
                        "an MP4/MOV read from a pipe needs its index (moov) at the front; this one has it at the "
                        + "end (remux with -movflags +faststart, or name the file)"
                )
            }
            throw CropZoomError(
                .inputUnreadable, path: cfg.input == "-" ? "stdin" : cfg.input,
                reason: "the video stream has no decodable pictures")
        }
    }

    var input: InputFormat { demuxer.input }

    /// The input's options: the user's, and for a live UDP/RTP source a 4 MiB socket receive buffer unless given
    /// (FFmpeg's default, 64 KiB, overflows during one 1080p keyframe sent in a burst while the machine is busy;
    /// the kernel caps it at `net.core.rmem_max`).
    static func options(_ cfg: TranscodeConfiguration) -> [String: String] {
        var options = cfg.inputOptions
        let scheme = cfg.input.split(separator: ":").first.map { $0.lowercased() } ?? ""
        if cfg.isLive && (scheme == "udp" || scheme == "rtp") && options["buffer_size"] == nil {
            options["buffer_size"] = "4194304"
        }
        // An SDP file opens the RTP session it describes: FFmpeg allows only file protocols unless told.
        if cfg.input.lowercased().hasSuffix(".sdp") && options["protocol_whitelist"] == nil {
            options["protocol_whitelist"] = "file,udp,rtp,crypto,data"
        }
        return options
    }

    /// Refuses missing, unreadable, directory and empty inputs with a precise reason.
    static func check(_ path: String) throws(CropZoomError) {
        // Standard input and URLs are FFmpeg's to open (and to refuse).
        if path == "-" || path.contains("://") { return }
        var st = stat()
        guard RawPath.withCString(path, { stat($0, &st) }) == 0 else {
            throw CropZoomError(.inputUnreadable, path: path, reason: String(cString: strerror(errno)))
        }
        if st.st_mode & S_IFMT == S_IFDIR {
            throw CropZoomError(.inputUnreadable, path: path, reason: "is a directory, not a media file")
        }
        if st.st_mode & S_IFMT == S_IFREG && st.st_size == 0 {
            throw CropZoomError(.inputUnreadable, path: path, reason: "empty file (0 bytes)")
        }
        guard RawPath.withCString(path, { access($0, R_OK) }) == 0 else {
            throw CropZoomError(.inputUnreadable, path: path, reason: String(cString: strerror(errno)))
        }
    }
}

extension SourcePicture {
    /// The pixel aspect ratio of stream `st` (its own, else its decoder's; 1 when neither says).
    static func sampleAspect(_ st: StreamRef, _ decoder: VideoDecoder) -> Double {
        var r = st.sampleAspectRatio
        if !r.isKnown { r = decoder.context.sampleAspect }
        return r.isKnown ? r.value : 1
    }
}
