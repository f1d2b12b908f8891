import CCropZoomSystem

/// Runs a job's stages on the calling thread (`--threads 1`, with single-threaded codecs): the
/// baseline for per-core throughput. Every edge of the stage graph is a direct call; the demux
/// stage's loop drives the rest:
///
///     demux.step ──video──▶ decode ──frame + pooled frame──▶ transform ──▶ encode ──▶ mux
///          ├──copied────────────────────────────────────────────────────────────────▶ mux
///          └──re-encoded audio──▶ audio ───────────────────────────────────────────▶ mux
struct SerialEngine {
    let job: Job
    let progress: ((Int, Double) -> Void)?

    func run() throws(CropZoomError) -> EngineCounts {
        let clock = StageClock()
        let pool = FramePool(
            width: job.plan.output.width, height: job.plan.output.height,
            format: job.outputFormat, capacity: 4)
        try pool.prefill()
        let times = job.times
        let strict = job.configuration.strict

        let mux = MuxStage(muxer: job.muxer, times: times, strict: strict, output: job.atomic)
        // Progress is reported as packets reach the muxer too, so the encoder's drain at the end is not silent.
        let ticker = ProgressTicker(progress)
        let muxEdge = Self.direct(mux, .mux, clock)
        let toMux = Outlet<MuxPacket>(
            send: { (item: MuxPacket) throws(CropZoomError) -> Demand in
                defer { ticker.tick() }
                return try muxEdge.send(item)
            },
            finish: muxEdge.finish)
        let encode = EncodeStage(
            encoder: job.encoder, stream: job.videoOutput, times: times, cuts: job.cuts, output: toMux)
        ticker.source = { [unowned encode] in (encode.framesOut, encode.lastTime) }
        let toEncode = Self.direct(encode, .encode, clock)
        let transform = TransformStage(transformer: job.makeTransformer(), times: times, output: toEncode)
        // The output frame is taken from the pool for the frame and given back once the encoder
        // (called from within the transform stage) is done with it.
        let toTransform = Outlet<Frame>(
            send: { (frame: Frame) throws(CropZoomError) -> Demand in
                let out = try pool.acquire()
                defer { pool.release(out) }
                return try clock.charge(.transform) { () throws(CropZoomError) in
                    try transform.receive(.init(input: frame, output: out))
                }
            },
            finish: { () throws(CropZoomError) in
                try clock.charge(.transform) { () throws(CropZoomError) in try transform.finish() }
            })
        let decode = DecodeStage(
            decoder: job.decoder, times: times, strict: strict, limit: job.configuration.frameLimit,
            output: toTransform)
        var audio: [AudioStage] = []
        var reencoders: [Int: Outlet<Packet>] = [:]
        for (i, route) in job.routes.enumerated() {
            guard case .reencode(let transcoder, let out) = route else { continue }
            let stage = AudioStage(transcoder: transcoder, stream: out, output: toMux)
            audio.append(stage)
            reencoders[i] = Self.direct(stage, .audio, clock)
        }
        let demux = try DemuxStage(
            demuxer: job.demuxer, routes: job.routes, times: times, strict: strict,
            video: Self.direct(decode, .decode, clock), mux: toMux, reencoders: reencoders)

        while true {
            if job.cancel.isSet {
                throw CropZoomError(.cancelled, path: job.configuration.inputName, reason: "cancelled")
            }
            let signal = cz_pending_signal()
            if signal != 0 { throw CropZoomError(.interrupted(signal: signal), reason: "interrupted") }
            clock.switchTo(.demux)
            guard try demux.step() else { break }
            ticker.tick()
        }
        try demux.finish()
        try clock.charge(.mux) { () throws(CropZoomError) in try mux.flush() }
        ticker.tick(final: true)
        clock.switchTo(nil)

        var c = EngineCounts(demux: demux, decode: decode, encode: encode, mux: mux, audio: audio)
        c.busy = clock.totals
        c.pool = pool.snapshot()
        return c
    }

    /// A direct edge into `stage`, its time charged to `name`.
    static func direct<S: Stage>(_ stage: S, _ name: EngineStage, _ clock: StageClock) -> Outlet<S.Input> {
        Outlet(
            send: { (message: S.Input) throws(CropZoomError) -> Demand in
                try clock.charge(name) { () throws(CropZoomError) in try stage.receive(message) }
            },
            finish: { () throws(CropZoomError) in
                try clock.charge(name) { () throws(CropZoomError) in try stage.finish() }
            })
    }
}

/// Calls `progress` with the frames encoded and the last one's time at most four times a second, whenever `tick` is
/// called (the serial engine's loop and its edge into the muxer).
final class ProgressTicker: @unchecked Sendable {
    // @unchecked: used only on the serial engine's one thread, where every stage runs.
    private let progress: ((Int, Double) -> Void)?
    private var last = 0.0
    var source: () -> (frames: Int, time: Double) = { (0, 0) }

    init(_ progress: ((Int, Double) -> Void)?) { self.progress = progress }

    /// `final`: the job's last report (every frame encoded), whenever the one before was.
    func tick(final: Bool = false) {
        guard let progress else { return }
        let now = monotonicSeconds()
        guard final || now - last >= 0.25 else { return }
        last = now
        let (frames, time) = source()
        progress(frames, time)
    }
}

/// What an engine counted while running a job.
struct EngineCounts {
    var framesIn = 0
    var framesOut = 0
    var duplicates = 0
    var audioPackets = 0
    var copiedDamaged = 0
    var audioCorrupt = 0
    /// Times the input's clock restarted and was re-based (``ClockContinuity``), and the notice saying where.
    var clockRestarts = 0
    var clockNotice: String?
    var lastTime = 0.0
    var busy: [EngineStage: Double] = [:]
    var waits: [EngineWait: Double] = [:]
    var pool = PoolStatistics()
    var workers = 1
    /// Live: frames dropped, by where.
    var dropped: [DropPoint: Int] = [:]

    init() {}

    /// What the stages counted (their busy times, waits and the pool are the engine's to add).
    init(demux: DemuxStage, decode: DecodeStage, encode: EncodeStage, mux: MuxStage, audio: [AudioStage]) {
        framesIn = decode.framesIn
        duplicates = decode.duplicates
        framesOut = encode.framesOut
        lastTime = encode.lastTime
        audioPackets = demux.audioPackets
        clockRestarts = demux.clock?.count ?? 0
        clockNotice = demux.clock?.notice
        audioCorrupt = audio.reduce(0) { $0 + $1.corruptPackets }
        copiedDamaged = mux.copiedDamaged
    }
}
