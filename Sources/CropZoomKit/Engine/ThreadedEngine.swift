import CropZoomFFmpeg
import CropZoomSystem
import Foundation

/// Runs a file's stages on threads joined by bounded queues (the shape of FFmpeg 7's threaded scheduler): one thread
/// each for demux (with the audio re-encoders), decode, encode and mux, plus transform workers. It holds no media
/// policy and builds no stage: the ``StageFactory`` makes them, the stages decide what to do with each message; the
/// engine only moves messages and recycles their shells. A live source has a wiring of its own (``LiveEngine``).
///
///     demux ──videoQueue──▶ decode ──workQueue──▶ transform workers ──reorder──▶ encode
///       │ └─▶ audio (same thread)                                                   │
///       └──copied / re-encoded packets──▶ muxQueue ◀──────────video packets────────┘──▶ mux
///
/// - Backpressure: every queue and pool is bounded; a full queue blocks its producer.
/// - Order: the decode thread numbers frames and takes each one's output frame from the pool in that order, so
///   workers can finish out of order without starving the pool; the encoder takes frames back in sequence.
/// - Stops: a queue's producers close it (end of stream); the decode stage's ``Demand/enough`` makes the video queue
///   refuse more, which the demux stage sees as the answer to its send.
/// - Errors: the first error stops every stage (`RunControl`) and is the one reported; every thread is joined before
///   `run` returns.
final class ThreadedEngine: @unchecked Sendable {
    // @unchecked Sendable: each stage and each per-thread field below is touched only by its own thread (marked);
    // what crosses threads goes through the queues and pools, which lock.
    private let core: EngineThreads
    private let stops: RunStops
    /// Stages before the encoder yield to it by this many nice steps (the thread plan's pipeline split).
    private let upstreamNice: Int32

    private let demuxShells: ShellPool<Packet>  // demux thread → decode / mux
    private let videoQueue: BoundedQueue<Packet>
    private let workQueue: BoundedQueue<EngineThreads.WorkItem>

    private var demux: (any Reading)?  // demux
    private var audio: [any PacketStage] = []  // demux
    private var decode: (any PacketStage)?  // decode
    private var nextSeq = 0  // decode

    init(
        stages: any StageFactory, workers: Int, stops: RunStops, upstreamNice: Int32 = 0
    ) throws(CropZoomError) {
        let w = max(1, workers)
        let packets = 128
        core = try EngineThreads(
            picture: stages.picture, workers: w, frames: 2 * w + 2, muxCapacity: packets + 32 + 1,
            muxProducers: 2 + stages.reencodedStreams.count)
        self.stops = stops
        self.upstreamNice = upstreamNice
        let control = core.control
        demuxShells = try ShellPool(capacity: packets, control: control) { () throws(CropZoomError) in try Packet() }
        videoQueue = BoundedQueue(capacity: 32, control: control)
        workQueue = BoundedQueue(capacity: 2 * w, control: control)
        do { try wire(stages) } catch {
            unwire()
            throw error
        }
    }

    private func unwire() {
        demux = nil
        audio = []
        decode = nil
        core.unwire()
    }

    /// Builds the stages with their outlets: queue pushes between threads, direct calls within one.
    private func wire(_ stages: any StageFactory) throws(CropZoomError) {
        core.wireBackHalf(stages)
        let decodeClock = core.clocks[.decode]!
        let toWorkers = Outlet<Frame>(
            send: { [self] (frame: Frame) throws(CropZoomError) -> Demand in
                try decodeClock.charge(nil) { () throws(CropZoomError) -> Demand in
                    let shell = try core.frameShells.acquire()
                    shell.take(frame)
                    let out = try core.pool.acquire()
                    let d = try workQueue.push(.init(seq: nextSeq, input: shell, output: out))
                    nextSeq += 1
                    return d
                }
            },
            finish: { [workQueue] in workQueue.close() })
        decode = stages.decode(output: toWorkers)
        let demuxClock = core.clocks[.demux]!
        let toMux = core.muxOutlet(shells: demuxShells, clock: demuxClock)
        var reencoders: [Int: Outlet<Packet>] = [:]
        for i in stages.reencodedStreams {
            // Audio is light: re-encoded on the demux thread, it never waits behind video work.
            let stage = stages.reencoder(stream: i, output: toMux)
            audio.append(stage)
            reencoders[i] = SerialEngine.direct(stage, .audio, demuxClock)
        }
        let toDecode = Outlet<Packet>(
            send: { [self] (packet: Packet) throws(CropZoomError) -> Demand in
                try demuxClock.charge(nil) { () throws(CropZoomError) -> Demand in
                    let shell = try demuxShells.acquire()
                    shell.take(packet)
                    let d = try videoQueue.push(shell)
                    if d == .enough {
                        shell.unref()
                        demuxShells.release(shell)
                    }
                    return d
                }
            },
            finish: { [videoQueue] in videoQueue.close() })
        demux = try stages.demux(video: toDecode, mux: toMux, reencoders: reencoders)
    }

    /// Runs the job; `progress` is called on the calling thread a few times a second.
    func run(progress: ((Int, Double) -> Void)?) throws(CropZoomError) -> EngineCounts {
        defer { unwire() }
        let nice = upstreamNice
        let stops = self.stops
        let yieldToEncoder: @Sendable () -> Void = {
            if nice > 0 { ThreadControl.lowerCurrentPriority(by: nice) }
        }
        var loops = [
            EngineThreads.Loop(name: "demux") { [self] () throws(CropZoomError) in
                yieldToEncoder()
                guard let demux else { return }
                try core.readLoop(
                    demux, clock: core.clocks[.demux]!, stage: .demux,
                    check: { () throws(CropZoomError) in try stops.check() })
            },
            EngineThreads.Loop(name: "decode") { [self] () throws(CropZoomError) in
                yieldToEncoder()
                guard let decode else { return }
                try core.decodeLoop(decode, from: videoQueue, shells: demuxShells)
            },
        ]
        loops += core.backHalfLoops(
            next: { [workQueue] () throws(CropZoomError) in try workQueue.pop() }, workerStart: yieldToEncoder)
        try core.run(loops, watch: { () throws(CropZoomError) in try stops.check() }, progress: progress)
        var counted: [any Counted] = audio
        if let demux { counted.append(demux) }
        if let decode { counted.append(decode) }
        return core.counts(
            counted,
            waits: [
                .demuxQueueFull: videoQueue.pushWait,
                .decodeWaitingForPackets: videoQueue.popWait,
                .workQueueFull: workQueue.pushWait,
                .workersWaitingForFrames: workQueue.popWait,
            ])
    }
}
