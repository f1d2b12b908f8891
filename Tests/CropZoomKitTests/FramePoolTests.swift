import CFFmpeg
import Testing

@testable import CropZoomFFmpeg
@testable import CropZoomKit

@Suite("Frame pool")
struct FramePoolTests {
    /// The eight orientations of D4.
    static let orientations: [Orientation] = [
        .identity, .rotate90, .rotate180, .rotate270,
        .flipHorizontal, .flipVertical,
        Orientation.rotate90.then(.flipHorizontal), Orientation.rotate90.then(.flipVertical),
    ]

    @Test func reusesFramesAfterWarmUp() throws {
        let pool = FramePool(width: 64, height: 48, format: PixelFormat(AV_PIX_FMT_YUV420P), capacity: 4)
        for _ in 0..<300 {
            let a = try pool.acquire()
            let b = try pool.acquire()
            pool.release(a)
            pool.release(b)
        }
        let s = pool.snapshot()
        #expect(s.allocations == 2)
        #expect(s.reuses == 598)
        #expect(s.highWater == 2)
    }

    @Test func skipsFramesStillReferencedElsewhere() throws {
        let pool = FramePool(width: 64, height: 48, format: PixelFormat(AV_PIX_FMT_YUV420P), capacity: 4)
        let a = try pool.acquire()
        // Someone (an encoder) keeps a reference to a's buffers.
        let holder = try Frame()
        #expect(av_frame_ref(holder.pointer, a.pointer) == 0)
        pool.release(a)
        let b = try pool.acquire()
        #expect(b !== a)
        #expect(b.isWritable)
        holder.unref()
        pool.release(b)
        let c = try pool.acquire()
        #expect(c.isWritable)
        #expect(pool.snapshot().allocations == 2)
    }

    @Test func isBounded() throws {
        let pool = FramePool(width: 16, height: 16, format: PixelFormat(AV_PIX_FMT_YUV420P), capacity: 2)
        let a = try pool.acquire()
        let b = try pool.acquire()
        #expect(throws: CropZoomError.self) { _ = try pool.acquire() }
        pool.release(a)
        pool.release(b)
    }
}

@Suite("Plane kernel")
struct PlaneKernelTests {
    /// Fills a 4x3 gray picture with distinct values and checks every orientation against the
    /// definition dest = M * src about the centre.
    @Test(arguments: FramePoolTests.orientations)
    func orthogonalKernelMatchesTheDefinition(_ o: Orientation) throws {
        let (w, h) = (4, 3)
        let src = try Frame(width: w, height: h, format: AV_PIX_FMT_GRAY8)
        for y in 0..<h {
            for x in 0..<w {
                src.pointer.pointee.data.0![y * Int(src.pointer.pointee.linesize.0) + x] = UInt8(10 * y + x)
            }
        }
        let (dw, dh) = o.apply(width: w, height: h)
        let dst = try Frame(width: dw, height: dh, format: AV_PIX_FMT_GRAY8)
        Transformer.orient(src, into: dst, o)
        for y in 0..<h {
            for x in 0..<w {
                // Centre of source pixel (x, y) relative to the picture centre, mapped by M.
                let cx = Double(x) + 0.5 - Double(w) / 2
                let cy = Double(y) + 0.5 - Double(h) / 2
                let dx = Int(Double(o.a) * cx + Double(o.b) * cy + Double(dw) / 2 - 0.5)
                let dy = Int(Double(o.c) * cx + Double(o.d) * cy + Double(dh) / 2 - 0.5)
                let v = dst.pointer.pointee.data.0![dy * Int(dst.pointer.pointee.linesize.0) + dx]
                #expect(v == UInt8(10 * y + x), "orientation \(o) at \(x),\(y)")
            }
        }
    }
}
