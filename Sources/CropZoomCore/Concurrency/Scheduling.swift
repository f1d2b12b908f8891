import Foundation

/// How stages and engines talk (the shape of FFmpeg 7's `fftools/ffmpeg_sched.h`).
///
/// A stage (demux, decode, transform, encode, mux, the audio re-encoder) is one type whose loop
/// body is `receive(_:)`: it takes one message, does its work and hands what it made to its
/// outlets. It knows nothing of threads or queues. An engine makes each edge — a direct call
/// (`SerialEngine`), a bounded queue between two threads (`ThreadedEngine`), a leaky one
/// (`LiveEngine`) — has the stage at each end built (`StageFactory`), and runs the loops. Both
/// directions of "stop" are return values:
/// - forward, end of stream: a producer calls `finish()` on its outlet (a queue closes; the
///   consumer's loop ends and it finishes its own outlets);
/// - backward, no more wanted: `receive` answers ``Demand/enough`` (a decoder past the trim's
///   end or the frame limit), which the outlet returns to the producer's `send` (a queue refuses
///   further messages), and the producer stops sending.
///
/// Messages are borrowed: a message is valid only during `send`/`receive`. An edge that crosses
/// threads moves its payload into a shell of its own (`av_packet_move_ref`, `av_frame_move_ref`),
/// and the engine gives shells and pooled frames back once their consumer returns.
package enum Demand: Sendable, Equatable {
    /// Go on sending.
    case more
    /// The consumer wants no more; anything still sent is dropped.
    case enough
}

/// One edge of the stage graph as its producer sees it.
package struct Outlet<Message>: Sendable {
    /// Hands `message` over (borrowed for the call) and returns the consumer's demand.
    package let send: @Sendable (Message) throws(CropZoomError) -> Demand
    /// End of stream: nothing more will be sent.
    package let finish: @Sendable () throws(CropZoomError) -> Void

    package init(
        send: @escaping @Sendable (Message) throws(CropZoomError) -> Demand,
        finish: @escaping @Sendable () throws(CropZoomError) -> Void
    ) {
        self.send = send
        self.finish = finish
    }
}

/// A stage of the pipeline: a loop body and an end of stream.
package protocol Stage<Input>: AnyObject, Sendable {
    associatedtype Input
    /// The loop body: one message in (borrowed for the call), its results out through the
    /// stage's outlets. ``Demand/enough`` once the stage wants no more input.
    func receive(_ input: Input) throws(CropZoomError) -> Demand
    /// End of the input: flushes what the stage holds, then finishes its outlets.
    func finish() throws(CropZoomError)
}

/// The stages, as engine statistics name them (`EngineReport.busy`; JSON keys: the raw values).
public enum EngineStage: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable {
    case demux, decode, transform, encode, mux, audio
}

/// Where the threaded engine's stages waited (`EngineReport.waits`; JSON keys: the raw values).
public enum EngineWait: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable {
    /// The demuxer blocked on a full video queue: decoding is the slower side.
    case demuxQueueFull = "demux_queue_full"
    /// The decoder waited for packets: reading is the slower side.
    case decodeWaitingForPackets = "decode_waiting_for_packets"
    /// The decoder blocked on a full work queue: the transform workers are the slower side.
    case workQueueFull = "work_queue_full"
    /// The transform workers waited for frames.
    case workersWaitingForFrames = "workers_waiting_for_frames"
    /// The encoder waited for the next frame in sequence.
    case encodeWaitingForFrames = "encode_waiting_for_frames"
    /// The muxer waited for packets.
    case muxWaitingForPackets = "mux_waiting_for_packets"

    /// The stage that waited.
    public var stage: EngineStage {
        switch self {
        case .demuxQueueFull: return .demux
        case .decodeWaitingForPackets, .workQueueFull: return .decode
        case .workersWaitingForFrames: return .transform
        case .encodeWaitingForFrames: return .encode
        case .muxWaitingForPackets: return .mux
        }
    }

    /// In words, for the `--stats` line.
    public var description: String {
        switch self {
        case .demuxQueueFull: return "demux→decode queue full"
        case .decodeWaitingForPackets: return "decode waiting for packets"
        case .workQueueFull: return "decode→workers queue full"
        case .workersWaitingForFrames: return "workers waiting for frames"
        case .encodeWaitingForFrames: return "encode waiting for the next frame"
        case .muxWaitingForPackets: return "mux waiting for packets"
        }
    }
}

/// Busy time per stage on one thread: the engine switches it as control moves from stage to
/// stage (no allocation after each stage's first use).
///
/// `@unchecked Sendable`: each clock is used by the one thread it was made for.
package final class StageClock: @unchecked Sendable {
    package init() {}

    package private(set) var totals: [EngineStage: Double] = [:]
    private var current: EngineStage?
    private var since = 0.0

    /// Charges the time since the last switch to the stage that had it; returns that stage.
    @discardableResult
    package func switchTo(_ stage: EngineStage?) -> EngineStage? {
        let now = monotonicSeconds()
        let previous = current
        if let current { totals[current, default: 0] += now - since }
        current = stage
        since = now
        return previous
    }

    /// Runs `body` charged to `stage`, then gives the clock back to the stage that had it.
    @inline(__always)
    package func charge<T>(_ stage: EngineStage?, _ body: () throws(CropZoomError) -> T) throws(CropZoomError) -> T {
        let previous = switchTo(stage)
        defer { switchTo(previous) }
        return try body()
    }
}

/// The frames done and the media time reached, written by the encode stage and read by
/// whoever reports progress (another thread in the threaded engine).
///
/// `@unchecked Sendable`: both values are behind `lock`.
package final class ProgressBox: @unchecked Sendable {
    package init() {}

    private let lock = NSLock()
    private var frames = 0
    private var time = 0.0

    package func update(frames: Int, time: Double) {
        lock.lock()
        self.frames = frames
        self.time = time
        lock.unlock()
    }

    package var value: (frames: Int, time: Double) {
        lock.lock()
        defer { lock.unlock() }
        return (frames, time)
    }
}

extension CropZoomError {
    /// What a stage's blocked queue or pool throws once the run stopped: another stage's error,
    /// a signal or a cancellation came first and is the one reported (`RunControl.fail`).
    package static let stopped = CropZoomError(.processing, reason: "stopped")
}
