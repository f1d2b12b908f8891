import CropZoomFFmpeg
import Foundation

/// The analysis pass of `--stabilize`: the input's video decoded once more, on its own, and the camera's motion
/// measured between every two consecutive frames the render will show.
///
/// Two threads beside the decoder's own: the reader reads, decodes and prepares each frame (its luma averaged down
/// and its pyramid built: ``MotionFrame``), the estimator measures each pair (``MotionEstimator``); prepared frames
/// go between them through a bounded queue, from a fixed pool (nothing allocated per frame). The result depends on
/// the frames alone, not on the threads.
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

    /// Measures every frame's motion; `progress` (frames, media time) a few times a second on the calling thread.
    /// The coded size is returned with the samples.
    func run(progress: ((Int, Double) -> Void)?) throws(CropZoomError) -> (
        width: Int, height: Int, samples: [Sample]
    ) {
        let cfg = configuration
        let decoder = source.decoder
        try decoder.open(threads: max(1, UsableCPUs.count))
        let dec = decoder.context
        guard let geometry = MotionGeometry(width: dec.width, height: dec.height) else {
            throw CropZoomError(
                .processing, what: "stabilising", path: cfg.inputName,
                reason: "the picture (\(dec.width)x\(dec.height)) is too small to measure its motion")
        }
        let base = decoder.timeBase.seconds
        let control = RunControl()
        let pool = try ShellPool(capacity: 8, control: control) { () throws(CropZoomError) in
            try MotionFrame(geometry)
        }
        let queue = BoundedQueue<MotionFrame>(capacity: 4, control: control)
        let estimator = try MotionEstimator(geometry)
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
                    if try queue.push(slot) == .enough { past = true }
                }
                reading: while !past {
                    if cancel.isSet { throw CropZoomError(.cancelled, path: cfg.inputName, reason: "cancelled") }
                    switch try input.read(into: packet) {
                    case .again: continue
                    case .endOfStream: break reading
                    case .value: break
                    }
                    defer { packet.unref() }
                    if packet.streamIndex == videoIndex { try decoder.decode(packet, take) }
                }
                if !past { try decoder.decode(nil, take) }
            } catch {
                control.fail(error)
            }
        }
        reader.name = "cropzoom-analyse-read"
        let measurer = Thread {
            do throws(CropZoomError) {
                var previous: MotionFrame? = nil
                while let current = try queue.pop() {
                    var sample = Sample(time: current.time, motion: .identity, measured: true)
                    if let previous {
                        (sample.motion, sample.measured) = estimator.estimate(previous, current)
                        pool.release(previous)
                    }
                    previous = current
                    state.append(sample)
                }
                if let previous { pool.release(previous) }
            } catch {
                control.fail(error)
            }
            state.finish()
        }
        measurer.name = "cropzoom-analyse-motion"
        reader.start()
        measurer.start()
        var lastReport = 0.0
        while !state.waitFinished(seconds: 0.05) {
            if cancel.isSet { control.fail(CropZoomError(.cancelled, path: cfg.inputName, reason: "cancelled")) }
            if let progress, monotonicSeconds() - lastReport >= 0.25 {
                lastReport = monotonicSeconds()
                let (n, t) = state.progress
                progress(n, t)
            }
        }
        // The reader ends once the queue is closed or the run stopped.
        joined.wait()
        if let error = control.firstError { throw error }
        let samples = state.samples
        progress?(samples.count, samples.last?.time ?? 0)
        return (dec.width, dec.height, samples)
    }

    /// What the estimator thread has measured, read by the calling thread.
    ///
    /// `@unchecked Sendable`: all state is behind `condition`.
    private final class PassState: @unchecked Sendable {
        private let condition = NSCondition()
        private var list: [Sample] = []
        private var finished = false

        func append(_ s: Sample) {
            condition.lock()
            list.append(s)
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
            return (list.count, list.last?.time ?? 0)
        }

        var samples: [Sample] {
            condition.lock()
            defer { condition.unlock() }
            return list
        }
    }
}
