import CFFmpeg
import CropZoomCore
import Foundation

/// A picture cropzoom draws itself (the `--preview` contact sheet): packed RGB, 8 bits a sample, top row first.
package struct RGBPicture: Sendable {
    package let width: Int, height: Int
    package var pixels: [UInt8]

    package init(width: Int, height: Int, fill: (UInt8, UInt8, UInt8) = (0, 0, 0)) {
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 3)
        for i in 0..<(width * height) {
            pixels[3 * i] = fill.0
            pixels[3 * i + 1] = fill.1
            pixels[3 * i + 2] = fill.2
        }
    }

    /// `frame` as RGB, scaled to `width` x `height` (`sws_scale`, area averaging); nil when swscale cannot read it.
    package init?(_ frame: Frame, width: Int, height: Int) {
        let key = Scaler.Key(
            srcW: frame.width, srcH: frame.height, srcFormat: frame.pixelFormat, dstW: width, dstH: height,
            dstFormat: AV_PIX_FMT_RGB24, flags: Int32(SWS_AREA), srcFullRange: frame.isFullRange, dstFullRange: true)
        guard let scaler = try? Scaler(key),
            let rgb = try? Frame(width: width, height: height, format: AV_PIX_FMT_RGB24)
        else { return nil }
        let planes = UnsafeMutablePointer<UnsafePointer<UInt8>?>.allocate(capacity: 4)
        let strides = UnsafeMutablePointer<Int32>.allocate(capacity: 4)
        defer {
            planes.deallocate()
            strides.deallocate()
        }
        for i in 0..<4 {
            planes[i] = frame.pointer.pointee.dataPlane(i).map { UnsafePointer($0) }
            strides[i] = frame.pointer.pointee.linesizePlane(i)
        }
        scaler.scale(src: planes, srcStride: strides, into: rgb)
        guard let base = rgb.pointer.pointee.dataPlane(0) else { return nil }
        let stride = Int(rgb.pointer.pointee.linesizePlane(0))
        self.width = width
        self.height = height
        var out = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<(3 * width) { out[y * 3 * width + x] = base[y * stride + x] }
        }
        pixels = out
    }

    /// The picture as a PNG file's bytes (FFmpeg's PNG encoder: `avcodec_send_frame`, `avcodec_receive_packet`).
    package func png() throws(CropZoomError) -> Data {
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_PNG) else {
            throw CropZoomError(.processing, what: "writing a PNG", reason: "FFmpeg has no PNG encoder")
        }
        let context = try CodecContext(codec: codec, path: nil)
        let c = context.pointer
        c.pointee.width = Int32(width)
        c.pointee.height = Int32(height)
        c.pointee.pix_fmt = AV_PIX_FMT_RGB24
        c.pointee.time_base = AVRational(num: 1, den: 1)
        try check(avcodec_open2(c, codec, nil), "opening the PNG encoder")
        let frame = try Frame(width: width, height: height, format: AV_PIX_FMT_RGB24)
        guard let base = frame.pointer.pointee.dataPlane(0) else {
            throw CropZoomError(.processing, what: "writing a PNG", reason: "no picture buffer")
        }
        let stride = Int(frame.pointer.pointee.linesizePlane(0))
        for y in 0..<height {
            for x in 0..<(3 * width) { base[y * stride + x] = pixels[y * 3 * width + x] }
        }
        frame.pointer.pointee.pts = 0
        try check(avcodec_send_frame(c, frame.pointer), "encoding a PNG")
        try check(avcodec_send_frame(c, nil), "encoding a PNG")
        let packet = try Packet()
        var bytes = Data()
        while avcodec_receive_packet(c, packet.pointer) == 0 {
            bytes.append(packet.pointer.pointee.data, count: Int(packet.pointer.pointee.size))
            av_packet_unref(packet.pointer)
        }
        guard !bytes.isEmpty else {
            throw CropZoomError(.processing, what: "writing a PNG", reason: "the encoder gave no picture")
        }
        return bytes
    }
}
