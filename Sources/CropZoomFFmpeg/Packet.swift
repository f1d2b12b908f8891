import CFFmpeg
import CropZoomCore

/// Owns one `AVPacket` (`av_packet_alloc` / `av_packet_free`). Reused across reads: each
/// `av_read_frame` / `avcodec_receive_packet` fills it, `unref()` empties it.
///
/// `@unchecked Sendable`: a packet is used by one stage at a time; it crosses threads only by
/// being handed over through a pipeline queue, after which the sender no longer touches it.
package final class Packet: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVPacket>

    package init() throws(CropZoomError) {
        guard let p = av_packet_alloc() else {
            throw CropZoomError(.processing, what: "allocating a packet", reason: "out of memory")
        }
        pointer = p
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }

    package var streamIndex: Int {
        get { Int(pointer.pointee.stream_index) }
        set { pointer.pointee.stream_index = Int32(newValue) }
    }
    package var pts: Int64 {
        get { pointer.pointee.pts }
        set { pointer.pointee.pts = newValue }
    }
    package var dts: Int64 {
        get { pointer.pointee.dts }
        set { pointer.pointee.dts = newValue }
    }
    /// In the stream's time base (0: unknown).
    package var duration: Int64 {
        get { pointer.pointee.duration }
        set { pointer.pointee.duration = newValue }
    }
    package var size: Int { Int(pointer.pointee.size) }
    package var isCorrupt: Bool { pointer.pointee.flags & AV_PKT_FLAG_CORRUPT != 0 }
    /// A packet a decoder can start from (`AV_PKT_FLAG_KEY`).
    package var isKeyframe: Bool {
        get { pointer.pointee.flags & AV_PKT_FLAG_KEY != 0 }
        set {
            pointer.pointee.flags =
                newValue ? pointer.pointee.flags | AV_PKT_FLAG_KEY : pointer.pointee.flags & ~AV_PKT_FLAG_KEY
        }
    }

    /// `av_packet_unref`.
    package func unref() { av_packet_unref(pointer) }

    /// `av_packet_ref` of `other` into this (empty) packet.
    package func ref(_ other: Packet) throws(CropZoomError) {
        try check(av_packet_ref(pointer, other.pointer), "referencing a packet")
    }

    /// `av_packet_move_ref`: takes `other`'s payload, leaving it empty.
    package func take(_ other: Packet) { av_packet_move_ref(pointer, other.pointer) }

    /// Makes the packet hold a copy of `bytes` in a new buffer (`av_new_packet`, which zeroes the padding after
    /// them), whatever it held before (released).
    package func fill(_ bytes: some Collection<UInt8>) throws(CropZoomError) {
        av_packet_unref(pointer)
        try refill(bytes)
    }

    /// Makes the packet hold a copy of `bytes` in the buffer it holds already when that buffer is its alone
    /// (`av_buffer_is_writable`: a muxer has let go of it) and large enough, else in a new one (`av_new_packet`,
    /// which resets the packet's other fields); the padding after the bytes zeroed either way. A packet refilled
    /// sample after sample allocates only for a sample larger than those before.
    package func refill(_ bytes: some Collection<UInt8>) throws(CropZoomError) {
        let count = bytes.count
        let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
        if let buf = pointer.pointee.buf, av_buffer_is_writable(buf) != 0, buf.pointee.size >= count + padding {
            pointer.pointee.data = buf.pointee.data
            pointer.pointee.size = Int32(count)
            (buf.pointee.data + count).initialize(repeating: 0, count: padding)
        } else {
            av_packet_unref(pointer)
            try check(av_new_packet(pointer, Int32(count)), "allocating a packet")
        }
        let buffer = UnsafeMutableRawBufferPointer(start: pointer.pointee.data, count: count)
        let copied = bytes.withContiguousStorageIfAvailable { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(source))
        }
        if copied == nil { _ = buffer.initializeMemory(as: UInt8.self, from: bytes) }
    }

    /// The bytes of the buffer the packet holds (0 when it holds none).
    package var capacity: Int { pointer.pointee.buf.map { Int($0.pointee.size) } ?? 0 }

    /// `av_packet_rescale_ts`.
    package func rescale(from: TimeBase, to: TimeBase) { av_packet_rescale_ts(pointer, from.rational, to.rational) }
}
