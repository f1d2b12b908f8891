import CropZoomFFmpeg

/// The sound device's stage (`--audio-input`): reads the device on a thread of its own and sends its audio stream to
/// its re-encoder (or, copied, to the muxer), once ``TimestampPolicy`` has put it on the recording's clock.
///
/// A device opened before the recording starts has a backlog: what it buffered meanwhile, which the demuxer stamps
/// as it reads it, by a latency it has not measured yet (PulseAudio's first packets: 0.2–0.65 s off, measured). The
/// stage holds the backlog until a read has to wait for the device — it has caught up, and that packet's time is
/// true — and then times the backlog backwards from it by the packets' durations
/// (``TimestampPolicy/retime(backlog:)``); every packet then starts where the one before ended. It ends at the
/// device's end, at its window's end (`--duration`), once its packets reach where the picture's recording ended
/// (`end`), or when the engine stops its reads.
///
/// `@unchecked Sendable`: driven by one thread (the engine's sound thread).
final class SoundStage: Reading, @unchecked Sendable {
    private let demuxer: Demuxer
    private let index: Int
    private let route: StreamRoute
    private let times: TimestampPolicy
    private let reencoder: Outlet<Packet>?
    private let mux: Outlet<MuxPacket>
    /// Where the picture's recording ended (output seconds), once it has.
    private let end: @Sendable () -> Double?
    private var reachedEnd = false
    private let packet: Packet
    /// The backlog's packets (allocated once; 5 s of PulseAudio's 20 ms fragments).
    private var backlog: [Packet]
    private var held = 0
    private var caughtUp = false
    /// Where the next packet starts (the previous one's end).
    private var next: Int64?
    private var waitingFor: Set<Int>
    private let windowEnds: Bool
    /// Audio packets sent on.
    private(set) var audioPackets = 0
    /// A read that waited this long found the device's buffer empty.
    static let caughtUpWait = 0.004

    init(
        demuxer: Demuxer, index: Int, route: StreamRoute, times: TimestampPolicy, reencoder: Outlet<Packet>?,
        mux: Outlet<MuxPacket>, end: @escaping @Sendable () -> Double?
    ) throws(CropZoomError) {
        self.end = end
        self.demuxer = demuxer
        self.index = index
        self.route = route
        self.times = times
        self.reencoder = reencoder
        self.mux = mux
        packet = try Packet()
        backlog = try (0..<256).map { _ throws(CropZoomError) in try Packet() }
        waitingFor = times.streamsToWaitFor(passThrough: [index])
        windowEnds = !waitingFor.isEmpty
    }

    /// The loop body: reads one packet and sends it on (or holds it, in the backlog). False at the end.
    func step() throws(CropZoomError) -> Bool {
        if reachedEnd || (windowEnds && waitingFor.isEmpty) { return false }
        switch try demuxer.read(into: packet) {
        case .again: return true
        case .endOfStream: return false
        case .value: break
        }
        defer { packet.unref() }
        guard packet.streamIndex == index else { return true }
        guard caughtUp else {
            backlog[held].take(packet)
            held += 1
            if demuxer.lastWait >= Self.caughtUpWait || held == backlog.count {
                caughtUp = true
                times.retime(backlog: backlog[..<held])
                try sendBacklog()
            }
            return true
        }
        try send(packet)
        return true
    }

    /// The end: the backlog of a device that ended before it caught up (as stamped), then the re-encoder's end and
    /// the muxer's.
    func finish() throws(CropZoomError) {
        try sendBacklog()
        try reencoder?.finish()
        try mux.finish()
    }

    func count(into c: inout EngineCounts) { c.audioPackets += audioPackets }

    private func sendBacklog() throws(CropZoomError) {
        for p in backlog[..<held] {
            try send(p)
            p.unref()
        }
        held = 0
        backlog = []
    }

    private func send(_ p: Packet) throws(CropZoomError) {
        times.chain(p, next: &next)
        guard !reachedEnd, times.admit(p, waitingFor: &waitingFor) else { return }
        if let end = end(), p.pts != AVCode.noPTS, times.outputSeconds(admitted: p.pts) >= end {
            reachedEnd = true
            return
        }
        audioPackets += 1
        switch route {
        case .copy(let out): _ = try mux.send(MuxPacket(packet: p, stream: out, copied: true))
        case .reencode: _ = try reencoder?.send(p)
        default: break
        }
    }
}
