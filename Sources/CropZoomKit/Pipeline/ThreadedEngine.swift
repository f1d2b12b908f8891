import CCropZoomSystem
import CFFmpeg
import Foundation

/// Runs a job with one thread per stage — demux, decode, encode, mux — plus transform
/// workers, joined by bounded queues (the shape of FFmpeg 7's threaded scheduler):
///
///     demux --video packets--> decode --(seq, frame, output frame)--> workers --> reorder --> encode
///       |                                                                                      |
///       +--copied / re-encoded audio, subtitles--> mux <--------------video packets------------+
///
/// - Backpressure: every queue and pool is bounded; a full queue blocks its producer.
/// - Order: the decode thread numbers frames and takes each one's output frame from the pool in
///   that order, so workers can finish out of order without starving the pool; the encoder
///   takes frames back in sequence.
/// - Audio and other copied packets go from demux straight to mux and never wait behind video
///   work; the muxer interleaves by timestamp (`av_interleaved_write_frame`).
/// - Errors: the first error stops every stage (`RunControl`) and is the one reported; every
///   thread is joined before `run` returns.
final class ThreadedEngine: @unchecked Sendable {
    // @unchecked Sendable: each stage's state below is touched only by that stage's thread
    // (marked per field); what crosses threads goes through the queues and pools, which lock.
    let job: Job
    let workers: Int
    private let control = RunControl()

    // Shared, thread-safe.
    private let demuxPackets: ShellPool<Packet>  // demux → decode / mux
    private let encodedPackets: ShellPool<Packet>  // encode → mux
    private let frameShells: ShellPool<Frame>  // decode → workers
    private let pool: FramePool  // decode (acquire) → encode (release)
    private let videoQueue: BoundedQueue<Packet>
    private let workQueue: BoundedQueue<WorkItem>
    private let muxQueue: BoundedQueue<MuxItem>
    private let reorder: ReorderBuffer
    private let progressLock = NSLock()
    private var progressFrames = 0, progressTime = 0.0  // under progressLock
    private let muxProducers = ProducerCount()

    // Per-stage state (owned by the named thread).
    private var transformers: [Transformer] = []  // worker k uses transformers[k]
    private var demuxCounts = EngineCounts()  // demux
    private var decodeCounts = EngineCounts()  // decode
    private var encodeCounts = EngineCounts()  // encode
    private var muxCounts = EngineCounts()  // mux
    /// Worker k writes element k only; a raw buffer, so no two workers ever access the same
    /// Swift variable (an array property would be one exclusivity-checked location).
    private let workerBusy: UnsafeMutableBufferPointer<Double>
    private var stageBusy: [String: Double] = [:]  // written after join only

    struct WorkItem {
        var seq: Int
        var input: Frame
        var output: Frame
    }
    struct MuxItem {
        var packet: Packet
        var stream: Int
        var copied: Bool
        var owner: ShellPool<Packet>
    }

    init(job: Job, workers: Int) throws(CropZoomError) {
        self.job = job
        self.workers = max(1, workers)
        let w = self.workers
        demuxPackets = try ShellPool(capacity: 128, control: control) { () throws(CropZoomError) in try Packet() }
        encodedPackets = try ShellPool(capacity: 32, control: control) { () throws(CropZoomError) in try Packet() }
        frameShells = try ShellPool(capacity: 2 * w + 2, control: control) { () throws(CropZoomError) in try Frame() }
        // Output frames in flight: one per worker, the work queue, the reorder window and the
        // one being encoded. Encoders that keep references get fresh buffers (counted).
        pool = FramePool(
            width: job.plan.output.width, height: job.plan.output.height,
            format: job.outputFormat, capacity: 3 * w + 2, control: control)
        videoQueue = BoundedQueue(capacity: 32, control: control)
        workQueue = BoundedQueue(capacity: 2 * w, control: control)
        // Never full: it can hold every packet shell there is.
        muxQueue = BoundedQueue(capacity: 128 + 32 + 1, control: control)
        reorder = ReorderBuffer(capacity: 3 * w + 2, workers: w, control: control)
        workerBusy = .allocate(capacity: w)
        workerBusy.initialize(repeating: 0)
        transformers = (0..<w).map { _ in job.makeTransformer(pool: nil) }
        try pool.prefill()
    }

    deinit { workerBusy.deallocate() }

    /// Runs the job; `progress` is called on the calling thread a few times a second.
    func run(progress: ((Int, Double) -> Void)?) throws(CropZoomError) -> EngineCounts {
        muxProducers.set(2)  // demux and encode
        var threads: [Thread] = []
        let done = DispatchGroup()
        func spawn(_ name: String, _ body: @escaping @Sendable () throws -> Void) {
            done.enter()
            let t = Thread { [control] in
                defer { done.leave() }
                do { try body() } catch let e as CropZoomError { control.fail(e) } catch {
                    // Cancelled: another stage failed first; its error is the one reported.
                }
            }
            t.name = "cropzoom-\(name)"
            t.stackSize = 8 << 20
            threads.append(t)
        }
        // Stages before the encoder yield to it when the plan says so (a pipeline split).
        let upstreamNice = job.threads.upstreamNice
        let yieldToEncoder: @Sendable () -> Void = {
            if upstreamNice > 0 { _ = cz_lower_thread_priority(upstreamNice) }
        }
        spawn("demux") { [self] in
            yieldToEncoder()
            try demuxLoop()
        }
        spawn("decode") { [self] in
            yieldToEncoder()
            try decodeLoop()
        }
        for k in 0..<workers {
            spawn("transform-\(k)") { [self] in
                yieldToEncoder()
                try workerLoop(k)
            }
        }
        spawn("encode") { [self] in try encodeLoop() }
        spawn("mux") { [self] in try muxLoop() }
        for thread in threads { thread.start() }

        // Wait, watching for signals and reporting progress.
        var lastReport = 0.0
        while done.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            let signal = cz_pending_signal()
            if signal != 0 { control.fail(CropZoomError(.interrupted(signal: signal), reason: "interrupted")) }
            if job.cancel.isSet {
                control.fail(CropZoomError(.cancelled, path: job.configuration.input, reason: "cancelled"))
            }
            if let progress, monotonicSeconds() - lastReport >= 0.25 {
                lastReport = monotonicSeconds()
                progressLock.lock()
                let (f, t) = (progressFrames, progressTime)
                progressLock.unlock()
                progress(f, t)
            }
        }
        if let e = control.firstError { throw e }

        var c = EngineCounts()
        c.framesIn = decodeCounts.framesIn
        c.duplicates = decodeCounts.duplicates
        c.framesOut = encodeCounts.framesOut
        c.lastTime = encodeCounts.lastTime
        c.audioPackets = demuxCounts.audioPackets
        c.audioCorrupt = demuxCounts.audioCorrupt
        c.copiedDamaged = muxCounts.copiedDamaged
        c.busy = demuxCounts.busy.merging(decodeCounts.busy, uniquingKeysWith: +)
            .merging(encodeCounts.busy, uniquingKeysWith: +).merging(muxCounts.busy, uniquingKeysWith: +)
        c.busy["transform"] = workerBusy.reduce(0, +)
        c.waits = [
            "demux→decode queue full": videoQueue.pushWait,
            "decode waiting for packets": videoQueue.popWait,
            "decode→workers queue full": workQueue.pushWait,
            "workers waiting for frames": workQueue.popWait,
            "encode waiting for the next frame": reorder.waitSeconds,
            "mux waiting for packets": muxQueue.popWait,
        ]
        c.pool = pool.snapshot()
        c.workers = workers
        return c
    }

    // MARK: stages

    private func demuxLoop() throws {
        defer {
            videoQueue.close()
            if muxProducers.finish() { muxQueue.close() }
        }
        let strict = job.configuration.strict
        var t = Timer()
        // Once the video is complete (frame limit or trim end), reading goes on only while a
        // copied stream may still have packets before the trim's end (files interleave loosely).
        var waitingFor = job.trim?.end.contains { $0 != nil } == true ? job.passThroughStreams : []
        while !(control.hasEnough && waitingFor.isEmpty) {
            let signal = cz_pending_signal()
            if signal != 0 { throw CropZoomError(.interrupted(signal: signal), reason: "interrupted") }
            let p = try demuxPackets.acquire()
            t.switchTo("demux")
            let step = try job.demuxer.read(into: p, strict: strict)
            guard case .value = step else {
                demuxPackets.release(p)
                if case .again = step { continue }
                break
            }
            guard p.streamIndex < job.routes.count else {
                p.unref()
                demuxPackets.release(p)
                continue
            }
            switch job.routes[p.streamIndex] {
            case .video:
                if control.hasEnough {
                    p.unref()
                    demuxPackets.release(p)
                    continue
                }
                t.switchTo(nil)
                try videoQueue.push(p)
            case .copy(let out):
                if let trim = job.trim, !trim.admit(p, waitingFor: &waitingFor) {
                    p.unref()
                    demuxPackets.release(p)
                    continue
                }
                if job.demuxer.isAudio(p.streamIndex) { demuxCounts.audioPackets += 1 }
                try muxQueue.push(MuxItem(packet: p, stream: out, copied: true, owner: demuxPackets))
            case .reencode(let tr, let out):
                if let trim = job.trim, !trim.admit(p, waitingFor: &waitingFor) {
                    p.unref()
                    demuxPackets.release(p)
                    continue
                }
                demuxCounts.audioPackets += 1
                t.switchTo("audio")
                try tr.transcode(p) { (enc: Packet) throws(CropZoomError) in
                    try self.handOver(enc, to: out, from: self.demuxPackets)
                }
                p.unref()
                demuxPackets.release(p)
            case .drop:
                p.unref()
                demuxPackets.release(p)
            }
        }
        t.switchTo("audio")
        for case .reencode(let tr, let out) in job.routes {
            try tr.transcode(nil) { (enc: Packet) throws(CropZoomError) in
                try self.handOver(enc, to: out, from: self.demuxPackets)
            }
            demuxCounts.audioCorrupt += tr.corruptPackets
        }
        t.switchTo(nil)
        demuxCounts.busy = t.totals
    }

    /// Hands an encoded packet (still owned by its encoder) to the muxer, in a shell from `pool`.
    private func handOver(_ encoded: Packet, to stream: Int, from pool: ShellPool<Packet>) throws(CropZoomError) {
        do {
            let shell = try pool.acquire()
            shell.take(encoded)
            try muxQueue.push(MuxItem(packet: shell, stream: stream, copied: false, owner: pool))
        } catch {
            // Cancelled: the stage that failed first has recorded its error.
            throw CropZoomError(.processing, reason: "cancelled")
        }
    }

    private func decodeLoop() throws {
        defer { workQueue.close() }
        let strict = job.configuration.strict
        var gate = TimestampGate()
        var seq = 0
        var t = Timer()
        let limit = job.configuration.frameLimit ?? Int.max
        func dispatch(_ frame: Frame) throws(CropZoomError) {
            guard seq < limit else {
                control.markEnough()
                return
            }
            switch job.place(frame) {
            case .before: return
            case .after:
                control.markEnough()
                return
            case .keep: break
            }
            guard gate.admit(frame) else { return }
            t.switchTo(nil)
            do {
                let shell = try frameShells.acquire()
                av_frame_move_ref(shell.pointer, frame.pointer)
                let out = try pool.acquire()
                try workQueue.push(WorkItem(seq: seq, input: shell, output: out))
            } catch let e as CropZoomError { throw e } catch { throw CropZoomError(.processing, reason: "cancelled") }
            seq += 1
            t.switchTo("decode")
        }
        while let p = try videoQueue.pop() {
            defer {
                p.unref()
                demuxPackets.release(p)
            }
            if seq >= limit { control.markEnough() }
            if control.hasEnough { continue }  // past the limit or the trim's end: the demuxer stops soon
            t.switchTo("decode")
            try job.decoder.decode(p, strict: strict, dispatch)
            t.switchTo(nil)
        }
        t.switchTo("decode")
        if !control.hasEnough { try job.decoder.decode(nil, strict: strict, dispatch) }
        t.switchTo(nil)
        decodeCounts.framesIn = gate.framesIn
        decodeCounts.duplicates = gate.duplicates
        decodeCounts.busy = t.totals
    }

    private func workerLoop(_ k: Int) throws {
        defer { reorder.workerFinished() }
        let transformer = transformers[k]
        var busy = 0.0
        while let item = try workQueue.pop() {
            let t0 = monotonicSeconds()
            try transformer.render(item.input, into: item.output)
            job.stampForEncoder(item.output)
            item.input.unref()
            frameShells.release(item.input)
            busy += monotonicSeconds() - t0
            try reorder.put(item.seq, item.output)
        }
        workerBusy[k] = busy
    }

    private func encodeLoop() throws {
        defer { if muxProducers.finish() { muxQueue.close() } }
        var t = Timer()
        var next = 0
        func send(_ pkt: Packet) throws(CropZoomError) {
            guard let out = job.videoOutput else { return }
            t.switchTo(nil)
            try handOver(pkt, to: out, from: encodedPackets)
            t.switchTo("encode")
        }
        while let frame = try reorder.take(next) {
            next += 1
            t.switchTo("encode")
            let pts = frame.pts
            do {
                try job.encoder?.encode(frame, send)
            } catch {
                pool.release(frame)
                throw error
            }
            pool.release(frame)
            t.switchTo(nil)
            encodeCounts.framesOut += 1
            if pts != AVCode.noPTS {
                let time = job.mediaTime(encoderPTS: pts)
                encodeCounts.lastTime = time
                progressLock.lock()
                progressFrames = encodeCounts.framesOut
                progressTime = time
                progressLock.unlock()
            }
        }
        t.switchTo("encode")
        try job.encoder?.encode(nil, send)
        t.switchTo(nil)
        encodeCounts.busy = t.totals
    }

    private func muxLoop() throws {
        var t = Timer()
        while let item = try muxQueue.pop() {
            t.switchTo("mux")
            defer { item.owner.release(item.packet) }
            if item.copied {
                if !(try job.writeCopied(item.packet, stream: item.stream)) { muxCounts.copiedDamaged += 1 }
            } else {
                try job.muxer.write(item.packet, stream: item.stream)
            }
            item.packet.unref()
            t.switchTo(nil)
        }
        muxCounts.busy = t.totals
    }
}

/// Frames that workers finished, handed to the encoder in sequence.
///
/// `@unchecked Sendable`: all state is behind `condition`.
final class ReorderBuffer: @unchecked Sendable {
    private let condition = NSCondition()
    private var slots: [Int: Frame] = [:]
    private var liveWorkers: Int
    private let control: RunControl
    private(set) var waitSeconds = 0.0

    init(capacity: Int, workers: Int, control: RunControl) {
        slots.reserveCapacity(capacity * 2)
        liveWorkers = workers
        self.control = control
        control.onStop { [weak self] in
            guard let self else { return }
            self.condition.lock()
            self.condition.broadcast()
            self.condition.unlock()
        }
    }

    func put(_ seq: Int, _ frame: Frame) throws(Cancelled) {
        condition.lock()
        defer { condition.unlock() }
        if control.isStopped { throw Cancelled() }
        slots[seq] = frame
        condition.broadcast()
    }

    func workerFinished() {
        condition.lock()
        liveWorkers -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Frame `seq`, waiting for it; nil when every worker has finished and it never came.
    func take(_ seq: Int) throws(Cancelled) -> Frame? {
        condition.lock()
        defer { condition.unlock() }
        let t0 = monotonicSeconds()
        defer { waitSeconds += monotonicSeconds() - t0 }
        while slots[seq] == nil && liveWorkers > 0 && !control.isStopped { condition.wait() }
        if control.isStopped { throw Cancelled() }
        return slots.removeValue(forKey: seq)
    }
}

/// Counts the producers of a queue; the last to finish closes it.
final class ProducerCount: @unchecked Sendable {
    // @unchecked Sendable: the count is behind `lock`.
    private let lock = NSLock()
    private var count = 0
    func set(_ n: Int) {
        lock.lock()
        count = n
        lock.unlock()
    }
    /// True for the last producer.
    func finish() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        count -= 1
        return count == 0
    }
}
