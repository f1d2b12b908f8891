import CFFmpeg
import CPlaneKernels
import CropZoomCore

/// `--background blur`: the picture itself behind a zoomed-out, turned or moved picture. Each
/// frame: the picture cropped to the frame's aspect (centred), shrunk by swscale (area) to a
/// frame about a sixteenth as wide, box-blurred three times (`cz_box_blur`, close to a Gaussian)
/// and scaled up into every sample of the target — by the separable resampler when the map is
/// axis-aligned, by the warp when the picture is turned. The picture is drawn over it after.
/// The small frame, its scaler, the up-scaler and the line buffer are made once per size.
///
/// `@unchecked Sendable`: each transform worker owns its own.
package final class BlurredBackground: @unchecked Sendable {
    private var small: Frame?
    private var shrink: Scaler?
    private var grow: PlaneResampler?
    private var line: UnsafeMutablePointer<Int32>?
    private let planes = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: 4)
    private let strides = UnsafeMutablePointer<Int32>.allocate(capacity: 4)

    package init() {}

    deinit {
        line?.deallocate()
        planes.deallocate()
        strides.deallocate()
    }

    /// Paints `target` with the blurred `input`. `aspect`: the target's width / height in coded
    /// orientation; `toCoded` maps target luma coordinates to coded ones for a cover window;
    /// `warper` scales up when that map is not axis-aligned.
    package func paint(
        _ input: Frame, into target: Frame, aspect: Double, warper: () throws(CropZoomError) -> PlaneWarper,
        toCoded: (Rect) -> Affine
    ) throws(CropZoomError) {
        let (W, H) = (input.width, input.height)
        var cw = W
        var ch = H
        if Double(W) / Double(H) > aspect {
            cw = max(2, Int(Double(H) * aspect) & ~1)
        } else {
            ch = max(2, Int(Double(W) / aspect) & ~1)
        }
        let cx = ((W - cw) / 2) & ~1
        let cy = ((H - ch) / 2) & ~1
        let sw = max(16, (cw / 16 + 1) & ~1)
        let sh = max(16, (Int(Double(sw) / aspect) + 1) & ~1)
        let format = input.pixelFormat
        guard let info = PixelFormatInfo(format) else { return }
        if small == nil || small!.width != sw || small!.height != sh || small!.pixelFormat != format {
            small = try Frame(width: sw, height: sh, format: format)
            line?.deallocate()
            line = UnsafeMutablePointer<Int32>.allocate(capacity: max(sw, sh) + 16)
        }
        let small = small!
        let full = input.isFullRange
        let location = input.pointer.pointee.chroma_location
        let key = Scaler.Key(
            srcW: cw, srcH: ch, srcFormat: format, dstW: sw, dstH: sh, dstFormat: format, flags: SWS_AREA,
            srcFullRange: full, dstFullRange: full, chromaLocation: location)
        if shrink?.key != key { shrink = try Scaler(key) }
        input.windowPlanes(x: cx, y: cy, info: info, planes: planes, strides: strides)
        shrink!.scale(src: planes, srcStride: strides, into: small)
        for i in 0..<info.planeCount {
            let (pw, ph) = info.planeSize(i, width: sw, height: sh)
            cz_box_blur(
                small.pointer.pointee.dataPlane(i), Int(small.pointer.pointee.linesizePlane(i)), Int32(pw), Int32(ph),
                Int32(info.bitDepth > 8 ? 2 : 1), Int32(max(1, pw / 24)), 3, line)
        }
        // Target luma → coded luma (the cover window) → the small frame's luma coordinates.
        let cover = Rect(x: Double(cx), y: Double(cy), width: Double(cw), height: Double(ch))
        let map = toCoded(cover).then(
            .scale(
                Double(sw) / Double(cw), Double(sh) / Double(ch),
                tx: -Double(cx) * Double(sw) / Double(cw), ty: -Double(cy) * Double(sh) / Double(ch)))
        // Axis-aligned (no orientation turn): the separable resampler, far cheaper than the warp.
        if map.b == 0 && map.c == 0 && map.a > 0 && map.d > 0,
            PlaneResampler.takes(src: format, dst: target.pixelFormat, filter: .bicubic)
        {
            let key = PlaneResampler.Key(
                srcW: sw, srcH: sh, srcFormat: format, dstW: target.width, dstH: target.height,
                dstFormat: target.pixelFormat, filter: .bicubic)
            if grow?.key != key { grow = try PlaneResampler(key) }
            try grow!.scale(
                small,
                window: Rect(
                    x: map.tx, y: map.ty, width: map.a * Double(target.width),
                    height: map.d * Double(target.height)), into: target)
            return
        }
        try warper().warp(small, through: map, into: target, location: location, background: nil)
    }
}
