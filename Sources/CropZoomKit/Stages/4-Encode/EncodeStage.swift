import CropZoomFFmpeg

/// The encode stage: encodes the transformed frames (in presentation order) and sends the video
/// packets to the muxer; counts the frames and publishes progress. With `--codec none` it only
/// counts.
///
/// `@unchecked Sendable`: driven by one thread (the engine's encode loop).
final class EncodeStage: EncodingStage, @unchecked Sendable {
    private let encoder: VideoEncoder?
    /// The muxer's video stream (nil: nothing is written).
    private let stream: Int?
    private let times: TimestampPolicy
    private let output: Outlet<MuxPacket>
    let progress = ProgressBox()
    private(set) var framesOut = 0
    /// Media seconds of the last frame encoded.
    private(set) var lastTime = 0.0
    /// `--segment`: every this many seconds of output time a keyframe is forced (the first frame at or after each
    /// boundary), where the segment muxer starts the next file.
    private let cuts: Double?
    private var nextCut: Double
    /// The last frame's time and the distance from the one before (encoder time base), for packets without a
    /// duration (``TimestampPolicy/fillDuration(_:interval:)``).
    private var lastPTS = AVCode.noPTS
    private var interval: Int64 = 0

    init(encoder: VideoEncoder?, stream: Int?, times: TimestampPolicy, cuts: Double? = nil, output: Outlet<MuxPacket>) {
        self.encoder = encoder
        self.stream = stream
        self.times = times
        self.cuts = cuts
        nextCut = cuts ?? .infinity
        self.output = output
    }

    func receive(_ frame: Frame) throws(CropZoomError) -> Demand {
        let pts = frame.pts
        if let cuts, pts != AVCode.noPTS {
            let t = times.outputSeconds(encoderPTS: pts)
            frame.forcesKeyframe = t >= nextCut
            if t >= nextCut { nextCut = ((t / cuts).rounded(.down) + 1) * cuts }
        }
        if pts != AVCode.noPTS {
            // (A damaged input's times can be as far apart as Int64 allows: an overflowing distance is not one.)
            let (d, overflow) = pts.subtractingReportingOverflow(lastPTS)
            if lastPTS != AVCode.noPTS && !overflow && d > 0 { interval = d }
            lastPTS = pts
        }
        try encoder?.encode(frame, send)
        framesOut += 1
        if pts != AVCode.noPTS {
            lastTime = times.mediaTime(encoderPTS: pts)
            progress.update(frames: framesOut, time: lastTime)
        }
        return .more
    }

    func count(into c: inout EngineCounts) {
        c.framesOut = framesOut
        c.lastTime = lastTime
    }

    func finish() throws(CropZoomError) {
        try encoder?.encode(nil, send)
        try output.finish()
    }

    private func send(_ packet: Packet) throws(CropZoomError) {
        guard let stream else { return }
        times.fillDuration(packet, interval: interval)
        _ = try output.send(MuxPacket(packet: packet, stream: stream, copied: false))
    }
}
