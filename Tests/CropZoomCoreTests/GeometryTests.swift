import Foundation
import Testing

@testable import CropZoomCore

@Suite("Orientation (D4)")
struct OrientationTests {
    static let all: [Orientation] = [
        .identity, .rotate90, .rotate180, .rotate270,
        .flipHorizontal, .flipVertical,
        Orientation.rotate90.then(.flipHorizontal), Orientation.rotate90.then(.flipVertical),
    ]

    @Test func groupIsClosedAndHasInverses() {
        #expect(Set(Self.all).count == 8)
        for a in Self.all {
            #expect(a.then(a.inverse) == .identity)
            for b in Self.all { #expect(Self.all.contains(a.then(b))) }
        }
    }

    @Test func quarterTurnsCompose() {
        #expect(Orientation.rotate90.then(.rotate90) == .rotate180)
        #expect(Orientation.rotate90.then(.rotate180) == .rotate270)
        #expect(Orientation.rotate270.then(.rotate90) == .identity)
        #expect(Orientation.rotation(clockwise: -90) == .rotate270)
        #expect(Orientation.rotation(clockwise: 45) == nil)
    }

    @Test func rotate90MovesTopLeftCornerToTopRight() {
        // A 4x2 picture: the rectangle covering its top-left pixel ends, after a clockwise turn,
        // in the top-right corner of the 2x4 result.
        let r = Orientation.rotate90.apply(Rect(x: 0, y: 0, width: 1, height: 1), width: 4, height: 2)
        #expect(r == Rect(x: 1, y: 0, width: 1, height: 1))
        #expect(Orientation.rotate90.apply(width: 4, height: 2) == (2, 4))
    }

    @Test func flipsAndMirrors() {
        #expect(Orientation.flipHorizontal.isMirror)
        #expect(!Orientation.rotate180.isMirror)
        #expect(Orientation.flipHorizontal.then(.flipVertical) == .rotate180)
        #expect(Orientation.rotate90.rotationDegrees == 90)
        #expect(Orientation.flipHorizontal.then(.rotate270).rotationDegrees == 270)
    }

    /// FFmpeg display matrices (16.16), as `av_display_rotation_set` writes them and phones store them.
    @Test func displayMatrices() {
        let one: Int32 = 1 << 16
        // iPhone portrait: [0 1; -1 0] -> ffprobe "rotation=-90" -> shown rotated 90° clockwise.
        #expect(Orientation(displayMatrix: [0, one, 0, -one, 0, 0, 0, 0, 1 << 30]) == .rotate90)
        #expect(Orientation(displayMatrix: [0, -one, 0, one, 0, 0, 0, 0, 1 << 30]) == .rotate270)
        #expect(Orientation(displayMatrix: [-one, 0, 0, 0, -one, 0, 0, 0, 1 << 30]) == .rotate180)
        #expect(Orientation(displayMatrix: [one, 0, 0, 0, one, 0, 0, 0, 1 << 30]) == .identity)
        // Transpose (rotation plus mirror, determinant -1), as in sample_rotate_and_reflect.mp4.
        let transpose = Orientation(displayMatrix: [0, one, 0, one, 0, 0, 0, 0, 1 << 30])
        #expect(transpose?.isMirror == true)
        #expect(transpose?.swapsAxes == true)
        // Mirror left/right.
        #expect(Orientation(displayMatrix: [-one, 0, 0, 0, one, 0, 0, 0, 1 << 30]) == .flipHorizontal)
        // Not a quarter turn.
        #expect(Orientation(displayMatrix: [46341, 46341, 0, -46341, 46341, 0, 0, 0, 1 << 30]) == nil)
    }
}

@Suite("Geometry plan")
struct GeometryPlanTests {
    let hd = SourcePicture(width: 1920, height: 1080, alignX: 2, alignY: 2)

    @Test func zoomKeepsSizeAndCentres() throws {
        var r = GeometryRequest()
        r.zoom = 2
        let p = try GeometryPlan.make(r, source: hd)
        #expect(p.source == PixelRect(x: 480, y: 270, width: 960, height: 540))
        #expect(p.output == (1920, 1080))
        #expect(p.orientation == .identity)
    }

    @Test func zoom165RoundsToChromaGrid() throws {
        var r = GeometryRequest()
        r.zoom = 1.65
        let p = try GeometryPlan.make(r, source: hd)
        // 1920/1.65 = 1163.6, 1080/1.65 = 654.5: sizes and offsets land on even pixels for 4:2:0.
        #expect(p.source.width == 1164 && p.source.height == 654)
        #expect(p.source.x % 2 == 0 && p.source.y % 2 == 0)
        #expect(abs(Double(p.source.x) + Double(p.source.width) / 2 - 960) <= 1.5)
        #expect(p.output == (1920, 1080))
    }

    @Test func centreIsClampedInsideThePicture() throws {
        var r = GeometryRequest()
        r.zoom = 2
        r.center = UnitPoint(x: 1.0, y: 0.0)
        let p = try GeometryPlan.make(r, source: hd)
        #expect(p.source == PixelRect(x: 960, y: 0, width: 960, height: 540))
    }

    @Test func explicitCropAndCentredCrop() throws {
        var r = GeometryRequest()
        r.crop = .init(width: 640, height: 360, x: 100, y: 50)
        var p = try GeometryPlan.make(r, source: hd)
        #expect(p.source == PixelRect(x: 100, y: 50, width: 640, height: 360))
        #expect(p.output == (640, 360))
        r.crop = .init(width: 640, height: 360)
        p = try GeometryPlan.make(r, source: hd)
        #expect(p.source == PixelRect(x: 640, y: 360, width: 640, height: 360))
    }

    @Test func cropOutsideThePictureIsRefused() {
        var r = GeometryRequest()
        r.crop = .init(width: 2000, height: 100)
        #expect(throws: CropZoomError.self) { try GeometryPlan.make(r, source: hd) }
        r.crop = .init(width: 100, height: 100, x: 1900, y: 0)
        do {
            _ = try GeometryPlan.make(r, source: hd)
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .usage)
            #expect(error.exitCode == 2)
        }
    }

    @Test(
        """
        zoom below 1 zooms out: the same output size, a window larger than the picture centred on the centre; below \
        0.1 refused
        """
    )
    func zoomOut() throws {
        var r = GeometryRequest()
        r.zoom = 0.5
        let p = try GeometryPlan.make(r, source: hd)
        #expect(p.output == (1920, 1080))
        let w = try #require(p.animation).window(at: 0)
        #expect(w == Rect(x: -960, y: -540, width: 3840, height: 2160))
        r.zoom = 0.05
        #expect(throws: CropZoomError.self) { try GeometryPlan.make(r, source: hd) }
        // With a crop, the window widens around the crop: 1280x720 centred on the crop's centre.
        r.zoom = 0.5
        r.crop = .init(width: 640, height: 360, x: 100, y: 200)
        let c = try GeometryPlan.make(r, source: hd)
        #expect(c.output == (640, 360))
        #expect(
            try #require(c.animation).window(at: 0)
                == Rect(x: 100 + 320 - 640, y: 200 + 180 - 360, width: 1280, height: 720))
    }

    @Test("rotation by any angle and --transform: one map from output pixels to coded input pixels")
    func warpMap() throws {
        var r = GeometryRequest()
        r.angle = Track(constant: [90])
        let p = try GeometryPlan.make(r, source: hd)
        #expect(p.output == (1920, 1080), "the frame keeps its size")
        let m = try #require(p.warpMap(at: 0))
        // The output's centre shows the picture's centre; a point right of centre on screen came
        // from above the centre (the picture turned clockwise).
        let c = m.apply(960, 540)
        let q = m.apply(1060, 540)
        #expect(abs(c.x - 960) < 1e-9 && abs(c.y - 540) < 1e-9)
        #expect(abs(q.x - 960) < 1e-9 && abs(q.y - 440) < 1e-9)
        // A matrix: the picture at half size moved to (100, 50): output (100, 50) shows input (0, 0).
        var t = GeometryRequest()
        t.transform = Track(constant: [0.5, 0, 0, 0.5, 100, 50])
        let n = try #require(try GeometryPlan.make(t, source: hd).warpMap(at: 0))
        let o = n.apply(100, 50)
        let e = n.apply(100 + 960, 50 + 540)
        #expect(abs(o.x) < 1e-9 && abs(o.y) < 1e-9 && abs(e.x - 1920) < 1e-9 && abs(e.y - 1080) < 1e-9)
        // With a display rotation (a phone clip), the map starts from the coded picture.
        var phone = hd
        phone.display = .rotation(clockwise: 90)!
        let u = try #require(try GeometryPlan.make(t, source: phone).warpMap(at: 0))
        #expect(try GeometryPlan.make(t, source: phone).output == (1080, 1920))
        let corner = u.apply(100, 50)  // the upright picture's top-left = the coded picture's bottom-left
        #expect(abs(corner.x) < 1e-9 && abs(corner.y - 1080) < 1e-9, "\(corner)")
        // --background cover: zoomed in just enough that the frame's corners show the picture;
        // for 10° on 16:9 that is cos 10° + (16/9) sin 10° = 1.2935.
        var coverRequest = GeometryRequest()
        coverRequest.angle = Track(constant: [10])
        var covered = try GeometryPlan.make(coverRequest, source: hd)
        covered.warp?.cover = true
        let cm = try #require(covered.warpMap(at: 0))
        let corners = [cm.apply(0, 0), cm.apply(1920, 0), cm.apply(0, 1080), cm.apply(1920, 1080)]
        func inside(_ p: (x: Double, y: Double)) -> Bool {
            p.x >= -1e-6 && p.y >= -1e-6 && p.x <= 1920 + 1e-6 && p.y <= 1080 + 1e-6
        }
        func onEdge(_ p: (x: Double, y: Double)) -> Bool {
            abs(p.x) < 1e-6 || abs(p.y) < 1e-6 || abs(p.x - 1920) < 1e-6 || abs(p.y - 1080) < 1e-6
        }
        #expect(corners.allSatisfy(inside), "\(corners)")
        #expect(corners.contains(where: onEdge), "tight: \(corners)")
        let scale: Double = 1 / (cm.a * cm.a + cm.b * cm.b).squareRoot()
        let radians: Double = 10 * Double.pi / 180
        let expected: Double = cos(radians) + 16.0 / 9.0 * sin(radians)
        #expect(abs(scale - expected) < 1e-6, "zoom \(scale)")
        // Not invertible: refused.
        t.transform = Track(constant: [1, 2, 2, 4, 0, 0])
        #expect(throws: CropZoomError.self) { try GeometryPlan.make(t, source: hd) }
    }

    @Test func sizeWithAutoSideKeepsAspectRoundedEven() throws {
        var r = GeometryRequest()
        r.size = .init(width: 1280, height: -2)
        #expect(try GeometryPlan.make(r, source: hd).output == (1280, 720))
        r.size = .init(width: -2, height: 361)
        // 361 rounds to an even 362 for 4:2:0; width follows the aspect: 641.8 -> 642.
        let p = try GeometryPlan.make(r, source: hd)
        #expect(p.output.height % 2 == 0 && p.output.width % 2 == 0)
        #expect(abs(Double(p.output.width) / Double(p.output.height) - 16.0 / 9) < 0.01)
    }

    /// A picture whose shape makes an output over 16384 a side (a damaged WebM header read as 432x65536; found by the
    /// fuzz harness, Tests/fuzz/regressions/case-bf3ede07c1.json) is the input's failure (exit 3), naming its
    /// pictures, not a usage error: no --size the settings take gives such a side.
    @Test func outputOverTheLimitFromThePictureIsTheInputs() throws {
        var r = GeometryRequest()
        r.size = .init(width: 320, height: -2)
        let tall = SourcePicture(width: 432, height: 65536, alignX: 2, alignY: 2)
        let error = #expect(throws: CropZoomError.self) { try GeometryPlan.make(r, source: tall) }
        #expect(error?.exitCode == 3)
        #expect(error?.reason.contains("its 432x65536 pictures would make a 320x48546 output") == true)
        r.size = nil
        #expect(throws: CropZoomError.self) { try GeometryPlan.make(r, source: tall) }
        #expect(try GeometryPlan.make(r, source: SourcePicture(width: 432, height: 16384)).output == (432, 16384))
    }

    @Test func oddSizesStayOddWithoutSubsampling() throws {
        let odd = SourcePicture(width: 321, height: 241, alignX: 1, alignY: 1)
        let p = try GeometryPlan.make(GeometryRequest(), source: odd, outputAlign: (1, 1))
        #expect(p.output == (321, 241))
        let q = try GeometryPlan.make(GeometryRequest(), source: odd, outputAlign: (2, 2))
        #expect(q.output.width % 2 == 0 && q.output.height % 2 == 0)
    }

    @Test func displayRotationMakesOutputUpright() throws {
        // A phone's 1920x1080 coded picture shown rotated 90° clockwise is 1080x1920 upright.
        let phone = SourcePicture(width: 1920, height: 1080, display: .rotate90, alignX: 2, alignY: 2)
        var r = GeometryRequest()
        r.crop = .init(width: 540, height: 960, x: 0, y: 0)  // top-left of the upright picture
        let p = try GeometryPlan.make(r, source: phone)
        #expect(p.output == (540, 960))
        #expect(p.orientation == .rotate90)
        // The top-left of the upright picture is the bottom-left of the coded one.
        #expect(p.source == PixelRect(x: 0, y: 540, width: 960, height: 540))
        #expect(p.scaled == (960, 540))
        // --orientation ignore works on coded pixels.
        r.orientation = .ignore
        r.crop = nil
        let q = try GeometryPlan.make(r, source: phone)
        #expect(q.output == (1920, 1080) && q.orientation == .identity && q.keepsInputAspectAndMatrix)
    }

    @Test func userRotationComposesWithDisplayRotation() throws {
        let phone = SourcePicture(width: 1920, height: 1080, display: .rotate90, alignX: 2, alignY: 2)
        var r = GeometryRequest()
        r.rotate = 270
        let p = try GeometryPlan.make(r, source: phone)
        #expect(p.orientation == .identity)
        #expect(p.output == (1920, 1080))
        r.rotate = 90
        r.flip = .horizontal
        let q = try GeometryPlan.make(r, source: phone)
        #expect(q.orientation == Orientation.rotate180.then(.flipHorizontal))
        #expect(q.orientation == .flipVertical)
    }

    @Test func anamorphicInputBecomesSquarePixels() throws {
        let sar2 = SourcePicture(width: 640, height: 360, sampleAspect: 2, alignX: 2, alignY: 2)
        let p = try GeometryPlan.make(GeometryRequest(), source: sar2)
        #expect(p.output == (1280, 360))
        let rotated = SourcePicture(width: 640, height: 360, sampleAspect: 2, display: .rotate90, alignX: 2, alignY: 2)
        #expect(try GeometryPlan.make(GeometryRequest(), source: rotated).output == (360, 1280))
    }

    @Test func outputToInputMapsCornersOntoTheWindow() throws {
        var r = GeometryRequest()
        r.crop = .init(width: 640, height: 360, x: 100, y: 50)
        r.size = .init(width: 1280, height: 720)
        let p = try GeometryPlan.make(r, source: hd)
        let m = p.outputToInput
        #expect(m.apply(0, 0) == (100, 50))
        #expect(m.apply(1280, 720) == (740, 410))

        let phone = SourcePicture(width: 1920, height: 1080, display: .rotate90, alignX: 2, alignY: 2)
        let q = try GeometryPlan.make(GeometryRequest(), source: phone)
        // Output top-left (upright) is coded bottom-left.
        let tl = q.outputToInput.apply(0, 0)
        #expect(abs(tl.x - 0) < 1e-9 && abs(tl.y - 1080) < 1e-9)
        let tr = q.outputToInput.apply(1080, 0)
        #expect(abs(tr.x - 0) < 1e-9 && abs(tr.y - 0) < 1e-9)
    }
}

@Suite("Errors")
struct ErrorTests {
    @Test func exitCodesFollowTheREADME() {
        #expect(CropZoomError(.usage, reason: "x").exitCode == 2)
        #expect(CropZoomError(.inputUnreadable, reason: "x").exitCode == 3)
        #expect(CropZoomError(.processing, reason: "x").exitCode == 1)
        #expect(CropZoomError(.interrupted(signal: 2), reason: "x").exitCode == 130)
        #expect(CropZoomError(.interrupted(signal: 15), reason: "x").exitCode == 143)
    }

    @Test func descriptionIsOneLineWithPathFirst() {
        let e = CropZoomError(.processing, what: "writing", path: "/tmp/out.mp4", reason: "No space left on device")
        #expect(e.description == "/tmp/out.mp4: writing: No space left on device")
        #expect(!e.description.contains("\n"))
    }
}
