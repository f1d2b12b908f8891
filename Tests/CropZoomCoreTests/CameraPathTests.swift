import Foundation
import Testing

@testable import CropZoomCore

/// `--stabilize`'s camera path as a value: the similarity algebra, the CSV that `--path-out` writes and `--path-in`
/// reads, the correction between frames, the report's jitter, and the warp that reads each frame through it.
@Suite("Camera path")
struct CameraPathTests {
    static func close(_ a: Similarity, _ b: Similarity, _ tol: Double = 1e-9) -> Bool {
        abs(a.a - b.a) < tol && abs(a.b - b.b) < tol && abs(a.tx - b.tx) < tol && abs(a.ty - b.ty) < tol
    }

    /// Three frames: a shake to the right and a turn, corrected back.
    static let path = CameraPath(
        width: 640, height: 360,
        samples: [
            .init(
                time: 0, motion: .identity, measured: true, correction: Similarity(x: 0, y: 0, degrees: 0, scale: 0.95)),
            .init(
                time: 1.0 / 30, motion: Similarity(x: 4, y: -1, degrees: 0.5, scale: 1.002), measured: true,
                correction: Similarity(x: -4.1, y: 1.2, degrees: -0.45, scale: 0.951)),
            .init(
                time: 2.0 / 30, motion: .identity, measured: false,
                correction: Similarity(x: -3.9, y: 0.8, degrees: -0.5, scale: 0.95)),
        ])

    @Test("similarities compose, invert and become the affine of a picture about its centre")
    func algebra() {
        let s = Similarity(x: 3, y: -2, degrees: 30, scale: 1.5)
        let t = Similarity(x: -1, y: 5, degrees: -12, scale: 0.8)
        #expect(abs(s.degrees - 30) < 1e-12 && abs(s.scale - 1.5) < 1e-12)
        #expect(Self.close(s.after(s.inverse), .identity) && Self.close(s.inverse.after(s), .identity))
        // (s ∘ t)(p) = s(t(p)).
        let p = (7.0, -3.0)
        let tp = t.apply(p.0, p.1)
        let direct = s.apply(tp.x, tp.y)
        let composed = s.after(t).apply(p.0, p.1)
        #expect(abs(direct.x - composed.x) < 1e-12 && abs(direct.y - composed.y) < 1e-12)
        // Centred on a 640x360 picture: its centre (320, 180) goes where the centred origin goes, moved by (3, -2).
        let m = s.affine(width: 640, height: 360)
        let c = m.apply(320, 180)
        #expect(abs(c.x - 323) < 1e-9 && abs(c.y - 178) < 1e-9)
        let q = m.apply(330, 180)  // 10 px right of the centre: turned 30° clockwise, scaled 1.5
        #expect(abs(q.x - (323 + 15 * cos(.pi / 6))) < 1e-9 && abs(q.y - (178 + 15 * sin(.pi / 6))) < 1e-9)
    }

    @Test(
        """
        anamorphic pixels: a correction in square pixels becomes, in coded ones, the same turn as it is shown (not a \
        shear); the CSV keeps the pixel aspect
        """)
    func anamorphic() throws {
        let s = 4.0 / 3
        let turn = Similarity(x: 3, y: -2, degrees: 10, scale: 0.9)
        let coded = turn.affine(width: 480, height: 360, pixelAspect: s)
        // A coded point, made square about the centre, turned there, made coded again.
        for (x, y) in [(480.0, 180.0), (0.0, 0.0), (123.5, 300.25)] {
            let square = turn.apply((x - 240) * s, y - 180)
            let expected = (x: square.x / s + 240, y: square.y + 180)
            let got = coded.apply(x, y)
            #expect(abs(got.x - expected.x) < 1e-9 && abs(got.y - expected.y) < 1e-9, "(\(x), \(y)): \(got)")
        }
        #expect(turn.affine(width: 480, height: 360, pixelAspect: 1) == turn.affine(width: 480, height: 360))
        var path = Self.path
        path.width = 480
        path.pixelAspect = s
        #expect(path.map(at: 0) == path.samples[0].correction.affine(width: 480, height: 360, pixelAspect: s))
        let back = try CameraPath(csv: path.csv())
        #expect(abs(back.pixelAspect - s) < 1e-9 && back.width == 480 && back.height == 360)
        #expect(try CameraPath(csv: Self.path.csv()).pixelAspect == 1)
        let bad = path.csv().replacingOccurrences(of: "pixel-aspect 1.333333333", with: "pixel-aspect -2")
        #expect(throws: CameraPathError.self) { try CameraPath(csv: bad) }
    }

    @Test("the CSV reads back the same path (times, motions, corrections, measured) and names its columns")
    func csvRoundTrip() throws {
        let text = Self.path.csv()
        #expect(text.hasPrefix("# cropzoom camera path 640x360\n" + CameraPath.csvColumns.joined(separator: ",")))
        let back = try CameraPath(csv: text)
        #expect(back.width == 640 && back.height == 360 && back.samples.count == 3)
        for (a, b) in zip(back.samples, Self.path.samples) {
            #expect(abs(a.time - b.time) < 1e-9 && a.measured == b.measured)
            #expect(Self.close(a.motion, b.motion, 1e-7) && Self.close(a.correction, b.correction, 1e-7))
        }
    }

    @Test("an edited CSV: only time and the correction's columns are needed; a bad one is refused by line")
    func csvEditsAndErrors() throws {
        let edited = "# cropzoom camera path 640x360\ntime,x,y,angle,zoom\n0,1,2,0,1.05\n0.5,-1,0,1.5,1.05\n"
        let p = try CameraPath(csv: edited)
        #expect(Self.close(p.samples[1].correction, Similarity(x: -1, y: 0, degrees: 1.5, scale: 1 / 1.05)))
        #expect(p.samples[1].measured && Self.close(p.samples[1].motion, .identity))
        func reason(_ text: String) -> CameraPathError? {
            do {
                _ = try CameraPath(csv: text)
                return nil
            } catch { return error }
        }
        #expect(
            reason("time,x,y,angle\n0,1,2,0\n") == CameraPathError(line: 1, reason: "no column 'zoom' in the header"))
        #expect(reason("# cropzoom camera path 640x360\ntime,x,y,angle,zoom\n0,1,2,0,1\n0,1,2,0,1\n")?.line == 4)
        #expect(reason("# cropzoom camera path 640x360\ntime,x,y,angle,zoom\n0,1,abc,0,1\n")?.line == 3)
        #expect(
            reason("# cropzoom camera path 640x360\ntime,x,y,angle,zoom\n0,1,2,0,0\n")?.reason.contains("zoom") == true)
        #expect(reason("time,x,y,angle,zoom\n0,1,2,0,1\n")?.reason.contains("WxH") == true)
        #expect(reason("# cropzoom camera path 640x360\ntime,x,y,angle,zoom\n")?.reason == "no frames")
    }

    @Test("between two frames the correction is interpolated; at a frame it is that frame's; clamped at the ends")
    func correctionAtTime() {
        let p = Self.path
        #expect(Self.close(p.correction(at: 1.0 / 30), p.samples[1].correction))
        #expect(Self.close(p.correction(at: -1), p.samples[0].correction))
        #expect(Self.close(p.correction(at: 5), p.samples[2].correction))
        let mid = p.correction(at: 1.5 / 30)
        let (x, y) = (p.samples[1].correction, p.samples[2].correction)
        #expect(abs(mid.tx - (x.tx + y.tx) / 2) < 1e-9 && abs(mid.a - (x.a + y.a) / 2) < 1e-12)
    }

    @Test("the camera is the motions composed; the stabilised camera the camera after the correction")
    func cameraAndStabilised() {
        let p = Self.path
        let cam = p.camera
        #expect(Self.close(cam[0], .identity) && Self.close(cam[1], p.samples[1].motion))
        #expect(Self.close(cam[2], cam[1]))  // an unmeasured frame: the identity motion
        #expect(Self.close(p.stabilised[1], cam[1].after(p.samples[1].correction)))
        #expect(abs(p.zoom - 1 / 0.95) < 1e-9)
    }

    @Test("the report's jitter is the RMS second difference (a constant pan has none, a one-frame jolt has its size)")
    func reportJitter() {
        func path(_ xs: [Double]) -> CameraPath {
            // Motions that put the camera at xs (F_t moves frame t's content by the step back).
            var samples: [CameraPath.Sample] = []
            for (i, x) in xs.enumerated() {
                let step = i == 0 ? 0 : x - xs[i - 1]
                samples.append(
                    .init(
                        time: Double(i) / 30, motion: Similarity(a: 1, b: 0, tx: step, ty: 0), measured: true,
                        correction: .identity))
            }
            return CameraPath(width: 100, height: 100, samples: samples)
        }
        #expect(CameraPathReport(path([0, 1, 2, 3, 4, 5])).cameraJitterPx < 1e-12)
        // 0 0 1 0 0: second differences 1, -2, 1 → RMS sqrt(6/3).
        let jolt = CameraPathReport(path([0, 0, 1, 0, 0]))
        #expect(abs(jolt.cameraJitterPx - 2.0.squareRoot()) < 1e-9 && jolt.pathJitterPx == jolt.cameraJitterPx)
        #expect(jolt.frames == 5 && jolt.unmeasured == 0 && jolt.keptArea == 1)
    }

    @Test("the warp reads each frame through its correction, under the rest of the geometry")
    func warpFollowsThePath() throws {
        var plan = try GeometryPlan.make(GeometryRequest(), source: SourcePicture(width: 640, height: 360))
        let plain = try #require(plan.warpMap(at: 0))
        plan.warp = GeometryPlan.Warp(codedWidth: 640, codedHeight: 360, stabilization: Self.path)
        for (i, s) in Self.path.samples.enumerated() {
            let map = try #require(plan.warpMap(at: s.time))
            // The output's centre reads the frame's centre moved by the correction, its corner the corrected corner.
            let c = map.apply(320, 180)
            let expected = s.correction.affine(width: 640, height: 360).apply(320, 180)
            #expect(abs(c.x - expected.x) < 1e-9 && abs(c.y - expected.y) < 1e-9, "frame \(i)")
            let k = map.apply(0, 0)
            let ke = s.correction.apply(-320, -180)
            #expect(abs(k.x - (ke.x + 320)) < 1e-9 && abs(k.y - (ke.y + 180)) < 1e-9, "frame \(i)")
        }
        // Without the path the same plan reads the frame as it is.
        let corner = plain.apply(100, 50)
        #expect(abs(corner.x - 100) < 1e-9 && abs(corner.y - 50) < 1e-9)
    }
}
