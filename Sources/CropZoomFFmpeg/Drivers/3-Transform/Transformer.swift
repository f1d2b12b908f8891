import CFFmpeg
import CPlaneKernels
import CropZoomCore

/// The transform stage's work: crops a decoded picture by pointer offset (no copy), scales it into an
/// output frame — with zimg for planar YUV and grey above 8 bits, with swscale for 8-bit pictures
/// and everything zimg does not take (the kernels measured, see Benchmarks/README.md) — and
/// applies the orthogonal part of the geometry (display rotation, the user's rotate/flip) with a
/// plane kernel.
///
/// One transformer per worker: it owns its scalers and scratch frames.
package final class Transformer: @unchecked Sendable {
    // @unchecked Sendable: used by one worker thread at a time; handed over, never shared.
    package let plan: GeometryPlan
    let outputFormat: AVPixelFormat
    package let outputFullRange: Bool
    package let flags: Int32
    package let filter: TranscodeConfiguration.Scaler
    package let kernel: TranscodeConfiguration.Kernel
    private var scaler: Scaler?
    private var zimg: ZimgScaler?
    /// Animated windows (a new one every frame): cropzoom's own resampler, buffers made once.
    private var resampler: PlaneResampler?
    /// A conversion the resampler does not take (decided once per key).
    private var resamplerRefused: PlaneResampler.Key?
    /// A conversion zimg does not take (decided once per key; swscale scales those).
    private var zimgRefused: ZimgScaler.Key?
    private var converter: Scaler?
    /// The 2-D warp (`--rotate` by any angle, `--transform`), its scratch picture and the
    /// background samples for the input's format and range; the blurred background.
    private var warper: PlaneWarper?
    private var warpScratch: Frame?
    /// A packed or RGB picture made planar before it is warped, and the scaler that does it.
    private var planarScratch: Frame?
    private var planarizer: Scaler?
    private var warpSamples: [Int32]?
    private var warpSamplesKey: (format: AVPixelFormat, full: Bool)?
    private var blur: BlurredBackground?
    /// Where the scaled picture's chroma must sit for the orthogonal step, per chroma location.
    private var orientChroma: (location: AVChromaLocation, position: (h: Int64, v: Int64)?)?
    /// Scratch pictures for the orthogonal step (scaled, and the symmetric-chroma stand-in).
    private var scratch: Frame?
    private var scratchOut: Frame?
    /// Format the orthogonal kernel works in: the output format when its chroma is square.
    private let orientFormat: AVPixelFormat
    private let srcPlanes = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: 4)
    private let srcStrides = UnsafeMutablePointer<Int32>.allocate(capacity: 4)

    /// Media seconds of a frame's presentation time (keyframed zoom/pan are evaluated there).
    private let frameTime: @Sendable (Int64) -> Double
    /// Around a zoomed-out picture (`--background`).
    private let background: TranscodeConfiguration.Background
    private var backgroundSamples: [Int32]?

    /// The YUV matrix of an RGB ↔ YUV conversion (`Scaler.Key.matrix`).
    let matrix: AVColorSpace

    /// Which frames are deinterlaced, and the field order when a frame does not say (`on` with a
    /// progressive-flagged frame): the stream's, top first by default.
    package let deinterlace: TranscodeConfiguration.Deinterlace
    package let topFieldFirst: Bool
    /// The deinterlaced picture (made once per size and format).
    private var fields: Frame?
    /// HDR mapped to SDR: the picture is rendered into `wide` (`outputFormat`, 4:4:4 16-bit), then mapped into the
    /// output frame (the encoder's format, `fullRange`) by `mapper`. Both made on first use.
    package let toneMap: (mapping: ToneMapping, fullRange: Bool)?
    private var wide: Frame?
    private var mapper: ToneMapper?

    package init(
        plan: GeometryPlan, outputFormat pixelFormat: PixelFormat, outputFullRange: Bool,
        matrix colorMatrix: ColorMatrix = .unspecified,
        scaler: TranscodeConfiguration.Scaler, kernel: TranscodeConfiguration.Kernel = .auto,
        frameTime: @escaping @Sendable (Int64) -> Double = { _ in 0 },
        background: TranscodeConfiguration.Background = .color(red: 0, green: 0, blue: 0),
        deinterlace: TranscodeConfiguration.Deinterlace = .off, topFieldFirst: Bool = true,
        toneMap: (mapping: ToneMapping, fullRange: Bool)? = nil
    ) {
        self.toneMap = toneMap
        let outputFormat = pixelFormat.av
        let matrix = colorMatrix.av
        self.plan = plan
        self.deinterlace = deinterlace
        self.topFieldFirst = topFieldFirst
        self.frameTime = frameTime
        self.background = background
        self.filter = scaler
        self.kernel = kernel
        self.outputFormat = outputFormat
        self.outputFullRange = outputFullRange
        self.matrix = matrix
        switch scaler {
        case .bicubic: flags = SWS_BICUBIC
        case .bilinear: flags = SWS_BILINEAR
        case .lanczos: flags = SWS_LANCZOS
        case .area: flags = SWS_AREA
        case .neighbor: flags = SWS_POINT
        }
        let info = PixelFormatInfo(outputFormat)!
        if plan.orientation.swapsAxes && info.log2ChromaW != info.log2ChromaH {
            orientFormat = info.bitDepth > 8 ? AV_PIX_FMT_YUV444P16LE : AV_PIX_FMT_YUV444P
        } else {
            orientFormat = outputFormat
        }
        srcPlanes.initialize(repeating: nil, count: 4)
        srcStrides.initialize(repeating: 0, count: 4)
    }

    deinit {
        srcPlanes.deallocate()
        srcStrides.deallocate()
    }

    /// Renders `input` into `out`, a frame of the output size and format. Times are the
    /// timestamp policy's (`TimestampPolicy.stamp`).
    package func render(_ input: Frame, into out: Frame) throws(CropZoomError) {
        if let toneMap {
            if wide == nil || wide!.width != out.width || wide!.height != out.height {
                wide = try Frame(width: out.width, height: out.height, format: outputFormat)
                mapper = try ToneMapper(toneMap.mapping, width: out.width)
            }
            try draw(input, into: wide!)
            try mapper!.map(wide!, into: out, fullRange: toneMap.fullRange)
        } else {
            try draw(input, into: out)
        }
        out.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
    }

    private func draw(_ decoded: Frame, into out: Frame) throws(CropZoomError) {
        let input = try deinterlaced(decoded)
        let inFormat = input.pixelFormat
        guard let inInfo = PixelFormatInfo(inFormat), !inInfo.isHardware, !inInfo.isBitstream else {
            throw CropZoomError(
                .processing, what: "transforming",
                reason: "unsupported decoded pixel format \(pixelFormatName(inFormat))")
        }
        if plan.warp != nil {
            try warp(input, into: out)
            return
        }
        // Animated zoom/pan: this frame's exact window (sub-pixel); the whole-pixel window around
        // it serves the swscale fallback.
        var exact: Rect? = nil
        var rect = plan.source
        if let animation = plan.animation {
            let w = animation.window(at: frameTime(input.presentationTime))
            exact = w
            let x0 = Int(w.x.rounded(.down)) & ~1
            let y0 = Int(w.y.rounded(.down)) & ~1
            rect = PixelRect(
                x: x0, y: y0, width: (Int((w.x + w.width).rounded(.up)) - x0 + 1) & ~1,
                height: (Int((w.y + w.height).rounded(.up)) - y0 + 1) & ~1)
        }
        // Clamp against the frame actually decoded (a stream may change size mid-way).
        let x = min(rect.x, max(0, input.width - 1))
        let y = min(rect.y, max(0, input.height - 1))
        let w = min(rect.width, input.width - x)
        let h = min(rect.height, input.height - y)
        let inputFull = input.isFullRange
        input.windowPlanes(x: x, y: y, info: inInfo, planes: srcPlanes, strides: srcStrides)
        let window = PixelRect(x: x, y: y, width: w, height: h)
        if plan.orientation.isIdentity {
            try scale(input, window: window, exact: exact, full: inputFull, into: out, format: outputFormat)
            return
        }
        // Scale into scratch (coded orientation), then the orthogonal kernel.
        let sw = plan.scaled.width
        let sh = plan.scaled.height
        if scratch == nil { scratch = try Frame(width: sw, height: sh, format: orientFormat) }
        // A turn or flip moves the chroma siting too: the scaled picture's chroma is sited where
        // the orthogonal step will put it on the output's declared siting.
        let location = input.pointer.pointee.chroma_location
        if orientChroma?.location != location {  // decided once per chroma location, not per frame
            orientChroma = (
                location,
                orientFormat == outputFormat
                    ? Self.preOrientationChroma(location, orientation: plan.orientation, format: orientFormat) : nil
            )
        }
        let chroma = orientChroma!.position
        try scale(
            input, window: window, exact: exact, full: inputFull, into: scratch!, format: orientFormat, chroma: chroma)
        if orientFormat == outputFormat {
            Transformer.orient(scratch!, into: out, plan.orientation)
        } else {
            if scratchOut == nil { scratchOut = try Frame(width: out.width, height: out.height, format: orientFormat) }
            Transformer.orient(scratch!, into: scratchOut!, plan.orientation)
            let src = scratchOut!
            for i in 0..<4 {
                srcPlanes[i] = src.pointer.pointee.dataPlane(i).map { UnsafePointer($0) }
                srcStrides[i] = src.pointer.pointee.linesizePlane(i)
            }
            let c = try scalerFor(
                &converter, srcW: out.width, srcH: out.height, srcFormat: orientFormat,
                srcFull: outputFullRange, dstW: out.width, dstH: out.height, dstFormat: outputFormat,
                chroma: input.pointer.pointee.chroma_location)
            c.scale(src: srcPlanes, srcStride: srcStrides, into: out)
        }
    }

    /// Crops `window` out of `input` and scales it into `dst`: zimg when it takes the
    /// conversion (and `kernel` allows it), else swscale from the window's plane pointers
    /// (`srcPlanes`, set by `draw`).
    /// Whether `frame` is deinterlaced (`--deinterlace`), and which field is kept: the first in
    /// time (`top_field_first`), so the picture shows the frame's first instant.
    package func keptField(_ frame: Frame) -> Int32? {
        let f = frame.pointer.pointee
        switch deinterlace {
        case .off: return nil
        case .auto where f.interlaced_frame == 0: return nil
        default:
            let top = f.interlaced_frame != 0 ? f.top_field_first != 0 : topFieldFirst
            return top ? 0 : 1
        }
    }

    /// `input` with one field kept and the other rebuilt from it (`cz_deinterlace_plane`) in a
    /// picture made once; `input` itself when it is not deinterlaced, or not planar YUV/grey.
    private func deinterlaced(_ input: Frame) throws(CropZoomError) -> Frame {
        guard let keep = keptField(input), let info = PixelFormatInfo(input.pixelFormat), info.isZimgPlanar else {
            return input
        }
        if fields == nil || fields!.width != input.width || fields!.height != input.height
            || fields!.pixelFormat != input.pixelFormat
        {
            fields = try Frame(width: input.width, height: input.height, format: input.pixelFormat)
        }
        let target = fields!
        let bytes = Int32((info.bitDepth + 7) / 8)
        for i in 0..<info.planeCount {
            let (w, h) = info.planeSize(i, width: input.width, height: input.height)
            guard let src = input.pointer.pointee.dataPlane(i), let dst = target.pointer.pointee.dataPlane(i) else {
                continue
            }
            cz_deinterlace_plane(
                src, Int(input.pointer.pointee.linesizePlane(i)), dst,
                Int(target.pointer.pointee.linesizePlane(i)), Int32(w), Int32(h), bytes, keep)
        }
        let from = input.pointer
        let to = target.pointer
        to.pointee.pts = from.pointee.pts
        to.pointee.best_effort_timestamp = from.pointee.best_effort_timestamp
        to.pointee.pkt_duration = from.pointee.pkt_duration
        to.pointee.color_range = from.pointee.color_range
        to.pointee.colorspace = from.pointee.colorspace
        to.pointee.color_primaries = from.pointee.color_primaries
        to.pointee.color_trc = from.pointee.color_trc
        to.pointee.chroma_location = from.pointee.chroma_location
        to.pointee.sample_aspect_ratio = from.pointee.sample_aspect_ratio
        return target
    }

    private func scale(
        _ input: Frame, window: PixelRect, exact: Rect? = nil, full: Bool, into dst: Frame,
        format dstFormat: AVPixelFormat, chroma: (h: Int64, v: Int64)? = nil,
        fallback: Bool = false
    ) throws(CropZoomError) {
        let inFormat = input.pixelFormat
        let sited = chroma != nil  // chroma placed for a turn or flip that follows
        var exact = exact
        // Same size, chroma sited for a turn or flip: swscale would copy the planes unscaled and
        // ignore the siting; the resampler places the chroma (the luma stays exact).
        if exact == nil && !fallback && sited && kernel != .swscale && window.width == dst.width
            && window.height == dst.height
        {
            exact = Rect(
                x: Double(window.x), y: Double(window.y), width: Double(window.width), height: Double(window.height))
        }
        // A window that moves every frame, or reaches beyond the picture (zoomed out): the
        // resampler that needs no set-up per window and paints the background.
        let beyond =
            exact.map {
                $0.x < -1e-6 || $0.y < -1e-6 || $0.x + $0.width > Double(input.width) + 1e-6
                    || $0.y + $0.height > Double(input.height) + 1e-6
            } ?? false
        if let exact, kernel != .zimg || beyond {
            // Decided once per conversion, as for zimg.
            let key = PlaneResampler.Key(
                srcW: input.width, srcH: input.height, srcFormat: inFormat,
                dstW: dst.width, dstH: dst.height, dstFormat: dstFormat, filter: filter)
            if resampler?.key != key && resamplerRefused != key {
                resampler = nil
                if PlaneResampler.takes(src: inFormat, dst: dstFormat, filter: filter) && full == outputFullRange {
                    resampler = try PlaneResampler(key)
                    backgroundSamples = PlaneResampler.backgroundSamples(
                        background, info: PixelFormatInfo(dstFormat)!, fullRange: outputFullRange)
                } else {
                    resamplerRefused = key
                }
            }
            if let resampler {
                if beyond, case .blur = background {
                    let (dw, dh) = (Double(dst.width), Double(dst.height))
                    try blurred().paint(input, into: dst, aspect: dw / dh, warper: planeWarper) { cover in
                        Affine.scale(cover.width / dw, cover.height / dh, tx: cover.x, ty: cover.y)
                    }
                }
                try resampler.scale(input, window: exact, into: dst, background: backgroundSamples, chroma: chroma)
                return
            }
            if beyond {
                throw CropZoomError(
                    .processing, what: "zooming out",
                    setting: .scaler,
                    reason:
                        "\(pixelFormatName(inFormat)) to \(pixelFormatName(dstFormat)) with \(setting: .scaler) "
                        + "\(filter.rawValue): zoom below 1 needs planar YUV or grey of one depth and range in "
                        + "and out"
                )
            }
            return try scale(
                input, window: window, exact: nil, full: full, into: dst, format: dstFormat, chroma: chroma,
                fallback: true)
        }
        if kernel != .swscale {
            let zimgWindow =
                exact
                ?? Rect(
                    x: Double(window.x), y: Double(window.y),
                    width: Double(window.width), height: Double(window.height))
            let key = ZimgScaler.Key(
                srcW: input.width, srcH: input.height, srcFormat: inFormat, window: zimgWindow,
                dstW: dst.width, dstH: dst.height, dstFormat: dstFormat, filter: filter,
                fullRange: full, chromaLocation: input.pointer.pointee.chroma_location)
            // Decided once per conversion (a stream may change size or format mid-way).
            if zimg?.key != key && zimgRefused != key {
                zimg = nil
                // Sub-pixel windows (animated zoom/pan) need zimg whatever the depth.
                // zimg takes named chroma locations only (none is "right"): swscale then, unless asked.
                if kernel == .auto && exact == nil && (!ZimgScaler.preferred(for: inFormat) || sited) {
                    zimgRefused = key
                } else if let reason = ZimgScaler.refusal(
                    src: inFormat, dst: dstFormat, srcFullRange: full,
                    dstFullRange: outputFullRange, filter: filter)
                    ?? ZimgScaler.refusal(width: dst.width, height: dst.height, format: dstFormat)
                    ?? ZimgScaler.refusal(width: input.width, height: input.height, format: inFormat)
                {
                    if kernel == .zimg { throw ZimgScaler.refused(reason, src: inFormat, dst: dstFormat) }
                    zimgRefused = key
                } else {
                    zimg = try ZimgScaler(key)
                }
            }
            // False only for misaligned planes, which FFmpeg's own buffers never are: swscale then.
            if let zimg, try zimg.scale(input, into: dst) { return }
        }
        let s = try scalerFor(
            &scaler, srcW: window.width, srcH: window.height, srcFormat: inFormat, srcFull: full,
            dstW: dst.width, dstH: dst.height, dstFormat: dstFormat,
            chroma: input.pointer.pointee.chroma_location, dstChroma: chroma)
        s.scale(src: srcPlanes, srcStride: srcStrides, into: dst)
    }

    /// Rotation by any angle / the user's matrix / stabilisation: each plane warped once from the coded picture
    /// straight into the output (`PlaneWarper`), chroma siting kept; through a scratch frame in
    /// the input's format when the output's differs (depth, range), then swscale. A packed or RGB picture (a
    /// camera's YUYV, a screen grab) is first made planar in the output's format (swscale, `planarScratch`).
    private func warp(_ picture: Frame, into out: Frame) throws(CropZoomError) {
        guard let map = plan.warpMap(at: frameTime(picture.presentationTime)) else {
            throw CropZoomError(.processing, what: "warping", reason: "the transform is not invertible")
        }
        let warpFilter: TranscodeConfiguration.Scaler = filter == .area ? .bicubic : filter
        var input = picture
        var inFormat = input.pixelFormat
        var inputFull = input.isFullRange
        if !PlaneResampler.takes(src: inFormat, dst: inFormat, filter: warpFilter) {
            let planar =
                PlaneResampler.takes(src: out.pixelFormat, dst: out.pixelFormat, filter: warpFilter)
                ? out.pixelFormat : AV_PIX_FMT_YUV444P
            guard let info = PixelFormatInfo(inFormat) else {
                throw CropZoomError(
                    .processing, what: "warping", reason: "\(pixelFormatName(inFormat)) pictures cannot be read")
            }
            if planarScratch == nil || planarScratch!.width != input.width || planarScratch!.height != input.height
                || planarScratch!.pixelFormat != planar
            {
                planarScratch = try Frame(width: input.width, height: input.height, format: planar)
            }
            input.windowPlanes(x: 0, y: 0, info: info, planes: srcPlanes, strides: srcStrides)
            let c = try scalerFor(
                &planarizer, srcW: input.width, srcH: input.height, srcFormat: inFormat, srcFull: inputFull,
                dstW: input.width, dstH: input.height, dstFormat: planar,
                chroma: input.pointer.pointee.chroma_location)
            c.scale(src: srcPlanes, srcStride: srcStrides, into: planarScratch!)
            input = planarScratch!
            inFormat = planar
            inputFull = outputFullRange
        }
        let direct = inFormat == out.pixelFormat && inputFull == outputFullRange
        let target: Frame
        if direct {
            target = out
        } else {
            if warpScratch == nil || warpScratch!.width != out.width || warpScratch!.height != out.height
                || warpScratch!.pixelFormat != inFormat
            {
                warpScratch = try Frame(width: out.width, height: out.height, format: inFormat)
            }
            target = warpScratch!
        }
        if warpSamplesKey?.format != inFormat || warpSamplesKey?.full != inputFull {
            warpSamples = PlaneResampler.backgroundSamples(
                background, info: PixelFormatInfo(inFormat)!, fullRange: inputFull)
            warpSamplesKey = (inFormat, inputFull)
        }
        let location = input.pointer.pointee.chroma_location
        if case .blur = background,
            PlaneWarper.showsOutside(map, width: target.width, height: target.height, picture: input)
        {
            try blurred().paint(
                input, into: target, aspect: Double(plan.scaled.width) / Double(plan.scaled.height),
                warper: planeWarper
            ) { cover in plan.outputToInput(window: cover) }
        }
        try planeWarper().warp(input, through: map, into: target, location: location, background: warpSamples)
        if !direct {
            target.windowPlanes(x: 0, y: 0, info: PixelFormatInfo(inFormat)!, planes: srcPlanes, strides: srcStrides)
            let c = try scalerFor(
                &converter, srcW: out.width, srcH: out.height, srcFormat: inFormat,
                srcFull: inputFull, dstW: out.width, dstH: out.height, dstFormat: out.pixelFormat,
                chroma: location)
            c.scale(src: srcPlanes, srcStride: srcStrides, into: out)
        }
    }

    /// The warp and the blurred background, made on first use (one per worker).
    private func planeWarper() throws(CropZoomError) -> PlaneWarper {
        if let warper { return warper }
        let w = try PlaneWarper(filter)
        warper = w
        return w
    }

    private func blurred() -> BlurredBackground {
        if let blur { return blur }
        let b = BlurredBackground()
        blur = b
        return b
    }

    /// Where the chroma of a picture that `orientation` will turn or mirror must sit (1/256 luma
    /// pixel within its block, swscale's `*_chr_pos`) so that afterwards it sits at `location`:
    /// the declared position taken back through the orientation about the block's centre
    /// (a flip: 256 − position; a quarter turn swaps the axes). Only subsampled directions
    /// count; nil when nothing changes.
    package static func preOrientationChroma(
        _ location: AVChromaLocation, orientation o: Orientation, format: AVPixelFormat
    )
        -> (h: Int64, v: Int64)?
    {
        guard !o.isIdentity, let info = PixelFormatInfo(format), info.log2ChromaW > 0 || info.log2ChromaH > 0 else {
            return nil
        }
        // The declared position in both directions (as if both were subsampled), then turned back.
        let full = Scaler.chromaPosition(location, log2w: 1, log2h: 1)
        let inv = o.inverse
        let (x, y) = (full.h - 128, full.v - 128)
        var h = Int64(inv.a) * x + Int64(inv.b) * y + 128
        var v = Int64(inv.c) * x + Int64(inv.d) * y + 128
        if info.log2ChromaW == 0 { h = 0 }
        if info.log2ChromaH == 0 { v = 0 }
        let declared = Scaler.chromaPosition(location, log2w: info.log2ChromaW, log2h: info.log2ChromaH)
        return (h, v) == (declared.h, declared.v) ? nil : (h, v)
    }

    private func scalerFor(
        _ slot: inout Scaler?, srcW: Int, srcH: Int, srcFormat: AVPixelFormat, srcFull: Bool,
        dstW: Int, dstH: Int, dstFormat: AVPixelFormat,
        chroma: AVChromaLocation, dstChroma: (h: Int64, v: Int64)? = nil
    ) throws(CropZoomError) -> Scaler {
        let key = Scaler.Key(
            srcW: srcW, srcH: srcH, srcFormat: srcFormat, dstW: dstW, dstH: dstH,
            dstFormat: dstFormat, flags: flags,
            srcFullRange: srcFull, dstFullRange: outputFullRange, chromaLocation: chroma,
            dstChromaH: dstChroma?.h, dstChromaV: dstChroma?.v, matrix: matrix)
        if let s = slot, s.key == key { return s }
        let s = try Scaler(key)
        slot = s
        return s
    }

    /// Applies `orientation` plane by plane: `dst` is `src` rotated/mirrored.
    package static func orient(_ src: Frame, into dst: Frame, _ o: Orientation) {
        let info = PixelFormatInfo(src.pixelFormat)!
        let steps = info.planeSteps
        let inv = o.inverse
        for i in 0..<info.planeCount {
            let chroma = info.isChromaPlane(i)
            let sw = chroma ? -((-src.width) >> info.log2ChromaW) : src.width
            let sh = chroma ? -((-src.height) >> info.log2ChromaH) : src.height
            let dw = chroma ? -((-dst.width) >> info.log2ChromaW) : dst.width
            let dh = chroma ? -((-dst.height) >> info.log2ChromaH) : dst.height
            // Source element for destination (x, y): inverse map about the centres (exact integers).
            let cx = 0.5 - Double(dw) / 2
            let cy = 0.5 - Double(dh) / 2
            let ox = Double(inv.a) * cx + Double(inv.b) * cy + Double(sw) / 2 - 0.5
            let oy = Double(inv.c) * cx + Double(inv.d) * cy + Double(sh) / 2 - 0.5
            cz_plane_orthogonal(
                src.pointer.pointee.dataPlane(i), src.pointer.pointee.linesizePlane(i),
                dst.pointer.pointee.dataPlane(i), dst.pointer.pointee.linesizePlane(i),
                Int32(dw), Int32(dh), Int32(steps[i]),
                Int32(ox.rounded()), Int32(oy.rounded()),
                Int32(inv.a), Int32(inv.b), Int32(inv.c), Int32(inv.d))
        }
    }
}
