import Foundation

/// One of the eight orthogonal transforms of a picture (rotations by quarter turns, with or
/// without a mirror): the dihedral group D4 acting on pixel coordinates with y pointing down.
///
/// Stored as a 2x2 matrix `[[a, b], [c, d]]` with entries -1, 0, 1: a point `p` (relative to the
/// picture's centre) goes to `M * p`.
public struct Orientation: Hashable, Sendable, CustomStringConvertible {
    public let a: Int, b: Int, c: Int, d: Int

    package init(_ a: Int, _ b: Int, _ c: Int, _ d: Int) {
        self.a = a
        self.b = b
        self.c = c
        self.d = d
    }

    public static let identity = Orientation(1, 0, 0, 1)
    /// Rotate 90° clockwise.
    public static let rotate90 = Orientation(0, -1, 1, 0)
    public static let rotate180 = Orientation(-1, 0, 0, -1)
    /// Rotate 270° clockwise (90° counter-clockwise).
    public static let rotate270 = Orientation(0, 1, -1, 0)
    /// Mirror left/right.
    public static let flipHorizontal = Orientation(-1, 0, 0, 1)
    /// Mirror top/bottom.
    public static let flipVertical = Orientation(1, 0, 0, -1)

    /// Clockwise rotation by `degrees` (a multiple of 90).
    public static func rotation(clockwise degrees: Int) -> Orientation? {
        switch ((degrees % 360) + 360) % 360 {
        case 0: return .identity
        case 90: return .rotate90
        case 180: return .rotate180
        case 270: return .rotate270
        default: return nil
        }
    }

    /// `self` first, then `next`.
    public func then(_ next: Orientation) -> Orientation {
        Orientation(
            next.a * a + next.b * c, next.a * b + next.b * d,
            next.c * a + next.d * c, next.c * b + next.d * d)
    }

    /// The transform that undoes this one (the transpose, as the matrix is orthogonal).
    public var inverse: Orientation { Orientation(a, c, b, d) }

    /// True when width and height trade places.
    public var swapsAxes: Bool { a == 0 }

    /// True when the transform mirrors the picture (determinant -1).
    public var isMirror: Bool { a * d - b * c < 0 }

    public var isIdentity: Bool { self == .identity }

    /// The size of a `width` x `height` picture after this transform.
    public func apply(width: Int, height: Int) -> (width: Int, height: Int) {
        swapsAxes ? (height, width) : (width, height)
    }

    /// Maps a rectangle of a `width` x `height` picture to the transformed picture.
    public func apply(_ rect: Rect, width: Double, height: Double) -> Rect {
        let (ow, oh) = swapsAxes ? (height, width) : (width, height)
        func map(_ x: Double, _ y: Double) -> (Double, Double) {
            let cx = x - width / 2
            let cy = y - height / 2
            return (Double(a) * cx + Double(b) * cy + ow / 2, Double(c) * cx + Double(d) * cy + oh / 2)
        }
        let p0 = map(rect.x, rect.y)
        let p1 = map(rect.x + rect.width, rect.y + rect.height)
        return Rect(x: min(p0.0, p1.0), y: min(p0.1, p1.1), width: abs(p1.0 - p0.0), height: abs(p1.1 - p0.1))
    }

    /// Clockwise rotation in degrees after the optional mirror (mirror applied first).
    public var rotationDegrees: Int {
        let unmirrored = isMirror ? Orientation.flipHorizontal.then(self) : self
        // unmirrored = flipH^-1 ... : self = flipH.then(rotation) when mirrored
        switch unmirrored {
        case .rotate90: return 90
        case .rotate180: return 180
        case .rotate270: return 270
        default: return 0
        }
    }

    public var description: String {
        var s = "rotate \(rotationDegrees)"
        if isMirror { s = "mirror, " + s }
        return s
    }

    /// The orientation a player applies for an FFmpeg/QuickTime display matrix (the 3x3 matrix of
    /// `AV_PKT_DATA_DISPLAYMATRIX`, 16.16 fixed point, row-vector convention `[x y 1] * M`).
    /// Returns nil when the matrix is not a quarter-turn rotation with an optional mirror.
    public init?(displayMatrix m: [Int32]) {
        guard m.count >= 5 else { return nil }
        func sign(_ v: Int32) -> Int? {
            let f = Double(v) / 65536.0
            if abs(f) < 1e-3 { return 0 }
            return f > 0 ? 1 : -1
        }
        // x' = m0 * x + m3 * y, y' = m1 * x + m4 * y
        guard let a = sign(m[0]), let b = sign(m[3]), let c = sign(m[1]), let d = sign(m[4]) else { return nil }
        let candidate = Orientation(a, b, c, d)
        let valid = (abs(a) + abs(b) == 1) && (abs(c) + abs(d) == 1) && (abs(a) + abs(c) == 1)
        guard valid else { return nil }
        self = candidate
    }
}

/// A rectangle in (fractional) pixels.
public struct Rect: Equatable, Sendable, Codable, CustomStringConvertible {
    public var x: Double, y: Double, width: Double, height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
    public var description: String { "\(fmt(width))x\(fmt(height))+\(fmt(x))+\(fmt(y))" }
    private func fmt(_ v: Double) -> String {
        v == v.rounded() ? String(Int(v)) : String(format2(v))
    }
    private func format2(_ v: Double) -> String { String((v * 100).rounded() / 100) }
}

/// A whole-pixel rectangle.
public struct PixelRect: Equatable, Sendable, Codable, CustomStringConvertible {
    public var x: Int, y: Int, width: Int, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// An affine map `(x, y) -> (a*x + c*y + tx, b*x + d*y + ty)` (the CGAffineTransform layout).
public struct Affine: Equatable, Sendable {
    public var a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double
    public init(a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double) {
        self.a = a
        self.b = b
        self.c = c
        self.d = d
        self.tx = tx
        self.ty = ty
    }
    public static let identity = Affine(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0)
    /// A keyframed matrix (six components a, b, c, d, tx, ty) at time `t`.
    public init(_ track: Track, at t: Double) {
        self.init(
            a: track.value(0, at: t), b: track.value(1, at: t), c: track.value(2, at: t),
            d: track.value(3, at: t), tx: track.value(4, at: t), ty: track.value(5, at: t))
    }
    public var determinant: Double { a * d - b * c }
    /// The inverse map; nil when singular.
    public var inverted: Affine? {
        let det = determinant
        guard abs(det) > 1e-12, det.isFinite else { return nil }
        return Affine(
            a: d / det, b: -b / det, c: -c / det, d: a / det,
            tx: (c * ty - d * tx) / det, ty: (b * tx - a * ty) / det)
    }
    /// Scale by (sx, sy), then move by (tx, ty).
    public static func scale(_ sx: Double, _ sy: Double, tx: Double = 0, ty: Double = 0) -> Affine {
        Affine(a: sx, b: 0, c: 0, d: sy, tx: tx, ty: ty)
    }
    /// Rotation by `degrees` clockwise on screen (y down) about (cx, cy).
    public static func rotation(degrees: Double, about cx: Double, _ cy: Double) -> Affine {
        let t = degrees * .pi / 180
        let co = cos(t)
        let si = sin(t)
        return Affine(a: co, b: si, c: -si, d: co, tx: cx - co * cx + si * cy, ty: cy - si * cx - co * cy)
    }
    public func apply(_ x: Double, _ y: Double) -> (x: Double, y: Double) {
        (a * x + c * y + tx, b * x + d * y + ty)
    }
    /// `self` first, then `next`.
    public func then(_ n: Affine) -> Affine {
        Affine(
            a: n.a * a + n.c * b, b: n.b * a + n.d * b,
            c: n.a * c + n.c * d, d: n.b * c + n.d * d,
            tx: n.a * tx + n.c * ty + n.tx, ty: n.b * tx + n.d * ty + n.ty)
    }
}
