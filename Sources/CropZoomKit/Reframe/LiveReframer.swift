import CropZoomFFmpeg
import Foundation

/// `--follow` of a live source (issue 30 item 4): a causal window path with a bounded look-ahead. It sits between the
/// decoder and the transform workers on a thread of its own, as the live stabiliser does:
///
/// - each frame is looked at as it arrives (``FramingPicture``: cuts, faces detected every 0.2 s and followed in
///   between, the region that moves) and its subject chosen (``FaceChooser``, causal as a file's);
/// - the frame then waits in a delay line while the frames after it arrive: until it is ``lookahead`` seconds old
///   (from its capture), or the line is full;
/// - when it leaves, its window is fixed by the same L1 path as a file's over the frames shown before it and the
///   look-ahead (`cz_frame_solve` with the shown frames fixed: a receding horizon), recorded in ``path`` (which the
///   workers' geometry reads) and the frame handed on.
///
/// The look-ahead is half of `--max-latency` (at most 2 s), as the live stabiliser's. Audio does not pass here.
///
/// `@unchecked Sendable`: made on the job's thread, then used by its own thread alone (``run(next:release:)``).
final class LiveReframer: LiveDelayLine, @unchecked Sendable {
    let loopName = "reframe"
    /// The third differences' weight on a live path: a tenth of a file's. A look-ahead of half a second cannot afford
    /// the file's eased starts: with 100 the window started too late and overshot (on the ground-truth clip streamed
    /// with 0.5 s of look-ahead, IoU 0.89 and 90 % of frames with the face inside; with 10, 0.945 and 97 %, the jitter
    /// 0.30 px/frame²; a whole second of look-ahead: 0.959, 99 %, 0.24).
    static let jerkWeight = 10.0
    /// The windows, as they are fixed (read by the transform).
    let path: LiveWindowPath
    /// Seconds a frame waits for the frames after it.
    let lookahead: Double
    let capacity: Int

    /// What one frame contributes to the path, per axis (x, y).
    private struct Seen {
        var time: Double
        var cut: Bool
        var target: (Double, Double)
        var insideLo: (Double, Double)
        var insideHi: (Double, Double)
        /// Where its window went, once shown.
        var shown: (Double, Double) = (0, 0)
    }

    private let shape: Reframer.Shape
    private let follow: Reframing.Follow
    private let detector: FaceDetector?
    private var tracker: FaceTracker
    private var chooser: FaceChooser
    private var previous: FramingPicture
    private var current: FramingPicture
    private var hasPrevious = false
    private var lastDetection = -Double.infinity
    private let codedWidth: Double, codedHeight: Double
    private let mediaSeconds: @Sendable (Frame) -> Double
    /// The last three shown frames, then the held ones (oldest first).
    private var window: [Seen] = []
    /// The path's solver, its memory sized for the window (the held frames and the three shown).
    private let solver: FramePathSolver.Workspace
    private let comparer: PictureComparer
    /// The faces followed this frame (kept: nothing allocated per frame).
    private var faces: [FramingPass.Face] = []
    private var shownCount = 0
    /// Frames with a subject, for the end's notice.
    private(set) var subjectFrames = 0
    private(set) var frames = 0

    init(
        _ cfg: TranscodeConfiguration, shape: Reframer.Shape, pixelAspect: Double, framesPerSecond: Double,
        mediaSeconds: @escaping @Sendable (Frame) -> Double
    ) throws(CropZoomError) {
        self.shape = shape
        follow = cfg.reframe?.follow ?? .auto
        lookahead = min(2, cfg.maxLatency / 2)
        let rate = framesPerSecond.isFinite && framesPerSecond > 0 ? framesPerSecond : 30
        capacity = max(2, Int((lookahead * rate).rounded()) + 1)
        codedWidth = Double(shape.codedWidth)
        codedHeight = Double(shape.codedHeight)
        let squareWidth = codedWidth * pixelAspect
        let scale = min(1, Double(FramingPass.analysisSide) / max(squareWidth, codedHeight))
        let (aw, ah) = (max(16, Int((squareWidth * scale).rounded())), max(16, Int((codedHeight * scale).rounded())))
        previous = try FramingPicture(codedWidth: aw, codedHeight: ah, orientation: shape.display)
        current = try FramingPicture(codedWidth: aw, codedHeight: ah, orientation: shape.display)
        detector = follow == .motion ? nil : try FaceDetector()
        tracker = FaceTracker(width: current.width, height: current.height)
        chooser = FaceChooser(width: current.width, height: current.height)
        path = LiveWindowPath(
            width: shape.window.width, height: shape.window.height,
            restX: (shape.uprightWidth - shape.window.width) / 2, restY: (shape.uprightHeight - shape.window.height) / 2
        )
        self.mediaSeconds = mediaSeconds
        window.reserveCapacity(capacity + 4)
        guard let solver = FramePathSolver.Workspace(capacity: capacity + 4) else {
            throw CropZoomError(
                .processing, what: "following the subject", path: cfg.inputName,
                reason: "no memory for the window path's solver")
        }
        self.solver = solver
        comparer = try PictureComparer()
        faces.reserveCapacity(8)
    }

    /// What the reframer says when the recording starts.
    var notice: String {
        String(
            format: "following the subject as it records (%@ %@): a look-ahead of %g s (half of %@, at most 2 s)",
            "\(setting: .follow)", follow.rawValue, lookahead, "\(setting: .maxLatency)")
    }

    func run(
        next: (_ deadline: Double?) throws(CropZoomError) -> BoundedQueue<LiveFrame>.Popped,
        release: (LiveFrame) throws(CropZoomError) -> Void
    ) throws(CropZoomError) {
        let capacity = self.capacity
        try delayLine(
            lookahead: lookahead, full: { $0 >= capacity }, next: next, release: release, arrive: { look(at: $0) },
            fix: { () throws(CropZoomError) -> Bool in
                fixNext()
                return true
            })
    }

    /// The frame's subject, into the window.
    private func look(at frame: Frame) {
        let t = mediaSeconds(frame)
        frames += 1
        var seen = Seen(
            time: t, cut: false, target: (.nan, .nan), insideLo: (.nan, .nan), insideHi: (.nan, .nan))
        swap(&previous, &current)
        guard current.prepare(from: frame) else {
            hasPrevious = false
            window.append(seen)
            return
        }
        var motion: Rect? = nil
        if hasPrevious, let change = comparer.compare(previous, current, threshold: 12, region: follow != .faces) {
            seen.cut = FramingPass.isCut(change)
            if !seen.cut && change.moved > 0.002 { motion = change.region }
        }
        hasPrevious = true
        var subject: Rect? = nil
        var isFace = false
        if let detector {
            if seen.cut {
                tracker.reset()
                chooser.reset()
            }
            tracker.follow(current, time: t)
            if seen.cut || t - lastDetection >= FramingPass.detectEvery - 1e-6 {
                lastDetection = t
                try? tracker.detected(
                    detector.detect(current, minSize: max(12, min(current.width, current.height) / 18)), in: current,
                    time: t)
            }
            tracker.faces(into: &faces)
            if let face = chooser.choose(faces, at: t) {
                subject = upright(face.box)
                isFace = true
            }
        }
        if subject == nil, follow != .faces, let m = motion.map(upright) {
            let share = m.width * m.height / (shape.uprightWidth * shape.uprightHeight)
            if share > 0.001 && share < 0.5 { subject = m }
        }
        if let s = subject {
            subjectFrames += 1
            let (ww, wh) = shape.window
            let roomX = shape.uprightWidth - ww
            let roomY = shape.uprightHeight - wh
            seen.target = (
                min(max(s.x + s.width / 2 - ww / 2, 0), max(0, roomX)),
                min(max(s.y + s.height / 2 - wh / 2, 0), max(0, roomY))
            )
            if isFace {
                let (mx, my) = (0.1 * s.width, 0.1 * s.height)
                if s.width + 2 * mx < ww {
                    seen.insideLo.0 = s.x + s.width + mx - ww
                    seen.insideHi.0 = s.x - mx
                }
                if s.height + 2 * my < wh {
                    seen.insideLo.1 = s.y + s.height + my - wh
                    seen.insideHi.1 = s.y - my
                }
            }
        }
        window.append(seen)
    }

    /// Analysis px (upright) → upright px.
    private func upright(_ r: Rect) -> Rect {
        let (sx, sy) = (shape.uprightWidth / Double(current.width), shape.uprightHeight / Double(current.height))
        return Rect(x: r.x * sx, y: r.y * sy, width: r.width * sx, height: r.height * sy)
    }

    /// Fixes the oldest held frame's window: the path over the shown frames (fixed) and the held ones, solved per
    /// axis in the solver's own memory (``FramePathSolver/Workspace``: nothing is allocated per frame); recorded, and
    /// the window slides.
    private func fixNext() {
        let shown = shownCount
        guard window.count > shown else { return }
        let (ww, wh) = shape.window
        let n = min(window.count, solver.capacity)
        for i in 0..<n {
            solver.durations[i] = i + 1 < n ? max(1e-4, window[i + 1].time - window[i].time) : 0
            solver.cut[i] = window[i].cut ? 1 : 0
        }
        solver.durations[n - 1] = n > 1 ? solver.durations[n - 2] : 1 / 30
        func axis(_ k: Int, room: Double, side: Double, size: Double) -> Double {
            guard room >= 1 else { return 0 }
            func comp(_ p: (Double, Double)) -> Double { k == 0 ? p.0 : p.1 }
            for i in 0..<n {
                solver.target[i] = comp(window[i].target)
                solver.insideLo[i] = comp(window[i].insideLo)
                solver.insideHi[i] = comp(window[i].insideHi)
                solver.fixed[i] = i < shown ? comp(window[i].shown) : 0
            }
            let solved = solver.solve(
                count: n, fixed: shown, lo: 0, hi: room, deadZone: Reframer.deadZone * size,
                maxSpeed: Reframer.maxSpeed * side, maxAcceleration: Reframer.maxAcceleration * side,
                jerkWeight: LiveReframer.jerkWeight)
            if solved { return solver.solution[shown] }
            // The solver failed (it should not): hold the last shown window.
            return shown > 0 ? comp(window[shown - 1].shown) : room / 2
        }
        let x = axis(0, room: shape.uprightWidth - ww, side: shape.uprightWidth, size: ww)
        let y = axis(1, room: shape.uprightHeight - wh, side: shape.uprightHeight, size: wh)
        window[shown].shown = (x, y)
        path.record(time: window[shown].time, x: x, y: y)
        // Keep the last three shown frames (the path's third differences continue across them).
        if shown < 3 { shownCount += 1 } else { window.removeFirst() }
    }
}
