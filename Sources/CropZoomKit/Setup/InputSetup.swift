import CropZoomFFmpeg
import Foundation

/// The input, opened: its demuxer, the video stream cropzoom transforms, and that stream's
/// decoder, set up from the stream's parameters (opened later, once the thread plan gives it its
/// threads). Refuses, with the reason, an input that has no video to transform.
struct InputSetup {
    let demuxer: Demuxer
    let videoIndex: Int
    let decoder: VideoDecoder

    /// `bytes`: the input's bytes, read from memory (`cfg.input` only names it).
    init(
        _ cfg: TranscodeConfiguration, watch: IOWatch? = nil, interrupt: IOWatch? = nil, bytes: [UInt8]? = nil
    ) throws(CropZoomError) {
        // A live source has the live timeout to send what the probe needs.
        watch?.arm(cfg.liveTimeout)
        do {
            demuxer = try Demuxer(
                path: cfg.input, format: cfg.inputFormat, options: InputSetup.options(cfg), watch: watch,
                interrupt: interrupt, timeout: cfg.liveTimeout, bytes: bytes, strict: cfg.strict)
        } catch
            where error.kind == .usage && cfg.frameRate != nil && cfg.inputOptions["framerate"] == nil
            && error.reason.hasPrefix(Setting.marker(.inputOption) + " framerate:")
        {
            throw CropZoomError(
                .usage, path: error.path, setting: .framerate,
                reason: "\(setting: .framerate) is for image sequences and raw streams; this input's demuxer "
                    + "(\(cfg.input)) takes its rate from the file")
        }
        let input = demuxer.input
        guard let videoIndex = input.bestVideoStream() else {
            let cover = (0..<input.streamCount).contains(where: input.isAttachedPicture)
            throw CropZoomError(
                .inputUnreadable, path: cfg.inputName,
                reason: cover ? "no video stream (only a cover picture)" : "no video stream")
        }
        self.videoIndex = videoIndex
        decoder = try VideoDecoder(input: input, streamIndex: videoIndex, strict: cfg.strict)
        let dec = decoder.context
        guard dec.width > 0, dec.height > 0, dec.pixelFormat != .none else {
            if cfg.input == "-" && input.memory == nil && input.formatName.contains("mp4") {
                throw CropZoomError(
                    .inputUnreadable, path: "stdin",
                    reason:
                        "an MP4/MOV read from a pipe needs its index (moov) at the front; this one has it at the "
                        + "end (remux with -movflags +faststart, or name the file)"
                )
            }
            throw CropZoomError(
                .inputUnreadable, path: cfg.inputName,
                reason: "the video stream has no decodable pictures")
        }
    }

    var input: InputFormat { demuxer.input }

    /// The input's options: the user's, and for a live UDP/RTP source a 4 MiB socket receive buffer unless given
    /// (FFmpeg's default, 64 KiB, overflows during one 1080p keyframe sent in a burst while the machine is busy;
    /// the kernel caps it at `net.core.rmem_max`).
    static func options(_ cfg: TranscodeConfiguration) -> [String: String] {
        var options = cfg.inputOptions
        if let rate = cfg.frameRate, options["framerate"] == nil { options["framerate"] = rate }
        if let sequence = sequencePattern(cfg.input), sequence.glob, options["pattern_type"] == nil {
            options["pattern_type"] = "glob"
        }
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

    /// An image sequence's name: an image extension and a printf number (`frame_%04d.png`, which FFmpeg's image2
    /// demuxer counts from the first file there, 0 to 4) or, when no file has the name, a glob (`frame_*.png`, read
    /// in name order).
    static func sequencePattern(_ path: String) -> (glob: Bool, pattern: String)? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        let images = ["png", "jpg", "jpeg", "bmp", "tif", "tiff", "webp", "dpx", "exr", "tga", "ppm", "pgm", "j2k"]
        guard images.contains(ext) else { return nil }
        if name.range(of: "%0?[0-9]*d", options: .regularExpression) != nil { return (false, path) }
        if name.contains("*") || name.contains("?") || name.contains("[") {
            var st = stat()
            if RawPath.withCString(path, { stat($0, &st) }) != 0 { return (true, path) }
        }
        return nil
    }

    /// Refuses missing, unreadable, directory and empty inputs with a precise reason.
    static func check(_ given: String) throws(CropZoomError) {
        // Standard input and URLs are FFmpeg's to open (and to refuse); `file:` names a file.
        if given == "-" || RawPath.isAddress(given) { return }
        let path = given.hasPrefix("file:") ? String(given.dropFirst(5)) : given
        // An image sequence's first file is FFmpeg's to find (it names the pattern when there is none).
        if sequencePattern(path) != nil { return }
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
    /// The pixel aspect ratio of stream `st` (its own, else its decoder's; 1 when neither says), and the one it
    /// states when that cannot be right for a `width`×`height` picture — `av_image_check_sar` refuses it, or it
    /// stretches a side more than 10 times (a damaged header: a picture 4294967294 pixels wide): that one is
    /// ignored, square pixels.
    static func sampleAspect(_ st: StreamRef, _ decoder: VideoDecoder, width: Int, height: Int)
        -> (ratio: Rational, ignored: Rational?)
    {
        var r = st.sampleAspectRatio
        if !r.isKnown { r = decoder.context.sampleAspect }
        guard r.isKnown else { return (.one, nil) }
        if !r.isValidSampleAspect(width: width, height: height) || r.value > 10 || r.value < 0.1 {
            return (.one, r)
        }
        return (r, nil)
    }
}

extension InputSetup {
    /// The analysis passes' read loop (reframing, stabilising, the contact sheet): the video stream's packets decoded
    /// into `take` until the input ends (then the decoder is drained) or `enough()` says so; a set `cancel` stops it
    /// with `.cancelled`, naming `name`. `packet` is the caller's, reused.
    static func decodeVideo(
        _ input: InputFormat, _ decoder: VideoDecoder, videoIndex: Int, packet: Packet, cancel: CancelFlag,
        name: String, enough: () -> Bool, _ take: (Frame) throws(CropZoomError) -> Void
    ) throws(CropZoomError) {
        reading: while !enough() {
            if cancel.isSet { throw CropZoomError(.cancelled, path: name, reason: "cancelled") }
            switch try input.read(into: packet) {
            case .again: continue
            case .endOfStream: break reading
            case .value: break
            }
            defer { packet.unref() }
            if packet.streamIndex == videoIndex { try decoder.decode(packet, take) }
        }
        if !enough() { try decoder.decode(nil, take) }
    }
}
