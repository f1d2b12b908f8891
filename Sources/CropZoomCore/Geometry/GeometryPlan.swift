import Foundation

/// What the user asked of the picture (all optional), independent of any particular input.
public struct GeometryRequest: Sendable, Equatable, Codable {
    /// A crop window in pixels of the upright picture; `x`/`y` nil = centred on ``center``.
    public struct Crop: Sendable, Equatable, Codable {
        public var width: Int, height: Int, x: Int?, y: Int?
        public init(width: Int, height: Int, x: Int? = nil, y: Int? = nil) {
            self.width = width
            self.height = height
            self.x = x
            self.y = y
        }
    }
    /// Output size; a negative side (-1 or -2) follows the aspect ratio of the other.
    public struct OutputSize: Sendable, Equatable, Codable {
        public var width: Int, height: Int
        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }
    /// `--aspect`: the output's shape, width : height as shown.
    public struct Aspect: Sendable, Equatable, Codable {
        public var width: Double, height: Double
        public init(width: Double, height: Double) {
            self.width = width
            self.height = height
        }
        public var ratio: Double { width / height }
    }
    public enum Flip: String, Sendable, CaseIterable, Codable { case horizontal, vertical }
    /// How the picture meets a ``size`` of another aspect ratio: shown whole with the background around it
    /// (`contain`), cut to fill it (`cover`), or stretched to it (`stretch`, the default).
    public enum Fit: String, Sendable, CaseIterable, Codable { case contain, cover, stretch }
    public enum OrientationMode: String, Sendable, CaseIterable, Codable { case auto, ignore }

    /// Digital zoom factor around ``center`` (≥ 1).
    public var zoom: Double = 1
    /// Centre of the zoom/crop window, as fractions of the upright picture.
    public var center = UnitPoint.middle
    public var crop: Crop? = nil
    /// `--aspect`: the window is the largest of this shape (at display scale) inside the upright picture, about
    /// ``center`` (``crop`` is then made from it when the plan is made).
    public var aspect: Aspect? = nil
    public var size: OutputSize? = nil
    public var fit: Fit = .stretch
    /// Extra clockwise rotation after the crop (0, 90, 180, 270).
    public var rotate: Int = 0
    public var flip: Flip? = nil
    public var orientation: OrientationMode = .auto
    /// Keyframed zoom and centre (animated zoom and pan); nil = the static ``zoom``/``center``.
    /// With a track, ``zoom``/``center`` hold its first value.
    public var zoomTrack: Track? = nil
    public var centerTrack: Track? = nil
    /// Keyframed crop windows (components W, H, X, Y in upright pixels); nil = ``crop``.
    public var cropTrack: Track? = nil
    /// Rotation by any angle, degrees clockwise about the output's centre, constant or
    /// keyframed (one component). The output keeps the size it has without it; corners show the
    /// background. (Multiples of 90 that do not move go in ``rotate``: exact, and they turn the
    /// output's size.)
    public var angle: Track? = nil
    /// A CGAffineTransform-style matrix (a, b, c, d, tx, ty) in output pixels applied last: the
    /// picture as the other options make it, at output pixel (x, y), moves to
    /// (a x + c y + tx, b x + d y + ty). Constant or keyframed (six components).
    public var transform: Track? = nil

    public init() {}

    /// The window moves or reaches beyond the picture from frame to frame: keyframed zoom,
    /// centre or crop, or a zoom below 1 (the plan gets an ``GeometryPlan/Animation``).
    public var movesWindow: Bool { zoomTrack != nil || centerTrack != nil || cropTrack != nil || zoom < 1 }

    /// Every frame is warped: a rotation by any angle or a matrix (``GeometryPlan/Warp``).
    public var warps: Bool { angle != nil || transform != nil }

    /// Decodes what the JSON holds; a missing key keeps its default (`{"zoom": 2}` is a whole request).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.update(&zoom, .zoom)
        try c.update(&center, .center)
        try c.update(&crop, .crop)
        try c.update(&aspect, .aspect)
        try c.update(&size, .size)
        try c.update(&fit, .fit)
        try c.update(&rotate, .rotate)
        try c.update(&flip, .flip)
        try c.update(&orientation, .orientation)
        try c.update(&zoomTrack, .zoomTrack)
        try c.update(&centerTrack, .centerTrack)
        try c.update(&cropTrack, .cropTrack)
        try c.update(&angle, .angle)
        try c.update(&transform, .transform)
    }
}

/// What the geometry needs to know about the input video.
public struct SourcePicture: Sendable, Equatable {
    public var width: Int, height: Int
    /// Sample (pixel) aspect ratio; 1 when square or unknown.
    public var sampleAspect: Double
    /// How a player turns the coded picture upright (from the display matrix).
    public var display: Orientation
    /// Alignment of crop offsets in the source, from chroma subsampling (2 for 4:2:0 in both
    /// directions, 1 for 4:4:4).
    public var alignX: Int, alignY: Int

    public init(
        width: Int, height: Int, sampleAspect: Double = 1, display: Orientation = .identity,
        alignX: Int = 1, alignY: Int = 1
    ) {
        self.width = width
        self.height = height
        self.sampleAspect = sampleAspect
        self.display = display
        self.alignX = alignX
        self.alignY = alignY
    }
}

/// The per-frame geometry: where to read, how large to scale, which orthogonal transform to
/// apply, and the output size. Also expressed as ``outputToInput``, an affine map from output
/// pixel coordinates to coded input pixel coordinates.
public struct GeometryPlan: Sendable, Equatable {
    /// Window of the coded input picture to read (whole pixels, aligned for chroma).
    public var source: PixelRect
    /// Size the window is scaled to, still in coded orientation.
    public var scaled: (width: Int, height: Int)
    /// Orthogonal transform from the scaled window to the output (display orientation, then the
    /// user's rotate/flip).
    public var orientation: Orientation
    public var output: (width: Int, height: Int)
    /// True when the output should keep the input's sample aspect and display matrix
    /// (`--orientation ignore`).
    public var keepsInputAspectAndMatrix: Bool

    /// Keyframed zoom and pan, or a zoom below 1: the window moves from frame to frame
    /// (sub-pixel) or reaches beyond the picture; nil = static.
    public var animation: Animation? = nil

    /// Rotation by any angle and the user's matrix (`--rotate 7.5`, `--transform`): every plane
    /// is warped once, straight from the coded picture to the output (orientation, window,
    /// rotation and matrix in one map); nil = the separable path.
    public var warp: Warp? = nil

    /// A rotation by any angle and/or a matrix in output pixels, each constant or keyframed.
    public struct Warp: Sendable, Equatable {
        /// Degrees clockwise about the output's centre (one component).
        public var angle: Track?
        /// a, b, c, d, tx, ty: picture → output pixels, applied after the rotation.
        public var transform: Track?
        /// Zoom in about the frame's centre, per frame, just enough that the picture covers the
        /// frame (`--background cover`); `codedWidth`/`codedHeight` bound what is picture.
        public var cover = false
        public var codedWidth = 0, codedHeight = 0
        /// `--stabilize`: each frame read through its correction (the stabilised picture → the frame), under
        /// everything else (the window, orientation, rotation and matrix place the stabilised picture).
        public var stabilization: CameraPath? = nil
        /// `--stabilize` of a live source: the corrections as the live stabiliser fixes them (in place of
        /// ``stabilization``).
        public var liveStabilization: LiveCameraPath? = nil

        public init(
            angle: Track? = nil, transform: Track? = nil, cover: Bool = false, codedWidth: Int = 0,
            codedHeight: Int = 0, stabilization: CameraPath? = nil, liveStabilization: LiveCameraPath? = nil
        ) {
            self.angle = angle
            self.transform = transform
            self.cover = cover
            self.codedWidth = codedWidth
            self.codedHeight = codedHeight
            self.stabilization = stabilization
        }

        /// Output pixels → the picture as the other options place it (also output pixels).
        public func outputToPicture(at t: Double, width: Double, height: Double) -> Affine? {
            var forward = Affine.identity
            if let angle {
                forward = forward.then(.rotation(degrees: angle.value(0, at: t), about: width / 2, height / 2))
            }
            if let transform { forward = forward.then(Affine(transform, at: t)) }
            return forward.inverted
        }
    }

    /// The smallest zoom (the picture at a tenth of the frame).
    public static let minimumZoom = 0.1
    /// The largest output side (FFmpeg's encoders take 16384 at most: x264's and x265's limit).
    public static let maximumSide = 16384

    /// The moving window of an animated zoom/pan: zoom and centre tracks over the upright
    /// picture, mapped to coded pixels per frame without rounding.
    public struct Animation: Sendable, Equatable {
        public var zoom: Track
        public var center: Track
        /// Keyframed crop (W, H, X, Y upright pixels; X/Y may be NaN = centred on ``center``):
        /// the window is the crop at that time, zoomed by ``zoom`` about the crop's centre.
        public var crop: Track? = nil
        /// The upright picture's size, and how coded pixels become upright ones.
        public var uprightWidth: Double, uprightHeight: Double
        public var display: Orientation
        /// `--follow` of a live source: the windows as the live reframer fixes them (in place of ``crop``).
        public var live: LiveWindowPath? = nil

        public init(
            zoom: Track, center: Track, crop: Track? = nil, uprightWidth: Double, uprightHeight: Double,
            display: Orientation, live: LiveWindowPath? = nil
        ) {
            self.zoom = zoom
            self.center = center
            self.crop = crop
            self.uprightWidth = uprightWidth
            self.uprightHeight = uprightHeight
            self.display = display
            self.live = live
        }

        /// The window at media time `t` (seconds), in coded pixels: `upright / zoom(t)` centred
        /// on `center(t)`, kept inside the picture.
        public func window(at t: Double) -> Rect {
            if let live {
                return display.inverse.apply(live.window(at: t), width: uprightWidth, height: uprightHeight)
            }
            let z = max(GeometryPlan.minimumZoom, zoom.value(0, at: t))
            let c = (center.value(0, at: t), center.value(1, at: t))
            if let crop {
                let (kx, ky) = (crop.value(2, at: t), crop.value(3, at: t))
                let (cw, ch) = (min(crop.value(0, at: t), uprightWidth), min(crop.value(1, at: t), uprightHeight))
                var x = kx.isNaN ? c.0 * uprightWidth - cw / 2 : kx
                var y = ky.isNaN ? c.1 * uprightHeight - ch / 2 : ky
                x = min(max(x, 0), uprightWidth - cw)
                y = min(max(y, 0), uprightHeight - ch)
                let w = cw / z
                let h = ch / z
                // Zoomed in, the window stays inside the crop; zoomed out it is centred on it.
                let r = Rect(x: x + (cw - w) / 2, y: y + (ch - h) / 2, width: w, height: h)
                return display.inverse.apply(r, width: uprightWidth, height: uprightHeight)
            }
            let w = uprightWidth / z
            let h = uprightHeight / z
            // Zoomed in, the window stays inside the picture; zoomed out (larger than the
            // picture) it stays centred on the centre, and the background shows around.
            let x =
                w <= uprightWidth
                ? min(max(c.0 * uprightWidth - w / 2, 0), uprightWidth - w) : c.0 * uprightWidth - w / 2
            let y =
                h <= uprightHeight
                ? min(max(c.1 * uprightHeight - h / 2, 0), uprightHeight - h) : c.1 * uprightHeight - h / 2
            return display.inverse.apply(
                Rect(x: x, y: y, width: w, height: h), width: uprightWidth, height: uprightHeight)
        }
    }

    public static func == (l: GeometryPlan, r: GeometryPlan) -> Bool {
        l.source == r.source && l.animation == r.animation && l.scaled == r.scaled && l.orientation == r.orientation
            && l.output == r.output && l.keepsInputAspectAndMatrix == r.keepsInputAspectAndMatrix && l.warp == r.warp
    }

    /// Output pixel coordinates (0...width, 0...height, y down) to coded input coordinates.
    public var outputToInput: Affine { outputToInput(window: staticWindow) }

    /// `source` as a `Rect`.
    private var staticWindow: Rect {
        Rect(x: Double(source.x), y: Double(source.y), width: Double(source.width), height: Double(source.height))
    }

    /// The window that frame time `t` reads (coded pixels, fractional): the animation's, else
    /// the static one.
    public func window(at t: Double) -> Rect { animation?.window(at: t) ?? staticWindow }

    /// The whole map a warped frame at time `t` uses: output pixel coordinates to coded input
    /// coordinates (the user's matrix and rotation undone, then the window and orientation).
    public func warpMap(at t: Double) -> Affine? {
        var base = outputToInput(window: window(at: t))
        if let path = warp?.stabilization { base = base.then(path.map(at: t)) }
        if let live = warp?.liveStabilization { base = base.then(live.map(at: t)) }
        guard let warp else { return base }
        let (w, h) = (Double(output.width), Double(output.height))
        guard let map = warp.outputToPicture(at: t, width: w, height: h)?.then(base) else { return nil }
        guard warp.cover else { return map }
        // The smallest zoom z ≥ 1 about the frame's centre c at which every corner q of the frame
        // shows the picture. Zoomed, q reads map(c) + L (q − c) / z (L: the map's linear part),
        // each coordinate linear in s = 1/z; the largest s that keeps all four inside the coded
        // picture, in closed form.
        let (cw, ch) = (Double(warp.codedWidth), Double(warp.codedHeight))
        let centre = map.apply(w / 2, h / 2)
        var s = 1.0
        func bound(_ a: Double, _ b: Double, _ limit: Double) {  // keep 0 ≤ a + b s ≤ limit
            if b > 0 { s = min(s, (limit - a) / b) } else if b < 0 { s = min(s, -a / b) }
        }
        for qx in stride(from: -w / 2, through: w / 2, by: w) {
            for qy in stride(from: -h / 2, through: h / 2, by: h) {
                bound(centre.x, map.a * qx + map.c * qy, cw)
                bound(centre.y, map.b * qx + map.d * qy, ch)
            }
        }
        let z = s > 1.0 / 64 ? 1 / s : 64  // the centre itself off the picture: as far as 64x
        return Affine.scale(1 / z, 1 / z, tx: w / 2 * (1 - 1 / z), ty: h / 2 * (1 - 1 / z)).then(map)
    }

    /// Output pixel coordinates to coded input coordinates for a window of the coded picture.
    public func outputToInput(window: Rect) -> Affine {
        // output -> scaled (undo the orthogonal transform about the centres)
        let inv = orientation.inverse
        let (sw, sh) = (Double(scaled.width), Double(scaled.height))
        let (ow, oh) = (Double(output.width), Double(output.height))
        let toScaled = Affine(a: 1, b: 0, c: 0, d: 1, tx: -ow / 2, ty: -oh / 2)
            .then(Affine(a: Double(inv.a), b: Double(inv.c), c: Double(inv.b), d: Double(inv.d), tx: 0, ty: 0))
            .then(Affine(a: 1, b: 0, c: 0, d: 1, tx: sw / 2, ty: sh / 2))
        // scaled -> source window
        let toSource = Affine(a: window.width / sw, b: 0, c: 0, d: window.height / sh, tx: window.x, ty: window.y)
        return toScaled.then(toSource)
    }

    /// Plans the geometry for one input. `outputAlign` is the size multiple the output pixel
    /// format needs (2 for 4:2:0).
    /// The same geometry as an ffmpeg filter chain for `ffmpeg -noautorotate` (which hands the
    /// filters the coded picture, as cropzoom's plan starts from it): crop the coded window, scale
    /// to the coded-orientation size with `scaler`'s swscale flags, then the orientation as
    /// transpose/flip filters, and `setsar=1` when the output has square pixels.
    public func ffmpegFilter(scaler: TranscodeConfiguration.Scaler) -> String {
        var chain = [
            "crop=\(source.width):\(source.height):\(source.x):\(source.y)",
            "scale=\(scaled.width):\(scaled.height):flags=\(scaler.rawValue)",
        ]
        switch (orientation.a, orientation.b, orientation.c, orientation.d) {
        case (1, 0, 0, 1): break
        case (0, -1, 1, 0): chain.append("transpose=clock")
        case (0, 1, -1, 0): chain.append("transpose=cclock")
        case (-1, 0, 0, -1): chain += ["hflip", "vflip"]
        case (-1, 0, 0, 1): chain.append("hflip")
        case (1, 0, 0, -1): chain.append("vflip")
        case (0, 1, 1, 0): chain.append("transpose=cclock_flip")  // transposition
        default: chain.append("transpose=clock_flip")  // (0,-1,-1,0): anti-transposition
        }
        if !keepsInputAspectAndMatrix { chain.append("setsar=1") }
        return chain.joined(separator: ",")
    }

    /// The largest window of shape `aspect` (width / height as shown) inside a `width` x `height` upright picture
    /// whose pixels are `sx` x `sy` wide and high as shown: even numbers of pixels, at least 2.
    public static func aspectWindow(
        _ aspect: Double, width uw: Double, height uh: Double, sx: Double = 1, sy: Double = 1
    ) -> (width: Int, height: Int) {
        var (cw, ch) = (uw, uh)
        if uw * sx / (uh * sy) > aspect { cw = uh * sy * aspect / sx } else { ch = uw * sx / (aspect * sy) }
        // Even sides: what 4:2:0 outputs need, so the output shows the window at exactly its own scale.
        return (max(2, Int((cw / 2 + 1e-9).rounded(.down)) * 2), max(2, Int((ch / 2 + 1e-9).rounded(.down)) * 2))
    }

    public static func make(
        _ given: GeometryRequest, source: SourcePicture,
        outputAlign: (x: Int, y: Int) = (2, 2)
    ) throws(CropZoomError) -> GeometryPlan {
        var request = given
        let auto = request.orientation == .auto
        let display: Orientation = auto ? source.display : .identity
        let sar = auto && source.sampleAspect > 0 ? source.sampleAspect : 1
        let upright = display.apply(width: source.width, height: source.height)
        let (uw, uh) = (Double(upright.width), Double(upright.height))
        // Display scale of one upright pixel.
        let (sx, sy) = display.swapsAxes ? (1.0, sar) : (sar, 1.0)

        guard request.zoom >= GeometryPlan.minimumZoom, request.zoom.isFinite else {
            throw CropZoomError(
                .usage, setting: .zoom,
                reason: "\(setting: .zoom) must be at least \(GeometryPlan.minimumZoom) (got \(request.zoom))")
        }
        // --aspect with --fit contain: the whole picture inside an output of that shape (the background around it).
        if let aspect = request.aspect, request.fit == .contain, request.size == nil {
            let a = request.rotate % 180 != 0 ? 1 / aspect.ratio : aspect.ratio
            let (dw, dh) = (uw * sx, uh * sy)
            let (w, h) = dw / dh > a ? (dw, dw / a) : (dh * a, dh)
            let (ow, oh) = request.rotate % 180 != 0 ? (h, w) : (w, h)
            request.size = .init(width: Int(ow.rounded()), height: Int(oh.rounded()))
            request.aspect = nil
        }
        // --fit cover: the largest window of the size's aspect ratio (at display scale), about the centre.
        let fits = request.size.map { $0.width > 0 && $0.height > 0 } == true && request.fit != .stretch
        if fits && request.fit == .cover, let size = request.size {
            guard request.crop == nil && request.cropTrack == nil else {
                throw CropZoomError(
                    .usage, setting: .fit,
                    reason: "\(setting: .fit) cover cuts the picture itself: drop \(setting: .crop)")
            }
            let target = Double(size.width) / Double(size.height)
            let turned = request.rotate % 180 != 0
            let aspect = turned ? 1 / target : target
            var (cw, ch) = (uw, uh)
            if uw * sx / (uh * sy) > aspect { cw = uh * sy * aspect / sx } else { ch = uw * sx / (aspect * sy) }
            request.crop = GeometryRequest.Crop(
                width: max(1, Int(cw.rounded(.down))), height: max(1, Int(ch.rounded(.down))), x: nil, y: nil)
        }
        // --aspect: the largest window of that shape (at display scale; turned by --rotate 90/270), about the centre.
        if let aspect = request.aspect, request.crop == nil, request.cropTrack == nil {
            let a = request.rotate % 180 != 0 ? 1 / aspect.ratio : aspect.ratio
            let (cw, ch) = aspectWindow(a, width: uw, height: uh, sx: sx, sy: sy)
            request.crop = GeometryRequest.Crop(width: cw, height: ch, x: nil, y: nil)
        }
        if fits && request.fit == .contain && request.transform != nil {
            throw CropZoomError(
                .usage, setting: .fit,
                reason:
                    "\(setting: .fit) contain places the picture with a matrix of its own: drop \(setting: .transform)")
        }
        // 1. The window in the upright picture.
        var window: Rect
        if let crop = request.crop {
            guard crop.width > 0, crop.height > 0, Double(crop.width) <= uw, Double(crop.height) <= uh else {
                throw CropZoomError(
                    .usage,
                    setting: .crop,
                    reason:
                        "\(setting: .crop) \(crop.width):\(crop.height) does not fit the "
                        + "\(upright.width)x\(upright.height) "
                        + "picture"
                )
            }
            let cw = Double(crop.width)
            let ch = Double(crop.height)
            let x0 = crop.x.map(Double.init) ?? (request.center.x * uw - cw / 2)
            let y0 = crop.y.map(Double.init) ?? (request.center.y * uh - ch / 2)
            if let x = crop.x, let y = crop.y, x < 0 || y < 0 || Double(x) + cw > uw || Double(y) + ch > uh {
                throw CropZoomError(
                    .usage,
                    setting: .crop,
                    reason:
                        "\(setting: .crop) \(crop.width):\(crop.height):\(x):\(y) reaches outside the "
                        + "\(upright.width)x\(upright.height) picture"
                )
            }
            window = Rect(x: x0, y: y0, width: cw, height: ch)
            // Zoomed out, the static window is the crop; the real one (larger) is the animation's.
            if request.zoom > 1 {
                let w = cw / request.zoom
                let h = ch / request.zoom
                window = Rect(x: x0 + (cw - w) / 2, y: y0 + (ch - h) / 2, width: w, height: h)
            }
        } else {
            // Zoomed out, the static window is the whole picture; the real one (larger than the
            // picture) is the animation's.
            let z = max(1, request.zoom)
            let w = uw / z
            let h = uh / z
            window = Rect(x: request.center.x * uw - w / 2, y: request.center.y * uh - h / 2, width: w, height: h)
        }
        // Clamp inside the picture.
        window.x = min(max(window.x, 0), uw - window.width)
        window.y = min(max(window.y, 0), uh - window.height)

        // 2. Output size: the window at display scale, times the zoom (a camera's digital zoom
        // keeps the frame size), then the user's rotation, then --size.
        let user = (Orientation.rotation(clockwise: request.rotate) ?? .identity)
            .then(request.flip == .horizontal ? .flipHorizontal : request.flip == .vertical ? .flipVertical : .identity)
        var base = (w: window.width * max(1, request.zoom) * sx, h: window.height * max(1, request.zoom) * sy)
        if user.swapsAxes { base = (base.h, base.w) }
        var out = base
        if let size = request.size {
            switch (size.width > 0, size.height > 0) {
            case (true, true): out = (Double(size.width), Double(size.height))
            case (true, false): out = (Double(size.width), Double(size.width) * base.h / base.w)
            case (false, true): out = (Double(size.height) * base.w / base.h, Double(size.height))
            case (false, false):
                throw CropZoomError(
                    .usage, setting: .size, reason: "\(setting: .size) needs at least one positive side")
            }
        }
        func align(_ v: Double, _ m: Int) -> Int {
            max(m, Int((v / Double(m)).rounded()) * m)
        }
        let output = (width: align(out.w, outputAlign.x), height: align(out.h, outputAlign.y))
        // --fit contain: the picture at its own aspect ratio, as large as fits, centred (a matrix on the stretched
        // one).
        var contain: Track? = nil
        if fits && request.fit == .contain {
            let (ow, oh) = (Double(output.width), Double(output.height))
            let s = min(ow / base.w, oh / base.h)
            let (fw, fh) = (base.w * s, base.h * s)
            if abs(fw - ow) > 0.5 || abs(fh - oh) > 0.5 {
                contain = Track(constant: [fw / ow, 0, 0, fh / oh, (ow - fw) / 2, (oh - fh) / 2])
            }
        }

        // 3. The window in coded pixels, aligned for chroma.
        let coded = display.inverse.apply(window, width: uw, height: uh)
        // Sizes too are whole chroma samples: an odd window over 4:2:0 makes the scaler stretch
        // chroma by half a sample (measured: 9 dB of chroma PSNR, Benchmarks/README.md).
        func place(_ origin: Double, _ length: Double, _ limit: Int, _ align: Int) -> (Int, Int) {
            let len = min(limit, max(align, Int((length / Double(align)).rounded()) * align))
            var o = Int((origin / Double(align)).rounded()) * align
            o = min(o, (limit - len) / align * align)
            return (max(0, o), len)
        }
        let (x, w) = place(coded.x, coded.width, source.width, max(1, source.alignX))
        let (y, h) = place(coded.y, coded.height, source.height, max(1, source.alignY))

        // A side --size gives is at most maximumSide (the settings refuse more), so a larger one comes from the
        // picture — its size, shape or pixel aspect ratio (a damaged header read as a 432x65536 picture): the input's
        // failure, named by the caller, not a usage error.
        guard output.width <= maximumSide && output.height <= maximumSide else {
            throw CropZoomError(
                .inputUnreadable, setting: .size,
                reason: "its \(source.width)x\(source.height) pictures would make a \(output.width)x\(output.height) "
                    + "output; the most is \(maximumSide) a side (\(setting: .size) can set both sides)")
        }
        let total = display.then(user)
        let scaled = total.inverse.apply(width: output.width, height: output.height)
        var plan = GeometryPlan(
            source: PixelRect(x: x, y: y, width: w, height: h), scaled: scaled,
            orientation: total, output: output, keepsInputAspectAndMatrix: !auto)
        if request.movesWindow {
            let z = request.zoomTrack ?? Track(constant: [request.zoom])
            guard z.range(component: 0).lowerBound >= GeometryPlan.minimumZoom else {
                throw CropZoomError(
                    .usage, setting: .zoom,
                    reason: "\(setting: .zoom) keyframes must be at least \(GeometryPlan.minimumZoom)")
            }
            var animation = Animation(
                zoom: z, center: request.centerTrack ?? Track(constant: [request.center.x, request.center.y]),
                uprightWidth: uw, uprightHeight: uh, display: display)
            if let track = request.cropTrack {
                try checkCropTrack(track, width: uw, height: uh)
                animation.crop = track
            } else if let crop = request.crop {
                animation.crop = Track(constant: [
                    Double(crop.width), Double(crop.height),
                    crop.x.map(Double.init) ?? .nan, crop.y.map(Double.init) ?? .nan,
                ])
            }
            plan.animation = animation
        }
        if request.warps || contain != nil {
            plan.warp = Warp(
                angle: request.angle, transform: request.transform ?? contain,
                codedWidth: source.width, codedHeight: source.height)
            if let m = request.transform {
                try checkTransform(m)
            }
        }
        return plan
    }

    /// Crop keyframes: each inside the picture, all of one aspect ratio (the output has one size).
    package static func checkCropTrack(_ track: Track, width: Double, height: Double) throws(CropZoomError) {
        for k in track.keys {
            let v = k.value
            guard v[0] >= 2, v[1] >= 2, v[0] <= width, v[1] <= height else {
                throw CropZoomError(
                    .usage,
                    setting: .crop,
                    reason:
                        "\(setting: .crop) keyframe at \(k.time)s: \(Int(v[0])):\(Int(v[1])) does not fit the "
                        + "\(Int(width))x\(Int(height)) picture"
                )
            }
            if !v[2].isNaN, v[2] < 0 || v[3] < 0 || v[2] + v[0] > width || v[3] + v[1] > height {
                throw CropZoomError(
                    .usage,
                    setting: .crop,
                    reason:
                        "\(setting: .crop) keyframe at \(k.time)s reaches outside the "
                        + "\(Int(width))x\(Int(height)) picture"
                )
            }
        }
        try checkCropAspect(track)
    }

    /// Crop keyframes keep one aspect ratio (within 1 %): the output has one size.
    public static func checkCropAspect(_ track: Track) throws(CropZoomError) {
        let first = track.keys[0]
        let aspect = first.value[0] / first.value[1]
        for k in track.keys where abs(k.value[0] / k.value[1] - aspect) > 0.01 * aspect {
            throw CropZoomError(
                .usage,
                setting: .crop,
                reason:
                    "\(setting: .crop) keyframes must keep one aspect ratio (the output has one size): "
                    + "\(Int(first.value[0])):\(Int(first.value[1])) at \(first.time)s, "
                    + "\(Int(k.value[0])):\(Int(k.value[1])) at \(k.time)s"
            )
        }
    }

    /// A matrix must stay invertible between its keys too (a mirror animated through zero is not).
    public static func checkTransform(_ m: Track) throws(CropZoomError) {
        let keys = m.keys
        // Scales up to 10000× and moves up to 10^7 pixels: beyond that nothing of the picture
        // stays in the frame, and the inverse (the warp's map) loses its precision.
        for k in keys
        where k.value[0..<4].contains(where: { abs($0) > 1e4 }) || k.value[4...].contains(where: { abs($0) > 1e7 }) {
            throw CropZoomError(
                .usage,
                setting: .transform,
                reason: "\(setting: .transform) at \(k.time)s: a, b, c, d must be within ±10000 and tx, ty within "
                    + "±10000000 pixels"
            )
        }
        let t0 = keys.first!.time
        let t1 = keys.last!.time
        let steps = keys.count > 1 ? 2000 : 0
        var sign = 0.0
        for i in 0...steps {
            let t = steps == 0 ? t0 : t0 + (t1 - t0) * Double(i) / Double(steps)
            let d = Affine(m, at: t).determinant
            if abs(d) < 1e-6 || (sign != 0 && (d > 0) != (sign > 0)) {
                throw CropZoomError(
                    .usage,
                    setting: .transform,
                    reason:
                        "\(setting: .transform) is not "
                        + "invertible\(steps == 0 ? "" : String(format: " at %.3fs", t)) (a*d - "
                        + "b*c = 0): the picture would collapse to a line"
                )
            }
            sign = d
        }
    }
}
