/// A packet for the muxer: its output stream, and whether it was copied from the input (a
/// copied packet the muxer rejects as damaged is skipped and counted, unless `--strict`).
struct MuxPacket {
    var packet: Packet
    var stream: Int
    var copied: Bool
}

/// The mux stage: moves each packet's times into the container (``TimestampPolicy/toContainer``)
/// and writes it; the muxer interleaves the streams by time (`av_interleaved_write_frame`).
/// The trailer is written when the job finishes (`Job.finish`), once the engine has checked
/// the run.
///
/// `@unchecked Sendable`: driven by one thread (the engine's mux loop).
final class MuxStage: Stage, @unchecked Sendable {
    private let muxer: Muxer
    private let times: TimestampPolicy
    private let strict: Bool
    /// Copied packets the muxer rejected as damaged (skipped).
    private(set) var copiedDamaged = 0

    init(muxer: Muxer, times: TimestampPolicy, strict: Bool) {
        self.muxer = muxer
        self.times = times
        self.strict = strict
    }

    func receive(_ m: MuxPacket) throws(CropZoomError) -> Demand {
        let source = m.packet.pts
        times.toContainer(m.packet, stream: m.stream, containerBase: muxer.timeBase(of: m.stream))
        do {
            try muxer.write(m.packet, stream: m.stream, sourcePTS: source)
        } catch  where m.copied && error.code == AVCode.invalidData && !strict {
            // The muxer's bitstream filter (ADTS to MP4, for one) rejects a damaged packet: it
            // cannot be stored, so it is skipped and counted.
            m.packet.unref()
            copiedDamaged += 1
        }
        return .more
    }

    func finish() throws(CropZoomError) {}
}
