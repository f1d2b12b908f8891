import CropZoomFFmpeg
import Foundation

/// Runs a live source's stages: the wiring of ``ThreadedEngine`` with leaky edges where a file's has blocking ones,
/// so that the reader never waits. Every decision at those edges — what is dropped, what is late, who is blamed,
/// which threads keep their priority, what a signal does — is the ``LivePolicy``'s; the engine asks it.
///
///     reader ──offer──▶ videoQueue ──▶ decode ──evicting──▶ liveQueue ──▶ transform workers ──▶ reorder ──▶ encode
///       │ └─▶ audioQueue ──▶ audio thread (re-encoders) ──┐                                                   │
///       └──copied packets──────────────────────────────────┴──▶ muxQueue ◀────────────────────────────────────┘──▶ mux
///     sound reader (--audio-input) ──▶ its re-encoder ──▶ muxQueue
///
/// With `--stabilize` the decoder's leaky edge feeds the stabiliser's queue instead, and the stabiliser's thread
/// (``LiveStabilizer``) hands each frame on to `liveQueue` once its look-ahead has come:
///
///     decode ──evicting──▶ stabilizerQueue ──▶ stabilise (delay line, path) ──evicting──▶ liveQueue ──▶ workers
///
/// - The reader offers packets to a long queue (seconds of packets) and never blocks; a packet it cannot place is
///   dropped, with the packets up to the next keyframe (``LivePolicy/offers(keyframe:)``).
/// - Decoded frames go through a short queue that evicts its oldest (`pushEvictingOldest`): the workers take them,
///   numbering them then (a dropped frame leaves no gap in the sequence), and drop those that waited too long.
/// - Audio is never dropped: the re-encoders run on a thread of their own behind a queue that blocks (and never
///   fills); a sound device has a reader thread of its own, which re-encodes on the spot.
/// - The reader, the muxer and the audio threads keep their priority; once they have all started, the policy lowers
///   every other thread's.
final class LiveEngine: @unchecked Sendable {
    // @unchecked Sendable: each stage and each per-thread field below is touched only by its own thread (marked);
    // what crosses threads goes through the queues and pools, which lock.
    private let core: EngineThreads
    private let stops: RunStops
    private let live: LivePolicy

    private let demuxShells: ShellPool<Packet>  // reader → decode / audio / mux
    private let videoQueue: BoundedQueue<Packet>
    /// Decoded frames waiting for a worker, and the lock under which a worker takes one, numbers it and takes its
    /// output picture (so pictures are taken in number order).
    private let liveQueue: BoundedQueue<LiveFrame>
    private let dispatch = NSLock()
    /// Packets for the audio re-encoders (each carries the index of its stage in `audio`); nil without one.
    private let audioQueue: BoundedQueue<AudioItem>?
    /// The sound reader's packet shells (its thread → mux).
    private let soundShells: ShellPool<Packet>?

    private var demux: (any Reading)?  // reader
    private var audio: [any PacketStage] = []  // audio
    private var decode: (any PacketStage)?  // decode
    private var sound: (any Reading)?  // sound
    private var soundAudio: (any PacketStage)?  // sound
    private var nextSeq = 0  // the workers, under `dispatch`

    struct AudioItem {
        var stage: Int
        var packet: Packet
    }

    /// With `--stabilize` or `--follow`: decoded frames waiting for the delay line (the live stabiliser or reframer),
    /// which hands them on to `liveQueue`.
    private let stabilizer: (any LiveDelayLine)?
    private let stabilizerQueue: BoundedQueue<LiveFrame>?

    /// `mediaSeconds`: a decoded frame's time on the source's clock (the policy measures ages on it). `stabilizer`:
    /// `--stabilize`'s, run between the decoder and the workers.
    init(
        stages: any StageFactory, workers: Int, live: LivePolicy, stops: RunStops,
        stabilizer: (any LiveDelayLine)? = nil, mediaSeconds: @escaping @Sendable (Frame) -> Double
    ) throws(CropZoomError) {
        let w = max(1, workers)
        // Room for seconds of packets, so that the reader never waits (packet shells are small).
        let packets = 2048
        let waiting = live.frameQueueCapacity(workers: w)
        let reencoded = stages.reencodedStreams.count
        // The sound reader's: a second of 20 ms packets, and a few more.
        let soundPackets = stages.hasSound ? 64 : 0
        let soundProducers = stages.hasSound ? 1 + (stages.soundReencodes ? 1 : 0) : 0
        // The stabiliser's delay line and the frames waiting for it (a second of them).
        let stabilizing = stabilizer.map { $0.capacity + waiting } ?? 0
        // The leaky queue, the frames the workers hold, and one being pushed. Mux producers: the reader, the encoder,
        // each re-encoder, and the sound reader and its re-encoder.
        core = try EngineThreads(
            picture: stages.picture, workers: w, frames: waiting + w + 2 + stabilizing,
            muxCapacity: packets + 32 + 1 + soundPackets, muxProducers: 2 + reencoded + soundProducers)
        self.stops = stops
        self.live = live
        let control = core.control
        demuxShells = try ShellPool(capacity: packets, control: control) { () throws(CropZoomError) in try Packet() }
        videoQueue = BoundedQueue(capacity: packets / 2, control: control)
        liveQueue = BoundedQueue(capacity: waiting, control: control)
        self.stabilizer = stabilizer
        stabilizerQueue = stabilizer.map { _ in BoundedQueue(capacity: waiting, control: control) }
        // Never full in practice (20 s of AAC): a stalled re-encoder would make the reader wait rather than lose a
        // packet.
        audioQueue = reencoded > 0 ? BoundedQueue(capacity: 1024, producers: reencoded, control: control) : nil
        soundShells =
            stages.hasSound
            ? try ShellPool(capacity: soundPackets, control: control) { () throws(CropZoomError) in try Packet() }
            : nil
        do { try wire(stages, mediaSeconds: mediaSeconds) } catch {
            unwire()
            throw error
        }
    }

    private func unwire() {
        demux = nil
        audio = []
        decode = nil
        sound = nil
        soundAudio = nil
        core.unwire()
    }

    private func wire(
        _ stages: any StageFactory, mediaSeconds: @escaping @Sendable (Frame) -> Double
    ) throws(CropZoomError) {
        core.wireBackHalf(stages)
        let live = self.live
        let decodeClock = core.clocks[.decode]!
        // The edge from the decoder into the leaky queue (the stabiliser's, with --stabilize): it never waits; a frame
        // pushed out by a newer one is dropped.
        let leaky = stabilizerQueue ?? liveQueue
        let toWorkers = Outlet<Frame>(
            send: { [self] (frame: Frame) throws(CropZoomError) -> Demand in
                try decodeClock.charge(nil) { () throws(CropZoomError) -> Demand in
                    let media = mediaSeconds(frame)
                    guard live.admits(frameAt: media) else { return .more }
                    let captured = live.capturedAt(media: media, now: monotonicSeconds())
                    let shell = try core.frameShells.acquire()
                    shell.take(frame)
                    if let old = leaky.pushEvictingOldest(LiveFrame(frame: shell, at: captured)) { drop(old.frame) }
                    return .more
                }
            },
            finish: { leaky.close() })
        decode = stages.decode(output: toWorkers)
        let demuxClock = core.clocks[.demux]!
        let toMux = core.muxOutlet(shells: demuxShells, clock: demuxClock)
        var reencoders: [Int: Outlet<Packet>] = [:]
        if let audioQueue {
            // The re-encoders run on the audio thread; the reader only hands their packets over.
            let audioClock = core.clocks[.audio]!
            let toMuxFromAudio = core.muxOutlet(shells: demuxShells, clock: audioClock)
            for i in stages.reencodedStreams {
                let index = audio.count
                audio.append(stages.reencoder(stream: i, output: toMuxFromAudio))
                reencoders[i] = Outlet(
                    send: { [self] (packet: Packet) throws(CropZoomError) -> Demand in
                        let shell = try demuxShells.acquire()
                        shell.take(packet)
                        return try audioQueue.push(AudioItem(stage: index, packet: shell))
                    },
                    finish: { audioQueue.close() })
            }
        }
        // The reader never waits: a packet the decoder has no room for is dropped (the policy then drops up to the
        // next keyframe).
        let toDecode = Outlet<Packet>(
            send: { [self] (packet: Packet) throws(CropZoomError) -> Demand in
                try demuxClock.charge(nil) { () throws(CropZoomError) -> Demand in
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
            },
            finish: { [videoQueue] in videoQueue.close() })
        demux = try stages.demux(video: toDecode, mux: toMux, reencoders: reencoders)
        if let soundShells {
            // The sound reader re-encodes on its own thread (the `.audio` clock: the input's audio is dropped).
            let clock = core.clocks[.audio]!
            let toMux = core.muxOutlet(shells: soundShells, clock: clock)
            var encoder: Outlet<Packet>? = nil
            if stages.soundReencodes {
                let stage = stages.soundReencoder(output: toMux)
                soundAudio = stage
                encoder = SerialEngine.direct(stage, .audio, clock)
            }
            sound = try stages.sound(reencoder: encoder, mux: toMux)
        }
    }

    /// A decoded frame not transformed: its shell goes back, the policy counts it.
    private func drop(_ frame: Frame) {
        frame.unref()
        core.frameShells.release(frame)
        live.evicted()
    }

    /// Runs the recording; `progress` is called on the calling thread a few times a second.
    func run(progress: ((Int, Double) -> Void)?) throws(CropZoomError) -> EngineCounts {
        defer { unwire() }
        let live = self.live
        var loops = [
            // The reader: a stop (the first signal, a stop request, the no-data deadline) ends its reads through its
            // watch, so its loop checks nothing.
            EngineThreads.Loop(name: "demux") { [self] () throws(CropZoomError) in
                live.protectCurrentThread()
                guard let demux else { return }
                try core.readLoop(demux, clock: core.clocks[.demux]!, stage: .demux)
            },
            EngineThreads.Loop(name: "decode") { [self] () throws(CropZoomError) in
                guard let decode else { return }
                try core.decodeLoop(decode, from: videoQueue, shells: demuxShells)
            },
        ]
        loops += core.backHalfLoops(
            next: { [self] () throws(CropZoomError) in try nextWork() },
            muxStart: { live.protectCurrentThread() })
        if let stabilizer, let stabilizerQueue {
            // --stabilize, --follow: frames wait here for their look-ahead, then go on to the workers' leaky queue.
            loops.append(
                EngineThreads.Loop(name: stabilizer.loopName) { [self] () throws(CropZoomError) in
                    defer { liveQueue.close() }
                    try stabilizer.run(
                        next: { (deadline: Double?) throws(CropZoomError) in try stabilizerQueue.pop(until: deadline) },
                        release: { (item: LiveFrame) in
                            if let old = liveQueue.pushEvictingOldest(item) { drop(old.frame) }
                        })
                })
        }
        var protected = 2
        if sound != nil {
            protected += 1
            loops.append(
                // With --audio-input: reads the sound device and re-encodes its packets, until it or the picture's
                // reader ends.
                EngineThreads.Loop(name: "sound") { [self] () throws(CropZoomError) in
                    live.protectCurrentThread()
                    guard let sound else { return }
                    try core.readLoop(sound, clock: core.clocks[.audio]!, stage: .audio)
                })
        }
        if audioQueue != nil {
            protected += 1
            loops.append(
                EngineThreads.Loop(name: "audio") { [self] () throws(CropZoomError) in
                    live.protectCurrentThread()
                    try audioLoop()
                })
        }
        let stops = self.stops
        let threads = protected
        try core.run(
            loops,
            watch: { () throws(CropZoomError) in
                live.watch(engineThreads: threads)
                try stops.check()
            }, progress: progress)
        stops.takeLast()
        var counted: [any Counted] = audio
        if let demux { counted.append(demux) }
        if let decode { counted.append(decode) }
        if let sound { counted.append(sound) }
        if let soundAudio { counted.append(soundAudio) }
        var c = core.counts(
            counted,
            waits: [
                .demuxQueueFull: videoQueue.pushWait,
                .decodeWaitingForPackets: videoQueue.popWait,
                .workQueueFull: 0,
                .workersWaitingForFrames: liveQueue.popWait,
            ])
        c.dropped = live.dropped
        return c
    }

    // MARK: the loops

    /// The next frame a worker transforms, numbered, with its output picture; frames that waited longer than the
    /// latency bound are dropped on the way. Nil at the end.
    private func nextWork() throws(CropZoomError) -> EngineThreads.WorkItem? {
        dispatch.lock()
        defer { dispatch.unlock() }
        while let item = try liveQueue.pop() {
            if live.isLate(since: item.at, now: monotonicSeconds()) {
                drop(item.frame)
                continue
            }
            let out = try live.waitingForPicture { () throws(CropZoomError) in try core.pool.acquire() }
            if nextSeq == 0 { live.firstKept(capturedAt: item.at) }
            defer { nextSeq += 1 }
            return .init(seq: nextSeq, input: item.frame, output: out)
        }
        return nil
    }

    /// The audio re-encoders' thread. Ends each stage (flushing its encoder) once the reader has closed the queue.
    private func audioLoop() throws(CropZoomError) {
        guard let audioQueue else { return }
        let clock = core.clocks[.audio]!
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
}
