import CropZoomFFmpeg
import Foundation

/// The video's way through: the encoder and the output pixel format (from `--codec`,
/// `--pix-fmt` and what the container takes), range and YUV matrix, the geometry, the kernels
/// it needs (refused before anything is written where they cannot), the thread plan — and with
/// it the decoder opened and the encoder made.
struct VideoSetup {
    let plan: GeometryPlan
    let outputFormat: PixelFormat
    let inputInfo: PixelFormatInfo
    let outputInfo: PixelFormatInfo
    let fullRange: Bool
    /// The YUV matrix of an RGB ↔ YUV conversion: the output's label, or the input's for RGB output.
    let matrix: ColorMatrix
    /// The input's pixel aspect (a pixel's width / height; 1: square or unknown).
    let pixelAspect: Double
    let threads: ThreadPlan
    /// Nil with `--codec none`.
    let encoder: VideoEncoder?
    let hdr: HDRMetadata?
    /// HDR mapped to SDR BT.709 (`--tone-map`); nil when the picture keeps its colours.
    let toneMapping: ToneMapping?
    /// What the choices changed that the user should hear of (an HDR input's codec, a format players take).
    let notes: [String]

    init(_ cfg: TranscodeConfiguration, input: InputSetup, output: OutputSetup) throws(CropZoomError) {
        let decoder = input.decoder
        let dec = decoder.context
        let videoStream = input.input.stream(input.videoIndex)
        var codec: EncoderRef? =
            cfg.skipEncoder ? nil : try VideoEncoder.findCodec(named: cfg.codec, output: output.container)
        let inFormat = dec.pixelFormat
        let inInfo = inFormat.info!
        var notes: [String] = []
        // HDR input without --codec: HEVC Main 10 where the container's default is H.264.
        let hdrTransfer = videoStream.hdrTransfer
        // Not when the output is asked to be SDR (a curve named, an 8-bit --pix-fmt): H.264 stays.
        let asksSDR =
            (cfg.toneMap != .auto && cfg.toneMap != .off)
            || cfg.pixelFormat.flatMap { PixelFormatInfo(name: $0) }.map { $0.bitDepth <= 8 } == true
        if let transfer = hdrTransfer, cfg.codec == nil, codec?.name == "libx264", !asksSDR,
            let hevc = VideoEncoder.hdrDefault(output: output.container)
        {
            codec = hevc
            notes.append(
                "video stream #\(input.videoIndex) is HDR (\(transfer)): encoding HEVC Main 10 (libx265), which "
                    + "players show as HDR (\(setting: .codec) h264 for H.264)")
        }
        func format(hdr: Bool) throws(CropZoomError) -> PixelFormat {
            try codec.map { (c: EncoderRef) throws(CropZoomError) in
                try VideoEncoder.choosePixelFormat(
                    codec: c, input: inFormat, requested: cfg.pixelFormat, hdr: hdr, profile: cfg.profile)
            } ?? inFormat
        }
        var outputFormat = try format(hdr: hdrTransfer != nil)
        let sdrReason =
            hdrTransfer == nil ? nil : VideoSetup.sdrReason(cfg, codec: codec, format: outputFormat, output: output)
        let maps: Bool
        switch cfg.toneMap {
        case .off: maps = false
        case .auto: maps = sdrReason != nil
        default: maps = hdrTransfer != nil
        }
        if maps, let transfer = hdrTransfer {
            outputFormat = try format(hdr: false)
            notes.append(
                "video stream #\(input.videoIndex) is HDR (\(transfer)): tone mapped to SDR BT.709 "
                    + "(\(ToneMapping.Curve(cfg.toneMap).name)"
                    + (sdrReason.map { ": \($0)" } ?? "") + "; \(setting: .toneMap) off keeps it HDR)")
        } else if let transfer = hdrTransfer, let reason = sdrReason {
            notes.append(
                "video stream #\(input.videoIndex) is HDR (\(transfer)) and stays so (\(setting: .toneMap) off), "
                    + "although \(reason): players will show it washed out")
        } else if hdrTransfer == nil, cfg.toneMap != .auto, cfg.toneMap != .off {
            notes.append(
                "\(setting: .toneMap) \(cfg.toneMap.rawValue): video stream #\(input.videoIndex) is not HDR (PQ or "
                    + "HLG): nothing to map")
        }
        self.outputFormat = outputFormat
        let outInfo = outputFormat.info!
        if let codec, cfg.pixelFormat == nil, cfg.profile == nil, !maps,
            VideoEncoder.playableDefaultEncoders.contains(codec.name), !inInfo.isRGB,
            inInfo.bitDepth > outInfo.bitDepth
                || inInfo.log2ChromaW + inInfo.log2ChromaH
                    < outInfo.log2ChromaW + outInfo.log2ChromaH
        {
            let kind = codec.name == "libx265" ? "HEVC" : "H.264"
            notes.append(
                "video stream #\(input.videoIndex) (\(inInfo.name)) is encoded as \(outInfo.name), the \(kind) "
                    + "players take (\(setting: .pixFmt) \(inInfo.name) keeps it)")
        }
        let aspect = SourcePicture.sampleAspect(videoStream, decoder, width: dec.width, height: dec.height)
        pixelAspect = aspect.ratio.value
        if let ignored = aspect.ignored {
            notes.append(
                "\(cfg.inputName): video stream #\(input.videoIndex): its pixel aspect ratio \(ignored.num):\(ignored.den) "
                    + "cannot be right for a \(dec.width)x\(dec.height) picture (damaged); ignored, square pixels")
        }
        self.notes = notes
        inputInfo = inInfo
        outputInfo = outInfo
        // RGB (full range by nature) into YUV is limited range, as players expect, unless the output is "J".
        let fullRange = outInfo.isJ || ((inInfo.isJ || dec.isTaggedFullRange) && !(inInfo.isRGB && !outInfo.isRGB))
        self.fullRange = fullRange
        let inSpace = maps ? .bt709 : videoStream.colorMatrix
        matrix =
            outInfo.isRGB
            ? inSpace : VideoEncoder.matrix(inputSpace: inSpace, inputFormat: inFormat, output: outputFormat)

        // Geometry.
        let source = SourcePicture(
            width: dec.width, height: dec.height,
            sampleAspect: aspect.ratio.value,
            display: videoStream.displayOrientation,
            alignX: 1 << inInfo.log2ChromaW, alignY: 1 << inInfo.log2ChromaH)
        // Encoders that take odd sizes in subsampled formats (chroma rounded up) keep an odd picture odd.
        let align = codec.map(VideoEncoder.takesOddSizes) == true ? (x: 1, y: 1) : outInfo.alignment
        var geometry: GeometryPlan
        do {
            geometry = try GeometryPlan.make(cfg.geometry, source: source, outputAlign: align)
        } catch {
            // The plan knows the picture, not the file: a picture it can make no output of names the input.
            guard error.kind == .inputUnreadable, error.path == nil else { throw error }
            var named = error
            named.path = cfg.inputName
            throw named
        }
        if case .cover = cfg.background {
            guard geometry.warp != nil else {
                throw CropZoomError(
                    .usage,
                    setting: .background,
                    reason:
                        "\(setting: .background) cover zooms a rotated or moved picture in until it fills the "
                        + "frame: it needs \(setting: .rotate) by an angle other than 0/90/180/270, or "
                        + "\(setting: .transform) "
                        + "(use another \(setting: .background))"
                )
            }
            geometry.warp?.cover = true
        }
        let plan = geometry
        self.plan = plan

        if plan.animation != nil && cfg.kernel == .swscale {
            throw CropZoomError(
                .usage,
                setting: .kernel,
                reason:
                    "keyframed \(setting: .zoom)/\(setting: .center) and \(setting: .zoom) below 1 need "
                    + "sub-pixel windows, which swscale cannot read: use \(setting: .kernel) auto"
            )
        }
        // `--kernel zimg` where zimg cannot scale: refused before anything is written.
        if cfg.kernel == .zimg,
            let reason = ZimgScaler.refusal(
                src: inFormat, dst: outputFormat, srcFullRange: fullRange,
                dstFullRange: fullRange, filter: cfg.scaler)
        {
            throw ZimgScaler.refused(reason, src: inFormat, dst: outputFormat)
        }
        if cfg.kernel == .zimg,
            let reason = ZimgScaler.refusal(
                width: plan.output.width, height: plan.output.height, format: outputFormat)
                ?? ZimgScaler.refusal(width: dec.width, height: dec.height, format: inFormat)
        {
            throw ZimgScaler.refused(reason, src: inFormat, dst: outputFormat)
        }

        // Threads, now that the work of each stage is known; then open the decoder with its share.
        let load = ThreadPlan.Load(
            inputPixels: source.width * source.height,
            outputPixels: plan.output.width * plan.output.height,
            encoder: codec?.name, preset: cfg.preset,
            strict: cfg.strict, heavyTransform: plan.warp != nil)
        let threads = ThreadPlan.make(
            threads: cfg.threads, load: load, decoder: cfg.decoderThreads,
            encoder: cfg.encoderThreads, workers: cfg.workers, processors: UsableCPUs.count)
        self.threads = threads
        try decoder.open(threads: threads.decoder)

        let metadata = HDRMetadata.read(
            videoStream, index: input.videoIndex, path: cfg.input == "-" || input.input.memory != nil ? nil : cfg.input)
        let toneMapping =
            maps
            ? ToneMapping(
                curve: ToneMapping.Curve(cfg.toneMap), hlg: hdrTransfer == "HLG",
                sourcePeak: ToneMapping.peak(hlg: hdrTransfer == "HLG", hdr: metadata),
                matrix: inInfo.isRGB ? .bt2020 : videoStream.colorMatrix,
                primaries: videoStream.colorPrimaries) : nil
        self.toneMapping = toneMapping
        // A mapped picture carries no HDR metadata.
        let hdr = maps ? nil : metadata
        self.hdr = hdr
        guard let codec else {
            encoder = nil
            return
        }
        let sar = plan.keepsInputAspectAndMatrix ? aspect.ratio : .one
        let frameRate = videoStream.statedFrameRate
        do {
            encoder = try VideoEncoder(
                .init(
                    codec: codec, width: plan.output.width, height: plan.output.height,
                    pixelFormat: outputFormat, fullRange: fullRange, timeBase: videoStream.timeBase,
                    frameRate: frameRate, sampleAspect: sar,
                    colorSource: videoStream, sdr: maps,
                    globalHeader: output.output.needsGlobalHeader, threads: threads.encoder,
                    crf: cfg.crf, preset: cfg.preset, bitrate: cfg.bitrate,
                    tuning: .init(
                        profile: cfg.profile, level: cfg.level, tune: cfg.tune, gop: cfg.gop,
                        options: cfg.encoderOptions),
                    path: cfg.output, hdr: hdr,
                    verbose: cfg.verbose,
                    lookahead: cfg.isLive
                        ? max(1, Int(cfg.maxLatency * (frameRate.isKnown ? frameRate.value : 30) / 2)) : nil,
                    forcedKeyframes: cfg.segment != nil || output.containerName == "hls"))
        } catch  where cfg.codec == nil && error.kind == .processing && error.code == AVCode.invalidArgument {
            // The container's own codec (DV's, for one, takes 720x480 at 29.97 fps or 720x576
            // at 25 fps only) refuses this picture: a usage error, before anything is written.
            let name = codec.name
            let fps = frameRate.den > 0 ? String(format: "%.4g", frameRate.value) : "?"
            throw CropZoomError(
                .usage, path: cfg.output,
                setting: .codec,
                reason: "\(output.containerName)'s own codec \(name) cannot encode "
                    + "\(plan.output.width)x\(plan.output.height) at \(fps) fps "
                    + "(use a size and rate it takes, \(setting: .codec), or another container)")
        }
    }

    /// Why the output cannot carry HDR, when it cannot: 8 bits, H.264 without a 10-bit `--pix-fmt` (High 10 plays
    /// on few devices), a codec without HDR signalling players honour, or a container without colour signalling.
    static func sdrReason(
        _ cfg: TranscodeConfiguration, codec: EncoderRef?, format: PixelFormat, output: OutputSetup
    ) -> String? {
        guard let codec else { return nil }
        let id = codec.id
        if id == .h264 && cfg.pixelFormat == nil {
            return "H.264 players take 8 bits (a 10-bit \(setting: .pixFmt) keeps HDR in High 10)"
        }
        if let info = format.info, info.bitDepth <= 8 {
            return "the output is \(info.name), 8 bits"
        }
        if ["flv", "avi", "gif", "apng", "image2", "image2pipe", "mjpeg"].contains(output.containerName) {
            return "\(output.containerName) carries no colour description"
        }
        let hdrCodecs: [CodecID] = [.hevc, .vp9, .av1, .h264, .prores, .ffv1]
        if !hdrCodecs.contains(id) {
            return "\(codec.name) has no HDR signalling players honour"
        }
        return nil
    }
}

extension ToneMapping.Curve {
    /// The curve `--tone-map` names (`auto` and `off`: BT.2390's).
    init(_ setting: TranscodeConfiguration.ToneMap) {
        switch setting {
        case .hable: self = .hable
        case .reinhard: self = .reinhard
        default: self = .bt2390
        }
    }
}
