import CropZoomFFmpeg
import Foundation

/// A decoded live frame on its way to the transform: the frame, and when it was captured as far as the reader can
/// tell (monotonic seconds; ``LivePolicy/capturedAt(media:now:)``).
struct LiveFrame {
    var frame: Frame
    var at: Double
}

/// A stage between a live source's decoder and the transform workers that holds each frame until its look-ahead has
/// arrived, then fixes what the render needs for it (the live stabiliser's correction, the live reframer's window)
/// and hands it on. The live engine runs ``run(next:release:)`` on a thread of its own.
protocol LiveDelayLine: AnyObject, Sendable {
    /// Frames the delay line holds at most.
    var capacity: Int { get }
    /// The engine's name for its thread.
    var loopName: String { get }
    /// Takes frames from `next` (which waits at most until the deadline it is given), hands each on to `release`; at
    /// the end (`next` says so) the frames still waiting are handed on.
    func run(
        next: (_ deadline: Double?) throws(CropZoomError) -> BoundedQueue<LiveFrame>.Popped,
        release: (LiveFrame) throws(CropZoomError) -> Void
    ) throws(CropZoomError)
}

extension LiveDelayLine {
    /// The delay line's loop: takes frames from `next` (waiting at most until the oldest held frame is `lookahead`
    /// seconds old), gives each to `arrive` as it comes, and hands the oldest on (`fix`, then `release`) once it is
    /// that old or the line is `full`; at the end the frames still held are fixed and handed on. `fix` returns false
    /// when it could not fix the oldest (it stays).
    func delayLine(
        lookahead: Double, full: (Int) -> Bool,
        next: (_ deadline: Double?) throws(CropZoomError) -> BoundedQueue<LiveFrame>.Popped,
        release: (LiveFrame) throws(CropZoomError) -> Void,
        arrive: (Frame) -> Void, fix: () throws(CropZoomError) -> Bool
    ) throws(CropZoomError) {
        // Oldest first (at most `capacity` frames: removing the first moves a few dozen values).
        var held: [LiveFrame] = []
        held.reserveCapacity(capacity)
        func handOn() throws(CropZoomError) {
            guard !held.isEmpty, try fix() else { return }
            try release(held.removeFirst())
        }
        while true {
            switch try next(held.first.map { $0.at + lookahead }) {
            case .element(let item):
                if full(held.count) { try handOn() }
                arrive(item.frame)
                held.append(item)
            case .timedOut:
                break
            case .ended:
                while !held.isEmpty { try handOn() }
                return
            }
            let now = monotonicSeconds()
            while let oldest = held.first, oldest.at + lookahead <= now { try handOn() }
        }
    }
}

/// `--stabilize` of a live source (issue 29 item 3): a causal camera path with a bounded look-ahead, like a phone's
/// electronic stabilisation. It sits between the decoder and the transform workers on a thread of its own:
///
/// - each frame's motion from the one before is measured as it arrives (``MotionEstimator``, on the luma averaged
///   down, as the file's analysis);
/// - the frame then waits in a delay line while the frames after it arrive: until it is ``lookahead`` seconds old
///   (from its capture), or the line is full (frames arriving faster than real time);
/// - when it leaves, its correction is fixed by the same L1 programme as a file's, over the frames shown before it
///   and the look-ahead (``LiveCameraPathSolver``, a receding horizon), recorded in ``path`` (which the workers'
///   warp reads) and the frame handed on.
///
/// The look-ahead is half of `--max-latency` (at most 2 s): the other half is left to the transform and the encoder
/// before a frame counts as late. The zoom is free per frame as a file's (between 1 and `--stabilize-crop`, 3 % a second
/// out, 9 % in), rewarded an eighth as much for the area it keeps (``LiveCameraPathSolver/areaWeight(lookahead:)``): it
/// must keep room for shake it cannot see yet. With a look-ahead under a quarter of a second it stays at
/// `--stabilize-crop` (1.1 unless given). Audio does not pass here; dropped frames are counted as without it.
///
/// `@unchecked Sendable`: made on the job's thread, then used by the stabiliser's thread alone (``run(next:release:)``);
/// ``unmeasured`` is read by the job's thread once the engine has joined that thread.
final class LiveStabilizer: LiveDelayLine, @unchecked Sendable {
    let loopName = "stabilize"
    /// The corrections, as they are fixed (read by the transform's warp).
    let path: LiveCameraPath
    /// Seconds a frame waits for the frames after it.
    let lookahead: Double
    /// Frames the delay line holds at most (the look-ahead at the source's rate, and the frame being fixed).
    var capacity: Int { solver.capacity - 3 }
    /// The largest zoom (`--stabilize-crop`), and whether the zoom is free below it.
    let zoom: Double
    let freeZoom: Bool
    private let solver: LiveCameraPathSolver
    private let geometry: MotionGeometry?
    private let estimator: MotionEstimator?
    /// Two analysis frames, the previous frame's and the current one's (swapped per frame).
    private var previous: MotionFrame?
    private var current: MotionFrame?
    private var hasPrevious = false
    private var seen = false
    private let fill: Bool
    private let mediaSeconds: @Sendable (Frame) -> Double
    /// Frames whose motion could not be measured (no texture, or the picture changed size).
    private(set) var unmeasured = 0

    /// `width` x `height`: the coded picture, its pixels `pixelAspect` wide (the motion is measured and the path
    /// chosen in square pixels); `framesPerSecond`: the source's rate; `mediaSeconds`: a frame's media time as the
    /// transform reads it.
    init(
        _ cfg: TranscodeConfiguration, width: Int, height: Int, pixelAspect: Double = 1, framesPerSecond: Double,
        mediaSeconds: @escaping @Sendable (Frame) -> Double
    ) throws(CropZoomError) {
        let s = cfg.stabilize ?? Stabilization()
        lookahead = min(2, cfg.maxLatency / 2)
        let rate = framesPerSecond.isFinite && framesPerSecond > 0 ? framesPerSecond : 30
        zoom = s.maxZoom
        let reward = LiveCameraPathSolver.areaWeight(lookahead: lookahead)
        freeZoom = reward > 0
        geometry = MotionGeometry(codedWidth: width, height: height, pixelAspect: pixelAspect)
        solver = try LiveCameraPathSolver(
            width: geometry?.width ?? width, height: height, zoom: s.maxZoom,
            lookahead: Int((lookahead * rate).rounded()),
            tripod: s.mode == .tripod, hold: s.smoothing.map { CameraPathSolver.weights.w1 / $0 } ?? 0,
            areaWeight: reward)
        path = LiveCameraPath(width: width, height: height, pixelAspect: pixelAspect)
        if let geometry {
            estimator = try MotionEstimator(geometry)
            previous = try MotionFrame(geometry)
            current = try MotionFrame(geometry)
        } else {
            estimator = nil
        }
        fill = s.border == .fill
        self.mediaSeconds = mediaSeconds
    }

    /// What the stabiliser says when the recording starts.
    var notice: String {
        String(
            format: "stabilising as it records: a look-ahead of %g s (half of %@, at most 2 s), %@ %g (%@)",
            lookahead, "\(setting: .maxLatency)", freeZoom ? "zooming as needed up to" : "a crop of", zoom,
            "\(setting: .stabilizeCrop)")
    }

    /// The stabiliser's loop: takes frames from `next` (which waits at most until the deadline it is given), hands
    /// each on to `release` once its correction is fixed; at the end (`next` says so) the frames still waiting are
    /// fixed with what has arrived and handed on.
    func run(
        next: (_ deadline: Double?) throws(CropZoomError) -> BoundedQueue<LiveFrame>.Popped,
        release: (LiveFrame) throws(CropZoomError) -> Void
    ) throws(CropZoomError) {
        try delayLine(
            lookahead: lookahead, full: { [solver] _ in solver.isFull }, next: next, release: release,
            arrive: { measure($0) },
            fix: { () throws(CropZoomError) -> Bool in
                guard let fixed = try solver.fixNext() else { return false }
                path.record(time: fixed.time, correction: scaled(fixed.correction))
                return true
            })
    }

    /// The frame's motion from the one before it, into the solver's window.
    private func measure(_ frame: Frame) {
        let t = mediaSeconds(frame)
        guard let geometry, let estimator, let frameNow = current, let before = previous,
            frameNow.prepare(from: frame, geometry: geometry)
        else {
            unmeasured += 1
            hasPrevious = false
            seen = true
            solver.append(time: t, motion: .identity, measured: false)
            return
        }
        var motion = Similarity.identity
        // The first frame has no motion; one after a frame that could not be read has none measured.
        var measured = !seen
        if hasPrevious { (motion, measured) = estimator.estimate(before, frameNow) }
        if !measured { unmeasured += 1 }
        seen = true
        solver.append(time: t, motion: motion, measured: measured)
        previous = frameNow
        current = before
        hasPrevious = true
    }

    /// `--stabilize-border fill`: the same path at the picture's own scale.
    private func scaled(_ b: Similarity) -> Similarity { fill ? b.atOwnScale : b }
}
