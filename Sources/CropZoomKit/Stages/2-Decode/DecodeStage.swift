import CropZoomFFmpeg

/// The decode stage: decodes the video stream's packets and sends on, in presentation order,
/// the frames inside the trim window (``TimestampPolicy/place(_:)``), up to the frame limit,
/// skipping a frame that repeats an earlier timestamp (a container cannot store it twice).
///
/// It answers ``Demand/enough`` once the limit is reached or a frame lies past the trim's end;
/// it then drops what still comes and does not drain the decoder at the end.
///
/// `@unchecked Sendable`: driven by one thread (the engine's decode loop).
final class DecodeStage: PacketStage, @unchecked Sendable {
    private let decoder: VideoDecoder
    private let times: TimestampPolicy
    private let limit: Int
    private let output: Outlet<Frame>
    private var gate = TimestampGate()
    private var sent = 0
    private var enough = false

    /// Frames decoded, and frames dropped for repeating a timestamp.
    var framesIn: Int { gate.framesIn }
    var duplicates: Int { gate.duplicates }

    init(decoder: VideoDecoder, times: TimestampPolicy, limit: Int?, output: Outlet<Frame>) {
        self.decoder = decoder
        self.times = times
        self.limit = limit ?? .max
        self.output = output
    }

    func receive(_ packet: Packet) throws(CropZoomError) -> Demand {
        if sent >= limit { enough = true }
        if enough { return .enough }
        try decoder.decode(packet, handle)
        return enough ? .enough : .more
    }

    func count(into c: inout EngineCounts) {
        c.framesIn = framesIn
        c.duplicates = duplicates
        c.decoderCorrupt = decoder.corruptPackets
    }

    func finish() throws(CropZoomError) {
        if !enough && sent < limit { try decoder.decode(nil, handle) }
        try output.finish()
    }

    private func handle(_ frame: Frame) throws(CropZoomError) {
        guard sent < limit, !enough else {
            enough = true
            return
        }
        switch times.place(frame) {
        case .before: return
        case .after:
            enough = true
            return
        case .keep: break
        }
        guard gate.admit(frame) else { return }
        sent += 1
        if try output.send(frame) == .enough { enough = true }
    }
}

/// Lets through, in decode order, each frame whose presentation time is later than the last
/// one's; a frame repeating an earlier timestamp cannot be stored and is counted instead.
struct TimestampGate {
    private(set) var framesIn = 0
    private(set) var duplicates = 0
    private var lastPTS: Int64? = nil

    mutating func admit(_ frame: Frame) -> Bool {
        framesIn += 1
        let pts = frame.presentationTime
        if let last = lastPTS, pts != AVCode.noPTS, pts <= last {
            duplicates += 1
            return false
        }
        if pts != AVCode.noPTS { lastPTS = pts }
        return true
    }
}
