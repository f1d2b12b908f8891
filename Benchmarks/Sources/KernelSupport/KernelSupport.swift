// Shared by the ScalingKernels benchmarks and KernelQuality: the kernels compared, the crop+scale
// cases, the synthetic source picture and its exact float reference.
import CKernels
import Foundation

// MARK: - Kernels

/// One kernel configuration: a backend and its filter.
public struct KernelSpec: Sendable {
    /// Short id, used in benchmark names ("swscale-bicubic").
    public let id: String
    /// What it is, for tables ("SWS_BICUBIC (B=0, C=0.6)").
    public let detail: String
    let spec: ck_kernel_spec

    init(
        _ id: String, _ detail: String, _ backend: ck_backend, option: Int32,
        a: Double = .nan, b: Double = .nan, wideSIMD: Bool = false
    ) {
        self.id = id
        self.detail = detail
        spec = ck_kernel_spec(backend: backend, option: option, param_a: a, param_b: b, wide_simd: wideSIMD ? 1 : 0)
    }

    public var isZimg: Bool { spec.backend == CK_BACKEND_ZIMG }

    private static func sws(_ names: String...) -> Int32 {
        names.reduce(0) { $0 | ck_sws_flag($1) }
    }

    // zimg_resample_filter_e and libyuv's FilterMode values (see zimg.h, libyuv/scale.h).
    private static let zimgBilinear: Int32 = 1, zimgBicubic: Int32 = 2, zimgLanczos: Int32 = 5
    private static let yuvBilinear: Int32 = 2, yuvBox: Int32 = 3

    /// Every kernel compared. swscale's SWS_BICUBIC is the cubic with B=0, C=0.6 (its `param`
    /// defaults); zimg's default bicubic is Mitchell-Netravali B=C=1/3, so zimg is also run with
    /// swscale's B/C for a like-for-like comparison. zimg runs with ZIMG_CPU_AUTO (AVX2 here) unless
    /// the id says avx512 (ZIMG_CPU_AUTO_64B). libyuv has no bicubic filter; its kFilterBox
    /// falls back to bilinear unless a side shrinks by 2x or more, so both rows match here.
    public static let all: [KernelSpec] = [
        KernelSpec("swscale-bicubic", "SWS_BICUBIC (B=0, C=0.6)", CK_BACKEND_SWSCALE, option: sws("bicubic")),
        KernelSpec(
            "swscale-bicubic-accurate", "SWS_BICUBIC + SWS_ACCURATE_RND", CK_BACKEND_SWSCALE,
            option: sws("bicubic", "accurate_rnd")),
        KernelSpec(
            "swscale-bicubic-fullchr-accurate",
            "SWS_BICUBIC + SWS_FULL_CHR_H_INT + SWS_ACCURATE_RND (cropzoom's flags before the threaded engine)",
            CK_BACKEND_SWSCALE, option: sws("bicubic", "full_chroma_int", "accurate_rnd")),
        KernelSpec("swscale-bilinear", "SWS_BILINEAR", CK_BACKEND_SWSCALE, option: sws("bilinear")),
        KernelSpec("swscale-fast-bilinear", "SWS_FAST_BILINEAR", CK_BACKEND_SWSCALE, option: sws("fast_bilinear")),
        KernelSpec("swscale-lanczos", "SWS_LANCZOS (3 taps)", CK_BACKEND_SWSCALE, option: sws("lanczos")),
        KernelSpec("swscale-area", "SWS_AREA", CK_BACKEND_SWSCALE, option: sws("area")),
        KernelSpec("zimg-bicubic", "ZIMG_RESIZE_BICUBIC (B=C=1/3, default)", CK_BACKEND_ZIMG, option: zimgBicubic),
        KernelSpec(
            "zimg-bicubic-b0c06", "ZIMG_RESIZE_BICUBIC (B=0, C=0.6, as swscale)", CK_BACKEND_ZIMG,
            option: zimgBicubic, a: 0, b: 0.6),
        KernelSpec(
            "zimg-bicubic-b0c06-avx512", "ZIMG_RESIZE_BICUBIC (B=0, C=0.6), ZIMG_CPU_AUTO_64B (AVX-512)",
            CK_BACKEND_ZIMG, option: zimgBicubic, a: 0, b: 0.6, wideSIMD: true),
        KernelSpec(
            "zimg-bicubic-avx512", "ZIMG_RESIZE_BICUBIC (B=C=1/3), ZIMG_CPU_AUTO_64B (AVX-512)", CK_BACKEND_ZIMG,
            option: zimgBicubic, wideSIMD: true),
        KernelSpec("zimg-bilinear", "ZIMG_RESIZE_BILINEAR", CK_BACKEND_ZIMG, option: zimgBilinear),
        KernelSpec("zimg-lanczos", "ZIMG_RESIZE_LANCZOS (3 taps)", CK_BACKEND_ZIMG, option: zimgLanczos, a: 3),
        KernelSpec(
            "zimg-lanczos-avx512", "ZIMG_RESIZE_LANCZOS (3 taps), ZIMG_CPU_AUTO_64B (AVX-512)", CK_BACKEND_ZIMG,
            option: zimgLanczos, a: 3, wideSIMD: true),
        KernelSpec("libyuv-bilinear", "I420Scale kFilterBilinear", CK_BACKEND_LIBYUV, option: yuvBilinear),
        KernelSpec("libyuv-box", "I420Scale kFilterBox", CK_BACKEND_LIBYUV, option: yuvBox),
    ]

    public static func named(_ id: String) -> KernelSpec? { all.first { $0.id == id } }
}

func cString(_ chars: [CChar]) -> String {
    String(decoding: chars.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Library versions, as linked.
public func kernelLibraryVersions() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    ck_versions(&buffer, buffer.count)
    return cString(buffer)
}

// MARK: - Pictures and cases

/// A yuv420p 8-bit picture with aligned planes (`ck_image`).
public final class Picture: @unchecked Sendable {
    // @unchecked: a picture is written by one thread at a time (setup, then one benchmark).
    public var image = ck_image()
    public var width: Int { Int(image.width) }
    public var height: Int { Int(image.height) }

    public init(width: Int, height: Int) {
        guard ck_image_alloc(&image, Int32(width), Int32(height)) == 0 else { fatalError("out of memory") }
    }
    deinit { ck_image_free(&image) }

    /// Plane `p`'s size (chroma: half, rounded up).
    public func planeSize(_ p: Int) -> (width: Int, height: Int) {
        p == 0 ? (width, height) : ((width + 1) / 2, (height + 1) / 2)
    }
    public func row(_ p: Int, _ y: Int) -> UnsafeMutablePointer<UInt8> {
        withUnsafePointer(to: image.data) { tuple in
            tuple.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 3) { $0[p]! }
        } + y * Int(stride(p))
    }
    public func stride(_ p: Int) -> Int32 {
        withUnsafePointer(to: image.stride) { $0.withMemoryRebound(to: Int32.self, capacity: 3) { $0[p] } }
    }
}

/// A crop+scale case: a window of a source picture scaled to the output size.
public struct ScaleCase: Sendable {
    public let id: String
    public let sourceWidth: Int, sourceHeight: Int
    public let left: Double, top: Double, width: Double, height: Double
    public let outputWidth: Int, outputHeight: Int
    public var isFractional: Bool { left != left.rounded() || width != width.rounded() }

    /// `--zoom 1.65` on 1920x1080: cropzoom's GeometryPlan reads 1164x655 at (378, 212).
    public static let zoom1080 = ScaleCase(
        id: "1080p-zoom1.65", sourceWidth: 1920, sourceHeight: 1080,
        left: 378, top: 212, width: 1164, height: 655,
        outputWidth: 1920, outputHeight: 1080)
    /// The same zoom at a sub-pixel position with the exact (unrounded) window size, as an
    /// animated zoom would ask for.
    public static let zoom1080Fractional = ScaleCase(
        id: "1080p-zoom1.65-subpixel", sourceWidth: 1920, sourceHeight: 1080,
        left: 378.37, top: 212.61, width: 1920 / 1.65, height: 1080 / 1.65,
        outputWidth: 1920, outputHeight: 1080)
    /// `--zoom 1.65` on 3840x2160 with `--size 1920x1080`: 2327x1309 at (756, 426), scaled down.
    public static let zoom4K = ScaleCase(
        id: "4k-zoom1.65-to-1080p", sourceWidth: 3840, sourceHeight: 2160,
        left: 756, top: 426, width: 2327, height: 1309,
        outputWidth: 1920, outputHeight: 1080)
    /// The exact centred window of zoom 1.65 on 4K (756.36, 425.45, 2327.27 x 1309.09).
    public static let zoom4KFractional = ScaleCase(
        id: "4k-zoom1.65-to-1080p-subpixel", sourceWidth: 3840, sourceHeight: 2160,
        left: 1920 - 1920 / 1.65, top: 1080 - 1080 / 1.65,
        width: 3840 / 1.65, height: 2160 / 1.65,
        outputWidth: 1920, outputHeight: 1080)
    /// The benchmarked cases.
    public static let all: [ScaleCase] = [zoom1080, zoom1080Fractional, zoom4K, zoom4KFractional]

    /// Diagnostic (KernelQuality only): the integer windows with an even size. An odd luma size
    /// (655, 2327) gives 4:2:0 chroma a whole-sample size (328, 1164) that is half a sample too
    /// large, so whole-pixel kernels scale chroma by a slightly wrong factor; zimg does not.
    public static let zoom1080EvenSize = ScaleCase(
        id: "1080p-zoom1.65-evensize", sourceWidth: 1920, sourceHeight: 1080,
        left: 378, top: 212, width: 1164, height: 656,
        outputWidth: 1920, outputHeight: 1080)
    public static let zoom4KEvenSize = ScaleCase(
        id: "4k-zoom1.65-to-1080p-evensize", sourceWidth: 3840, sourceHeight: 2160,
        left: 756, top: 426, width: 2328, height: 1310,
        outputWidth: 1920, outputHeight: 1080)
    public static let quality: [ScaleCase] = [
        zoom1080, zoom1080EvenSize, zoom1080Fractional,
        zoom4K, zoom4KEvenSize, zoom4KFractional,
    ]

    public var windowDescription: String {
        func f(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(format: "%.2f", v) }
        return
            "\(sourceWidth)x\(sourceHeight) window \(f(width))x\(f(height)) at (\(f(left)), \(f(top))) -> "
            + "\(outputWidth)x\(outputHeight)"
    }
}

/// A kernel built for one case (`ck_kernel`).
public final class Kernel: @unchecked Sendable {
    // @unchecked: one benchmark drives it at a time.
    let pointer: OpaquePointer
    public let spec: KernelSpec
    public let scaleCase: ScaleCase

    public init(_ spec: KernelSpec, _ c: ScaleCase) throws {
        var error = [CChar](repeating: 0, count: 512)
        var s = spec.spec
        guard
            let k = ck_kernel_create(
                &s, Int32(c.sourceWidth), Int32(c.sourceHeight), c.left, c.top, c.width, c.height,
                Int32(c.outputWidth), Int32(c.outputHeight), &error, error.count)
        else {
            throw KernelError(message: "\(spec.id) on \(c.id): \(cString(error))")
        }
        pointer = k
        self.spec = spec
        scaleCase = c
    }
    deinit { ck_kernel_free(pointer) }

    /// One frame. Allocates nothing.
    @inline(__always)
    public func run(_ source: Picture, into destination: Picture) {
        let r = withUnsafePointer(to: &source.image) { s in ck_kernel_run(pointer, s, &destination.image) }
        precondition(r == 0, "\(spec.id) failed")
    }

    /// The window actually read (rounded to whole pixels by swscale and libyuv).
    public var window: (left: Double, top: Double, width: Double, height: Double) {
        var l = 0.0
        var t = 0.0
        var w = 0.0
        var h = 0.0
        ck_kernel_window(pointer, &l, &t, &w, &h)
        return (l, t, w, h)
    }
}

public struct KernelError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

// MARK: - Synthetic source and float reference

/// The test picture: per plane, a sum of 2-D cosines with random frequencies (up to 0.45 cycles
/// per pixel of that plane, in every direction), random phases and amplitudes falling as 1/f
/// (roughly the spectrum of natural pictures, with detail right up to the Nyquist limit).
///
/// Why this as the reference: the picture is *defined* by a continuous, band-limited function,
/// so the ideal result of any crop+scale is that function evaluated (in double precision) at the
/// output pixels' centres -- no resampling filter is involved, so the reference favours no
/// kernel. For a downscale, the ideal result first removes what the output cannot represent: the
/// components above the output's Nyquist frequency are dropped (an ideal low-pass), so a kernel
/// that lets them alias is charged for it. The source itself is the function rounded to 8 bits,
/// which caps every PSNR somewhere near 55-60 dB.
public struct SyntheticPicture: Sendable {
    public struct Component: Sendable { public var fx, fy, amp, phase: Double }
    /// Components per plane (Y, U, V), in cycles per pixel of that plane.
    public let planes: [[Component]]
    public let means: [Double] = [126, 128, 128]
    /// Largest excursion from the mean (luma 26...226, chroma 38...218).
    public let peaks: [Double] = [100, 90, 90]

    public init(componentsPerPlane: Int = 192, seed: UInt64 = 0x5EED_C0DE) {
        var rng = SplitMix64(seed)
        planes = (0..<3).map { _ in
            (0..<componentsPerPlane).map { _ in
                let r = 0.002 + 0.448 * rng.unit()
                let angle = 2 * Double.pi * rng.unit()
                return Component(
                    fx: r * cos(angle), fy: r * sin(angle), amp: 1 / (r + 0.03), phase: 2 * Double.pi * rng.unit())
            }
        }
    }

    /// Evaluates plane `p` at pixel-unit coordinates (u = xs[i], v = ys[j]), keeping only
    /// components with |fx| <= maxFX and |fy| <= maxFY; `scale` normalises the amplitudes.
    func evaluate(
        plane p: Int, xs: [Double], ys: [Double], scale: Double,
        maxFX: Double = .infinity, maxFY: Double = .infinity
    ) -> [Double] {
        let cs = planes[p]
        let fx = cs.map(\.fx)
        let fy = cs.map(\.fy)
        let phase = cs.map(\.phase)
        let amp = cs.map { abs($0.fx) <= maxFX && abs($0.fy) <= maxFY ? $0.amp * scale : 0 }
        var out = [Double](repeating: 0, count: xs.count * ys.count)
        out.withUnsafeMutableBufferPointer { o in
            ck_synth_eval(
                o.baseAddress, xs.count, Int32(xs.count), Int32(ys.count), xs, ys, Int32(cs.count),
                fx, fy, amp, phase, means[p])
        }
        return out
    }

    /// Renders the source picture (pixel centres at k + 0.5) and returns it with the amplitude
    /// scale per plane that the reference must use.
    public func render(width: Int, height: Int) -> (picture: Picture, scales: [Double]) {
        let picture = Picture(width: width, height: height)
        var scales: [Double] = []
        for p in 0..<3 {
            let (w, h) = picture.planeSize(p)
            let xs = (0..<w).map { Double($0) + 0.5 }
            let ys = (0..<h).map { Double($0) + 0.5 }
            let raw = evaluate(plane: p, xs: xs, ys: ys, scale: 1)
            let peak = raw.reduce(0) { max($0, abs($1 - means[p])) }
            let scale = peaks[p] / peak
            scales.append(scale)
            for y in 0..<h {
                let row = picture.row(p, y)
                for x in 0..<w {
                    let v = means[p] + (raw[y * w + x] - means[p]) * scale
                    row[x] = UInt8(max(0, min(255, v.rounded())))
                }
            }
        }
        return (picture, scales)
    }

    /// The ideal output plane `p` for `c` (see the type's comment): output pixel i's centre maps
    /// to left + (i + 0.5) * width / outputWidth in plane units (chroma: half of everything,
    /// chroma sited at the centre of its 2x2 luma block).
    public func reference(plane p: Int, for c: ScaleCase, scale: Double) -> [Double] {
        let d = p == 0 ? 1.0 : 2.0
        let ow = p == 0 ? c.outputWidth : (c.outputWidth + 1) / 2
        let oh = p == 0 ? c.outputHeight : (c.outputHeight + 1) / 2
        let left = c.left / d
        let top = c.top / d
        let w = c.width / d
        let h = c.height / d
        let xs = (0..<ow).map { left + (Double($0) + 0.5) * w / Double(ow) }
        let ys = (0..<oh).map { top + (Double($0) + 0.5) * h / Double(oh) }
        // Output Nyquist in cycles per source pixel: below 0.5 only when scaling down.
        let maxFX = min(0.5, 0.5 * Double(ow) / w)
        let maxFY = min(0.5, 0.5 * Double(oh) / h)
        return evaluate(plane: p, xs: xs, ys: ys, scale: scale, maxFX: maxFX, maxFY: maxFY)
    }
}

/// PSNR (dB, peak 255) of plane `p` of `picture` against `reference`.
public func psnr(_ picture: Picture, plane p: Int, reference: [Double]) -> Double {
    let (w, h) = picture.planeSize(p)
    var sum = 0.0
    for y in 0..<h {
        let row = picture.row(p, y)
        for x in 0..<w {
            let e = Double(row[x]) - reference[y * w + x]
            sum += e * e
        }
    }
    let mse = sum / Double(w * h)
    return 10 * log10(255 * 255 / max(mse, 1e-12))
}

/// A small deterministic generator (SplitMix64).
public struct SplitMix64: Sendable {
    var state: UInt64
    public init(_ seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
