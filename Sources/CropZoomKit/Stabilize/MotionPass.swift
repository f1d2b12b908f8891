import CropZoomFFmpeg
import Foundation

/// The analysis pass of `--stabilize`: the input's video decoded once more, on its own, and the camera's motion
/// measured between every two consecutive frames the render will show.
///
/// Threads beside the decoder's own: the reader reads, decodes and prepares each frame (its luma averaged down and its
/// pyramid built: ``MotionFrame``), and one estimator per usable core measures the pairs (``MotionEstimator``, one
/// each); pairs of prepared frames go between them through a bounded queue, the frames from a fixed pool, each given
/// back once both pairs it is part of are measured (nothing allocated per frame). The result depends on the frames
/// alone, not on the threads.
struct MotionPass {
    /// One frame's measured motion: F_t from this frame to the one before (identity for the first).
    struct Sample {
        var time: Double
        var motion: Similarity
        var measured: Bool
    }

    let configuration: TranscodeConfiguration
    /// The input opened for the pass alone (and sought to the trim's start, ``TrimWindow``).
    let source: InputSetup
    /// The render's clock: a frame at `pts` (the decoder's time base) is at `pts · base − timeOffset` media seconds.
    let timeOffset: Double
    /// The last media time the render keeps (trim), nil: to the end.
    let end: Double?
    let cancel: CancelFlag

    /// Measures every frame's motion (in square pixels: ``MotionGeometry/init(codedWidth:height:pixelAspect:)``);
    /// `progress` (frames, media time) a few times a second on the calling thread. The coded size and the pixels'
    /// aspect are returned with the samples.
    func run(progress: ((Int, Double) -> Void)?) throws(CropZoomError) -> (
        width: Int, height: Int, pixelAspect: Double, samples: [Sample]
    ) {
        let cfg = configuration
        let decoder = source.decoder
        try decoder.open(threads: max(1, UsableCPUs.count))
        let dec = decoder.context
        let aspect = SourcePicture.sampleAspect(
            source.input.stream(source.videoIndex), decoder, width: dec.width, height: dec.height
        ).ratio.value
        guard let geometry = MotionGeometry(codedWidth: dec.width, height: dec.height, pixelAspect: aspect) else {
            throw CropZoomError(
                .processing, what: "stabilising", path: cfg.inputName,
                reason: "the picture (\(dec.width)x\(dec.height)) is too small to measure its motion")
        }
        let base = decoder.timeBase.seconds
        let control = RunControl()
        // Estimators: one per usable core (the reader's decoding shares them), at least one.
        let estimators = try (0..<max(1, min(4, UsableCPUs.count))).map { _ throws(CropZoomError) in
            try MotionEstimator(geometry)
        }
        // Frames: those of the queued pairs, of the pairs being measured, and the one being prepared.
        let queued = 4
        let pool = try ShellPool(capacity: queued + 2 * estimators.count + 3, control: control) {
            () throws(CropZoomError) in try MotionFrame(geometry)
        }
        let queue = BoundedQueue<Pair>(capacity: queued, control: control)
        let uses = Uses(pool: pool)
        let state = PassState()
        let input = source.input
        let videoIndex = source.videoIndex
        let (timeOffset, end, cancel) = (self.timeOffset, self.end, self.cancel)

        // Joined before the result is read (as EngineThreads joins its loops).
        let joined = DispatchGroup()
        joined.enter()
        let reader = Thread {
            defer {
                queue.close()
                joined.leave()
            }
            do throws(CropZoomError) {
                let packet = try Packet()
                var past = false
                var previous: MotionFrame? = nil
                var index = 0
                defer {
                    // The last frame has no pair after it.
                    if let previous { uses.done(previous) }
                }
                func take(_ frame: Frame) throws(CropZoomError) {
                    let t = Double(frame.presentationTime) * base - timeOffset
                    if t < -1e-6 { return }
                    if let end, t >= end - 1e-6 {
                        past = true
                        return
                    }
                    let slot = try pool.acquire()
                    guard slot.prepare(from: frame, geometry: geometry) else {
                        pool.release(slot)
                        throw CropZoomError(
                            .processing, what: "stabilising", path: cfg.inputName,
                            reason: "the motion cannot be measured on \(frame.format.name) pictures (swscale "
                                + "cannot make them grey)")
                    }
                    slot.time = t
                    // Used by its own pair (not the first frame's: it has none) and by the next frame's.
                    uses.start(slot, count: previous == nil ? 1 : 2)
                    if let before = previous {
                        if try queue.push(Pair(index: index, previous: before, current: slot)) == .enough {
                            past = true
                        }
                    } else {
                        state.set(index, Sample(time: t, motion: .identity, measured: true))
                    }
                    previous = slot
                    index += 1
                }
                try InputSetup.decodeVideo(
                    input, decoder, videoIndex: videoIndex, packet: packet, cancel: cancel, name: cfg.inputName,
                    enough: { past }, take)
            } catch {
                control.fail(error)
            }
        }
        reader.name = "cropzoom-analyse-read"
        let measurers = estimators.enumerated().map { k, estimator in
            joined.enter()
            let thread = Thread {
                defer { joined.leave() }
                do throws(CropZoomError) {
                    while let pair = try queue.pop() {
                        let (motion, measured) = estimator.estimate(pair.previous, pair.current)
                        state.set(pair.index, Sample(time: pair.current.time, motion: motion, measured: measured))
                        uses.done(pair.previous)
                        uses.done(pair.current)
                    }
                } catch {
                    control.fail(error)
                }
            }
            thread.name = "cropzoom-analyse-motion-\(k + 1)"
            return thread
        }
        // Finished once the reader and every estimator have ended.
        joined.notify(queue: .global()) { state.finish() }
        reader.start()
        for thread in measurers { thread.start() }
        var lastReport = 0.0
        while !state.waitFinished(seconds: 0.05) {
            if cancel.isSet { control.fail(CropZoomError(.cancelled, path: cfg.inputName, reason: "cancelled")) }
            if let progress, monotonicSeconds() - lastReport >= 0.25 {
                lastReport = monotonicSeconds()
                let (n, t) = state.progress
                progress(n, t)
            }
        }
        // The reader ends once the queue is closed or the run stopped, the estimators once it is drained.
        joined.wait()
        if let error = control.firstError { throw error }
        let samples = state.samples
        progress?(samples.count, samples.last?.time ?? 0)
        return (dec.width, dec.height, aspect, samples)
    }

    /// Two consecutive prepared frames, and the later one's index.
    private struct Pair {
        var index: Int
        var previous: MotionFrame
        var current: MotionFrame
    }

    /// How many pairs still need each prepared frame; a frame goes back to the pool when none does.
    ///
    /// `@unchecked Sendable`: the counts are behind `lock`.
    private final class Uses: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [ObjectIdentifier: Int] = [:]
        private let pool: ShellPool<MotionFrame>

        init(pool: ShellPool<MotionFrame>) {
            self.pool = pool
            counts.reserveCapacity(pool.capacity * 2)
        }

        func start(_ frame: MotionFrame, count: Int) { lock.withLock { counts[ObjectIdentifier(frame)] = count } }

        func done(_ frame: MotionFrame) {
            let free = lock.withLock {
                let id = ObjectIdentifier(frame)
                let left = (counts[id] ?? 1) - 1
                counts[id] = left
                return left <= 0
            }
            if free { pool.release(frame) }
        }
    }

    /// What the estimator threads have measured (by frame index), read by the calling thread.
    ///
    /// `@unchecked Sendable`: all state is behind `condition`.
    private final class PassState: @unchecked Sendable {
        private let condition = NSCondition()
        private var list: [Sample] = []
        private var count = 0
        private var latest = 0.0
        private var finished = false

        func set(_ index: Int, _ s: Sample) {
            condition.lock()
            while list.count <= index { list.append(Sample(time: 0, motion: .identity, measured: false)) }
            list[index] = s
            count += 1
            latest = max(latest, s.time)
            condition.unlock()
        }

        func finish() {
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
        }

        /// True once the estimator has finished (waiting up to `seconds`).
        func waitFinished(seconds: Double) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            if !finished { _ = condition.wait(until: Date(timeIntervalSinceNow: seconds)) }
            return finished
        }

        var progress: (Int, Double) {
            condition.lock()
            defer { condition.unlock() }
            return (count, latest)
        }

        var samples: [Sample] {
            condition.lock()
            defer { condition.unlock() }
            return list
        }
    }
}
