import CropZoomFFmpeg
import Foundation
import Synchronization

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

        // A codec call can take seconds (x264's look-ahead on its first frames, on a loaded machine): a thread of
        // its own reports while the stages' one is inside it.
        let reporter = progress.map { _ in ProgressReporter(ticker) }
        defer { reporter?.stop() }
        while true {
            try stops.check()
            clock.switchTo(.demux)
            guard try demux.step() else { break }
            ticker.tick()
        }
        try demux.finish()
        try clock.charge(.mux) { () throws(CropZoomError) in try mux.flush() }
        reporter?.stop()
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
/// called (the serial engine's loop, its edge into the muxer, and its ``ProgressReporter``; the threaded engines'
/// waiting thread).
final class ProgressTicker: @unchecked Sendable {
    // @unchecked: the calls to `progress` are behind `lock` (the stages' thread and the reporter's: one call at a
    // time, in order); `last` is atomic; `source` is set before either ticks and reads a locked ``ProgressBox``.
    private let progress: ((Int, Double) -> Void)?
    private let lock = NSLock()
    /// When the last report was made (monotonic seconds, as bits): read without the lock on every tick, so the
    /// stages' per-packet ticks take no lock between reports.
    private let last = Atomic<UInt64>(0.0.bitPattern)
    var source: () -> (frames: Int, time: Double) = { (0, 0) }

    init(_ progress: ((Int, Double) -> Void)?) { self.progress = progress }

    /// `final`: the job's last report (every frame encoded), whenever the one before was.
    func tick(final: Bool = false) {
        guard let progress else { return }
        let due = { (now: Double) in now - Double(bitPattern: self.last.load(ordering: .relaxed)) >= 0.25 }
        guard final || due(monotonicSeconds()) else { return }
        lock.lock()
        defer { lock.unlock() }
        let now = monotonicSeconds()
        guard final || due(now) else { return }
        last.store(now.bitPattern, ordering: .relaxed)
        let (frames, time) = source()
        progress(frames, time)
    }
}

/// Ticks a ``ProgressTicker`` every 50 ms on a thread of its own until ``stop()`` (which waits for it): the serial
/// engine's reports go on while its one thread is inside a long codec call.
final class ProgressReporter: Sendable {
    private let stopped = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    private let running = Mutex(true)

    init(_ ticker: ProgressTicker) {
        let (stopped, ended) = (self.stopped, self.ended)
        let thread = Thread {
            while stopped.wait(timeout: .now() + .milliseconds(50)) == .timedOut { ticker.tick() }
            ended.signal()
        }
        thread.name = "cropzoom-progress"
        thread.start()
    }

    /// Stops the thread and waits for it; once only (later calls return at once).
    func stop() {
        let first = running.withLock { (running: inout Bool) -> Bool in
            defer { running = false }
            return running
        }
        guard first else { return }
        stopped.signal()
        ended.wait()
    }
}
