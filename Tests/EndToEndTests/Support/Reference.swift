// Builds the ffmpeg-CLI reference picture for a cropzoom geometry request, from facts about
// the input measured with ffprobe (never from cropzoom's output).

import Foundation

/// A geometry request as the tests phrase it (mirrors the CLI options).
struct GeometrySpec: Sendable, Equatable {
    var zoom: Double = 1
    var center: (x: Double, y: Double) = (0.5, 0.5)
    /// W:H[:X:Y] in upright pixels.
    var crop: (w: Int, h: Int, x: Int?, y: Int?)? = nil
    /// --size W x H, -2 for one side.
    var size: (w: Int, h: Int)? = nil
    var rotate: Int = 0
    var flip: String? = nil
    var scaler: String = "bicubic"

    static func == (l: GeometrySpec, r: GeometrySpec) -> Bool { l.arguments == r.arguments }

    /// The cropzoom options for this request.
    var arguments: [String] {
        var a: [String] = []
        if zoom != 1 { a += ["--zoom", String(zoom)] }
        if center != (0.5, 0.5) { a += ["--center", "\(center.x),\(center.y)"] }
        if let crop {
            var text = "\(crop.w):\(crop.h)"
            if let x = crop.x, let y = crop.y { text += ":\(x):\(y)" }
            a += ["--crop", text]
        }
        if let size { a += ["--size", "\(size.w)x\(size.h)"] }
        if rotate != 0 { a += ["--rotate", String(rotate)] }
        if let flip { a += ["--flip", flip] }
        if scaler != "bicubic" { a += ["--scaler", scaler] }
        return a
    }
}

/// What the reference is: the filter for `Oracle.meanPSNR` and the output size it implies.
struct ReferencePicture: Sendable, CustomStringConvertible {
    var filter: String
    var width: Int
    var height: Int
    /// The crop window in upright pixels (for messages).
    var window: (w: Int, h: Int, x: Int, y: Int)

    var description: String { "\(width)x\(height) from \(filter)" }

    /// The reference for `spec` applied to a picture that is `upright` pixels when shown upright
    /// (the ffmpeg CLI's autorotated picture), with display aspect `sar` (pixel aspect of the
    /// coded picture, applied along the upright x axis when the picture is not turned, y axis
    /// when it is: `sarAlongY`), chroma alignment `align` of the source (2 for 4:2:0) and
    /// `outputAlign` of the output pixel format.
    ///
    /// Rules taken from the CLI contract:
    /// - `--zoom Z`: a window of (W/Z)x(H/Z) centred on --center, clamped inside the picture;
    ///   the output keeps the displayed upright size (W x H at display aspect).
    /// - `--crop W:H[:X:Y]`: that window (centred on --center when X:Y is omitted); the output
    ///   is the window at display aspect.
    /// - `--rotate` clockwise then `--flip`, after the crop; `--size` with -2 keeps the aspect,
    ///   rounded to the nearest multiple the output pixel format needs.
    static func make(
        _ spec: GeometrySpec, upright: (width: Int, height: Int), sar: Double = 1, sarAlongY: Bool = false,
        align: Int = 2, outputAlign: Int = 2
    ) -> ReferencePicture {
        let (uw, uh) = (Double(upright.width), Double(upright.height))
        // The exact (fractional) window, clamped inside the picture, then each value rounded
        // to the nearest whole pixel (offsets to the nearest multiple of the source's chroma
        // grid) - the usual way to put a fractional window on a pixel grid.
        var w: Double
        var h: Double
        var x: Double
        var y: Double
        if let crop = spec.crop {
            w = Double(crop.w)
            h = Double(crop.h)
            x = crop.x.map(Double.init) ?? (spec.center.x * uw - w / 2)
            y = crop.y.map(Double.init) ?? (spec.center.y * uh - h / 2)
        } else {
            w = uw / spec.zoom
            h = uh / spec.zoom
            x = spec.center.x * uw - w / 2
            y = spec.center.y * uh - h / 2
        }
        x = min(max(x, 0), uw - w)
        y = min(max(y, 0), uh - h)
        // Sizes are whole chroma samples too (a multiple of `align`, at most the picture).
        let wi = min(upright.width, max(align, Int((w / Double(align)).rounded()) * align))
        let hi = min(upright.height, max(align, Int((h / Double(align)).rounded()) * align))
        let xi = min(Int((x / Double(align)).rounded()) * align, (upright.width - wi) / align * align)
        let yi = min(Int((y / Double(align)).rounded()) * align, (upright.height - hi) / align * align)

        // Output size before the user's rotation: the window at display aspect, times the zoom.
        let (sx, sy) = sarAlongY ? (1.0, sar) : (sar, 1.0)
        var base = (w: w * (spec.crop == nil ? spec.zoom : 1) * sx, h: h * (spec.crop == nil ? spec.zoom : 1) * sy)
        let turns = spec.rotate == 90 || spec.rotate == 270
        if turns { base = (base.h, base.w) }
        var out = base
        if let size = spec.size {
            if size.w > 0 && size.h > 0 {
                out = (Double(size.w), Double(size.h))
            } else if size.w > 0 {
                out = (Double(size.w), Double(size.w) * base.h / base.w)
            } else {
                out = (Double(size.h) * base.w / base.h, Double(size.h))
            }
        }
        func aligned(_ v: Double) -> Int { max(outputAlign, Int((v / Double(outputAlign)).rounded()) * outputAlign) }
        let (ow, oh) = (aligned(out.w), aligned(out.h))
        // Scale in the window's orientation, then turn.
        let (scaleW, scaleH) = turns ? (oh, ow) : (ow, oh)
        var filter = "crop=\(wi):\(hi):\(xi):\(yi):exact=1,scale=\(scaleW):\(scaleH):flags=\(spec.scaler)"
        switch spec.rotate {
        case 90: filter += ",transpose=clock"
        case 180: filter += ",hflip,vflip"
        case 270: filter += ",transpose=cclock"
        default: break
        }
        if spec.flip == "horizontal" { filter += ",hflip" }
        if spec.flip == "vertical" { filter += ",vflip" }
        return ReferencePicture(filter: filter, width: ow, height: oh, window: (wi, hi, xi, yi))
    }
}
