import CropZoomFFmpeg

/// Runs a job's stages on the calling thread (`--threads 1`, with single-threaded codecs): the
/// baseline for per-core throughput. Every edge of the stage graph is a direct call; the demux
/// stage's loop drives the rest:
///
///     demux.step ──video──▶ decode ──frame + pooled frame──▶ transform ──▶ encode ──▶ mux
///          ├──copied────────────────────────────────────────────────────────────────▶ mux
///          └──re-encoded audio──▶ audio ───────────────────────────────────────────▶ mux
struct SerialEngine {
    let stages: any StageFactory
    let stops: RunStops
    let progress: ((Int, Double) -> Void)?

    func run() throws(CropZoomError) -> EngineCounts {
        let clock = StageClock()
        let shape = stages.picture
        let pool = FramePool(width: shape.width, height: shape.height, format: shape.format, capacity: 4)
        try pool.prefill()

        let mux = stages.mux()
        // Progress is reported as packets reach the muxer too, so the encoder's drain at the end is not silent.
        let ticker = ProgressTicker(progress)
        let muxEdge = Self.direct(mux, .mux, clock)
        let toMux = Outlet<MuxPacket>(
            send: { (item: MuxPacket) throws(CropZoomError) -> Demand in
                defer { ticker.tick() }
                return try muxEdge.send(item)
            },
            finish: muxEdge.finish)
        let encode = stages.encode(output: toMux)
        let done = encode.progress
        ticker.source = { done.value }
        let toEncode = Self.direct(encode, .encode, clock)
        let transform = stages.transform(output: toEncode)
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
        let decode = stages.decode(output: toTransform)
        var audio: [any PacketStage] = []
        var reencoders: [Int: Outlet<Packet>] = [:]
        for i in stages.reencodedStreams {
            let stage = stages.reencoder(stream: i, output: toMux)
            audio.append(stage)
            reencoders[i] = Self.direct(stage, .audio, clock)
        }
        let demux = try stages.demux(video: Self.direct(decode, .decode, clock), mux: toMux, reencoders: reencoders)

        while true {
            try stops.check()
            clock.switchTo(.demux)
            guard try demux.step() else { break }
            ticker.tick()
        }
        try demux.finish()
        try clock.charge(.mux) { () throws(CropZoomError) in try mux.flush() }
        ticker.tick(final: true)
        clock.switchTo(nil)

        var c = EngineCounts()
        let counted: [any Counted] = [demux, decode, encode, mux] + audio
        for stage in counted { stage.count(into: &c) }
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
