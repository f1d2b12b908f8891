import CropZoomFFmpeg

/// The demux stage: reads the input's packets in file order and sends each where its stream
/// goes — video packets to the decoder, copied packets to the muxer, re-encoded audio to its
/// re-encoder — on the recording's clock (``ClockContinuity``) and after the trim
/// (``TimestampPolicy/admit(_:waitingFor:)``).
///
/// It stops at the end of the input, or once nothing more is wanted: the video's outlet
/// answered ``Demand/enough`` (frame limit, trim end) and no copied stream can still have
/// packets before the trim's end (files interleave loosely).
///
/// A live source's reads are reported to its policy as they happen (``LivePolicy/read(media:now:waited:)``: when
/// each video packet arrived, whether the read waited for it), and where the picture's recording ended once it
/// has (``LivePolicy/pictureEnded(at:)``).
///
/// `@unchecked Sendable`: driven by one thread (the engine's demux loop).
final class DemuxStage: Reading, @unchecked Sendable {
    private let demuxer: Demuxer
    private let routes: [StreamRoute]
    private let times: TimestampPolicy
    private let video: Outlet<Packet>
    private let mux: Outlet<MuxPacket>
    /// Per input stream, by index: the re-encoder's outlet (re-encoded audio only; nil for the others), an array
    /// so that a packet finds it without hashing.
    private let reencoders: [Outlet<Packet>?]
    private let packet: Packet
    private var videoWanted = true
    private var waitingFor: Set<Int>
    /// Audio packets sent on (copied or re-encoded).
    private(set) var audioPackets = 0
    /// The input's clock kept going forward (nil: taken as it is).
    private(set) var clock: ClockContinuity?
    private let live: Bool
    private let policy: LivePolicy?

    init(
        demuxer: Demuxer, routes: [StreamRoute], times: TimestampPolicy, live policy: LivePolicy? = nil,
        video: Outlet<Packet>, mux: Outlet<MuxPacket>, reencoders: [Int: Outlet<Packet>]
    ) throws(CropZoomError) {
        self.policy = policy
        self.demuxer = demuxer
        self.routes = routes
        self.times = times
        self.video = video
        self.mux = mux
        self.reencoders = routes.indices.map { reencoders[$0] }
        packet = try Packet()
        clock = times.continuity.map { ClockContinuity($0) }
        live = times.continuity?.live ?? false
        let passThrough = Set(
            routes.indices.filter { i in
                switch routes[i] {
                case .copy, .reencode: return true
                default: return false
                }
            })
        waitingFor = times.streamsToWaitFor(passThrough: passThrough)
    }

    /// The loop body, for a stage without input: reads one packet and sends it on. False at the
    /// end of the input or once nothing more is wanted.
    func step() throws(CropZoomError) -> Bool {
        if !videoWanted && waitingFor.isEmpty { return false }
        switch try demuxer.read(into: packet) {
        case .again: return true
        case .endOfStream: return false
        case .value: break
        }
        defer { packet.unref() }
        clock?.place(packet, now: live ? demuxer.lastArrival : 0)
        let i = packet.streamIndex
        guard i < routes.count else { return true }
        switch routes[i] {
        case .video:
            guard videoWanted else { return true }
            if let policy {
                let ts = packet.dts != AVCode.noPTS ? packet.dts : packet.pts
                if ts != AVCode.noPTS {
                    policy.read(
                        media: times.mediaTime(videoPacket: ts), now: demuxer.lastArrival,
                        waited: demuxer.lastReadWaited)
                }
            }
            if try video.send(packet) == .enough { videoWanted = false }
        case .copy(let out):
            guard times.admit(packet, waitingFor: &waitingFor) else { return true }
            if demuxer.isAudio(i) { audioPackets += 1 }
            _ = try mux.send(MuxPacket(packet: packet, stream: out, copied: true))
        case .reencode(_, _):
            guard times.admit(packet, waitingFor: &waitingFor) else { return true }
            audioPackets += 1
            _ = try reencoders[i]?.send(packet)
        case .drop:
            break
        }
        return true
    }

    /// End of the input: the video's end of stream first, then the re-encoders' (in stream
    /// order), then the copied streams'. A live picture's end is where the sound device's reader stops.
    func finish() throws(CropZoomError) {
        policy?.pictureEnded(at: times.outputSeconds(input: demuxer.reached))
        try video.finish()
        for reencoder in reencoders { try reencoder?.finish() }
        try mux.finish()
    }

    func count(into c: inout EngineCounts) {
        c.audioPackets += audioPackets
        c.clockRestarts = clock?.count ?? 0
        c.clockNotice = clock?.notice
        c.demuxSkipped = demuxer.skippedErrors
        c.truncation = demuxer.truncation
        c.liveEnd = demuxer.liveEnd
    }
}
