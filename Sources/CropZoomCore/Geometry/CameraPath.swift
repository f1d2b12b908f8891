import Foundation

/// A similarity transform of the plane (rotation, uniform scale, move) in centred pixel
/// coordinates: (u, v) → (a·u − b·v + tx, b·u + a·v + ty). Scale `hypot(a, b)`, angle `atan2(b, a)`
/// (clockwise on screen, y pointing down).
public struct Similarity: Sendable, Equatable, Codable {
    public var a: Double, b: Double, tx: Double, ty: Double

    public init(a: Double, b: Double, tx: Double, ty: Double) {
        self.a = a
        self.b = b
        self.tx = tx
        self.ty = ty
    }

    /// The similarity of scale `scale`, angle `degrees` (clockwise) and move (x, y).
    public init(x: Double, y: Double, degrees: Double, scale: Double) {
        let r = degrees * .pi / 180
        self.init(a: scale * cos(r), b: scale * sin(r), tx: x, ty: y)
    }

    public static let identity = Similarity(a: 1, b: 0, tx: 0, ty: 0)

    public var scale: Double { (a * a + b * b).squareRoot() }
    public var degrees: Double { atan2(b, a) * 180 / .pi }

    public func apply(_ u: Double, _ v: Double) -> (x: Double, y: Double) { (a * u - b * v + tx, b * u + a * v + ty) }

    /// `next` first, then `self` (`self ∘ next`).
    public func after(_ next: Similarity) -> Similarity {
        Similarity(
            a: a * next.a - b * next.b, b: a * next.b + b * next.a,
            tx: a * next.tx - b * next.ty + tx, ty: b * next.tx + a * next.ty + ty)
    }

    /// The same correction at the picture's own scale (`--stabilize-border fill`): its zoom, 1 / a, taken out, the turn
    /// and the move kept.
    public var atOwnScale: Similarity { Similarity(a: 1, b: b / a, tx: tx, ty: ty) }

    /// The inverse map (a similarity of scale 0 has none: the identity is returned).
    public var inverse: Similarity {
        let s2 = a * a + b * b
        guard s2 > 1e-300 else { return .identity }
        let (ia, ib) = (a / s2, -b / s2)
        return Similarity(a: ia, b: ib, tx: -(ia * tx - ib * ty), ty: -(ib * tx + ia * ty))
    }

    /// The same map as an ``Affine`` in pixel coordinates of a `width` x `height` picture (origin at its top-left
    /// corner): centred coordinates are those minus (width/2, height/2).
    public func affine(width: Double, height: Double) -> Affine {
        let (cx, cy) = (width / 2, height / 2)
        let moved = apply(-cx, -cy)
        return Affine(a: a, b: b, c: -b, d: a, tx: moved.x + cx, ty: moved.y + cy)
    }

    /// The same, for a map in square pixels of a picture whose pixels are `pixelAspect` wide (an anamorphic one):
    /// coded x is made square (× pixelAspect), mapped, and made coded again — S⁻¹ ∘ self ∘ S.
    public func affine(width: Double, height: Double, pixelAspect s: Double) -> Affine {
        guard s != 1 else { return affine(width: width, height: height) }
        let (cx, cy) = (width / 2, height / 2)
        // Centred coded (u, v) → square (s u, v) → (a s u − b v + tx, b s u + a v + ty) → coded (x / s, y).
        let (la, lb, lc, ld) = (a, b * s, -b / s, a)
        let ox = (a * s * -cx - b * -cy + tx) / s + cx
        let oy = b * s * -cx + a * -cy + ty + cy
        return Affine(a: la, b: lb, c: lc, d: ld, tx: ox, ty: oy)
    }
}

/// A stabilised camera path (`--stabilize`): for every frame of the input's video, the camera's measured motion and
/// the correction that the render applies.
///
/// Coordinates are the input's coded luma pixels, centred (pixel centres at +0.5, the origin in the middle of the
/// picture). For frame t: ``Sample/motion`` F_t maps a point of frame t to where the same point of the scene was in
/// frame t-1 (the identity for the first frame); the camera path is M_t = F_1 ∘ … ∘ F_t. ``Sample/correction`` B_t
/// maps the stabilised picture (the whole frame, centred) to the point of frame t shown there: the crop zoom is in
/// it (a scale of 1/zoom), so the render reads frame t through B_t and shows the result at the frame's size. The
/// stabilised camera is P_t = M_t ∘ B_t.
public struct CameraPath: Sendable, Equatable, Codable {
    public struct Sample: Sendable, Equatable, Codable {
        /// Media seconds of the frame (as the transform evaluates keyframes: from the output's start).
        public var time: Double
        /// F_t (identity for the first frame, and where the motion could not be measured).
        public var motion: Similarity
        /// False where no motion could be measured (a frame without texture: black, a fade): the path is bridged
        /// there, not guessed.
        public var measured: Bool
        /// B_t.
        public var correction: Similarity

        public init(time: Double, motion: Similarity, measured: Bool, correction: Similarity) {
            self.time = time
            self.motion = motion
            self.measured = measured
            self.correction = correction
        }
    }

    /// The coded picture the path is for.
    public var width: Int, height: Int
    /// Its pixels' aspect (width / height of one pixel; 1: square). The motions and corrections are in square pixels:
    /// a coded x times this (a turn of an anamorphic picture is a turn as it is shown, not a shear).
    public var pixelAspect: Double
    public var samples: [Sample]

    public init(width: Int, height: Int, pixelAspect: Double = 1, samples: [Sample]) {
        self.width = width
        self.height = height
        self.pixelAspect = pixelAspect > 0 && pixelAspect.isFinite ? pixelAspect : 1
        self.samples = samples
    }

    private enum CodingKeys: String, CodingKey { case width, height, pixelAspect, samples }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            width: try c.decode(Int.self, forKey: .width), height: try c.decode(Int.self, forKey: .height),
            pixelAspect: try c.decodeIfPresent(Double.self, forKey: .pixelAspect) ?? 1,
            samples: try c.decode([Sample].self, forKey: .samples))
    }

    /// The largest zoom any frame's correction applies (1 / the smallest scale).
    public var zoom: Double { samples.map { 1 / max(1e-9, $0.correction.scale) }.max() ?? 1 }

    /// The camera path M_t, frame by frame (M_0 the identity).
    public var camera: [Similarity] {
        var m = Similarity.identity
        return samples.enumerated().map { i, s in
            if i > 0 { m = m.after(s.motion) }
            return m
        }
    }

    /// The stabilised camera P_t = M_t ∘ B_t.
    public var stabilised: [Similarity] { zip(camera, samples).map { $0.after($1.correction) } }

    /// B at media time `t`: the nearest frame's, linearly between two frames' (a frame the analysis did not see).
    public func correction(at t: Double) -> Similarity {
        guard let first = samples.first else { return .identity }
        if t <= first.time { return first.correction }
        var lo = 0
        var hi = samples.count - 1
        if t >= samples[hi].time { return samples[hi].correction }
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if samples[mid].time <= t { lo = mid } else { hi = mid }
        }
        let (p, q) = (samples[lo], samples[hi])
        let f = q.time > p.time ? (t - p.time) / (q.time - p.time) : 0
        if f < 1e-6 { return p.correction }
        if f > 1 - 1e-6 { return q.correction }
        let (x, y) = (p.correction, q.correction)
        return Similarity(
            a: x.a + (y.a - x.a) * f, b: x.b + (y.b - x.b) * f, tx: x.tx + (y.tx - x.tx) * f,
            ty: x.ty + (y.ty - x.ty) * f)
    }

    /// The frame's read map in coded pixel coordinates (origin top-left): the stabilised picture → frame t.
    public func map(at t: Double) -> Affine {
        correction(at: t).affine(width: Double(width), height: Double(height), pixelAspect: pixelAspect)
    }
}

/// What `cropzoom analyze-motion --camera-path` prints: the shake measured and the path chosen, in the measures of
/// `Tests/tools/stability.py` (jitter: the RMS of the frame centre's second divided differences, times the mean
/// frame interval squared: px/frame² and °/frame²).
public struct CameraPathReport: Codable, Sendable, Equatable {
    public var frames: Int
    /// Frames whose motion could not be measured (no texture): bridged.
    public var unmeasured: Int
    /// The largest zoom a frame's correction applies.
    public var zoom: Double
    /// The share of the picture the output shows, the mean over frames (each frame's 1 / zoom², at most 1).
    public var keptArea: Double
    /// The recorded camera's jitter, and the stabilised camera's.
    public var cameraJitterPx: Double, cameraJitterDeg: Double
    public var pathJitterPx: Double, pathJitterDeg: Double
    /// The largest correction: how far (px) a frame's centre is moved, how far (°) it is turned.
    public var maxCorrectionPx: Double, maxCorrectionDeg: Double

    public init(_ path: CameraPath) {
        let s = path.samples
        frames = s.count
        unmeasured = s.dropFirst().filter { !$0.measured }.count
        zoom = path.zoom
        keptArea =
            s.isEmpty ? 1 : s.map { min(1, $0.correction.scale * $0.correction.scale) }.reduce(0, +) / Double(s.count)
        let times = s.map(\.time)
        (cameraJitterPx, cameraJitterDeg) = CameraPathReport.jitter(times, path.camera)
        (pathJitterPx, pathJitterDeg) = CameraPathReport.jitter(times, path.stabilised)
        maxCorrectionPx =
            s.map { ($0.correction.tx * $0.correction.tx + $0.correction.ty * $0.correction.ty).squareRoot() }
            .max() ?? 0
        maxCorrectionDeg = s.map { abs($0.correction.degrees) }.max() ?? 0
    }

    /// RMS of the centre's and the angle's second divided differences × (mean interval)².
    static func jitter(_ t: [Double], _ m: [Similarity]) -> (px: Double, deg: Double) {
        guard t.count >= 3 else { return (0, 0) }
        let h = (t.last! - t.first!) / Double(t.count - 1)
        var (sp, sd) = (0.0, 0.0)
        var previousAngle = m[0].degrees
        var angles = [previousAngle]
        for k in 1..<m.count {
            // Unwrapped, so a turn through ±180° is not a jump.
            var a = m[k].degrees
            while a - previousAngle > 180 { a -= 360 }
            while a - previousAngle < -180 { a += 360 }
            angles.append(a)
            previousAngle = a
        }
        for k in 1..<(t.count - 1) {
            let (d0, d1) = (max(1e-9, t[k] - t[k - 1]), max(1e-9, t[k + 1] - t[k]))
            let scale = 2 / (d0 + d1) * h * h
            let ax = ((m[k + 1].tx - m[k].tx) / d1 - (m[k].tx - m[k - 1].tx) / d0) * scale
            let ay = ((m[k + 1].ty - m[k].ty) / d1 - (m[k].ty - m[k - 1].ty) / d0) * scale
            let ar = ((angles[k + 1] - angles[k]) / d1 - (angles[k] - angles[k - 1]) / d0) * scale
            sp += ax * ax + ay * ay
            sd += ar * ar
        }
        let n = Double(t.count - 2)
        return ((sp / n).squareRoot(), (sd / n).squareRoot())
    }
}
