import CropZoomFFmpeg

/// The audio re-encode stage for one stream: decodes, resamples and encodes its packets
/// (``AudioTranscoder``) and sends the new packets to the muxer. Runs where the engine puts it:
/// on the demux thread for a file (audio is light, and it then never waits behind video work), on
/// a thread of its own for a live source (the reader only hands packets over).
///
/// `@unchecked Sendable`: driven by one thread.
final class AudioStage: PacketStage, @unchecked Sendable {
    private let transcoder: AudioTranscoder
    private let stream: Int
    private let output: Outlet<MuxPacket>

    /// Packets the decoder refused as damaged.
    var corruptPackets: Int { transcoder.corruptPackets }

    init(transcoder: AudioTranscoder, stream: Int, output: Outlet<MuxPacket>) {
        self.transcoder = transcoder
        self.stream = stream
        self.output = output
    }

    func receive(_ packet: Packet) throws(CropZoomError) -> Demand {
        try transcoder.transcode(packet, send)
        return .more
    }

    func count(into c: inout EngineCounts) { c.audioCorrupt += corruptPackets }

    func finish() throws(CropZoomError) {
        try transcoder.transcode(nil, send)
        try output.finish()
    }

    private func send(_ packet: Packet) throws(CropZoomError) {
        _ = try output.send(MuxPacket(packet: packet, stream: stream, copied: false))
    }
}
