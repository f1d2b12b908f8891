import CFFmpeg
import Foundation
import Testing

@testable import CropZoomCore
@testable import CropZoomFFmpeg

/// `--stabilize` of a live source, below the engine: the receding-horizon path (`LiveCameraPathSolver`), the table
/// the workers read (`LiveCameraPath`), and the motion measured on pictures that are not planar YUV (a screen's RGB,
/// a camera's packed YUYV).
@Suite("Live stabilisation")
struct LiveStabilizationTests {
    /// Hand shake (px) at frame t: two sines, 3 and 5.5 Hz at 30 fps, about 3 px RMS, and a slow pan of 1 px a frame.
    static func camera(_ t: Int) -> (x: Double, y: Double) {
        let s = Double(t) / 30
        return (Double(t) + 3 * sin(2 * .pi * 3 * s) + 1.5 * sin(2 * .pi * 5.5 * s + 1), 2.5 * sin(2 * .pi * 4 * s + 2))
    }

    /// RMS of the second difference of the positions (px/frame²).
    static func jitter(_ p: [(x: Double, y: Double)]) -> Double {
        var sum = 0.0
        for k in 1..<(p.count - 1) {
            let ax = p[k + 1].x - 2 * p[k].x + p[k - 1].x
            let ay = p[k + 1].y - 2 * p[k].y + p[k - 1].y
            sum += ax * ax + ay * ay
        }
        return (sum / Double(p.count - 2)).squareRoot()
    }

    /// Runs the live solver over `n` frames of the shaky pan: each frame's correction as it left the look-ahead.
    static func live(
        n: Int, lookahead: Int, zoom: Double = 1.1, areaWeight: Double = 0,
        camera: (Int) -> (x: Double, y: Double) = camera
    ) throws -> [Similarity] {
        let solver = try LiveCameraPathSolver(
            width: 640, height: 360, zoom: zoom, lookahead: lookahead, tripod: false, hold: 0, areaWeight: areaWeight)
        var out: [Similarity] = []
        for t in 0..<n {
            if solver.isFull, let fixed = try solver.fixNext() { out.append(fixed.correction) }
            // F_t: a point of frame t to where it was in frame t-1 (the camera moved by the difference).
            let (c0, c1) = (camera(max(0, t - 1)), camera(t))
            solver.append(
                time: Double(t) / 30, motion: Similarity(a: 1, b: 0, tx: c1.x - c0.x, ty: c1.y - c0.y), measured: true)
        }
        while let fixed = try solver.fixNext() { out.append(fixed.correction) }
        return out
    }

    @Test("the live path steadies a shaky pan as the frames come and keeps the window inside the frame")
    func steadiesAsTheFramesCome() throws {
        let n = 150
        let b = try Self.live(n: n, lookahead: 15)
        #expect(b.count == n)
        // The stabilised camera P_t = M_t ∘ B_t (translation only here): M_t's position plus the correction's move.
        let recorded = (0..<n).map { Self.camera($0) }
        let steadied = (0..<n).map { (x: Self.camera($0).x + b[$0].tx, y: Self.camera($0).y + b[$0].ty) }
        let (before, after) = (Self.jitter(recorded), Self.jitter(steadied))
        #expect(after < before / 20, "jitter \(before) → \(after) px/frame²")
        // The window (the frame at 1/1.1, moved by B_t) stays inside the frame: |tx| ≤ 320 (1 − 1/1.1), likewise y.
        for (t, c) in b.enumerated() {
            #expect(abs(c.a - 1 / 1.1) < 1e-9 && abs(c.b) < 0.05, "frame \(t): \(c)")
            #expect(abs(c.tx) <= 320 * (1 - 1 / 1.1) + 1e-3 && abs(c.ty) <= 180 * (1 - 1 / 1.1) + 1e-3, "\(t): \(c)")
        }
    }

    @Test(
        """
        the zoom free (a look-ahead of half a second, the shake tripling halfway): the window inside the frame, the \
        zoom between 1 and 1.1, falling at most 3 % a second and growing at most 9 %, more of the picture kept than \
        the fixed crop, as steady
        """)
    func freeZoom() throws {
        let n = 150
        let weight = LiveCameraPathSolver.areaWeight(lookahead: 0.5)
        #expect(weight > 0 && LiveCameraPathSolver.areaWeight(lookahead: 0.2) == 0)
        // The shake three times as strong from 2.5 s: the zoom has to grow, and may not jump.
        func camera(_ t: Int) -> (x: Double, y: Double) {
            let (c, pan) = (Self.camera(t), Double(t))
            return t < 75 ? c : (pan + 3 * (c.x - pan), 3 * c.y)
        }
        let free = try Self.live(n: n, lookahead: 15, areaWeight: weight, camera: camera)
        let fixed = try Self.live(n: n, lookahead: 15, camera: camera)
        #expect(free.count == n)
        let zooms = free.map { 1 / $0.a }
        #expect(zooms.allSatisfy { $0 >= 1 && $0 <= 1.1 + 1e-9 }, "\(zooms.min()!)...\(zooms.max()!)")
        // Falling at most 3 % a second, growing at most three times as fast (CZ_PATH_ZOOM_IN_FACTOR).
        let speeds = zip(zooms, zooms.dropFirst()).map { log($1 / $0) * 30 }
        #expect(speeds.allSatisfy { $0 >= -0.03 - 1e-6 && $0 <= 0.09 + 1e-6 }, "\(speeds.min()!)...\(speeds.max()!)")
        for (t, c) in free.enumerated() {
            // The window's corners (±320/z, ±180/z turned by b, moved by t) inside ±320 x ±180.
            for (u, v) in [(320.0, 180.0), (320, -180), (-320, 180), (-320, -180)] {
                let (x, y) = (c.a * u - c.b * v + c.tx, c.b * u + c.a * v + c.ty)
                #expect(abs(x) <= 320 + 1e-3 && abs(y) <= 180 + 1e-3, "frame \(t): \(c)")
            }
        }
        let kept = free.map { $0.a * $0.a + $0.b * $0.b }.reduce(0, +) / Double(n)
        #expect(kept > 0.9 && kept > fixed[0].a * fixed[0].a + 0.05, "kept \(kept)")
        let steadied = { (b: [Similarity]) in
            Self.jitter((0..<n).map { (x: camera($0).x + b[$0].tx, y: camera($0).y + b[$0].ty) })
        }
        #expect(steadied(free) < 1.5 * steadied(fixed), "jitter \(steadied(free)) (fixed crop \(steadied(fixed)))")
    }

    @Test(
        """
        with a look-ahead as long as the clip, the first frame's correction is the whole clip's path's (the file's), \
        its zoom too
        """)
    func wholeLookAheadIsTheFilePath() throws {
        let n = 60
        let live = try Self.live(n: n, lookahead: n, areaWeight: CameraPathSolver.areaWeight)
        let problem = CameraPathSolver.Problem(
            motions: (0..<n).map { t in
                let (c0, c1) = (Self.camera(max(0, t - 1)), Self.camera(t))
                return Similarity(a: 1, b: 0, tx: c1.x - c0.x, ty: c1.y - c0.y)
            }, measured: Array(repeating: true, count: n), durations: Array(repeating: 1.0 / 30, count: n),
            width: 640, height: 360, tripod: false, hold: 0, maxZoom: 1.1)
        let file = try CameraPathSolver.choose(problem).corrections[0]
        #expect(
            abs(file.tx - live[0].tx) < 0.05 && abs(file.ty - live[0].ty) < 0.05 && abs(file.a - live[0].a) < 1e-4,
            "file \(file), live \(live[0])")
        #expect(abs(1 / file.a - 1.1) > 0.01, "the file's zoom \(1 / file.a) is free, not the crop")
    }

    @Test("the workers' table: the correction recorded for a frame's time, the nearest one otherwise, the latest kept")
    func table() {
        let path = LiveCameraPath(width: 640, height: 360, capacity: 4)
        #expect(path.correction(at: 1) == .identity)
        for k in 0..<6 { path.record(time: Double(k) / 30, correction: Similarity(a: 1, b: 0, tx: Double(k), ty: 0)) }
        #expect(path.correction(at: 5.0 / 30).tx == 5)
        #expect(path.correction(at: 3.4 / 30).tx == 3)
        // Frames 0 and 1 have left the ring (4 kept): the nearest kept is frame 2's.
        #expect(path.correction(at: 0).tx == 2)
        #expect(path.map(at: 4.0 / 30).tx == 4)
    }

    /// A textured picture (smooth blobs), moved right by `dx` px, as grey values 16...235.
    static func texture(_ x: Int, _ y: Int, dx: Double) -> Double {
        let u = Double(x) - dx
        let v = Double(y)
        return 125 + 50 * sin(u / 9) * cos(v / 7) + 40 * sin((u + 2 * v) / 13) + 20 * cos(u * v / 900)
    }

    static func frame(_ format: AVPixelFormat, dx: Double) throws -> Frame {
        let (w, h) = (320, 240)
        let f = try Frame(width: w, height: h, format: format)
        let base = f.pointer.pointee.dataPlane(0)!
        let ls = Int(f.pointer.pointee.linesizePlane(0))
        for y in 0..<h {
            for x in 0..<w {
                let v = UInt8(max(0, min(255, Self.texture(x, y, dx: dx).rounded())))
                switch format {
                case AV_PIX_FMT_BGR0:
                    for c in 0..<3 { base[y * ls + 4 * x + c] = v }
                case AV_PIX_FMT_YUYV422:
                    base[y * ls + 2 * x] = v
                    base[y * ls + 2 * x + 1] = 128
                default:
                    base[y * ls + x] = v
                }
            }
        }
        if format == AV_PIX_FMT_YUV420P {
            for i in 1...2 {
                let p = f.pointer.pointee.dataPlane(i)!
                let l = Int(f.pointer.pointee.linesizePlane(i))
                for y in 0..<(h / 2) { for x in 0..<(w / 2) { p[y * l + x] = 128 } }
            }
        }
        return f
    }

    @Test(
        "the motion of RGB (a screen) and packed YUYV (a camera) pictures is measured as that of planar YUV",
        arguments: [AV_PIX_FMT_BGR0, AV_PIX_FMT_YUYV422])
    func packedPictures(_ format: AVPixelFormat) throws {
        let geometry = try #require(MotionGeometry(width: 320, height: 240))
        let estimator = try MotionEstimator(geometry)
        func motion(_ f: AVPixelFormat) throws -> Similarity {
            let (a, b) = (try MotionFrame(geometry), try MotionFrame(geometry))
            #expect(a.prepare(from: try Self.frame(f, dx: 0), geometry: geometry))
            #expect(b.prepare(from: try Self.frame(f, dx: 2.5), geometry: geometry))
            let (m, measured) = estimator.estimate(a, b)
            #expect(measured)
            return m
        }
        let planar = try motion(AV_PIX_FMT_YUV420P)
        let packed = try motion(format)
        #expect(abs(abs(planar.tx) - 2.5) < 0.1 && abs(planar.ty) < 0.1, "planar: \(planar)")
        #expect(abs(packed.tx - planar.tx) < 0.05 && abs(packed.ty - planar.ty) < 0.05, "\(packed) vs \(planar)")
    }
}
