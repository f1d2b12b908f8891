import CropZoomFFmpeg
import Foundation

/// `--preview sheet.png`: a contact sheet a person checks a reframed clip (or a batch) with at a glance: six frames
/// spread over the clip, each the upright input with the window drawn (yellow) and the subject's box (cyan), beside
/// what the output shows there. Decodes the input once more (up to the last frame shown); written atomically.
enum ContactSheet {
    static let rows = 6
    static let thumbWidth = 480
    static let gap = 8

    static func write(
        _ cfg: TranscodeConfiguration, path: ReframePath, shape: Reframer.Shape, to file: String, cancel: CancelFlag
    ) throws(CropZoomError) {
        let samples = path.samples
        guard !samples.isEmpty else { return }
        let k = min(rows, samples.count)
        let picks = (0..<k).map {
            samples[k == 1 ? 0 : Int((Double($0) * Double(samples.count - 1) / Double(k - 1)).rounded())]
        }
        let source = try InputSetup(cfg)
        let trim = try TrimWindow(cfg, input: source.input, videoIndex: source.videoIndex)
        let shift = trim.times.map { Double($0.shift[source.videoIndex]) } ?? 0
        let decoder = source.decoder
        try decoder.open(threads: max(1, UsableCPUs.count))
        let base = decoder.timeBase.seconds
        let offset = shift * base + trim.startTime
        let st = source.input.stream(source.videoIndex)
        let sar = SourcePicture.sampleAspect(
            st, decoder, width: decoder.context.width, height: decoder.context.height
        ).ratio.value
        // The thumbnail: the upright picture at its shown aspect, thumbWidth wide.
        let shown =
            shape.display.swapsAxes
            ? (shape.uprightWidth, shape.uprightHeight * sar) : (shape.uprightWidth * sar, shape.uprightHeight)
        let tw = thumbWidth
        let th = max(2, Int((Double(tw) * shown.1 / shown.0).rounded()))
        let vw = max(
            2,
            Int(
                (Double(th) * shape.window.width / shape.window.height * (shown.0 / shape.uprightWidth)
                    / (shown.1 / shape.uprightHeight)).rounded()))
        var sheet = RGBPicture(
            width: gap * 3 + tw + vw, height: gap + k * (th + gap), fill: (24, 24, 24))
        var next = 0
        let packet = try Packet()
        func take(_ frame: Frame) throws(CropZoomError) {
            guard next < k else { return }
            let t = Double(frame.presentationTime) * base - offset
            guard t >= picks[next].time - 1e-6 else { return }
            let coded = shape.display.swapsAxes ? (th, tw) : (tw, th)
            guard let thumb = RGBPicture(frame, width: coded.0, height: coded.1) else {
                throw CropZoomError(
                    .processing, what: "drawing the preview", path: cfg.inputName,
                    reason: "swscale cannot convert \(frame.format.name) pictures to RGB")
            }
            let upright = oriented(thumb, shape.display)
            let s = picks[next]
            let (fx, fy) = (Double(tw) / shape.uprightWidth, Double(th) / shape.uprightHeight)
            let top = gap + next * (th + gap)
            blit(upright, into: &sheet, x: gap, y: top)
            // The output's view: the window's part of the thumbnail, scaled to the row's height.
            for y in 0..<th {
                for x in 0..<vw {
                    let sx = (s.x + (Double(x) + 0.5) / Double(vw) * s.width) * fx - 0.5
                    let sy = (s.y + (Double(y) + 0.5) / Double(th) * s.height) * fy - 0.5
                    let (r, g, b) = sample(upright, sx, sy)
                    let o = 3 * ((top + y) * sheet.width + gap * 2 + tw + x)
                    sheet.pixels[o] = r
                    sheet.pixels[o + 1] = g
                    sheet.pixels[o + 2] = b
                }
            }
            box(
                &sheet, x: Double(gap) + s.x * fx, y: Double(top) + s.y * fy, w: s.width * fx, h: s.height * fy,
                colour: (255, 214, 0), thickness: 3)
            if let b = s.subject {
                box(
                    &sheet, x: Double(gap) + b.x * fx, y: Double(top) + b.y * fy, w: b.width * fx, h: b.height * fy,
                    colour: (0, 220, 255), thickness: 1)
            }
            next += 1
        }
        try InputSetup.decodeVideo(
            source.input, decoder, videoIndex: source.videoIndex, packet: packet, cancel: cancel, name: cfg.inputName,
            enough: { next >= k }, take)
        try AtomicFile.write(try sheet.png(), to: file)
    }

    /// The thumbnail turned upright (the display matrix's quarter turns and mirrors).
    static func oriented(_ p: RGBPicture, _ o: Orientation) -> RGBPicture {
        if o.isIdentity { return p }
        let (w, h) = o.apply(width: p.width, height: p.height)
        var out = RGBPicture(width: w, height: h)
        for y in 0..<p.height {
            for x in 0..<p.width {
                let r = o.apply(
                    Rect(x: Double(x), y: Double(y), width: 1, height: 1), width: Double(p.width),
                    height: Double(p.height))
                let (ux, uy) = (Int(r.x), Int(r.y))
                guard ux >= 0, ux < w, uy >= 0, uy < h else { continue }
                for c in 0..<3 { out.pixels[3 * (uy * w + ux) + c] = p.pixels[3 * (y * p.width + x) + c] }
            }
        }
        return out
    }

    static func blit(_ p: RGBPicture, into sheet: inout RGBPicture, x: Int, y: Int) {
        for row in 0..<p.height where y + row < sheet.height {
            for col in 0..<p.width where x + col < sheet.width {
                for c in 0..<3 {
                    sheet.pixels[3 * ((y + row) * sheet.width + x + col) + c] = p.pixels[3 * (row * p.width + col) + c]
                }
            }
        }
    }

    static func sample(_ p: RGBPicture, _ x: Double, _ y: Double) -> (UInt8, UInt8, UInt8) {
        let cx = min(max(x, 0), Double(p.width - 1))
        let cy = min(max(y, 0), Double(p.height - 1))
        let (x0, y0) = (Int(cx), Int(cy))
        let (x1, y1) = (min(x0 + 1, p.width - 1), min(y0 + 1, p.height - 1))
        let (fx, fy) = (cx - Double(x0), cy - Double(y0))
        func v(_ c: Int) -> UInt8 {
            let a =
                Double(p.pixels[3 * (y0 * p.width + x0) + c]) * (1 - fx) + Double(p.pixels[3 * (y0 * p.width + x1) + c])
                * fx
            let b =
                Double(p.pixels[3 * (y1 * p.width + x0) + c]) * (1 - fx) + Double(p.pixels[3 * (y1 * p.width + x1) + c])
                * fx
            return UInt8(min(255, max(0, (a * (1 - fy) + b * fy).rounded())))
        }
        return (v(0), v(1), v(2))
    }

    static func box(
        _ sheet: inout RGBPicture, x: Double, y: Double, w: Double, h: Double, colour: (UInt8, UInt8, UInt8),
        thickness: Int
    ) {
        let (x0, y0) = (Int(x.rounded()), Int(y.rounded()))
        let (x1, y1) = (Int((x + w).rounded()) - 1, Int((y + h).rounded()) - 1)
        func put(_ px: Int, _ py: Int) {
            guard px >= 0, py >= 0, px < sheet.width, py < sheet.height else { return }
            let o = 3 * (py * sheet.width + px)
            sheet.pixels[o] = colour.0
            sheet.pixels[o + 1] = colour.1
            sheet.pixels[o + 2] = colour.2
        }
        for t in 0..<thickness {
            for px in x0...max(x0, x1) {
                put(px, y0 + t)
                put(px, y1 - t)
            }
            for py in y0...max(y0, y1) {
                put(x0 + t, py)
                put(x1 - t, py)
            }
        }
    }
}
