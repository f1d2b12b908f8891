import CFFmpeg
import CPlaneKernels
import Foundation
import Testing

@testable import CropZoomFFmpeg
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

    /// SMPTE ST 2084's EOTF: signal → cd/m².
    static func pqEOTF(_ e: Double) -> Double {
        let (m1, m2) = (2610.0 / 16384, 2523.0 / 4096 * 128)
        let (c1, c2, c3) = (3424.0 / 4096, 2413.0 / 4096 * 32, 2392.0 / 4096 * 32)
        let p = pow(e, 1 / m2)
        return 10000 * pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    }

    /// ARIB STD-B67's inverse OETF: signal → scene light 0…1.
    static func hlgScene(_ e: Double) -> Double {
        let a = 0.17883277
        let (b, c) = (1 - 4 * a, 0.5 - a * log(4 * a))
        return e <= 0.5 ? e * e / 3 : (exp((e - c) / a) + b) / 12
    }

    /// The mapping of one 16-bit limited-range Y'CbCr sample worked in Double, step by step as the kernel's comment
    /// describes it: BT.709 limited-range 10-bit codes (Y, Cb, Cr), unrounded.
    static func exact(_ yuv: (Int, Int, Int), _ m: ToneMapping) -> (Double, Double, Double) {
        let (kr, kb) = (Double(m.sourceMatrix.kr), Double(m.sourceMatrix.kb))
        let kg = 1 - kr - kb
        let y = (Double(yuv.0) - 4096) / 56064
        let (u, v) = ((Double(yuv.1) - 32768) / 57344, (Double(yuv.2) - 32768) / 57344)
        let signals = [
            y + 2 * (1 - kr) * v, y - 2 * (1 - kb) * kb / kg * u - 2 * (1 - kr) * kr / kg * v, y + 2 * (1 - kb) * u,
        ]
        var light = signals.map { s -> Double in
            let e = min(max(s, 0), 1)
            return m.hlg ? hlgScene(e) : pqEOTF(e) / ToneMapping.white
        }
        if m.hlg {  // BT.2100's OOTF at a 1000 cd/m² display
            let ys = kr * light[0] + kg * light[1] + kb * light[2]
            let gain = ys > 0 ? 1000 / ToneMapping.white * pow(ys, 0.2) : 0
            light = light.map { $0 * gain }
        }
        let g = m.gamut.map(Double.init)
        var rgb = (0..<3).map { i in g[3 * i] * light[0] + g[3 * i + 1] * light[1] + g[3 * i + 2] * light[2] }
        let sig = rgb.max()!
        if sig > 0 {
            let gain = ToneMapping.curveValue(m.curve, x: sig, peak: m.sourcePeak / ToneMapping.white) / sig
            rgb = rgb.map { $0 * gain }
        }
        let l = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
        let lo = rgb.min()!
        if l <= 0 {
            rgb = [0, 0, 0]
        } else if lo < 0 {
            rgb = rgb.map { l + ($0 - l) * l / (l - lo) }
        }
        let o = rgb.map { bt1886(max($0, 0)) }
        let oy = 0.2126 * o[0] + 0.7152 * o[1] + 0.0722 * o[2]
        return (64 + 876 * oy, 512 + 896 * (o[2] - oy) / 1.8556, 512 + 896 * (o[0] - oy) / 1.5748)
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

    /// A 77×9 picture (odd sizes: whole vectors of 16 and 8 and a few pixels left over, an odd last row) of every
    /// kind of sample: black, super-black and super-white, near-black noise, smooth ramps, the peak, saturated
    /// BT.2020 colours far outside BT.709, extreme chroma.
    static func testPicture() throws -> Frame {
        let (w, h) = (77, 9)
        let src = try Frame(width: w, height: h, format: ToneMapper.intermediateFormat)
        var seed: UInt32 = 12345
        func next() -> UInt32 {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return seed >> 8
        }
        for row in 0..<h {
            let rows = (0..<3).map { plane in
                UnsafeMutableRawPointer(
                    src.pointer.pointee.dataPlane(plane)! + row * Int(src.pointer.pointee.linesizePlane(plane))
                ).assumingMemoryBound(to: UInt16.self)
            }
            for x in 0..<w {
                var (y, u, v): (Int, Int, Int)
                switch (x + row) % 7 {
                case 0: (y, u, v) = (4096, 32768, 32768)  // black
                case 1: (y, u, v) = (4096 + Int(next() % 900), 32768 + Int(next() % 600) - 300, 32768)  // near black
                case 2: (y, u, v) = (Int(next() % 65536), Int(next() % 65536), Int(next() % 65536))  // anything
                case 3: (y, u, v) = (60160, 32768, 32768)  // the peak
                case 4: (y, u, v) = (20000 + x * 400, 32768 + row * 2000, 32768 - x * 150)  // a ramp
                case 5: (y, u, v) = (30000, 4096, 61440)  // a saturated red-magenta
                default: (y, u, v) = (Int(next() % 4096), 65535, 0)  // below black, extreme chroma
                }
                rows[0][x] = UInt16(y)
                rows[1][x] = UInt16(clamping: u)
                rows[2][x] = UInt16(clamping: v)
            }
        }
        return src
    }

    @Test(
        "SIMD rows (AVX2, AVX-512) give the plain C picture within one code, every sample, for every output layout",
        arguments: [
            (AV_PIX_FMT_YUV420P, false, true), (AV_PIX_FMT_YUV420P10LE, false, false),
            (AV_PIX_FMT_YUV422P10LE, true, true), (AV_PIX_FMT_YUV444P, true, false),
        ])
    func simdMatchesPlainC(format: AVPixelFormat, fullRange: Bool, cosited: Bool) throws {
        let src = try Self.testPicture()
        let levels = Array(0...ToneMapper.cpuLevel)
        if levels.count < 3 {
            print("note: this CPU runs SIMD level \(levels.last!) (2 = AVX-512): fewer paths compared")
        }
        for (curve, hlg, peak) in [
            (ToneMapping.Curve.bt2390, false, 1000.0), (.hable, true, 1000), (.reinhard, false, 4000),
        ] {
            let mapping = ToneMapping(
                curve: curve, hlg: hlg, sourcePeak: peak, matrix: AVCOL_SPC_BT2020_NCL, primaries: AVCOL_PRI_BT2020)
            var outputs: [[Int]] = []
            for level in levels {
                let dst = try Frame(width: src.width, height: src.height, format: format)
                dst.pointer.pointee.chroma_location = cosited ? AVCHROMA_LOC_LEFT : AVCHROMA_LOC_CENTER
                let mapper = try ToneMapper(mapping, width: src.width)
                mapper.setSIMD(level)
                try mapper.map(src, into: dst, fullRange: fullRange)
                outputs.append(Self.samples(dst))
            }
            for (level, out) in outputs.enumerated().dropFirst() {
                let diffs = zip(outputs[0], out).map { abs($0 - $1) }
                let mean = Double(diffs.reduce(0, +)) / Double(diffs.count)
                #expect(
                    diffs.max()! <= 1 && mean < 0.05,
                    "\(curve) hlg \(hlg), level \(level): max \(diffs.max()!), mean \(mean)")
            }
        }
    }

    @Test(
        "every sample, every row kind (plain C, AVX2, AVX-512), within one 10-bit code of the mapping worked in Double"
    )
    func matchesExactMapping() throws {
        let src = try Self.testPicture()
        let inputs = Self.samples(src)
        let n = src.width * src.height
        for (curve, hlg, peak) in [
            (ToneMapping.Curve.bt2390, false, 1000.0), (.hable, true, 1000), (.reinhard, false, 4000),
        ] {
            let mapping = ToneMapping(
                curve: curve, hlg: hlg, sourcePeak: peak, matrix: AVCOL_SPC_BT2020_NCL, primaries: AVCOL_PRI_BT2020)
            let expected = (0..<n).map { Self.exact((inputs[$0], inputs[n + $0], inputs[2 * n + $0]), mapping) }
            for level in 0...ToneMapper.cpuLevel {
                let dst = try Frame(width: src.width, height: src.height, format: AV_PIX_FMT_YUV444P10LE)
                let mapper = try ToneMapper(mapping, width: src.width)
                mapper.setSIMD(level)
                try mapper.map(src, into: dst, fullRange: false)
                let out = Self.samples(dst)
                var (worst, total) = (0.0, 0.0)
                for i in 0..<n {
                    let e = expected[i]
                    for (plane, want) in [e.0, e.1, e.2].enumerated() {
                        let d = abs(Double(out[plane * n + i]) - min(max(want, 0), 1023))
                        worst = max(worst, d)
                        total += d
                    }
                }
                #expect(
                    worst < 1 && total / Double(3 * n) < 0.3,
                    "\(curve) hlg \(hlg) level \(level): worst \(worst), mean \(total / Double(3 * n))")
            }
        }
    }

    /// Every sample of a planar YUV frame, plane after plane.
    static func samples(_ f: Frame) -> [Int] {
        let info = PixelFormatInfo(f.pixelFormat)!
        var out: [Int] = []
        for plane in 0..<3 {
            let w = plane == 0 ? f.width : (f.width + (1 << info.log2ChromaW) - 1) >> info.log2ChromaW
            let h = plane == 0 ? f.height : (f.height + (1 << info.log2ChromaH) - 1) >> info.log2ChromaH
            for row in 0..<h {
                let p = f.pointer.pointee.dataPlane(plane)! + row * Int(f.pointer.pointee.linesizePlane(plane))
                for x in 0..<w {
                    out.append(
                        info.bitDepth > 8
                            ? Int(UnsafeRawPointer(p).load(fromByteOffset: 2 * x, as: UInt16.self)) : Int(p[x]))
                }
            }
        }
        return out
    }
}
