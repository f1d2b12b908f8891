import CFFmpeg
import CropZoomCore

/// Finds where an AAC frame stored raw (as MP4 stores it: no ADTS header) ends, by decoding: FFmpeg's AAC decoder,
/// opened with the reference's AudioSpecificConfig, refuses a packet shorter than the frame ("input buffer exhausted
/// before END element") and accepts any packet that holds the whole frame, so the frame's length is the shortest
/// packet that decodes — found by bisection, about 11 decodes a frame (RepairTests pins this on the FFmpeg in use).
/// A frame counts only when it decodes to the reference's channel count and frame size. Unlike untrunc, no private
/// FFmpeg structure is used. Owns its decoder (`avcodec_alloc_context3`, through ``CodecContext``), one packet and
/// one frame; the decoder's complaints about the packets it refuses are kept out of the log
/// (`log_level_offset`).
package final class AACFrameProbe: AudioFrameProbe {
    private let context: CodecContext
    private let packet: Packet
    private let frame: Frame
    private let channels: Int
    private let frameSamples: Int
    package let longestFrame: Int
    /// Decodes tried, for the benchmark's accounting.
    package private(set) var trials = 0

    /// The decoder for stream `index` of `reference` (an AAC stream); `frameSamples`: samples a frame holds (the
    /// reference's sample duration).
    package init(reference: InputFormat, stream index: Int, frameSamples: Int) throws(CropZoomError) {
        let st = reference.stream(index)
        guard st.codecID == CodecID(AV_CODEC_ID_AAC), let codec = avcodec_find_decoder(AV_CODEC_ID_AAC) else {
            throw CropZoomError(.usage, path: reference.path, reason: "stream \(index) is not AAC")
        }
        context = try CodecContext(codec: codec, path: reference.path)
        try check(
            avcodec_parameters_to_context(context.pointer, st.parameters), "configuring the AAC decoder",
            path: reference.path)
        context.pointer.pointee.log_level_offset = AV_LOG_TRACE + 8
        try context.open(kind: .usage, what: "opening the AAC decoder for the reference's sound")
        packet = try Packet()
        frame = try Frame()
        channels = max(1, st.channelCount)
        self.frameSamples = frameSamples
        // A raw data block holds at most 6144 bits per channel (ISO/IEC 14496-3, 4.5.3.2).
        longestFrame = 768 * channels
    }

    package func frameLength(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2, decodes(bytes, length: bytes.count) else { return nil }
        var low = 1
        var high = bytes.count
        // The shortest length that decodes lies in (low - 1, high]: `high` decodes.
        while low < high {
            let mid = (low + high) / 2
            if decodes(bytes, length: mid) { high = mid } else { low = mid + 1 }
        }
        return decodes(bytes, length: high) ? high : nil
    }

    /// Whether the first `length` bytes decode to one frame of the reference's format (`avcodec_flush_buffers`,
    /// `avcodec_send_packet`, `avcodec_receive_frame`).
    private func decodes(_ bytes: [UInt8], length: Int) -> Bool {
        trials += 1
        avcodec_flush_buffers(context.pointer)
        packet.unref()
        guard (try? packet.fill(bytes.prefix(length))) != nil else { return false }
        guard avcodec_send_packet(context.pointer, packet.pointer) >= 0 else { return false }
        defer { frame.unref() }
        guard avcodec_receive_frame(context.pointer, frame.pointer) >= 0 else { return false }
        return Int(frame.pointer.pointee.ch_layout.nb_channels) == channels && frame.samples == frameSamples
    }
}
