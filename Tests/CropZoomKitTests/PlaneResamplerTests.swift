import CFFmpeg
import CPlaneKernels
import Foundation
import Testing

@testable import CropZoomFFmpeg
@testable import CropZoomKit

/// cropzoom's own resampler on pictures whose exact answer is known.
@Suite("Plane resampler")
struct PlaneResamplerTests {
    static func picture(_ w: Int, _ h: Int) throws -> Frame {
        let f = try Frame(width: w, height: h, format: AV_PIX_FMT_YUV420P)
        for i in 0..<3 {
            let (pw, ph) = i == 0 ? (w, h) : (w / 2, h / 2)
            let base = f.pointer.pointee.dataPlane(i)!
            let ls = Int(f.pointer.pointee.linesizePlane(i))
            for y in 0..<ph { for x in 0..<pw { base[y * ls + x] = UInt8((x * 7 + y * 13 + i * 50) % 200 + 20) } }
        }
        return f
    }

    static func sample(_ f: Frame, _ plane: Int, _ x: Int, _ y: Int) -> Int {
        Int(f.pointer.pointee.dataPlane(plane)![y * Int(f.pointer.pointee.linesizePlane(plane)) + x])
    }

    static func run(_ filter: TranscodeConfiguration.Scaler, window: Rect, _ input: Frame) throws -> Frame {
        let out = try Frame(width: input.width, height: input.height, format: AV_PIX_FMT_YUV420P)
        let r = try PlaneResampler(
            .init(
                srcW: input.width, srcH: input.height, srcFormat: AV_PIX_FMT_YUV420P,
                dstW: out.width, dstH: out.height, dstFormat: AV_PIX_FMT_YUV420P, filter: filter))
        try r.scale(input, window: window, into: out)
        return out
    }

    @Test("the whole picture at its own size is the picture, every plane")
    func identity() throws {
        let input = try Self.picture(64, 48)
        let out = try Self.run(.bicubic, window: Rect(x: 0, y: 0, width: 64, height: 48), input)
        for p in 0..<3 {
            let (w, h) = p == 0 ? (64, 48) : (32, 24)
            for y in 0..<h {
                for x in 0..<w {
                    #expect(Self.sample(out, p, x, y) == Self.sample(input, p, x, y), "plane \(p) (\(x), \(y))")
                }
            }
        }
    }

    @Test("a window 2 px to the right reads the picture 2 px over (1 chroma sample)")
    func wholeShift() throws {
        let input = try Self.picture(64, 48)
        let out = try Self.run(.bicubic, window: Rect(x: 2, y: 0, width: 64, height: 48), input)
        for y in 0..<48 { for x in 0..<60 { #expect(Self.sample(out, 0, x, y) == Self.sample(input, 0, x + 2, y)) } }
        for y in 0..<24 { for x in 0..<30 { #expect(Self.sample(out, 1, x, y) == Self.sample(input, 1, x + 1, y)) } }
    }

    @Test("half a pixel with the bilinear filter: the mean of two neighbours")
    func halfPixel() throws {
        let input = try Self.picture(64, 48)
        let out = try Self.run(.bilinear, window: Rect(x: 0.5, y: 0, width: 64, height: 48), input)
        for y in 0..<48 {
            for x in 0..<62 {
                let want = Double(Self.sample(input, 0, x, y) + Self.sample(input, 0, x + 1, y)) / 2
                #expect(abs(Double(Self.sample(out, 0, x, y)) - want) <= 0.5, "(\(x), \(y))")
            }
        }
    }
}

/// The 8-bit fixed-point kernels: the AVX2 forms against the plain C forms, byte for byte.
@Suite("Plane resampler, SIMD and plain C")
struct PlaneResamplerSIMDTests {
    static func noise(_ w: Int, _ h: Int) throws -> Frame {
        let f = try Frame(width: w, height: h, format: AV_PIX_FMT_YUV420P)
        var state: UInt32 = 12345
        for i in 0..<3 {
            let (pw, ph) = i == 0 ? (w, h) : (w / 2, h / 2)
            let base = f.pointer.pointee.dataPlane(i)!
            let ls = Int(f.pointer.pointee.linesizePlane(i))
            for y in 0..<ph {
                for x in 0..<pw {
                    state = state &* 1_664_525 &+ 1_013_904_223
                    base[y * ls + x] = UInt8(truncatingIfNeeded: state >> 24)  // full 0...255: edges saturate both ways
                }
            }
        }
        return f
    }

    @Test(
        "zoom in (shuffle form), zoom out (general form, background), 1:1 and a sub-pixel shift give the same bytes",
        arguments: [
            Rect(x: 301.37, y: 77.2, width: 290.9, height: 163.6),  // zoom 2.2: 4 taps, pshufb
            Rect(x: -200.5, y: -120.25, width: 1040, height: 585),  // zoom 0.62: 7 taps, pmaddwd
            Rect(x: 0, y: 0, width: 640, height: 360),
            Rect(x: 0.3, y: 0.7, width: 640, height: 360),
        ])
    func same(window: Rect) throws {
        let input = try Self.noise(640, 360)
        var outs: [Frame] = []
        for simd in [true, false] {
            let out = try Frame(width: 640, height: 360, format: AV_PIX_FMT_YUV420P)
            let r = try PlaneResampler(
                .init(
                    srcW: 640, srcH: 360, srcFormat: AV_PIX_FMT_YUV420P,
                    dstW: 640, dstH: 360, dstFormat: AV_PIX_FMT_YUV420P, filter: .bicubic))
            r.setSIMD(simd)
            try r.scale(input, window: window, into: out, background: [16, 128, 128])
            outs.append(out)
        }
        var differing = 0
        var varied = Set<UInt8>()
        for p in 0..<3 {
            let (w, h) = p == 0 ? (640, 360) : (320, 180)
            for y in 0..<h {
                for x in 0..<w {
                    let a = PlaneResamplerTests.sample(outs[0], p, x, y)
                    let b = PlaneResamplerTests.sample(outs[1], p, x, y)
                    if a != b { differing += 1 }
                    varied.insert(UInt8(a))
                }
            }
        }
        #expect(differing == 0)
        #expect(varied.count > 200, "the output should be a real picture, not a flat fill")
    }
}

/// The 2-D warp's AVX2 form against its plain C form, and its geometry on a known picture.
@Suite("2-D warp")
struct WarpKernelTests {
    static func run(_ m: [Double], simd: Bool, src: [UInt8], w: Int, h: Int, background: Int32 = 16) -> [UInt8] {
        let warp = cz_warp_new(CZ_ZIMG_BICUBIC, 0, 0.6)!
        defer { cz_warp_free(warp) }
        cz_warp_set_simd(warp, simd ? 1 : 0)
        var out = [UInt8](repeating: 7, count: w * h)
        src.withUnsafeBufferPointer { s in
            out.withUnsafeMutableBufferPointer { d in
                _ = cz_warp_plane(
                    warp, s.baseAddress, w, Int32(w), Int32(h), 1, m, d.baseAddress, w, Int32(w), Int32(h), 255,
                    background)
            }
        }
        return out
    }

    @Test(
        "a rotation with a zoom, over noise: AVX2 and plain C give the same bytes; the border and background too",
        // The shuffle form; the gathers (steep, shrinking).
        arguments: [(11.0, 0.93), (-3.0, 1.0), (40.0, 0.93), (7.0, 5.0)])
    func sameBytes(angle: Double, zoom: Double) {
        let (w, h) = (333, 201)
        var state: UInt32 = 99
        let src = (0..<(w * h)).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        let t: Double = angle * Double.pi / 180
        let z: Double = zoom
        let cx: Double = Double(w) / 2 - 0.5
        let cy: Double = Double(h) / 2 - 0.5
        let (co, si): (Double, Double) = (cos(t) * z, sin(t) * z)
        let tx: Double = cx - (co * cx + si * cy)
        let ty: Double = cy - (co * cy - si * cx)
        let m: [Double] = [co, -si, si, co, tx, ty]
        let a = Self.run(m, simd: true, src: src, w: w, h: h)
        let b = Self.run(m, simd: false, src: src, w: w, h: h)
        #expect(a == b)
        #expect(a.filter { $0 == 16 }.count > 200, "corners show the background")
        #expect(Set(a).count > 200, "a real picture")
    }

    @Test("whole-pixel moves are exact: identity, a shift by (3, -2), a half turn")
    func exactMoves() {
        let (w, h) = (64, 48)
        let src: [UInt8] = (0..<(w * h)).map { (i: Int) -> UInt8 in UInt8((i * 37 + i / 64 * 11) % 251) }
        func at(_ p: [UInt8], _ x: Int, _ y: Int) -> UInt8 { p[y * w + x] }
        for simd in [true, false] {
            #expect(Self.run([1, 0, 0, 1, 0, 0], simd: simd, src: src, w: w, h: h) == src)
            let shifted = Self.run([1, 0, 0, 1, 3, -2], simd: simd, src: src, w: w, h: h)
            for y in 2..<h { for x in 0..<(w - 3) { #expect(at(shifted, x, y) == at(src, x + 3, y - 2)) } }
            let turned = Self.run([-1, 0, 0, -1, Double(w - 1), Double(h - 1)], simd: simd, src: src, w: w, h: h)
            for y in 0..<h { for x in 0..<w { #expect(at(turned, x, y) == at(src, w - 1 - x, h - 1 - y)) } }
        }
    }
}
