import CropZoomFFmpeg
import Foundation

/// What the two threaded wirings (``ThreadedEngine`` for a file, ``LiveEngine`` for a live source) share: the run's
/// control, the frame pool and shells, and the half of the graph after the decoder — transform workers, the reorder
/// buffer, the encoder and the muxer with its queue — with their loops; and the threads, joined, with a watch loop on
/// the calling thread. It holds no media policy and builds no stage (the ``StageFactory`` does).
///
///     (front half: the wiring's) ──WorkItem──▶ transform workers ──reorder──▶ encode ──muxQueue──▶ mux
///                                                                            producers ──muxQueue──┘
///
/// `@unchecked Sendable`: each stage and each per-thread field is touched only by its own thread (marked); what
/// crosses threads goes through the queues and pools, which lock.
final class EngineThreads: @unchecked Sendable {
    let control = RunControl()
    let workers: Int
    /// Output frames in flight: one per worker, the work queue, the reorder window and the one being encoded. Encoders
    /// that keep references get fresh buffers (counted). Decode (or live: the workers) acquire, encode releases.
    let pool: FramePool
    /// Decoded frames' shells: the decoder → workers.
    let frameShells: ShellPool<Frame>
    /// Encoded packets' shells: encode → mux.
    let encodedShells: ShellPool<Packet>
    let muxQueue: BoundedQueue<MuxItem>
    let reorder: ReorderBuffer
    /// One per stage thread.
    let clocks: [EngineStage: StageClock]

    // The back half's stages, each driven by its thread.
    private(set) var transforms: [any TransformingStage] = []  // worker k drives transforms[k]
    private(set) var encode: (any EncodingStage)?  // encode
    private(set) var mux: (any MuxingStage)?  // mux

    /// Worker k's own slot: no two workers ever touch the same object.
    private let slots: [WorkerSlot]

    struct WorkItem {
        var seq: Int
        var input: Frame
        var output: Frame
    }

    struct MuxItem {
        var message: MuxPacket
        var owner: ShellPool<Packet>
    }

    /// `frames`: decoded frames' shells; `muxCapacity`, `muxProducers`: the mux queue's (never full: it holds every
    /// packet shell there is).
    init(
        picture: PictureShape, workers: Int, frames: Int, muxCapacity: Int, muxProducers: Int
    ) throws(CropZoomError) {
        self.workers = max(1, workers)
        let w = self.workers
        let control = self.control
        frameShells = try ShellPool(capacity: frames, control: control) { () throws(CropZoomError) in try Frame() }
        encodedShells = try ShellPool(capacity: 32, control: control) { () throws(CropZoomError) in try Packet() }
        pool = FramePool(
            width: picture.width, height: picture.height, format: picture.format, capacity: 3 * w + 2,
            control: control)
        muxQueue = BoundedQueue(capacity: muxCapacity, producers: muxProducers, control: control)
        reorder = ReorderBuffer(capacity: 3 * w + 2, workers: w, control: control)
        slots = (0..<w).map { _ in WorkerSlot() }
        clocks = Dictionary(
            uniqueKeysWithValues: [EngineStage.demux, .decode, .encode, .mux, .audio].map { ($0, StageClock()) })
        try pool.prefill()
    }

    /// Builds the back half's stages: the muxer, the encoder into the mux queue, one transform per worker into the
    /// reorder buffer.
    func wireBackHalf(_ stages: any StageFactory) {
        mux = stages.mux()
        encode = stages.encode(output: muxOutlet(shells: encodedShells, clock: clocks[.encode]!))
        for k in 0..<workers {
            let toReorder = Outlet<Frame>(
                send: { [self] (frame: Frame) throws(CropZoomError) -> Demand in
                    try reorder.put(slots[k].seq, frame)
                    return .more
                },
                finish: { [reorder] in reorder.workerFinished() })
            transforms.append(stages.transform(output: toReorder))
        }
    }

    /// The stages hold outlets whose closures hold the engine: a cycle, which kept every finished engine — its job,
    /// the input and output files open, its pools — alive in a process that runs many jobs (the soak found it: one
    /// descriptor and megabytes per job). Dropping the stages breaks it; the engines do so when `run` returns.
    func unwire() {
        transforms = []
        encode = nil
        mux = nil
    }

    /// An edge into the mux queue from one thread: the packet moves into a shell from `shells`.
    func muxOutlet(shells: ShellPool<Packet>, clock: StageClock) -> Outlet<MuxPacket> {
        let queue = muxQueue
        return Outlet(
            send: { (m: MuxPacket) throws(CropZoomError) -> Demand in
                try clock.charge(nil) { () throws(CropZoomError) -> Demand in
                    let shell = try shells.acquire()
                    shell.take(m.packet)
                    let item = MuxItem(
                        message: MuxPacket(packet: shell, stream: m.stream, copied: m.copied), owner: shells)
                    return try queue.push(item)
                }
            },
            finish: { queue.close() })
    }

    /// A thread of the run: its name (`cropzoom-NAME`) and its loop.
    struct Loop {
        var name: String
        var body: @Sendable () throws(CropZoomError) -> Void
    }

    /// Starts `loops` (the wiring's own and the back half's), and on the calling thread waits for them, calling
    /// `watch` every 50 ms (a stop it throws stops the run) and `progress` a few times a second. Every thread is
    /// joined before it returns; the first error is the one thrown.
    func run(
        _ loops: [Loop], watch: () throws(CropZoomError) -> Void, progress: ((Int, Double) -> Void)?
    ) throws(CropZoomError) {
        let done = DispatchGroup()
        var threads: [Thread] = []
        for loop in loops {
            done.enter()
            let t = Thread { [control] in
                defer { done.leave() }
                do throws(CropZoomError) { try loop.body() } catch { control.fail(error) }
            }
            t.name = "cropzoom-\(loop.name)"
            t.stackSize = 8 << 20
            threads.append(t)
        }
        for thread in threads { thread.start() }
        // Four reports a second at most, as the serial engine's (one ticker for both).
        let ticker = ProgressTicker(encode == nil ? nil : progress)
        if let encode { ticker.source = { encode.progress.value } }
        while done.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            do throws(CropZoomError) { try watch() } catch { control.fail(error) }
            ticker.tick()
        }
        if let e = control.firstError { throw e }
        // The last report: every frame encoded (a short job may end between two reports).
        ticker.tick(final: true)
    }

    /// The back half's loops: `workers` transform workers taking their work from `next`, the encoder, the muxer.
    /// `beforeEach`: what each worker does first on its thread (the thread plan's priority).
    func backHalfLoops(
        next: @escaping @Sendable () throws(CropZoomError) -> WorkItem?,
        workerStart: @escaping @Sendable () -> Void = {}, muxStart: @escaping @Sendable () -> Void = {}
    ) -> [Loop] {
        var loops = (0..<workers).map { k in
            Loop(name: "transform-\(k)") { [self] () throws(CropZoomError) in
                workerStart()
                try workerLoop(k, next: next)
            }
        }
        loops.append(Loop(name: "encode") { [self] () throws(CropZoomError) in try encodeLoop() })
        loops.append(
            Loop(name: "mux") { [self] () throws(CropZoomError) in
                muxStart()
                try muxLoop()
            })
        return loops
    }

    /// The counts of the back half's stages and of `others`, the clocks' busy times, the pool's statistics.
    func counts(_ others: [any Counted], waits: [EngineWait: Double]) -> EngineCounts {
        var c = EngineCounts()
        var counted = others
        if let encode { counted.append(encode) }
        if let mux { counted.append(mux) }
        for stage in counted { stage.count(into: &c) }
        for clock in clocks.values { c.busy.merge(clock.totals, uniquingKeysWith: +) }
        c.busy[.transform] = slots.reduce(0) { $0 + $1.busy }
        c.waits = waits
        c.waits[.encodeWaitingForFrames] = reorder.waitSeconds
        c.waits[.muxWaitingForPackets] = muxQueue.popWait
        c.pool = pool.snapshot()
        c.workers = workers
        return c
    }

    // MARK: the loops both wirings run

    /// A reader's loop (the input's, a sound device's): steps until it ends, then finishes it; `check` runs before
    /// each step (the file reader's stop check). Charged to `stage` on `clock`.
    func readLoop(
        _ reader: any Reading, clock: StageClock, stage: EngineStage, check: () throws(CropZoomError) -> Void = {}
    ) throws(CropZoomError) {
        while true {
            try check()
            clock.switchTo(stage)
            guard try reader.step() else { break }
        }
        try reader.finish()
        clock.switchTo(nil)
    }

    /// The decoder's loop: packets from `queue` until it closes (their shells back to `shells`); once the stage
    /// wants no more, the queue refuses further packets and what is still in it is dropped.
    func decodeLoop(
        _ decode: any PacketStage, from queue: BoundedQueue<Packet>, shells: ShellPool<Packet>
    ) throws(CropZoomError) {
        let clock = clocks[.decode]!
        var wanted = true
        while let p = try queue.pop() {
            defer {
                p.unref()
                shells.release(p)
            }
            guard wanted else { continue }  // refused: the reader stops sending soon
            clock.switchTo(.decode)
            if try decode.receive(p) == .enough {
                wanted = false
                queue.refuse()
            }
            clock.switchTo(nil)
        }
        clock.switchTo(.decode)
        try decode.finish()
        clock.switchTo(nil)
    }

    // MARK: the back half's loops

    private func workerLoop(
        _ k: Int, next: () throws(CropZoomError) -> WorkItem?
    ) throws(CropZoomError) {
        let transform = transforms[k]
        var busy = 0.0
        while let item = try next() {
            let t0 = monotonicSeconds()
            slots[k].seq = item.seq
            _ = try transform.receive(TransformWork(input: item.input, output: item.output))
            item.input.unref()
            frameShells.release(item.input)
            busy += monotonicSeconds() - t0
        }
        slots[k].busy = busy
        try transform.finish()
    }

    private func encodeLoop() throws(CropZoomError) {
        guard let encode else { return }
        let clock = clocks[.encode]!
        var next = 0
        while let frame = try reorder.take(next) {
            next += 1
            clock.switchTo(.encode)
            defer { pool.release(frame) }
            _ = try encode.receive(frame)
            clock.switchTo(nil)
        }
        clock.switchTo(.encode)
        try encode.finish()
        clock.switchTo(nil)
    }

    private func muxLoop() throws(CropZoomError) {
        guard let mux else { return }
        let clock = clocks[.mux]!
        while let item = try muxQueue.pop() {
            clock.switchTo(.mux)
            defer {
                item.message.packet.unref()
                item.owner.release(item.message.packet)
            }
            _ = try mux.receive(item.message)
            clock.switchTo(nil)
        }
        try mux.flush()
    }
}

/// A transform worker's own numbers: the sequence number of the frame it renders, and its busy seconds.
///
/// `@unchecked Sendable`: written by its worker only; `busy` is read once every worker has been joined.
final class WorkerSlot: @unchecked Sendable {
    var seq = 0
    var busy = 0.0
}
