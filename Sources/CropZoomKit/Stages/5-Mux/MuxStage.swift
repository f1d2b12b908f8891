import CropZoomFFmpeg

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
final class MuxStage: MuxingStage, @unchecked Sendable {
    private let muxer: Muxer
    private let times: TimestampPolicy
    private let strict: Bool
    /// The file being written, checked every ``presenceInterval`` packets (``AtomicOutput/checkPresent()``).
    private let output: AtomicOutput?
    private var untilPresenceCheck = MuxStage.presenceInterval
    static let presenceInterval = 64
    /// Copied packets the muxer rejected as damaged (skipped).
    private(set) var copiedDamaged = 0

    init(muxer: Muxer, times: TimestampPolicy, strict: Bool, output: AtomicOutput?) {
        self.muxer = muxer
        self.times = times
        self.strict = strict
        self.output = output
    }

    /// Copied audio, per output stream: the packet held back until the next one shows whether its time is right
    /// (``screen(_:source:sourceTime:)``), its time as read (pts, and decode time in the stream's own time base),
    /// the decode time of the last one written in that base, and in the container's.
    private var held: [Packet?] = []
    private var heldSource: [Int64] = []
    private var heldSourceTime: [Int64?] = []
    private var lastWritten: [Int64?] = []
    private var lastWrittenInContainer: [Int64?] = []
    /// Whether each output stream is audio, asked of the muxer once per stream rather than once per packet.
    private var audioStreams: [Bool] = []

    private func isAudio(_ stream: Int) -> Bool {
        while audioStreams.count <= stream {
            audioStreams.append(muxer.isAudio(audioStreams.count))
        }
        return audioStreams[stream]
    }

    func receive(_ m: MuxPacket) throws(CropZoomError) -> Demand {
        untilPresenceCheck -= 1
        if untilPresenceCheck == 0 {
            untilPresenceCheck = Self.presenceInterval
            try output?.checkPresent()
        }
        let source = m.packet.pts
        let sourceTime = Self.time(m.packet)
        times.toContainer(m.packet, stream: m.stream, containerBase: muxer.timeBase(of: m.stream))
        if m.copied && !strict && isAudio(m.stream) {
            try screen(m, source: source, sourceTime: sourceTime)
        } else {
            try write(m, source: source)
        }
        return .more
    }

    /// A damaged input's copied audio can hold a packet whose time is wrong: stored twice, or a broken time far
    /// ahead or behind. The muxer refuses a packet that does not come after the last one written, so one packet
    /// far ahead would cost every packet after it. Each packet is therefore held until the next one arrives: when
    /// the next one would be refused after it but fits after the last one written, the held one is the damaged
    /// one; when the next one does not fit after the last one written either, the next one is. The damaged one
    /// is skipped and counted (as the muxer's own refusals are); every other packet is written, one packet late.
    ///
    /// Which time is wrong is judged on the times as read (`sourceTime`, the stream's own time base), never on the
    /// container's: a container whose clock is coarser than the sound's (Matroska's and FLV's 1 ms against a sound
    /// device's packets of under a millisecond) rounds two good packets to one time, and that is no damage. Such a
    /// packet is written at the container time it rounds to, or a tick after the one before where the container
    /// wants times apart (``writeHeld(_:)``): every packet is kept, and the rounding is carried (each packet's
    /// time is its own, rescaled, unless that would not come after the one before).
    private func screen(_ m: MuxPacket, source: Int64, sourceTime: Int64?) throws(CropZoomError) {
        let s = m.stream
        while held.count <= s {
            held.append(nil)
            heldSource.append(AVCode.noPTS)
            heldSourceTime.append(nil)
            lastWritten.append(nil)
            lastWrittenInContainer.append(nil)
        }
        guard let next = sourceTime else { return try write(m, source: source) }
        let box: Packet
        if let existing = held[s] {
            box = existing
        } else {
            box = try Packet()
            held[s] = box
        }
        if let before = heldSourceTime[s] {
            let fitsAfterWritten = lastWritten[s].map { next > $0 } ?? true
            if next <= before && !fitsAfterWritten {
                m.packet.unref()
                copiedDamaged += 1
                return
            }
            if next <= before {
                box.unref()
                copiedDamaged += 1
            } else {
                try writeHeld(s)
                lastWritten[s] = before
            }
        }
        box.take(m.packet)
        heldSource[s] = source
        heldSourceTime[s] = next
    }

    /// Writes stream `s`'s held packet, no earlier in the container than the last one written allows (at the same
    /// time where the container takes equal times, `AVFMT_TS_NONSTRICT`; a tick later where it does not).
    private func writeHeld(_ s: Int) throws(CropZoomError) {
        guard let box = held[s] else { return }
        if let last = lastWrittenInContainer[s], let t = Self.time(box) {
            let earliest = last + (muxer.takesEqualTimes ? 0 : 1)
            if t < earliest {
                let d = earliest - t
                if box.pts != AVCode.noPTS { box.pts += d }
                if box.dts != AVCode.noPTS { box.dts += d }
            }
        }
        if let t = Self.time(box) { lastWrittenInContainer[s] = t }
        try write(MuxPacket(packet: box, stream: s, copied: true), source: heldSource[s])
    }

    /// The decode time of a packet in the container (its presentation time when it has none); nil: neither.
    private static func time(_ p: Packet) -> Int64? {
        p.dts != AVCode.noPTS ? p.dts : (p.pts != AVCode.noPTS ? p.pts : nil)
    }

    /// Writes the packets still held (the last of each copied audio stream): the engine calls it once every
    /// producer has finished, before the trailer.
    func flush() throws(CropZoomError) {
        for (s, box) in held.enumerated() {
            guard let box, Self.time(box) != nil || box.size > 0 else { continue }
            try writeHeld(s)
            box.unref()
        }
    }

    private func write(_ m: MuxPacket, source: Int64) throws(CropZoomError) {
        do {
            try muxer.write(m.packet, stream: m.stream, sourcePTS: source)
        } catch
            where m.copied && !strict
            && [AVCode.invalidData, AVCode.invalidArgument, AVCode.patchWelcome].contains(error.code)
        {
            // The muxer's bitstream filter (ADTS to MP4, for one) rejects a damaged packet (one it cannot read, one
            // with a layout it does not implement), or the muxer one whose
            // time goes back or repeats (a damaged input's: a packet stored twice, a broken time): it cannot be
            // stored, so it is skipped and counted.
            m.packet.unref()
            copiedDamaged += 1
        }
    }

    func finish() throws(CropZoomError) {}

    func count(into c: inout EngineCounts) { c.copiedDamaged += copiedDamaged }
}
