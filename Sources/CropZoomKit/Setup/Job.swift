import CropZoomFFmpeg
import CropZoomSystem
import Foundation

/// Everything one transcode needs, opened and configured, in the order it is decided: the
/// input checked, the output claimed (``OutputSetup``), the input opened and its video stream
/// chosen (``InputSetup``), the container opened, the encoder, pixel format, geometry and threads
/// (``VideoSetup``), every stream routed (``StreamRouting``), the trim window
/// (``TrimWindow``), metadata and chapters copied and the header written. The engines build the
/// stages from it; `finish` completes the file.
///
/// `@unchecked Sendable`: set up on one thread, then each FFmpeg object is used by exactly one
/// stage (see the engines); the rest is read-only.
final class Job: @unchecked Sendable {
    let configuration: TranscodeConfiguration
    /// Raised by `TranscodeJob.cancel`; the engines poll it.
    let cancel: CancelFlag
    let atomic: AtomicOutput?
    let demuxer: Demuxer
    let decoder: VideoDecoder
    let encoder: VideoEncoder?
    let muxer: Muxer
    /// The geometry; `--stabilize` gives its warp the camera path (``follow(_:)``) before the stages are built.
    private(set) var plan: GeometryPlan
    let outputFormat: PixelFormat
    let fullRange: Bool
    /// The YUV matrix of an RGB ↔ YUV conversion.
    let matrix: ColorMatrix
    /// The input's pixel aspect (a pixel's width / height; 1: square or unknown).
    let pixelAspect: Double
    /// HDR mapped to SDR (`--tone-map`); nil when the picture keeps its colours.
    let toneMapping: ToneMapping?
    let routes: [StreamRoute]
    let videoIndex: Int
    let videoOutput: Int?
    let streams: StreamRouting
    let threads: ThreadPlan
    let trim: TrimWindow
    /// Every rewrite of a time, demuxer to muxer.
    let times: TimestampPolicy
    /// A live source's policy (what is dropped when the machine cannot keep up), and its input's
    /// and output's stops; nil for a file.
    let live: LivePolicy?
    /// Seconds between the keyframes the encoder is made to start (`--segment`, HLS's segments); nil: its own.
    let cuts: Double?
    /// `--audio-input`: the sound device, read on a thread of its own (nil without one).
    let sound: Sound?
    /// `--follow`: the upright picture and the window (nil without it).
    let reframeShape: Reframer.Shape?
    private let log: NoticeLog

    /// The sound device of a live recording: its demuxer, its streams' routes and its times' policy (the device's
    /// stream indices; its trim window starts where ``LiveClock`` puts the recording's start).
    struct Sound {
        let demuxer: Demuxer
        /// The stream recorded.
        let index: Int
        let routes: [StreamRoute]
        let times: TimestampPolicy
    }

    var notices: [String] { log.all }
    /// Seconds of media the output will hold, when known (progress).
    var duration: Double? { trim.duration }

    /// `interrupt`: the job's cancel switch for the input's reads (`TranscodeJob.cancel`). `inputBytes`: the input
    /// read from memory instead of `cfg.input`, which then only names it (in-process fuzzing, ``FuzzTarget``).
    init(
        _ cfg: TranscodeConfiguration, cancel: CancelFlag = CancelFlag(), interrupt: IOWatch? = nil,
        inputBytes: [UInt8]? = nil, notice onNotice: @escaping (String) -> Void
    ) throws(CropZoomError) {
        configuration = cfg
        self.cancel = cancel
        log = NoticeLog(onNotice)
        if inputBytes == nil && cfg.input != "-" && cfg.inputFormat == nil && !RawPath.isAddress(cfg.input) {
            try InputSetup.check(cfg.input)
        }
        atomic = try OutputSetup.claim(cfg, notices: log)
        let watches = cfg.isLive ? try LiveWatches(cfg) : nil
        if cfg.audioInput != nil && watches == nil {
            throw CropZoomError(
                .usage, path: cfg.inputName, setting: .audioInput,
                reason: "\(setting: .audioInput) records with a live input (a capture device, a network stream, or "
                    + "\(setting: .live))")
        }
        if cfg.audioInput == nil, let key = cfg.audioInputOptions.keys.sorted().first {
            throw CropZoomError(
                .usage, setting: .audioInputOption,
                reason: "\(setting: .audioInputOption) \(key): there is no \(setting: .audioInput)")
        }
        let source = try InputSetup(cfg, watch: watches?.input, interrupt: interrupt, bytes: inputBytes)
        // A capture device captures only while it is read: from now on, whatever the set-up still takes.
        if watches != nil, source.demuxer.isDevice { source.demuxer.startEarlyReads(keepingVideo: cfg.maxLatency) }
        let sourceOpenedAt = Date().timeIntervalSince1970
        let soundSetup = try cfg.audioInput.map { _ throws(CropZoomError) in
            try AudioInputSetup(cfg, watch: watches?.soundInput)
        }
        if let soundSetup, soundSetup.demuxer.isDevice { soundSetup.demuxer.startEarlyReads(keepingVideo: nil) }
        watches?.protectThreadsNow()
        demuxer = source.demuxer
        decoder = source.decoder
        videoIndex = source.videoIndex
        reframeShape = cfg.reframe.map { _ in Reframer.frame(cfg, source: source) }
        let target = try OutputSetup(cfg, atomic: atomic)
        target.output.watch = watches?.output
        // HLS cuts its files at keyframes: one is forced every --segment seconds (2 s, FFmpeg's hls_time).
        cuts = cfg.segment ?? (target.containerName == "hls" ? 2 : nil)
        let segments = cfg.segment.flatMap { seconds in
            !cfg.null && target.containerName != "hls" ? (target.containerName, seconds) : nil
        }
        muxer = Muxer(
            output: target.output, live: watches != nil, segment: segments,
            hlsTime: target.containerName == "hls" ? cuts : nil)
        let video = try VideoSetup(cfg, input: source, output: target)
        for note in video.notes { log.add(note) }
        let rate = source.input.stream(source.videoIndex).statedFrameRate
        // A capture device's frames closer than half its frame interval show the same moment (LivePolicy.admits).
        let device = cfg.inputFormat.map { TranscodeConfiguration.captureDevices.contains($0) } ?? false
        let live = watches.map { watches in
            LivePolicy(
                cfg, watches: watches, framesPerSecond: rate.isKnown ? rate.value : nil,
                minimumSpacing: device && rate.isKnown && rate.value > 0 ? 0.5 / rate.value : 0)
        }
        self.live = live
        plan = video.plan
        pixelAspect = video.pixelAspect
        outputFormat = video.outputFormat
        fullRange = video.fullRange
        matrix = video.matrix
        toneMapping = video.toneMapping
        threads = video.threads
        encoder = video.encoder
        streams = try StreamRouting(
            cfg, input: source, sound: soundSetup, output: target, video: video, muxer: muxer, notices: log)
        routes = streams.routes
        videoOutput = streams.videoOutput
        let input = source.input
        target.output.copyMetadata(from: input, except: Muxer.inputContainerTags)
        // The recording starts where every device has media (the video the early reads kept, the sound's first).
        let firstVideo = live.flatMap { live in source.demuxer.settleEarlyReads { live.count(.input) } }
        let clock = soundSetup.map {
            LiveClock([(input, sourceOpenedAt, firstVideo), ($0.input, $0.openedAt, nil)])
        }
        trim = try TrimWindow(cfg, input: input, videoIndex: videoIndex, anchor: clock?.starts[0] ?? firstVideo)
        // Chapters: cut to the trim and moved with the streams.
        try target.output.copyChapters(
            from: input, from: trim.chapters.from, to: trim.chapters.to, shift: trim.chapters.shift)
        let bases = muxer.sourceTimeBase
        // Rule 0b: a live source's clock, or an MPEG-TS-like file's (AVFMT_TS_DISCONT), may restart.
        let continuity =
            cfg.isLive || input.hasClockTimestamps
            ? ClockContinuity.Settings(
                bases: (0..<input.streamCount).map { i in
                    let st = input.stream(i)
                    return st.isAudio || st.isVideo ? st.timeBase : nil
                }, live: cfg.isLive) : nil
        times = TimestampPolicy(
            window: trim.times, continuity: continuity, videoIndex: videoIndex, decoderBase: decoder.timeBase,
            encoderBase: encoder?.timeBase, startTime: trim.startTime, outputBases: bases,
            outputOffsets: bases.indices.map { [streams] in streams.codecDelay[$0] ?? 0 })
        if let soundSetup, let clock {
            let index = soundSetup.audioIndex
            let window = try TrimWindow(cfg, input: soundSetup.input, videoIndex: index, anchor: clock.starts[1])
            sound = Sound(
                demuxer: soundSetup.demuxer, index: index, routes: streams.soundRoutes,
                times: TimestampPolicy(
                    window: window.times, videoIndex: index, decoderBase: soundSetup.input.stream(index).timeBase,
                    encoderBase: nil, startTime: 0, outputBases: bases,
                    outputOffsets: [Int64](repeating: 0, count: bases.count)))
        } else {
            sound = nil
        }
        try muxer.writeHeader()
    }

    /// The coded picture's size (what a camera path is measured in).
    var codedSize: (width: Int, height: Int) { (decoder.context.width, decoder.context.height) }

    /// `--stabilize`: every frame is read through `path`'s correction (set up, before the stages are built).
    func follow(_ path: CameraPath) {
        var warp =
            plan.warp ?? GeometryPlan.Warp(codedWidth: decoder.context.width, codedHeight: decoder.context.height)
        warp.stabilization = path
        plan.warp = warp
    }

    /// `--stabilize` of a live source: each frame read through the correction the live stabiliser fixed for it.
    func follow(_ path: LiveCameraPath) {
        var warp =
            plan.warp ?? GeometryPlan.Warp(codedWidth: decoder.context.width, codedHeight: decoder.context.height)
        warp.liveStabilization = path
        plan.warp = warp
    }

    /// `--follow` of a live source: each frame read through the window the live reframer fixed for it.
    func follow(_ path: LiveWindowPath) {
        guard let shape = reframeShape else { return }
        var animation =
            plan.animation
            ?? GeometryPlan.Animation(
                zoom: Track(constant: [1]), center: Track(constant: [0.5, 0.5]), uprightWidth: shape.uprightWidth,
                uprightHeight: shape.uprightHeight, display: shape.display)
        animation.live = path
        plan.animation = animation
    }

    /// A transformer for one worker (each owns its scalers and scratch frames).
    func makeTransformer() -> Transformer {
        let times = self.times
        // Tone mapped: the transform renders 4:4:4 16-bit in the input's colours, then the mapper writes the output.
        let mapped = toneMapping != nil
        return Transformer(
            plan: plan, outputFormat: mapped ? ToneMapper.intermediate : outputFormat,
            outputFullRange: mapped ? false : fullRange,
            matrix: mapped ? .bt2020 : matrix,
            scaler: configuration.scaler, kernel: configuration.kernel,
            frameTime: { pts in pts == AVCode.noPTS ? 0 : times.mediaTime(pts) },
            background: configuration.background, deinterlace: configuration.deinterlace,
            topFieldFirst: !decoder.context.isBottomFieldFirst, toneMap: toneMapping.map { ($0, fullRange) })
    }

    /// Trailer, close, rename into place.
    func finish() throws(CropZoomError) {
        try muxer.finish()
        // A live recording being finished is kept, whatever signal comes now (its reader has stopped).
        let signal = ProcessSignal.pending
        if signal != 0 && live == nil { throw CropZoomError(.interrupted(signal: signal), reason: "interrupted") }
        // A live MP4 ends as a regular one (its index at the front); if that fails, the fragmented file is kept.
        if live != nil && muxer.fragmentedFile, let atomic, let scratch = atomic.rewritePath {
            do throws(CropZoomError) {
                try FinishedMP4.rewrite(atomic.writePath, into: scratch, displayPath: configuration.output)
                try atomic.adopt(scratch)
            } catch {
                _ = RawPath.withCString(scratch) { unlink($0) }
                log.add("\(configuration.output) is kept fragmented: making it a regular MP4 failed (\(error.reason))")
            }
        }
        try atomic?.commit()
    }
}
