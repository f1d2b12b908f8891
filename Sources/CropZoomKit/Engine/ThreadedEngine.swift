import CCropZoomSystem
import CFFmpeg
import Foundation

/// Runs a job's stages on threads joined by bounded queues (the shape of FFmpeg 7's threaded
/// scheduler): one thread each for demux (with the audio re-encoders), decode, encode and mux,
/// plus transform workers. It holds no media policy: the stages decide what to do with each
/// message; the engine only moves messages and recycles their shells.
///
///     demux ──videoQueue──▶ decode ──workQueue──▶ transform workers ──reorder──▶ encode
///       │ └─▶ audio (same thread)                                                   │
///       └──copied / re-encoded packets──▶ muxQueue ◀──────────video packets────────┘──▶ mux
///
/// - Backpressure: every queue and pool is bounded; a full queue blocks its producer.
/// - Order: the decode thread numbers frames and takes each one's output frame from the pool in
///   that order, so workers can finish out of order without starving the pool; the encoder
///   takes frames back in sequence.
/// - Stops: a queue's producers close it (end of stream); the decode stage's ``Demand/enough``
///   makes the video queue refuse more, which the demux stage sees as the answer to its send.
/// - Errors: the first error stops every stage (`RunControl`) and is the one reported; every
///   thread is joined before `run` returns.
/// - Live sources (``LivePolicy``): the reader never waits — the packet and mux queues are long
///   and offered to, not pushed to — and decoded frames go through a short queue that evicts its
///   oldest (`pushEvictingOldest`) instead of the work queue: the workers take them (numbering them
///   then, so a dropped frame leaves no gap), the policy decides and counts what is dropped. The
///   first signal stops the reader and the recording is finished and kept; a second one interrupts
///   it. A sound device (`--audio-input`) has a reader thread of its own, which re-encodes its
///   audio on the spot and hands it to the muxer.
final class ThreadedEngine: @unchecked Sendable {
    // @unchecked Sendable: each stage and each per-thread field below is touched only by its
    // own thread (marked); what crosses threads goes through the queues and pools, which lock.
    let job: Job
    let workers: Int
    private let control = RunControl()

    // Shared, thread-safe.
    private let demuxShells: ShellPool<Packet>  // demux thread → decode / mux
    private let encodedShells: ShellPool<Packet>  // encode → mux
    private let frameShells: ShellPool<Frame>  // decode → workers
    private let pool: FramePool  // decode (acquire) → encode (release)
    private let videoQueue: BoundedQueue<Packet>
    private let workQueue: BoundedQueue<WorkItem>
    /// Live: decoded frames waiting for a worker, and the lock under which a worker takes one,
    /// numbers it and takes its output picture (so pictures are taken in number order).
    private let liveQueue: BoundedQueue<LiveItem>?
    private let dispatch = NSLock()
    /// Live: packets for the audio re-encoders, which run on a thread of their own (the reader only
    /// hands them over); each carries the index of its stage in `audio`.
    private let audioQueue: BoundedQueue<AudioItem>?
    private let muxQueue: BoundedQueue<MuxItem>
    private let reorder: ReorderBuffer
    /// Live with `--audio-input`: the sound reader's packet shells (its thread → mux).
    private let soundShells: ShellPool<Packet>?

    // The stages, each driven by its thread.
    private var demux: DemuxStage!  // demux
    private var audio: [AudioStage] = []  // demux
    private var decode: DecodeStage!  // decode
    private var transforms: [TransformStage] = []  // worker k drives transforms[k]
    private var encode: EncodeStage!  // encode
    private var mux: MuxStage!  // mux
    private var sound: SoundStage?  // sound
    private var soundAudio: [AudioStage] = []  // sound

    // Per-thread state.
    private let clocks: [EngineStage: StageClock]  // one per stage thread
    private var nextSeq = 0  // decode (live: the workers, under `dispatch`)
    /// Worker k writes element k only (raw buffers, so no two workers ever access the same
    /// Swift variable): its busy seconds and the sequence number of the frame it renders.
    private let workerBusy: UnsafeMutableBufferPointer<Double>
    private let workerSeq: UnsafeMutableBufferPointer<Int>

    struct WorkItem {
        var seq: Int
        var input: Frame
        var output: Frame
    }
    struct AudioItem {
        var stage: Int
        var packet: Packet
    }
    struct LiveItem {
        var frame: Frame
        /// When it was captured, as far as the reader can tell (monotonic seconds;
        /// ``LivePolicy/capturedAt(media:now:)``).
        var at: Double
    }
    struct MuxItem {
        var message: MuxPacket
        var owner: ShellPool<Packet>
    }

    init(job: Job, workers: Int) throws(CropZoomError) {
        self.job = job
        self.workers = max(1, workers)
        let w = self.workers
        let live = job.live != nil
        // Live: room for seconds of packets, so that the reader never waits (packet shells are small).
        let packets = live ? 2048 : 128
        demuxShells = try ShellPool(capacity: packets, control: control) { () throws(CropZoomError) in try Packet() }
        encodedShells = try ShellPool(capacity: 32, control: control) { () throws(CropZoomError) in try Packet() }
        let waiting = job.live?.frameQueueCapacity(workers: w) ?? 0
        liveQueue = live ? BoundedQueue(capacity: waiting, control: control) : nil
        // Live: the leaky queue, the frames the workers hold, and one being pushed.
        let frames = live ? waiting + w + 2 : 2 * w + 2
        frameShells = try ShellPool(capacity: frames, control: control) { () throws(CropZoomError) in try Frame() }
        // Output frames in flight: one per worker, the work queue, the reorder window and the
        // one being encoded. Encoders that keep references get fresh buffers (counted).
        pool = FramePool(
            width: job.plan.output.width, height: job.plan.output.height,
            format: job.outputFormat, capacity: 3 * w + 2, control: control)
        videoQueue = BoundedQueue(capacity: live ? packets / 2 : 32, control: control)
        workQueue = BoundedQueue(capacity: 2 * w, control: control)
        func reencoders(_ routes: [StreamRoute]) -> Int {
            routes.filter {
                if case .reencode = $0 { return true }
                return false
            }.count
        }
        let reencoded = reencoders(job.routes)
        // The sound reader's: a second of 20 ms packets, and a few more.
        let soundPackets = job.sound == nil ? 0 : 64
        soundShells =
            job.sound == nil
            ? nil
            : try ShellPool(capacity: soundPackets, control: control) { () throws(CropZoomError) in try Packet() }
        let soundProducers = job.sound.map { 1 + reencoders([$0.routes[$0.index]]) } ?? 0
        // Producers: the demux stage, the encode stage and each re-encoder, and the sound reader and its
        // re-encoder. Never full: it can hold every packet shell there is.
        muxQueue = BoundedQueue(
            capacity: packets + 32 + 1 + soundPackets, producers: 2 + reencoded + soundProducers, control: control)
        reorder = ReorderBuffer(capacity: 3 * w + 2, workers: w, control: control)
        workerBusy = .allocate(capacity: w)
        workerBusy.initialize(repeating: 0)
        workerSeq = .allocate(capacity: w)
        workerSeq.initialize(repeating: 0)
        // Live: never full in practice (20 s of AAC); audio is never dropped, so a stalled re-encoder
        // would make the reader wait rather than lose a packet.
        audioQueue = live && reencoded > 0 ? BoundedQueue(capacity: 1024, producers: reencoded, control: control) : nil
        clocks = Dictionary(
            uniqueKeysWithValues: [EngineStage.demux, .decode, .encode, .mux, .audio].map { ($0, StageClock()) })
        try pool.prefill()
        do { try wire() } catch {
            unwire()
            throw error
        }
    }

    /// The stages hold outlets whose closures hold the engine (`[self]`): a cycle, which kept every finished
    /// engine — its job, the input and output files open, its pools — alive in a process that runs many jobs
    /// (the soak found it: one descriptor and megabytes per job). Dropping the stages breaks it; `run` does so
    /// when it returns, whatever the outcome.
    private func unwire() {
        demux = nil
        audio = []
        decode = nil
        transforms = []
        encode = nil
        mux = nil
        sound = nil
        soundAudio = []
    }

    deinit {
        workerBusy.deallocate()
        workerSeq.deallocate()
    }

    /// Builds the stages with their outlets: queue pushes between threads, direct calls within one.
    private func wire() throws(CropZoomError) {
        let times = job.times
        let strict = job.configuration.strict
        mux = MuxStage(muxer: job.muxer, times: times, strict: strict, output: job.atomic)
        let encodeClock = clocks[.encode]!
        encode = EncodeStage(
            encoder: job.encoder, stream: job.videoOutput, times: times, cuts: job.cuts,
            output: muxOutlet(shells: encodedShells, clock: encodeClock))
        for k in 0..<workers {
            let toReorder = Outlet<Frame>(
                send: { [self] (frame: Frame) throws(CropZoomError) -> Demand in
                    try reorder.put(workerSeq[k], frame)
                    return .more
                },
                finish: { [reorder] in reorder.workerFinished() })
            transforms.append(TransformStage(transformer: job.makeTransformer(), times: times, output: toReorder))
        }
        let decodeClock = clocks[.decode]!
        let toWorkers =
            liveQueue.map { liveOutlet($0, clock: decodeClock) }
            ?? Outlet<Frame>(
                send: { [self] (frame: Frame) throws(CropZoomError) -> Demand in
                    try decodeClock.charge(nil) { () throws(CropZoomError) -> Demand in
                        let shell = try frameShells.acquire()
                        shell.take(frame)
                        let out = try pool.acquire()
                        let d = try workQueue.push(WorkItem(seq: nextSeq, input: shell, output: out))
                        nextSeq += 1
                        return d
                    }
                },
                finish: { [workQueue] in workQueue.close() })
        decode = DecodeStage(
            decoder: job.decoder, times: times, strict: strict, limit: job.configuration.frameLimit,
            output: toWorkers)
        let demuxClock = clocks[.demux]!
        let toMux = muxOutlet(shells: demuxShells, clock: demuxClock)
        var reencoders: [Int: Outlet<Packet>] = [:]
        for (i, route) in job.routes.enumerated() {
            guard case .reencode(let transcoder, let out) = route else { continue }
            if let audioQueue {
                // Live: the re-encoder runs on the audio thread; the reader only hands its packets over.
                let audioClock = clocks[.audio]!
                let stage = AudioStage(
                    transcoder: transcoder, stream: out, output: muxOutlet(shells: demuxShells, clock: audioClock))
                let index = audio.count
                audio.append(stage)
                reencoders[i] = Outlet(
                    send: { [self] (packet: Packet) throws(CropZoomError) -> Demand in
                        let shell = try demuxShells.acquire()
                        shell.take(packet)
                        return try audioQueue.push(AudioItem(stage: index, packet: shell))
                    },
                    finish: { audioQueue.close() })
                continue
            }
            let stage = AudioStage(transcoder: transcoder, stream: out, output: toMux)
            audio.append(stage)
            reencoders[i] = SerialEngine.direct(stage, .audio, demuxClock)
        }
        let toDecode = Outlet<Packet>(
            send: { [self] (packet: Packet) throws(CropZoomError) -> Demand in
                try demuxClock.charge(nil) { () throws(CropZoomError) -> Demand in
                    if let live = job.live {
                        // The reader never waits: a packet the decoder has no room for is dropped (the
                        // policy then drops up to the next keyframe).
                        let ts = packet.dts != AVCode.noPTS ? packet.dts : packet.pts
                        if ts != AVCode.noPTS {
                            let media = job.times.mediaTime(videoPacket: ts)
                            live.read(media: media, now: job.demuxer.lastArrival, waited: job.demuxer.lastReadWaited)
                        }
                        guard live.offers(keyframe: packet.isKeyframe) else { return .more }
                        let shell = try demuxShells.acquire()
                        shell.take(packet)
                        let offer = videoQueue.offer(shell)
                        if offer != .taken {
                            shell.unref()
                            demuxShells.release(shell)
                        }
                        if offer == .refused { return .enough }
                        live.offered(taken: offer == .taken)
                        return .more
                    }
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
        demux = try DemuxStage(
            demuxer: job.demuxer, routes: job.routes, times: times, strict: strict,
            video: toDecode, mux: toMux, reencoders: reencoders)
        if let s = job.sound, let soundShells {
            // The sound reader re-encodes on its own thread (the `.audio` clock: the input's audio is dropped).
            let clock = clocks[.audio]!
            let toMux = muxOutlet(shells: soundShells, clock: clock)
            var encoder: Outlet<Packet>? = nil
            if case .reencode(let transcoder, let out) = s.routes[s.index] {
                let stage = AudioStage(transcoder: transcoder, stream: out, output: toMux)
                soundAudio.append(stage)
                encoder = SerialEngine.direct(stage, .audio, clock)
            }
            let live = job.live
            sound = try SoundStage(
                demuxer: s.demuxer, index: s.index, route: s.routes[s.index], times: s.times, reencoder: encoder,
                mux: toMux, end: { live?.soundEnd })
        }
    }

    /// Live: the edge from the decoder into the leaky queue. It never waits; a frame pushed out by a
    /// newer one is dropped, counted against the stage that held the work up.
    private func liveOutlet(_ queue: BoundedQueue<LiveItem>, clock: StageClock) -> Outlet<Frame> {
        Outlet(
            send: { [self] (frame: Frame) throws(CropZoomError) -> Demand in
                try clock.charge(nil) { () throws(CropZoomError) -> Demand in
                    let media = job.times.mediaTime(frame.presentationTime)
                    let now = monotonicSeconds()
                    if let live = job.live, !live.admits(frameAt: media) { return .more }
                    let captured = job.live?.capturedAt(media: media, now: now) ?? now
                    let shell = try frameShells.acquire()
                    shell.take(frame)
                    if let old = queue.pushEvictingOldest(LiveItem(frame: shell, at: captured)) {
                        drop(old.frame)
                    }
                    return .more
                }
            },
            finish: { queue.close() })
    }

    /// Live: a decoded frame not transformed, counted against the encoder when it held every output
    /// picture, else against the transform.
    private func drop(_ frame: Frame) {
        frame.unref()
        frameShells.release(frame)
        job.live?.count(pool.isExhausted ? .encode : .transform)
    }

    /// An edge into the mux queue from one thread: the packet moves into a shell from `shells`.
    private func muxOutlet(shells: ShellPool<Packet>, clock: StageClock) -> Outlet<MuxPacket> {
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

    /// Runs the job; `progress` is called on the calling thread a few times a second.
    func run(progress: ((Int, Double) -> Void)?) throws(CropZoomError) -> EngineCounts {
        defer { unwire() }
        var threads: [Thread] = []
        let done = DispatchGroup()
        func spawn(_ name: String, _ body: @escaping @Sendable () throws(CropZoomError) -> Void) {
            done.enter()
            let t = Thread { [control] in
                defer { done.leave() }
                do throws(CropZoomError) { try body() } catch { control.fail(error) }
            }
            t.name = "cropzoom-\(name)"
            t.stackSize = 8 << 20
            threads.append(t)
        }
        // Stages before the encoder yield to it when the plan says so (a pipeline split).
        let upstreamNice = job.threads.upstreamNice
        let live = job.live
        let yieldToEncoder: @Sendable () -> Void = {
            if upstreamNice > 0 && live == nil { _ = cz_lower_thread_priority(upstreamNice) }
        }
        spawn("demux") { [self] () throws(CropZoomError) in
            yieldToEncoder()
            live?.protectCurrentThread()
            try demuxLoop()
        }
        spawn("decode") { [self] () throws(CropZoomError) in
            yieldToEncoder()
            try decodeLoop()
        }
        for k in 0..<workers {
            spawn("transform-\(k)") { [self] () throws(CropZoomError) in
                yieldToEncoder()
                try workerLoop(k)
            }
        }
        spawn("encode") { [self] () throws(CropZoomError) in try encodeLoop() }
        if sound != nil {
            spawn("sound") { [self] () throws(CropZoomError) in
                live?.protectCurrentThread()
                try soundLoop()
            }
        }
        if audioQueue != nil {
            spawn("audio") { [self] () throws(CropZoomError) in
                live?.protectCurrentThread()
                try audioLoop()
            }
        }
        spawn("mux") { [self] () throws(CropZoomError) in
            live?.protectCurrentThread()
            try muxLoop()
        }
        for thread in threads { thread.start() }

        // Wait, watching for signals and reporting progress.
        var lastReport = 0.0
        var deprioritized = false
        while done.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            if let live = job.live {
                // Once the reader and the muxer have said who they are, everything else gives way to them.
                let engineThreads = 2 + (audioQueue == nil ? 0 : 1) + (sound == nil ? 0 : 1)
                if !deprioritized && live.engineThreadsProtected >= engineThreads {
                    live.deprioritizeOthers()
                    deprioritized = true
                }
                // Live: the first signal ends the recording (kept); a second interrupts it.
                let signal = cz_take_pending_signal()
                if signal != 0 && !live.stopRequested {
                    live.requestStop()
                } else if signal != 0 {
                    live.abort()
                    control.fail(CropZoomError(.interrupted(signal: signal), reason: "interrupted"))
                }
            }
            let signal = cz_pending_signal()
            if signal != 0 { control.fail(CropZoomError(.interrupted(signal: signal), reason: "interrupted")) }
            if job.cancel.isSet {
                control.fail(CropZoomError(.cancelled, path: job.configuration.inputName, reason: "cancelled"))
            }
            if let progress, monotonicSeconds() - lastReport >= 0.25 {
                lastReport = monotonicSeconds()
                let (f, t) = encode.progress.value
                progress(f, t)
            }
        }
        if let e = control.firstError { throw e }
        // The last report: every frame encoded (a short job may end between two reports).
        if let progress {
            let (f, t) = encode.progress.value
            progress(f, t)
        }
        // Live: a signal that ended the recording before the loop above took it is the first one, taken here, so
        // that only a second one interrupts finishing the file.
        if let live = job.live, !live.stopRequested, cz_take_pending_signal() != 0 { live.requestStop() }

        var c = EngineCounts(demux: demux, decode: decode, encode: encode, mux: mux, audio: audio + soundAudio)
        c.audioPackets += sound?.audioPackets ?? 0
        for clock in clocks.values { c.busy.merge(clock.totals, uniquingKeysWith: +) }
        c.busy[.transform] = workerBusy.reduce(0, +)
        c.waits = [
            .demuxQueueFull: videoQueue.pushWait,
            .decodeWaitingForPackets: videoQueue.popWait,
            .workQueueFull: workQueue.pushWait,
            .workersWaitingForFrames: liveQueue?.popWait ?? workQueue.popWait,
            .encodeWaitingForFrames: reorder.waitSeconds,
            .muxWaitingForPackets: muxQueue.popWait,
        ]
        c.pool = pool.snapshot()
        c.workers = workers
        c.dropped = job.live?.dropped ?? [:]
        return c
    }

    // MARK: the threads' loops

    private func demuxLoop() throws(CropZoomError) {
        let clock = clocks[.demux]!
        while true {
            // Live, a signal ends the recording: the reader's watch stops it (the run loop takes the signal).
            let signal = cz_pending_signal()
            if signal != 0 && job.live == nil {
                throw CropZoomError(.interrupted(signal: signal), reason: "interrupted")
            }
            clock.switchTo(.demux)
            guard try demux.step() else { break }
        }
        // The sound device's reader ends where the picture's did (a stop, the source's end, silence); with a
        // duration, its own window ends it.
        job.live?.pictureEnded(at: job.times.outputSeconds(input: job.demuxer.reached))
        try demux.finish()
        clock.switchTo(nil)
    }

    /// Live with `--audio-input`: reads the sound device and re-encodes its packets, until it or the picture's
    /// reader ends.
    private func soundLoop() throws(CropZoomError) {
        guard let sound else { return }
        let clock = clocks[.audio]!
        while true {
            clock.switchTo(.audio)
            guard try sound.step() else { break }
        }
        try sound.finish()
        clock.switchTo(nil)
    }

    private func decodeLoop() throws(CropZoomError) {
        let clock = clocks[.decode]!
        var wanted = true
        while let p = try videoQueue.pop() {
            defer {
                p.unref()
                demuxShells.release(p)
            }
            guard wanted else { continue }  // refused: the demuxer stops sending soon
            clock.switchTo(.decode)
            if try decode.receive(p) == .enough {
                wanted = false
                videoQueue.refuse()
            }
            clock.switchTo(nil)
        }
        clock.switchTo(.decode)
        try decode.finish()
        clock.switchTo(nil)
    }

    /// The next frame for a worker: from the work queue, or live from the leaky queue.
    private func nextWork() throws(CropZoomError) -> WorkItem? {
        if let liveQueue { return try takeLive(liveQueue) }
        return try workQueue.pop()
    }

    /// Live: the next frame a worker transforms, numbered, with its output picture; frames that
    /// waited longer than the latency bound are dropped on the way. Nil at the end.
    private func takeLive(_ queue: BoundedQueue<LiveItem>) throws(CropZoomError) -> WorkItem? {
        dispatch.lock()
        defer { dispatch.unlock() }
        while let item = try queue.pop() {
            if let live = job.live, live.isLate(since: item.at, now: monotonicSeconds()) {
                drop(item.frame)
                continue
            }
            let out = try pool.acquire()
            if nextSeq == 0 { job.live?.firstKept(capturedAt: item.at) }
            defer { nextSeq += 1 }
            return WorkItem(seq: nextSeq, input: item.frame, output: out)
        }
        return nil
    }

    private func workerLoop(_ k: Int) throws(CropZoomError) {
        let transform = transforms[k]
        var busy = 0.0
        while let item = try nextWork() {
            let t0 = monotonicSeconds()
            workerSeq[k] = item.seq
            _ = try transform.receive(.init(input: item.input, output: item.output))
            item.input.unref()
            frameShells.release(item.input)
            busy += monotonicSeconds() - t0
        }
        workerBusy[k] = busy
        try transform.finish()
    }

    private func encodeLoop() throws(CropZoomError) {
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

    /// Live: the audio re-encoders' thread. Ends each stage (flushing its encoder) once the reader
    /// has closed the queue.
    private func audioLoop() throws(CropZoomError) {
        guard let audioQueue else { return }
        let clock = clocks[.audio]!
        while let item = try audioQueue.pop() {
            clock.switchTo(.audio)
            defer {
                item.packet.unref()
                demuxShells.release(item.packet)
            }
            _ = try audio[item.stage].receive(item.packet)
            clock.switchTo(nil)
        }
        clock.switchTo(.audio)
        for stage in audio { try stage.finish() }
        clock.switchTo(nil)
    }

    private func muxLoop() throws(CropZoomError) {
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
