import CFFmpeg
import CropZoomCore

/// Decodes the first pictures a repair recovered with the reference's codec parameters (its SPS and PPS): a reference
/// from other settings — another resolution, profile or chroma format — gives parameter sets the recovered slices do
/// not fit, and the decoder refuses or conceals them. HEVC slices read with another bit depth's or chroma format's SPS
/// decode to garbage that FFmpeg's decoder passes, flagging nothing and logging a warning, unless told to refuse what
/// it would decode past (`AV_EF_EXPLODE`): so it is. Owns a ``VideoDecoder`` for the reference's stream (one thread)
/// and one packet. The reference need not be probed: the decoder takes its parameter sets from the sample entry.
package final class RecoveredPictureCheck {
    private let decoder: VideoDecoder
    private let packet: Packet
    /// Pictures sent, and pictures that came out whole.
    package private(set) var sent = 0
    package private(set) var decoded = 0
    /// What the decoder knew once the first picture came out (``DecodedParameters``): what probing the reference
    /// finds, read from pictures decoded anyway.
    package private(set) var parameters: DecodedParameters?

    package init(reference: InputFormat, stream: Int) throws(CropZoomError) {
        decoder = try VideoDecoder(input: reference, streamIndex: stream)
        try decoder.open(threads: 1, explode: true, counted: true)
        packet = try Packet()
    }

    /// A video stream's picture as FFmpeg describes it ("1280x720 h264 High"; the profile, from
    /// `avcodec_profile_name`, where the stream was probed).
    package static func describe(_ st: StreamRef) -> String {
        let profile = avcodec_profile_name(st.parameters.pointee.codec_id, st.parameters.pointee.profile)
        let codec = st.codecName + (profile.map { " " + String(cString: $0) } ?? "")
        return "\(st.parameters.pointee.width)x\(st.parameters.pointee.height) \(codec)"
    }

    /// Decodes one recovered sample (decode order; `pts`: its presentation time).
    package func add(_ bytes: some Collection<UInt8>, pts: Int64, dts: Int64, key: Bool) throws(CropZoomError) {
        packet.unref()
        try packet.fill(bytes)
        packet.pts = pts
        packet.dts = dts
        packet.isKeyframe = key
        sent += 1
        try decoder.decode(packet) { _ throws(CropZoomError) in try count() }
    }

    /// One more picture out; the first leaves the decoder's parameters.
    private func count() throws(CropZoomError) {
        decoded += 1
        if parameters == nil { parameters = try DecodedParameters(decodedBy: decoder.context) }
    }

    /// Drains the decoder; the pictures that could not be decoded whole (refused, concealed or flagged).
    package func finish() throws(CropZoomError) -> Int {
        try decoder.decode(nil) { _ throws(CropZoomError) in try count() }
        // A picture both refused and concealed (H.264 with `AV_EF_EXPLODE`) is one picture.
        return min(sent, decoder.corruptPackets + max(0, sent - decoded - decoder.corruptPackets))
    }
}
