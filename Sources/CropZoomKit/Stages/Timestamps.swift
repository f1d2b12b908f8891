import CropZoomFFmpeg

/// Every rewrite of a time between the demuxer and the muxer, in one place. Stages ask it; no
/// stage changes a timestamp itself.
///
/// 0. A live sound device's packets (in the sound stage): its backlog, what it buffered before the recording
///    started, is timed backwards by the packets' durations from the first one read at the live edge (`retime`);
///    from there each packet starts where the one before ended (`chain`: the device's stamps jitter by
///    milliseconds; re-encoded sound is timed by its samples the same way).
/// 0b. Every packet of the input, before anything else (``ClockContinuity``, in the demux stage): a source whose
///    clock restarts (a network sender reconnecting or restarting, an MPEG-TS whose times restart or wrap) is
///    re-based onto the recording's clock — all its streams by one offset, so their offsets are kept — instead of
///    its later packets being dropped as repeats.
/// 1. Copied and re-encoded input packets (`admit`, in the demux stage): dropped outside the
///    trim window (a subtitle shown across an edge is kept and cut to it), then moved back by
///    their stream's shift.
/// 2. Decoded video frames (`place`, in the decode stage): before, inside or after the window;
///    a kept frame is moved back by the video stream's shift.
/// 3. Transformed frames (`stamp`, in the transform stage): the decoded frame's presentation time
///    (its `best_effort_timestamp` when it has no pts) and duration, in the encoder's time base.
/// 3b. Encoded video packets (`fillDuration`, in the encode stage): a packet without a duration (a source whose
///    frames carry none, damaged timing) gets the distance between the last two frames, so that the stream's last
///    frame is not a zero-length sample, which an MP4's edit list ends before and players and ffprobe drop.
/// 4. Packets for the muxer (`toContainer`, in the mux stage): a copied Matroska Opus stream's
///    codec delay restored (Matroska's demuxer moved it back; FFmpeg 5.1's muxer does not move
///    it forward), then rescaled to the container's time base.
///
/// The shift is the trim's start (`--start`), or for an input whose times are a clock reading
/// (MPEG-TS/PS) the earliest stream's start, each in its stream's own time base, so the streams'
/// offsets are kept exactly (`TrimWindow`); `--keep-start-time` makes it 0. Re-encoded audio takes
/// its times from its decoded samples (`AudioTranscoder`), which rule 1 has already moved.
struct TimestampPolicy: Sendable {
    /// The window and shift per input stream; nil keeps every time as it is.
    let window: TrimWindow.Times?
    /// Rule 0b's settings: nil for an input whose clock is taken as it is (a file that is not MPEG-TS-like).
    var continuity: ClockContinuity.Settings? = nil
    let videoIndex: Int
    /// The video decoder's and encoder's time bases (rule 3 rescales when they differ).
    let decoderBase: TimeBase
    let encoderBase: TimeBase?
    /// Seconds of the first video frame after the shift: media time 0 (progress, keyframes).
    let startTime: Double
    /// Per output stream: its packets' time base and what rule 4 adds to their times in it.
    let outputBases: [TimeBase]
    let outputOffsets: [Int64]

    /// Where a decoded frame lies against the trim window.
    enum FrameVerdict { case before, keep, after }

    // MARK: 0. A sound device's backlog

    /// Times `backlog` (packets of one stream, in order) so that each ends where the next starts, the last keeping
    /// its time.
    func retime(backlog: ArraySlice<Packet>) {
        guard var t = backlog.last?.pts, t != AVCode.noPTS else { return }
        for p in backlog.dropLast().reversed() {
            t -= p.duration
            p.pts = t
            p.dts = t
        }
    }

    /// Moves `p` to where the packet before it ended (`next`), and sets `next` to its end.
    func chain(_ p: Packet, next: inout Int64?) {
        if let n = next {
            p.pts = n
            p.dts = n
        }
        if p.pts != AVCode.noPTS { next = p.pts + p.duration }
    }

    // MARK: 1. Copied and re-encoded packets

    /// False for a packet outside the window (drop it); a kept one is cut and shifted. A
    /// packet at or past the end takes its stream off `waitingFor` (the streams the demuxer
    /// still reads for).
    func admit(_ p: Packet, waitingFor: inout Set<Int>) -> Bool {
        guard let w = window else { return true }
        if w.isPastEnd(p) { waitingFor.remove(p.streamIndex) }
        guard w.keeps(p) else { return false }
        w.cut(p)
        let o = w.shift[p.streamIndex]
        if p.pts != AVCode.noPTS { p.pts -= o }
        if p.dts != AVCode.noPTS { p.dts -= o }
        return true
    }

    /// The input streams a trim's end makes the demuxer wait for (their packets may come after
    /// the video's last): `passThrough` when the window has an end, else none.
    func streamsToWaitFor(passThrough: Set<Int>) -> Set<Int> {
        window?.end.contains { $0 != nil } == true ? passThrough : []
    }

    /// Seconds on the output's clock of a time in seconds on the input's (the video stream's shift taken off).
    func outputSeconds(input seconds: Double) -> Double {
        guard let w = window else { return seconds }
        return seconds - Double(w.shift[videoIndex]) * decoderBase.seconds
    }

    /// Seconds on the output's clock of an admitted packet's time (the stream's whose base is `decoderBase`: a
    /// sound device's policy).
    func outputSeconds(admitted pts: Int64) -> Double { Double(pts) * decoderBase.seconds }

    // MARK: 2. Decoded video frames

    @inline(__always)
    func place(_ frame: Frame) -> FrameVerdict {
        guard let w = window else { return .keep }
        let t = frame.presentationTime
        guard t != AVCode.noPTS else { return .keep }
        if t < w.start[videoIndex] { return .before }
        if let e = w.end[videoIndex], t >= e { return .after }
        let o = w.shift[videoIndex]
        if frame.pts != AVCode.noPTS { frame.pts -= o }
        if frame.bestEffortTimestamp != AVCode.noPTS { frame.bestEffortTimestamp -= o }
        return .keep
    }

    // MARK: 3. Transformed frames

    @inline(__always)
    func stamp(_ out: Frame, from input: Frame) {
        out.pts = input.presentationTime
        out.packetDuration = input.packetDuration
        guard let encoderBase, !decoderBase.isSameUnit(as: encoderBase) else { return }
        out.pts = decoderBase.rescale(out.pts, to: encoderBase)
        out.packetDuration = decoderBase.rescale(out.packetDuration, to: encoderBase)
    }

    /// Rule 3b: `packet` (in the encoder's time base) without a duration gets `interval`, the distance between the
    /// last two frames' times (when known).
    @inline(__always)
    func fillDuration(_ packet: Packet, interval: Int64) {
        if packet.duration <= 0 && interval > 0 { packet.duration = interval }
    }

    /// Media seconds of a video packet's time as read (before the shift ``place(_:)`` makes): a live source's
    /// reader measures its lag on it.
    func mediaTime(videoPacket ts: Int64) -> Double {
        mediaTime(ts - (window.map { $0.shift[videoIndex] } ?? 0))
    }

    /// Media seconds of a decoded frame's presentation time (where keyframes are evaluated).
    func mediaTime(_ pts: Int64) -> Double { Double(pts) * decoderBase.seconds - startTime }

    /// Seconds on the output's clock of a frame `stamp` has moved to the encoder's time base (what the muxer sees).
    func outputSeconds(encoderPTS pts: Int64) -> Double { Double(pts) * (encoderBase ?? decoderBase).seconds }

    /// Media seconds of a frame `stamp` has moved to the encoder's time base.
    func mediaTime(encoderPTS pts: Int64) -> Double { Double(pts) * (encoderBase ?? decoderBase).seconds - startTime }

    // MARK: 4. Packets for the muxer

    @inline(__always)
    func toContainer(_ packet: Packet, stream: Int, containerBase: TimeBase) {
        let o = outputOffsets[stream]
        if o != 0 {
            if packet.pts != AVCode.noPTS { packet.pts += o }
            if packet.dts != AVCode.noPTS { packet.dts += o }
        }
        packet.rescale(from: outputBases[stream], to: containerBase)
    }
}

/// Rule 0b: one input's clock kept going forward when the source's own restarts.
///
/// A packet of an audio or video stream is a *discontinuity* when its decode time, on the recording's clock so far,
/// goes back more than ``Settings/backward`` behind the last one of its stream, or jumps forward: for a file, more
/// than ``Settings/forward`` past where that stream's last packet ended; for a live source, more than that ahead of
/// the wall clock (each stream's packets arrive a steady time after their media time: the least such lag seen,
/// per stream, maps arrival to media time; a sender that paused 1.5 s and resumed on its own clock has a true
/// 1.5 s gap, which is kept). The input's offset then changes so that the packet starts where its stream ended (a
/// file), or where its arrival puts it on the recording's clock (a live source: a pause stays a pause), never
/// before 0.1 s after the end of any stream (so that no stream's first packet on the new clock overlaps its past);
/// every later packet of every stream moves by the same offset, so the streams keep their offsets. When the next packet of that stream fits the clock as it was, the one packet was damaged, not the
/// clock restarted: the offset goes back (the packet is the mux stage's to screen). FFmpeg's CLI re-bases files
/// only (`ts_discontinuity_detect`), and only past 10 s either way.
struct ClockContinuity {
    struct Settings: Sendable {
        /// Each input stream's time base, nil for a stream whose clock is not followed (not audio or video:
        /// subtitles and data are sparse).
        let bases: [TimeBase?]
        /// A live source (the wall clock tells a pause from a restart).
        let live: Bool
        /// How far (seconds) a stream's time may go back before it is a restart (MPEG-TS interleaves loosely).
        var backward: Double { live ? 0.1 : 1 }
        /// How far (seconds) a packet may jump forward before it is a discontinuity.
        var forward: Double { live ? 1 : 10 }
    }

    private let settings: Settings
    /// The offset added to every packet, in microseconds.
    private var offset: Int64 = 0
    /// Per stream: the last decode time (µs, re-based), where that packet ended, and (live) the least arrival
    /// less media time seen (seconds).
    private var last: [Int64?]
    private var end: [Int64]
    private var lag: [Double]
    /// The last re-base, until the next packet of its stream confirms it: the stream, the change of offset, and
    /// where that stream ended before it.
    private var unconfirmed: (stream: Int, change: Int64, last: Int64, end: Int64)?
    /// Discontinuities re-based so far, and a description of the first ones.
    private(set) var count = 0
    private(set) var descriptions: [String] = []
    private static let micro = TimeBase(num: 1, den: 1_000_000)
    /// How much earlier than the packet that shows a restart another stream's first packet on the new clock may
    /// start (µs).
    private static let interleave: Int64 = 100_000

    init(_ settings: Settings) {
        self.settings = settings
        last = Array(repeating: nil, count: settings.bases.count)
        end = Array(repeating: 0, count: settings.bases.count)
        lag = Array(repeating: .infinity, count: settings.bases.count)
    }

    /// Whether a packet of stream `i` at `us`, read at `now`, breaks the clock after a packet at `previous` that
    /// ended at `end`.
    private func breaks(_ us: Int64, stream i: Int, after previous: Int64, end: Int64, now: Double) -> Bool {
        if Double(previous - us) / 1e6 > settings.backward { return true }
        if settings.live {
            return lag[i].isFinite && Double(us) / 1e6 - (now - lag[i]) > settings.forward
        }
        return Double(us - end) / 1e6 > settings.forward
    }

    /// Moves `p` onto the recording's clock (`now`: monotonic seconds of its read, for a live source).
    mutating func place(_ p: Packet, now: Double) {
        let i = p.streamIndex
        guard i < settings.bases.count, let base = settings.bases[i] else { return }
        let t = p.dts != AVCode.noPTS ? p.dts : p.pts
        guard t != AVCode.noPTS else { return }
        var us = base.rescale(t, to: Self.micro).addingReportingOverflow(offset).partialValue
        if let previous = last[i] {
            if let u = unconfirmed, u.stream == i {
                unconfirmed = nil
                // The clock as it was fits this packet: the one before was a damaged packet, not a restart.
                let before = us - u.change
                if !breaks(before, stream: i, after: u.last, end: u.end, now: now) {
                    offset -= u.change
                    count -= 1
                    if descriptions.count > count { descriptions.removeLast() }
                    us = before
                }
            }
            if breaks(us, stream: i, after: previous, end: end[i], now: now) {
                // After every stream's end (with room for the other streams' packets that start a little before
                // this one in the new clock: MPEG-TS interleaves loosely), so that none overlaps its own past.
                var target = (end.max() ?? end[i]) + Self.interleave
                if settings.live && lag[i].isFinite { target = max(target, Int64((now - lag[i]) * 1e6)) }
                let back = Double(previous - us) / 1e6
                let jump =
                    back > settings.backward
                    ? String(format: "back %.3f s", back) : String(format: "ahead %.3f s", Double(us - end[i]) / 1e6)
                unconfirmed = (i, target - us, previous, end[i])
                offset = offset.addingReportingOverflow(target - us).partialValue
                count += 1
                if descriptions.count < 3 {
                    descriptions.append(String(format: "at %.3f s, %@", Double(target) / 1e6, jump))
                }
                us = target
            }
        }
        if offset != 0 {
            let shift = Self.micro.rescale(offset, to: base)
            if p.pts != AVCode.noPTS { p.pts = p.pts.addingReportingOverflow(shift).partialValue }
            if p.dts != AVCode.noPTS { p.dts = p.dts.addingReportingOverflow(shift).partialValue }
        }
        last[i] = us
        end[i] = us + max(0, base.rescale(p.duration, to: Self.micro))
        if settings.live { lag[i] = min(lag[i], now - Double(us) / 1e6) }
    }

    /// The notice for the summary, or nil when the clock never restarted.
    var notice: String? {
        guard count > 0 else { return nil }
        return "the input's clock restarted \(count) time\(count == 1 ? "" : "s") ("
            + descriptions.joined(separator: "; ") + (count > descriptions.count ? "; …" : "")
            + "): re-based onto the recording's clock, nothing dropped"
    }
}
