import CFFmpeg
import CropZoomCore

/// Finds where AAC frames stored raw (as MP4 stores them: no ADTS header) end, by decoding with FFmpeg's AAC decoder,
/// opened with the reference's AudioSpecificConfig. Two routes, both through the public API (unlike untrunc, no
/// private FFmpeg structure):
///
/// - ``frameLengths(_:)``: a window of several frames sent as one packet. The decoder takes one frame at a time and
///   keeps the rest ("multiple frames in a packet"), and each frame's `pkt_size` is what was left of the packet when
///   it started, so consecutive frames' lengths are the differences — one decode a frame.
/// - ``frameLength(_:)``: the decoder refuses a packet shorter than the frame ("input buffer exhausted before END
///   element") and accepts any packet that holds the whole frame, so the frame's length is the shortest packet that
///   decodes — found by bisection, about 11 decodes a frame; for a frame the first route cannot close (the last one
///   of a window).
///
/// RepairTests pins both on the FFmpeg in use. A frame counts only when it decodes to the reference's channel count
/// and frame size. Owns its decoder (`avcodec_alloc_context3`, through ``CodecContext``), one packet and
/// one frame; the decoder's complaints about the packets it refuses are kept out of the log
/// (`log_level_offset`).
package final class AACFrameProbe: AudioFrameProbe {
    private var context: CodecContext
    /// What the decoder is made from, to make it again (``reopen()``).
    private let codec: UnsafePointer<AVCodec>
    private let parameters: StreamRef
    private let path: String
    private let packet: Packet
    private let frame: Frame
    private let channels: Int
    private let frameSamples: Int
    package let longestFrame: Int
    /// One decode gives the lengths of several frames.
    package var readsAhead: Bool { true }

    /// The decoder for stream `index` of `reference` (an AAC stream); `frameSamples`: samples a frame holds (the
    /// reference's sample duration).
    /// Where the bisection looks first: the sizes of the reference's frames, widened (a frame of the recording may be
    /// smaller or larger: the bisection widens to the whole range when the answer is at an edge).
    private let likely: ClosedRange<Int>

    /// `sizes`: the reference's smallest and largest frame (nil: any size up to ``longestFrame``).
    package init(reference: InputFormat, stream index: Int, frameSamples: Int, sizes: ClosedRange<Int>? = nil)
        throws(CropZoomError)
    {
        let st = reference.stream(index)
        guard st.codecID == CodecID(AV_CODEC_ID_AAC), let codec = avcodec_find_decoder(AV_CODEC_ID_AAC) else {
            throw CropZoomError(.usage, path: reference.path, reason: "stream \(index) is not AAC")
        }
        self.codec = codec
        parameters = st
        path = reference.path
        context = try Self.decoder(codec, st, path: reference.path)
        packet = try Packet()
        frame = try Frame()
        channels = max(1, st.channelCount)
        self.frameSamples = frameSamples
        // A raw data block holds at most 6144 bits per channel (ISO/IEC 14496-3, 4.5.3.2).
        longestFrame = 768 * channels
        likely =
            sizes.map { max(1, $0.lowerBound / 2)...min(768 * max(1, st.channelCount), 2 * $0.upperBound) }
            ?? 1...(768 * max(1, st.channelCount))
    }

    /// The lengths of the consecutive frames `bytes` start with, as far as they are known (a frame's length needs the
    /// next frame to start, or the window to end with it): `avcodec_send_packet` of the whole window, then
    /// `avcodec_receive_frame` until it has no more (`AVFrame.pkt_size`).
    package func frameLengths(_ bytes: [UInt8]) -> [Int] {
        let first = lengthsInOneDecode(bytes)
        return first.decodedAny || !reopen() ? first.lengths : lengthsInOneDecode(bytes).lengths
    }

    /// The lengths known, and whether the first frame decoded at all (if not, the decoder may be the problem).
    private func lengthsInOneDecode(_ bytes: [UInt8]) -> (lengths: [Int], decodedAny: Bool) {
        avcodec_flush_buffers(context.pointer)
        packet.unref()
        guard !bytes.isEmpty, (try? packet.fill(bytes)) != nil,
            avcodec_send_packet(context.pointer, packet.pointer) >= 0
        else { return ([], false) }
        var starts: [Int] = []
        var whole = false
        while true {
            let r = avcodec_receive_frame(context.pointer, frame.pointer)
            guard r >= 0 else {
                // EAGAIN: the packet was used up, so the last frame ended with it.
                whole = r == AVCode.again
                break
            }
            defer { frame.unref() }
            let left = Int(frame.pointer.pointee.pkt_size)
            guard Int(frame.pointer.pointee.ch_layout.nb_channels) == channels, frame.samples == frameSamples,
                left > 0, left <= bytes.count, starts.last.map({ left < $0 }) ?? (left == bytes.count)
            else { break }
            starts.append(left)
        }
        var lengths = zip(starts, starts.dropFirst()).map { $0 - $1 }
        if whole, let last = starts.last { lengths.append(last) }
        return (lengths, !starts.isEmpty)
    }

    /// A decoder opened with the reference's configuration, its complaints kept out of the log.
    private static func decoder(_ codec: UnsafePointer<AVCodec>, _ st: StreamRef, path: String) throws(CropZoomError)
        -> CodecContext
    {
        let context = try CodecContext(codec: codec, path: path)
        try check(
            avcodec_parameters_to_context(context.pointer, st.parameters), "configuring the AAC decoder", path: path)
        context.pointer.pointee.log_level_offset = AV_LOG_TRACE + 8
        try context.open(kind: .usage, what: "opening the AAC decoder for the reference's sound")
        return context
    }

    /// A new decoder: bytes that are not sound, decoded past a run of frames, can carry a program config element that
    /// changes the decoder's channel layout, which `avcodec_flush_buffers` keeps. Made again when a decode that
    /// should succeed does not.
    private func reopen() -> Bool {
        guard let fresh = try? Self.decoder(codec, parameters, path: path) else { return false }
        context = fresh
        return true
    }

    package func frameLength(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        // The shortest length that decodes lies in [low, high]: `high` decodes, `low - 1` does not. Looked for first
        // within 64 bytes of the last frame's length (a frame's size varies little at a steady bit rate).
        let guess = lastLength ?? (likely.lowerBound + likely.upperBound) / 2
        var low = 1
        var high = bytes.count
        let top = min(bytes.count, guess + 64)
        if top < bytes.count && decodes(bytes, length: top) {
            high = top
        } else if !(decodes(bytes, length: bytes.count) || (reopen() && decodes(bytes, length: bytes.count))) {
            return nil
        }
        let bottom = max(1, guess - 64)
        if bottom > 1 && bottom <= high && !decodes(bytes, length: bottom - 1) { low = bottom }
        while low < high {
            let mid = (low + high) / 2
            if decodes(bytes, length: mid) { high = mid } else { low = mid + 1 }
        }
        lastLength = high
        return high
    }

    /// The length the last bisection found.
    private var lastLength: Int?

    /// Whether the first `length` bytes decode to one frame of the reference's format (`avcodec_flush_buffers`,
    /// `avcodec_send_packet`, `avcodec_receive_frame`).
    private func decodes(_ bytes: [UInt8], length: Int) -> Bool {
        avcodec_flush_buffers(context.pointer)
        packet.unref()
        guard (try? packet.fill(bytes.prefix(length))) != nil else { return false }
        guard avcodec_send_packet(context.pointer, packet.pointer) >= 0 else { return false }
        defer { frame.unref() }
        guard avcodec_receive_frame(context.pointer, frame.pointer) >= 0 else { return false }
        return Int(frame.pointer.pointee.ch_layout.nb_channels) == channels && frame.samples == frameSamples
    }
}
