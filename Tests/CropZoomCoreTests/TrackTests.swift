import Foundation
import Testing

@testable import CropZoomCore

@Suite("Keyframe tracks")
struct TrackTests {
    @Test func parsing() throws {
        let z = try Track.parse("0s:1.0, 4s:1.65, 6s:1.65, 8s:1.2", components: 1, setting: .zoom)
        #expect(
            z.keys.map(\.time) == [0, 4, 6, 8] && z.keys.map(\.value) == [[1.0], [1.65], [1.65], [1.2]] && z.isAnimated)
        let c = try Track.parse("0s:0.5,0.5, 4s:0.62,0.4", components: 2, setting: .center)
        #expect(c.keys.map(\.value) == [[0.5, 0.5], [0.62, 0.4]] && c.keys.map(\.time) == [0, 4])
        let compact = try Track.parse("0.5s:0.5,0.5,2.25s:0.6,0.4", components: 2, setting: .center)
        #expect(compact.keys.map(\.time) == [0.5, 2.25])
        #expect(try Track.parse("1.65", components: 1, setting: .zoom) == Track(constant: [1.65]))
        #expect(!(try Track.parse("0.5,0.5", components: 2, setting: .center)).isAnimated)
        for (bad, n) in [
            ("0s:1, 4s", 1), ("0s:1 4s:2", 1), ("4s:1, 2s:2", 1), ("0s:a", 1), ("0s:0.5", 2), ("x", 1), ("1,2,3", 2),
            ("junk 0s:1", 1),
        ] {
            #expect(throws: CropZoomError.self, "\(bad)") { try Track.parse(bad, components: n, setting: .zoom) }
        }
    }

    @Test("values with another separator and a choice of counts (--crop's W:H[:X:Y])")
    func cropForm() throws {
        let keyed = try Track.parse(
            "0s:1920:1080:0:0, 4s:960:540:480:270", counts: [2, 4], separator: ":", setting: .crop)
        #expect(
            keyed.keys.map(\.time) == [0, 4] && keyed.keys.map(\.value) == [[1920, 1080, 0, 0], [960, 540, 480, 270]])
        let centred = try Track.parse("0s:1280:720,2.5s:640:360", counts: [2, 4], separator: ":", setting: .crop)
        #expect(centred.keys.map(\.time) == [0, 2.5] && centred.keys.map(\.value) == [[1280, 720], [640, 360]])
        #expect(
            try Track.parse("1280:720:10:20", counts: [2, 4], separator: ":", setting: .crop)
                == Track(constant: [1280, 720, 10, 20]))
        for bad in [
            "1280:720:10", "0s:1280:720, 4s:640:360:0:0", "4s:1280:720, 2s:640:360", "0s:1280,720", "1280", "a:b",
        ] {
            #expect(throws: CropZoomError.self, "\(bad)") {
                try Track.parse(bad, counts: [2, 4], separator: ":", setting: .crop)
            }
        }
        let mixed = #expect(throws: CropZoomError.self) {
            try Track.parse("0s:1280:720, 4s:640:360:0:0", counts: [2, 4], separator: ":", setting: .crop)
        }
        #expect(
            mixed?.description == "crop 0s:1280:720, 4s:640:360:0:0: every keyframe needs as many numbers as the first")
    }

    @Test("linear: straight lines, held before the first and after the last key")
    func linear() throws {
        let z = try Track.parse("1s:1, 3s:2, 4s:2", components: 1, setting: .zoom)
        #expect(
            z.value(at: 0) == [1] && z.value(at: 1) == [1] && z.value(at: 2) == [1.5] && z.value(at: 3.5) == [2]
                && z.value(at: 9) == [2])
    }

    @Test("smooth: passes through the keys, C1 (no jump in speed), no overshoot")
    func smooth() throws {
        var z = try Track.parse("0s:1, 2s:2, 3s:2.2, 5s:1.2", components: 1, setting: .zoom)
        z.ease = .smooth
        for k in z.keys { #expect(abs(z.value(at: k.time)[0] - k.value[0]) < 1e-12) }
        // Speed from the left and from the right of each inner key agree.
        for t in [2.0, 3.0] {
            let h = 1e-6
            let left = (z.value(at: t)[0] - z.value(at: t - h)[0]) / h
            let right = (z.value(at: t + h)[0] - z.value(at: t)[0]) / h
            #expect(abs(left - right) < 1e-4, "speed jumps at \(t): \(left) vs \(right)")
        }
        // Within each segment the value stays between its keys (monotone).
        var t = 0.0
        while t <= 5 {
            let v = z.value(at: t)[0]
            #expect(v >= 1 - 1e-12 && v <= 2.2 + 1e-12)
            t += 0.01
        }
        // Linear has a speed jump at 2 s: the smooth test above can fail.
        z.ease = .linear
        let h = 1e-6
        #expect(
            abs((z.value(at: 2)[0] - z.value(at: 2 - h)[0]) / h - (z.value(at: 2 + h)[0] - z.value(at: 2)[0]) / h) > 0.1
        )
    }
}
