import CFFmpeg
import CropZoomCore

extension Frame {
    /// A real picture, not zeros: diagonal gradients plus deterministic noise in every plane,
    /// kept inside the format's nominal range.
    package func fillWithTestPattern(_ info: PixelFormatInfo) {
        var seed: UInt32 = 0x2545_F491
        let steps = info.planeSteps
        for p in 0..<info.planeCount {
            guard let base = pointer.pointee.dataPlane(p) else { continue }
            let chroma = info.isChromaPlane(p)
            let w = (chroma ? -((-width) >> info.log2ChromaW) : width) * steps[p]
            let h = chroma ? -((-height) >> info.log2ChromaH) : height
            let linesize = Int(pointer.pointee.linesizePlane(p))
            let wide = info.bitDepth > 8
            for y in 0..<h {
                let row = base + y * linesize
                for x in stride(from: 0, to: w, by: wide ? 2 : 1) {
                    seed = seed &* 1_664_525 &+ 1_013_904_223
                    let v = 32 + (x * 3 + y * 5 + p * 40) % 160 + Int(seed >> 28)  // 32...207
                    if wide {
                        let s = UInt16(v << (info.bitDepth - 8))
                        row[x] = UInt8(s & 0xff)
                        row[x + 1] = UInt8(s >> 8)
                    } else {
                        row[x] = UInt8(v)
                    }
                }
            }
        }
    }

    /// The first plane (luma) of a planar YUV picture, averaged in boxes of `factor` × `factor` so that it is at most
    /// `maxWidth` wide, scaled to 0...255 whatever the bit depth; nil for other formats.
    package func averagedLuma(maxWidth: Int) -> (width: Int, height: Int, factor: Int, values: [Double])? {
        guard let info = PixelFormatInfo(pixelFormat), info.isZimgPlanar, let base = pointer.pointee.dataPlane(0)
        else { return nil }
        let ls = Int(pointer.pointee.linesizePlane(0))
        let f = max(1, (width + maxWidth - 1) / maxWidth)
        let w = width / f
        let h = height / f
        let scale = 1 / Double(1 << (info.bitDepth - 8)) / Double(f * f)
        var a = [Double](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w {
                var s = 0.0
                for dy in 0..<f {
                    let row = base + (y * f + dy) * ls
                    for dx in 0..<f {
                        s +=
                            info.bitDepth > 8
                            ? Double(UnsafeRawPointer(row).load(fromByteOffset: 2 * (x * f + dx), as: UInt16.self))
                            : Double(row[x * f + dx])
                    }
                }
                a[y * w + x] = s * scale
            }
        }
        return (w, h, f, a)
    }
}
