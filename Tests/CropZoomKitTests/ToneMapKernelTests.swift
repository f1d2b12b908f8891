import CFFmpeg
import CPlaneKernels
import Foundation
import Testing

@testable import CropZoomKit

/// The tone-mapping kernel (`cz_tonemap_*`) and its set-up (`ToneMapping`): curves, gamut, and pixels whose
/// result is known in closed form.
@Suite("Tone-mapping kernel")
struct ToneMapKernelTests {
    /// SMPTE ST 2084's inverse EOTF: cd/m² → signal.
    static func pq(_ nits: Double) -> Double {
        let (m1, m2) = (2610.0 / 16384, 2523.0 / 4096 * 128)
        let (c1, c2, c3) = (3424.0 / 4096, 2413.0 / 4096 * 32, 2392.0 / 4096 * 32)
        let y = pow(nits / 10000, m1)
        return pow((c1 + c2 * y) / (1 + c3 * y), m2)
    }

    /// BT.1886's EOTF inverted (black at 0): the signal for display light.
    static func bt1886(_ l: Double) -> Double { pow(l, 1 / 2.4) }

    @Test("curves: BT.2390 leaves what is under its knee, reaches 1 at the peak; all rise and stay ≤ 1")
    func curves() {
        let peak = 10.0  // 1000 cd/m² over a 100 cd/m² white
        for curve in [ToneMapping.Curve.bt2390, .hable, .reinhard] {
            var last = -1.0
            for i in 0...400 {
                let x = Double(i) / 400 * peak
                let y = ToneMapping.curveValue(curve, x: x, peak: peak)
                #expect(y >= last - 1e-6 && y <= 1 + 1e-6, "\(curve) at \(x): \(y) after \(last)")
                last = y
            }
            #expect(abs(ToneMapping.curveValue(curve, x: peak, peak: peak) - 1) < 1e-3, "\(curve)")
        }
        // BT.2390 from 1000 to 100 cd/m²: the knee is at PQ 0.386 (about 29 cd/m²); 20 cd/m² passes unchanged.
        #expect(abs(ToneMapping.curveValue(.bt2390, x: 0.2, peak: peak) - 0.2) < 1e-4)
        #expect(ToneMapping.curveValue(.bt2390, x: 0.5, peak: peak) < 0.5)
        // A source no brighter than the white is only clipped.
        #expect(abs(ToneMapping.curveValue(.hable, x: 0.7, peak: 1) - 0.7) < 1e-6)
    }

    @Test("gamut: BT.2020 → BT.709 as ITU-R BT.2087 gives it; BT.709 → BT.709 is the identity")
    func gamut() {
        let m = ToneMapping.gamutMatrix(from: AVCOL_PRI_BT2020)
        let bt2087: [Float] = [1.6605, -0.5876, -0.0728, -0.1246, 1.1329, -0.0083, -0.0182, -0.1006, 1.1187]
        for (a, b) in zip(m, bt2087) { #expect(abs(a - b) < 2e-4, "\(m)") }
        let id = ToneMapping.gamutMatrix(from: AVCOL_PRI_BT709)
        for (i, v) in id.enumerated() { #expect(abs(v - (i % 4 == 0 ? 1 : 0)) < 1e-5, "\(id)") }
    }

    /// One picture of `width`×2 in 4:4:4 16-bit limited range filled with (y, cb, cr) as 0…1 signals, mapped to
    /// yuv420p; the output's first luma and chroma samples.
    static func map(
        _ signal: (y: Double, cb: Double, cr: Double), curve: ToneMapping.Curve = .bt2390, hlg: Bool = false,
        peak: Double = 1000
    ) throws -> (y: UInt8, u: UInt8, v: UInt8) {
        let (w, h) = (4, 2)
        let src = try Frame(width: w, height: h, format: ToneMapper.intermediateFormat)
        let dst = try Frame(width: w, height: h, format: AV_PIX_FMT_YUV420P)
        let y = UInt16(4096 + signal.y * 56064)
        let cb = UInt16(32768 + signal.cb * 57344)
        let cr = UInt16(32768 + signal.cr * 57344)
        for (plane, value) in [(0, y), (1, cb), (2, cr)] {
            let base = src.pointer.pointee.dataPlane(plane)!
            let stride = Int(src.pointer.pointee.linesizePlane(plane))
            for row in 0..<h {
                let p = UnsafeMutableRawPointer(base + row * stride).assumingMemoryBound(to: UInt16.self)
                for x in 0..<w { p[x] = value }
            }
        }
        let mapping = ToneMapping(
            curve: curve, hlg: hlg, sourcePeak: peak, matrix: AVCOL_SPC_BT2020_NCL, primaries: AVCOL_PRI_BT2020)
        let mapper = try ToneMapper(mapping, width: w)
        try mapper.map(src, into: dst, fullRange: false)
        let d = dst.pointer.pointee
        return (d.data.0![0], d.data.1![0], d.data.2![0])
    }

    @Test(
        "pixels: PQ black → 16; a 20 cd/m² grey → BT.1886's code for 0.2; the source's peak white → 235; grey stays grey"
    )
    func pixels() throws {
        let black = try Self.map((0, 0, 0))
        #expect(black == (16, 128, 128))
        let grey = try Self.map((Self.pq(20), 0, 0))
        let expected = 16 + 219 * Self.bt1886(0.2)
        #expect(abs(Double(grey.y) - expected) <= 1, "\(grey) for \(expected)")
        #expect(grey.u == 128 && grey.v == 128)
        let white = try Self.map((Self.pq(1000), 0, 0))
        #expect(white == (235, 128, 128), "\(white)")
        // Above the stated peak: still white, never wrapped.
        #expect(try Self.map((Self.pq(4000), 0, 0)) == (235, 128, 128))
        // HLG: its reference white (signal 0.75, 203 cd/m² on a 1000 cd/m² display) comes out near SDR white.
        let hlgWhite = try Self.map((0.75, 0, 0), hlg: true)
        #expect(hlgWhite.y > 200 && hlgWhite.y < 235 && hlgWhite.u == 128, "\(hlgWhite)")
    }

    @Test("a saturated BT.2020 red outside BT.709 stays red (hue kept, no negative light): R' dominant, G' at 0")
    func outOfGamut() throws {
        // Pure BT.2020 red at 100 cd/m²: R'=pq(100), G'=B'=0, in BT.2020's Y'CbCr.
        let r = Self.pq(100)
        let (kr, kb) = (0.2627, 0.0593)
        let y = kr * r
        let cb = (0 - y) / (2 * (1 - kb))
        let cr = (r - y) / (2 * (1 - kr))
        let out = try Self.map((y, cb, cr), curve: .hable)
        // Back to BT.709 R'G'B': red stays the brightest by far; green, pulled up from below 0, is black.
        let (yy, u, v) = ((Double(out.y) - 16) / 219, (Double(out.u) - 128) / 224, (Double(out.v) - 128) / 224)
        let red = yy + 1.5748 * v
        let blue = yy + 1.8556 * u
        let green = (yy - 0.2126 * red - 0.0722 * blue) / 0.7152
        #expect(red > 0.5 && red > 2.5 * blue && abs(green) < 0.03, "\(out): \(red), \(green), \(blue)")
    }
}
