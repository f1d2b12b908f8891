import Testing
import CFFmpeg
@testable import CropZoomKit

/// cropzoom's own resampler on pictures whose exact answer is known.
@Suite("Plane resampler")
struct PlaneResamplerTests {
    static func picture(_ w: Int, _ h: Int) throws -> Frame {
        let f = try Frame(width: w, height: h, format: AV_PIX_FMT_YUV420P)
        for i in 0..<3 {
            let (pw, ph) = i == 0 ? (w, h) : (w / 2, h / 2)
            let base = f.pointer.pointee.dataPlane(i)!, ls = Int(f.pointer.pointee.linesizePlane(i))
            for y in 0..<ph { for x in 0..<pw { base[y * ls + x] = UInt8((x * 7 + y * 13 + i * 50) % 200 + 20) } }
        }
        return f
    }

    static func sample(_ f: Frame, _ plane: Int, _ x: Int, _ y: Int) -> Int {
        Int(f.pointer.pointee.dataPlane(plane)![y * Int(f.pointer.pointee.linesizePlane(plane)) + x])
    }

    static func run(_ filter: TranscodeConfiguration.Scaler, window: Rect, _ input: Frame) throws -> Frame {
        let out = try Frame(width: input.width, height: input.height, format: AV_PIX_FMT_YUV420P)
        let r = try PlaneResampler(.init(srcW: input.width, srcH: input.height, srcFormat: AV_PIX_FMT_YUV420P,
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
            for y in 0..<h { for x in 0..<w { #expect(Self.sample(out, p, x, y) == Self.sample(input, p, x, y), "plane \(p) (\(x), \(y))") } }
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
            let base = f.pointer.pointee.dataPlane(i)!, ls = Int(f.pointer.pointee.linesizePlane(i))
            for y in 0..<ph { for x in 0..<pw {
                state = state &* 1_664_525 &+ 1_013_904_223
                base[y * ls + x] = UInt8(truncatingIfNeeded: state >> 24)   // full 0...255: edges saturate both ways
            } }
        }
        return f
    }

    @Test("zoom in (shuffle form), zoom out (general form, background), 1:1 and a sub-pixel shift give the same bytes",
          arguments: [Rect(x: 301.37, y: 77.2, width: 290.9, height: 163.6),     // zoom 2.2: 4 taps, pshufb
                      Rect(x: -200.5, y: -120.25, width: 1040, height: 585),       // zoom 0.62: 7 taps, pmaddwd
                      Rect(x: 0, y: 0, width: 640, height: 360),
                      Rect(x: 0.3, y: 0.7, width: 640, height: 360)])
    func same(window: Rect) throws {
        let input = try Self.noise(640, 360)
        var outs: [Frame] = []
        for simd in [true, false] {
            let out = try Frame(width: 640, height: 360, format: AV_PIX_FMT_YUV420P)
            let r = try PlaneResampler(.init(srcW: 640, srcH: 360, srcFormat: AV_PIX_FMT_YUV420P,
                                             dstW: 640, dstH: 360, dstFormat: AV_PIX_FMT_YUV420P, filter: .bicubic))
            r.setSIMD(simd)
            try r.scale(input, window: window, into: out, background: [16, 128, 128])
            outs.append(out)
        }
        var differing = 0, varied = Set<UInt8>()
        for p in 0..<3 {
            let (w, h) = p == 0 ? (640, 360) : (320, 180)
            for y in 0..<h { for x in 0..<w {
                let a = PlaneResamplerTests.sample(outs[0], p, x, y), b = PlaneResamplerTests.sample(outs[1], p, x, y)
                if a != b { differing += 1 }
                varied.insert(UInt8(a))
            } }
        }
        #expect(differing == 0)
        #expect(varied.count > 200, "the output should be a real picture, not a flat fill")
    }
}
