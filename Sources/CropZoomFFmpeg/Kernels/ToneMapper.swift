import CFFmpeg
import CPlaneKernels
import CropZoomCore

/// One HDR → SDR mapping, as the job decided it (`--tone-map`): the source's transfer, matrix and primaries, its
/// peak, and the curve. The picture goes out as BT.709 (primaries, transfer and matrix) at 100 cd/m² white.
package struct ToneMapping: Sendable {
    /// The curve, numbered as the kernel's `cz_tonemap_kind`.
    package enum Curve: Int32, Sendable {
        case bt2390 = 0
        case hable = 1
        case reinhard = 2

        /// As `--tone-map` names it.
        package var name: String {
            switch self {
            case .bt2390: return "bt2390"
            case .hable: return "hable"
            case .reinhard: return "reinhard"
            }
        }
    }

    package let curve: Curve
    /// PQ (SMPTE ST 2084) or HLG (ARIB STD-B67).
    package let hlg: Bool
    /// The brightest the source holds (cd/m²): MaxCLL, else the mastering display's peak, else 1000 (HLG: 1000,
    /// its nominal display).
    package let sourcePeak: Double
    /// Kr, Kb of the source's YUV matrix.
    package let sourceMatrix: (kr: Float, kb: Float)
    /// Linear source RGB → linear BT.709 RGB (row-major).
    package let gamut: [Float]

    /// The SDR white HDR is mapped to (cd/m²): BT.709 / BT.1886's reference, the `npl=100` of zscale.
    package static let white = 100.0
    package static let bt709Matrix: (kr: Float, kb: Float) = (0.2126, 0.0722)

    init(curve: Curve, hlg: Bool, sourcePeak: Double, matrix: AVColorSpace, primaries: AVColorPrimaries) {
        self.curve = curve
        self.hlg = hlg
        self.sourcePeak = max(sourcePeak, ToneMapping.white)
        sourceMatrix = ToneMapping.lumaCoefficients(matrix)
        gamut = ToneMapping.gamutMatrix(from: primaries)
    }

    /// The stream's peak for the curve: MaxCLL, else the mastering display's, else 1000 cd/m² (HLG: 1000, the
    /// nominal peak of its reference display, which its OOTF assumes).
    package static func peak(hlg: Bool, hdr: HDRMetadata?) -> Double {
        if hlg { return 1000 }
        if let cll = hdr?.light, cll.MaxCLL > 0 { return Double(cll.MaxCLL) }
        if let m = hdr?.mastering, m.has_luminance != 0, av_q2d(m.max_luminance) > 0 { return av_q2d(m.max_luminance) }
        return 1000
    }

    /// Kr and Kb of a YUV matrix: BT.2020's where it says nothing (HDR video is BT.2020 unless it says otherwise).
    static func lumaCoefficients(_ m: AVColorSpace) -> (kr: Float, kb: Float) {
        switch m {
        case AVCOL_SPC_BT709: return (0.2126, 0.0722)
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M: return (0.299, 0.114)
        default: return (0.2627, 0.0593)
        }
    }

    /// The xy chromaticities of red, green, blue and white: BT.2020's where the stream says nothing, P3-D65, BT.709.
    static func chromaticities(_ p: AVColorPrimaries) -> [(Double, Double)] {
        let d65 = (0.3127, 0.3290)
        switch p {
        case AVCOL_PRI_BT709: return [(0.64, 0.33), (0.30, 0.60), (0.15, 0.06), d65]
        case AVCOL_PRI_SMPTE432: return [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060), d65]
        default: return [(0.708, 0.292), (0.170, 0.797), (0.131, 0.046), d65]
        }
    }

    /// Linear RGB in `primaries` → linear BT.709 RGB: BT.709's XYZ→RGB times the source's RGB→XYZ (SMPTE RP 177).
    static func gamutMatrix(from primaries: AVColorPrimaries) -> [Float] {
        let src = rgbToXYZ(chromaticities(primaries))
        let dst = invert(rgbToXYZ(chromaticities(AVCOL_PRI_BT709)))
        return multiply(dst, src).map { Float($0) }
    }

    private static func rgbToXYZ(_ c: [(Double, Double)]) -> [Double] {
        func xyz(_ p: (Double, Double)) -> [Double] { [p.0 / p.1, 1, (1 - p.0 - p.1) / p.1] }
        let (r, g, b, w) = (xyz(c[0]), xyz(c[1]), xyz(c[2]), xyz(c[3]))
        let m = [r[0], g[0], b[0], r[1], g[1], b[1], r[2], g[2], b[2]]
        let s = apply(invert(m), w)
        return (0..<9).map { m[$0] * s[$0 % 3] }
    }

    private static func apply(_ m: [Double], _ v: [Double]) -> [Double] {
        (0..<3).map { i in m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2] }
    }

    private static func multiply(_ a: [Double], _ b: [Double]) -> [Double] {
        var m = [Double](repeating: 0, count: 9)
        for row in 0..<3 {
            for col in 0..<3 {
                for k in 0..<3 { m[3 * row + col] += a[3 * row + k] * b[3 * k + col] }
            }
        }
        return m
    }

    private static func invert(_ m: [Double]) -> [Double] {
        let (a, b, c, d, e, f, g, h, i) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
        let det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
        return [
            (e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det,
            (f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det,
            (d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det,
        ]
    }

    /// The curve alone (`cz_tonemap_curve`): `x` and `peak` in SDR-white units, the result at most 1.
    package static func curveValue(_ curve: Curve, x: Double, peak: Double) -> Double {
        Double(cz_tonemap_curve(curve.rawValue, x, peak, white))
    }
}

/// Owns a `cz_tonemap` (`cz_tonemap_new` / `cz_tonemap_free`): maps a 4:4:4 16-bit limited-range picture in the
/// source's colours into the output picture, BT.709 (`cz_tonemap_picture`); one per transform worker. An output
/// format the kernel does not write (RGB, packed, interleaved chroma) is reached through a 4:4:4 16-bit scratch
/// picture and swscale.
///
/// `@unchecked Sendable`: each worker owns its own mapper (the kernel writes scratch rows).
package final class ToneMapper: @unchecked Sendable {
    /// The picture the transform renders into before mapping.
    package static let intermediateFormat = AV_PIX_FMT_YUV444P16LE

    private let kernel: OpaquePointer
    private var scratch: Frame?
    private var converter: Scaler?
    /// The output format's description and whether the kernel writes it, decided once per format (not per frame).
    private var target: (format: AVPixelFormat, info: PixelFormatInfo, direct: Bool)?
    private let srcPlanes = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: 4)
    private let srcStrides = UnsafeMutablePointer<Int32>.allocate(capacity: 4)
    /// The kernel's plane pointers and strides (made once: nothing is allocated per frame).
    private let planes = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: 3)
    private let strides = UnsafeMutablePointer<Int>.allocate(capacity: 3)
    private let outPlanes = UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>.allocate(capacity: 3)
    private let outStrides = UnsafeMutablePointer<Int>.allocate(capacity: 3)

    package init(_ mapping: ToneMapping, width: Int) throws(CropZoomError) {
        var p = cz_tonemap_params()
        p.transfer = mapping.hlg ? Int32(CZ_TONEMAP_HLG.rawValue) : Int32(CZ_TONEMAP_PQ.rawValue)
        p.curve = mapping.curve.rawValue
        p.source_peak_nits = mapping.sourcePeak
        p.white_nits = ToneMapping.white
        p.source_kr = mapping.sourceMatrix.kr
        p.source_kb = mapping.sourceMatrix.kb
        p.output_kr = ToneMapping.bt709Matrix.kr
        p.output_kb = ToneMapping.bt709Matrix.kb
        withUnsafeMutableBytes(of: &p.gamut) { raw in
            for (i, v) in mapping.gamut.enumerated() { raw.storeBytes(of: v, toByteOffset: i * 4, as: Float.self) }
        }
        guard let k = cz_tonemap_new(&p, Int32(width)) else {
            throw CropZoomError(.processing, what: "tone mapping", reason: "out of memory")
        }
        kernel = k
        srcPlanes.initialize(repeating: nil, count: 4)
        srcStrides.initialize(repeating: 0, count: 4)
        planes.initialize(repeating: nil, count: 3)
        strides.initialize(repeating: 0, count: 3)
        outPlanes.initialize(repeating: nil, count: 3)
        outStrides.initialize(repeating: 0, count: 3)
    }

    deinit {
        cz_tonemap_free(kernel)
        srcPlanes.deallocate()
        srcStrides.deallocate()
        planes.deallocate()
        strides.deallocate()
        outPlanes.deallocate()
        outStrides.deallocate()
    }

    /// The widest rows the kernel may use (`cz_tonemap_set_simd`): 0 plain C, 1 AVX2, 2 AVX-512 (the default,
    /// where the CPU has them); tests check that all give the same picture.
    package func setSIMD(_ level: Int) {
        cz_tonemap_set_simd(kernel, Int32(level))
    }

    /// The widest rows this CPU runs (`cz_tonemap_cpu_level`).
    package static var cpuLevel: Int { Int(cz_tonemap_cpu_level()) }

    /// Whether the kernel writes `format` itself: planar YUV of 8 to 16 bits, chroma halved at most.
    static func writes(_ format: AVPixelFormat) -> Bool {
        guard let info = PixelFormatInfo(format) else { return false }
        return !info.isRGB && !info.hasAlpha && info.planeCount == 3 && info.log2ChromaW <= 1
            && info.log2ChromaH <= 1 && info.bitDepth >= 8
            && info.bitDepth <= 16 && info.planeSteps[0] == (info.bitDepth > 8 ? 2 : 1)
    }

    /// Maps `src` (`intermediateFormat`, the size of `dst`) into `dst`, limited range unless `fullRange`.
    package func map(_ src: Frame, into dst: Frame, fullRange: Bool) throws(CropZoomError) {
        if target?.format != dst.pixelFormat {
            let format = dst.pixelFormat
            target = (format, PixelFormatInfo(format)!, ToneMapper.writes(format))
        }
        guard target!.direct else {
            if scratch == nil || scratch!.width != dst.width || scratch!.height != dst.height {
                scratch = try Frame(width: dst.width, height: dst.height, format: ToneMapper.intermediateFormat)
            }
            run(src, into: scratch!, info: PixelFormatInfo(ToneMapper.intermediateFormat)!, fullRange: false)
            let s = scratch!
            s.windowPlanes(x: 0, y: 0, info: PixelFormatInfo(s.pixelFormat)!, planes: srcPlanes, strides: srcStrides)
            let key = Scaler.Key(
                srcW: s.width, srcH: s.height, srcFormat: s.pixelFormat, dstW: dst.width, dstH: dst.height,
                dstFormat: dst.pixelFormat, flags: SWS_BICUBIC | SWS_ACCURATE_RND, srcFullRange: false,
                dstFullRange: fullRange, matrix: AVCOL_SPC_BT709)
            if converter?.key != key { converter = try Scaler(key) }
            converter!.scale(src: srcPlanes, srcStride: srcStrides, into: dst)
            return
        }
        run(src, into: dst, info: target!.info, fullRange: fullRange)
    }

    private func run(_ src: Frame, into dst: Frame, info: PixelFormatInfo, fullRange: Bool) {
        for i in 0..<3 {
            planes[i] = src.pointer.pointee.dataPlane(i).map { UnsafePointer($0) }
            strides[i] = Int(src.pointer.pointee.linesizePlane(i))
            outPlanes[i] = dst.pointer.pointee.dataPlane(i)
            outStrides[i] = Int(dst.pointer.pointee.linesizePlane(i))
        }
        let location = dst.pointer.pointee.chroma_location
        let cosited =
            location == AVCHROMA_LOC_UNSPECIFIED || location == AVCHROMA_LOC_LEFT || location == AVCHROMA_LOC_TOPLEFT
            || location == AVCHROMA_LOC_BOTTOMLEFT
        cz_tonemap_picture(
            kernel, planes, strides, Int32(min(src.width, dst.width)), Int32(min(src.height, dst.height)),
            outPlanes, outStrides, Int32(info.bitDepth), Int32(info.log2ChromaW), Int32(info.log2ChromaH),
            fullRange ? 1 : 0, cosited ? 1 : 0)
    }
}
