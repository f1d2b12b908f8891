import CFFmpeg

/// Every rewrite of a time between the demuxer and the muxer, in one place. Stages ask it; no
/// stage changes a timestamp itself.
///
/// 0. A live sound device's packets (in the sound stage): its backlog, what it buffered before the recording
///    started, is timed backwards by the packets' durations from the first one read at the live edge (`retime`);
///    from there each packet starts where the one before ended (`chain`: the device's stamps jitter by
///    milliseconds; re-encoded sound is timed by its samples the same way).
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
        if p.pts != AVCode.noPTS { p.pointer.pointee.pts -= o }
        if p.dts != AVCode.noPTS { p.pointer.pointee.dts -= o }
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
            if packet.pts != AVCode.noPTS { packet.pointer.pointee.pts += o }
            if packet.dts != AVCode.noPTS { packet.pointer.pointee.dts += o }
        }
        packet.rescale(from: outputBases[stream], to: containerBase)
    }
}
