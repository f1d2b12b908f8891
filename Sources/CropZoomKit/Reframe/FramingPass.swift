import CropZoomFFmpeg
import Foundation

/// The analysis pass of `--follow`: the input's video decoded once more, each frame's luma made small and grey
/// (``FramingPicture``), and per frame what a camera operator looks at: cuts (the whole picture changes), faces
/// (detected every ``detectEvery`` frames by OpenCV's cascade and followed in between by their picture, so a missed
/// detection or a turned head keeps the box), and the region that moves (frame differences).
///
/// Two threads beside the decoder's own: the reader reads, decodes and scales each frame into a picture from a fixed
/// pool; the analyser (the calling thread) takes them in order through a bounded queue, since following a face needs
/// the frame before. Nothing is allocated per frame but OpenCV's scratch.
struct FramingPass {
    /// A face seen in one frame, in the analysis picture's pixels.
    struct Face: Sendable {
        /// Which face this is across frames (the same number while it is followed).
        var id: Int
        var box: Rect
        /// Detected in this frame (false: followed by its picture since its last detection).
        var detected: Bool
    }

    /// What one frame showed.
    struct Observation: Sendable {
        var time: Double
        /// A cut comes before this frame.
        var cut: Bool
        var faces: [Face]
        /// The largest region that moved since the frame before, nil: none (analysis px).
        var motion: Rect?
    }

    struct Result {
        var observations: [Observation]
        /// The analysis picture's size (upright); the coded picture's, and its pixels' aspect.
        var analysisWidth: Int, analysisHeight: Int
        var codedWidth: Int, codedHeight: Int
        var pixelAspect: Double
        var detections: Int
    }

    /// The analysis picture's longer side, px: faces down to 12 px there (40 px of a 1280-wide frame) are found.
    static let analysisSide = 384
    /// A detection every this many seconds; the face is followed by its picture in between.
    static let detectEvery = 0.2
    /// A face not detected again for this long (turned away, hidden) is let go.
    static let keepUndetected = 2.0

    let configuration: TranscodeConfiguration
    let source: InputSetup
    let timeOffset: Double
    let end: Double?
    let cancel: CancelFlag
    /// Faces are looked for (follow auto or faces).
    let faces: Bool
    /// The region that moves is looked for (follow auto or motion; cuts are found either way).
    var motion: Bool = true
    /// How the coded picture is turned upright: the analysis is of the upright picture (faces stand).
    var orientation: Orientation = .identity

    func run(progress: ((Int, Double) -> Void)?) throws(CropZoomError) -> Result {
        let cfg = configuration
        let decoder = source.decoder
        try decoder.open(threads: max(1, UsableCPUs.count))
        let dec = decoder.context
        let aspect = SourcePicture.sampleAspect(
            source.input.stream(source.videoIndex), decoder, width: dec.width, height: dec.height
        ).ratio.value
        let squareWidth = Double(dec.width) * aspect
        let scale = min(1, Double(FramingPass.analysisSide) / max(squareWidth, Double(dec.height)))
        let (aw, ah) = (
            max(16, Int((squareWidth * scale).rounded())), max(16, Int((Double(dec.height) * scale).rounded()))
        )
        let detector = faces ? try FaceDetector() : nil
        let base = decoder.timeBase.seconds
        let control = RunControl()
        let queued = 4
        let display = orientation
        let pool = try ShellPool(capacity: queued + 3, control: control) { () throws(CropZoomError) in
            try FramingPicture(codedWidth: aw, codedHeight: ah, orientation: display)
        }
        let upright = display.apply(width: aw, height: ah)
        let queue = BoundedQueue<FramingPicture>(capacity: queued, control: control)
        let input = source.input
        let videoIndex = source.videoIndex
        let (timeOffset, end, cancel) = (self.timeOffset, self.end, self.cancel)
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
                    let picture = try pool.acquire()
                    guard picture.prepare(from: frame) else {
                        pool.release(picture)
                        throw CropZoomError(
                            .processing, what: "reframing", path: cfg.inputName,
                            reason: "the subject cannot be looked for on \(frame.format.name) pictures (swscale "
                                + "cannot make them grey)")
                    }
                    picture.time = t
                    if try queue.push(picture) == .enough { past = true }
                }
                try InputSetup.decodeVideo(
                    input, decoder, videoIndex: videoIndex, packet: packet, cancel: cancel, name: cfg.inputName,
                    enough: { past }, take)
            } catch {
                control.fail(error)
            }
        }
        reader.name = "cropzoom-reframe-read"
        reader.start()

        var observations: [Observation] = []
        let comparer = try PictureComparer()
        var tracker = FaceTracker(width: upright.width, height: upright.height)
        var previous: FramingPicture? = nil
        var lastDetection = -Double.infinity
        var lastReport = monotonicSeconds()
        var detections = 0
        do throws(CropZoomError) {
            while let picture = try queue.pop() {
                defer {
                    if let previous { pool.release(previous) }
                    previous = picture
                }
                if cancel.isSet { throw CropZoomError(.cancelled, path: cfg.inputName, reason: "cancelled") }
                var cut = false
                var motion: Rect? = nil
                if let previous, let change = comparer.compare(previous, picture, threshold: 12, region: self.motion) {
                    cut = FramingPass.isCut(change)
                    if !cut && change.moved > 0.002 { motion = change.region }
                }
                var seen: [Face] = []
                if let detector {
                    if cut { tracker.reset() }
                    tracker.follow(picture, time: picture.time)
                    if cut || picture.time - lastDetection >= FramingPass.detectEvery - 1e-6 || observations.isEmpty {
                        lastDetection = picture.time
                        detections += 1
                        let found = detector.detect(picture, minSize: max(12, min(aw, ah) / 18))
                        try tracker.detected(found, in: picture, time: picture.time)
                    }
                    seen = tracker.faces
                }
                observations.append(Observation(time: picture.time, cut: cut, faces: seen, motion: motion))
                if let progress, monotonicSeconds() - lastReport >= 0.25 {
                    lastReport = monotonicSeconds()
                    progress(observations.count, picture.time)
                }
            }
        } catch {
            control.fail(error)
        }
        if let previous { pool.release(previous) }
        joined.wait()
        if let error = control.firstError { throw error }
        progress?(observations.count, observations.last?.time ?? 0)
        return Result(
            observations: observations, analysisWidth: upright.width, analysisHeight: upright.height,
            codedWidth: dec.width,
            codedHeight: dec.height, pixelAspect: aspect, detections: detections)
    }

    /// A cut: most of the picture's blocks changed and its histogram moved (a pan moves the blocks, a light change
    /// the histogram; a cut both).
    static func isCut(_ change: PictureChange) -> Bool {
        change.blockChange > 18 && change.moved > 0.35
    }
}

/// The faces being followed: each detected face keeps its number while a detection meets it again (overlap) or its
/// picture is found near its last place; let go when neither has happened for ``FramingPass/keepUndetected``.
struct FaceTracker {
    private struct Tracked {
        var id: Int
        var box: Rect
        var patch: FacePatch
        var lastDetected: Double
        var detectedNow: Bool
    }

    private var tracked: [Tracked] = []
    private var spare: [FacePatch] = []
    private var next = 1
    let width: Int, height: Int

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    var faces: [FramingPass.Face] {
        var list: [FramingPass.Face] = []
        faces(into: &list)
        return list
    }

    /// ``faces`` into `list` (emptied, its memory kept: a live source's per-frame use).
    func faces(into list: inout [FramingPass.Face]) {
        list.removeAll(keepingCapacity: true)
        for t in tracked { list.append(FramingPass.Face(id: t.id, box: t.box, detected: t.detectedNow)) }
    }

    mutating func reset() {
        spare += tracked.map(\.patch)
        tracked.removeAll()
    }

    /// Moves each face to where its picture is in `picture` (within half its size); a face whose picture is no
    /// longer there (correlation under 0.4) or that was not detected for too long is let go.
    mutating func follow(_ picture: FramingPicture, time: Double) {
        // Kept faces move to the front in place (nothing allocated per frame).
        var kept = 0
        for i in tracked.indices {
            var t = tracked[i]
            t.detectedNow = false
            let radius = max(6, Int(max(t.box.width, t.box.height) / 2))
            if time - t.lastDetected <= FramingPass.keepUndetected,
                let found = t.patch.find(picture, x: t.box.x, y: t.box.y, radius: radius), found.score >= 0.4
            {
                t.box.x = found.x
                t.box.y = found.y
                tracked[kept] = t
                kept += 1
            } else {
                spare.append(t.patch)
            }
        }
        tracked.removeLast(tracked.count - kept)
    }

    /// Meets the detections of this frame with the faces followed: a detection overlapping one (IoU ≥ 0.3) renews
    /// it (box and picture); the others start new faces.
    mutating func detected(_ boxes: [Rect], in picture: FramingPicture, time: Double) throws(CropZoomError) {
        var taken = Set<Int>()
        for box in boxes {
            var best = -1
            var bestIoU = 0.3
            for (i, t) in tracked.enumerated() where !taken.contains(i) {
                let o = FaceTracker.iou(t.box, box)
                if o >= bestIoU {
                    bestIoU = o
                    best = i
                }
            }
            if best >= 0 {
                taken.insert(best)
                tracked[best].box = box
                tracked[best].lastDetected = time
                tracked[best].detectedNow = true
                tracked[best].patch.set(picture, box: box)
            } else {
                let patch: FacePatch
                if let reused = spare.popLast() { patch = reused } else { patch = try FacePatch() }
                patch.set(picture, box: box)
                tracked.append(Tracked(id: next, box: box, patch: patch, lastDetected: time, detectedNow: true))
                taken.insert(tracked.count - 1)
                next += 1
            }
        }
    }

    static func iou(_ a: Rect, _ b: Rect) -> Double {
        let w = min(a.x + a.width, b.x + b.width) - max(a.x, b.x)
        let h = min(a.y + a.height, b.y + b.height) - max(a.y, b.y)
        guard w > 0, h > 0 else { return 0 }
        let i = w * h
        return i / (a.width * a.height + b.width * b.height - i)
    }
}
