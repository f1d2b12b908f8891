import CropZoomFFmpeg

/// What the engines connect: the stages of one job, as the engines see them. An engine makes the edges (direct
/// calls, bounded queues, a leaky queue), asks a ``StageFactory`` for the stage at each end, and runs the loops; it
/// never builds a stage itself, and never looks inside one (as FFmpeg 7's `fftools/ffmpeg_sched.c` registers each
/// component and connects them with `sch_connect`). A real job's stages come from ``JobStages``; the engine tests
/// give the engines fakes of their own.

/// What a stage adds to the engine's counts once the run is over (frames in and out, damaged packets, where the
/// input ended): the stages report, the engine does not ask the demuxer or the decoder.
protocol Counted: AnyObject {
    func count(into counts: inout EngineCounts)
}

/// A stage without input, whose loop the engine drives: the input's reader, the sound device's.
protocol Reading: Counted, Sendable {
    /// Reads one packet and sends it on; false at the end of the input or once nothing more is wanted.
    func step() throws(CropZoomError) -> Bool
    /// The end: finishes the reader's outlets.
    func finish() throws(CropZoomError)
}

/// A stage taking packets: the video decoder, an audio re-encoder.
protocol PacketStage: Stage, Counted where Input == Packet {}

/// A transform worker's stage: renders a decoded frame into a pooled output frame.
protocol TransformingStage: Stage where Input == TransformWork {}

/// The encoder's stage, with the progress it publishes (frames encoded, media time reached).
protocol EncodingStage: Stage, Counted where Input == Frame {
    var progress: ProgressBox { get }
}

/// The muxer's stage; `flush` writes what it holds back, once every producer has finished.
protocol MuxingStage: Stage, Counted where Input == MuxPacket {
    func flush() throws(CropZoomError)
}

/// A decoded frame and the output frame it is rendered into (taken from the pool in decode order by the engine).
struct TransformWork {
    var input: Frame
    var output: Frame
}

/// The output pictures an engine's pool holds.
struct PictureShape {
    var width: Int
    var height: Int
    var format: PixelFormat
}

/// Builds the stages of one job, each with the outlets the engine made for it. One place decides which stage does
/// what with which part of the set-up; the serial, threaded and live wirings only connect what it returns.
protocol StageFactory: AnyObject {
    /// The transformed pictures (the engine's frame pool).
    var picture: PictureShape { get }
    /// The input streams whose packets go to a re-encoder (each is given an outlet of its own).
    var reencodedStreams: [Int] { get }
    /// Whether there is a sound device (`--audio-input`), and whether its audio is re-encoded.
    var hasSound: Bool { get }
    var soundReencodes: Bool { get }

    func mux() -> any MuxingStage
    func encode(output: Outlet<MuxPacket>) -> any EncodingStage
    /// One per transform worker: each owns its scalers and scratch frames.
    func transform(output: Outlet<Frame>) -> any TransformingStage
    func decode(output: Outlet<Frame>) -> any PacketStage
    /// The re-encoder of input stream `stream` (one of ``reencodedStreams``).
    func reencoder(stream: Int, output: Outlet<MuxPacket>) -> any PacketStage
    func demux(
        video: Outlet<Packet>, mux: Outlet<MuxPacket>, reencoders: [Int: Outlet<Packet>]
    ) throws(CropZoomError) -> any Reading
    /// The sound device's re-encoder (when ``soundReencodes``).
    func soundReencoder(output: Outlet<MuxPacket>) -> any PacketStage
    /// The sound device's reader (when ``hasSound``); `reencoder`: the edge to its re-encoder.
    func sound(reencoder: Outlet<Packet>?, mux: Outlet<MuxPacket>) throws(CropZoomError) -> any Reading
}

/// A real job's stages (``Job``): what set-up decided — the trim, the frame limit, the segment cuts, the routes — is
/// handed to each stage here, once (`--strict` was given to the demuxer and the decoder when they were made; the
/// muxer's stage takes it for its own rule on damaged copied packets).
final class JobStages: StageFactory {
    let job: Job

    init(_ job: Job) { self.job = job }

    var picture: PictureShape {
        PictureShape(width: job.plan.output.width, height: job.plan.output.height, format: job.outputFormat)
    }

    var reencodedStreams: [Int] {
        job.routes.indices.filter {
            if case .reencode = job.routes[$0] { return true }
            return false
        }
    }

    var hasSound: Bool { job.sound != nil }

    var soundReencodes: Bool {
        guard let s = job.sound, case .reencode = s.routes[s.index] else { return false }
        return true
    }

    func mux() -> any MuxingStage {
        MuxStage(muxer: job.muxer, times: job.times, strict: job.configuration.strict, output: job.atomic)
    }

    func encode(output: Outlet<MuxPacket>) -> any EncodingStage {
        EncodeStage(encoder: job.encoder, stream: job.videoOutput, times: job.times, cuts: job.cuts, output: output)
    }

    func transform(output: Outlet<Frame>) -> any TransformingStage {
        TransformStage(transformer: job.makeTransformer(), times: job.times, output: output)
    }

    func decode(output: Outlet<Frame>) -> any PacketStage {
        DecodeStage(
            decoder: job.decoder, times: job.times, limit: job.configuration.frameLimit, output: output)
    }

    func reencoder(stream: Int, output: Outlet<MuxPacket>) -> any PacketStage {
        guard case .reencode(let transcoder, let out) = job.routes[stream] else {
            preconditionFailure("stream \(stream) is not re-encoded")
        }
        return AudioStage(transcoder: transcoder, stream: out, output: output)
    }

    func demux(
        video: Outlet<Packet>, mux: Outlet<MuxPacket>, reencoders: [Int: Outlet<Packet>]
    ) throws(CropZoomError) -> any Reading {
        try DemuxStage(
            demuxer: job.demuxer, routes: job.routes, times: job.times,
            live: job.live, video: video, mux: mux, reencoders: reencoders)
    }

    func soundReencoder(output: Outlet<MuxPacket>) -> any PacketStage {
        guard let s = job.sound, case .reencode(let transcoder, let out) = s.routes[s.index] else {
            preconditionFailure("the sound device's audio is not re-encoded")
        }
        return AudioStage(transcoder: transcoder, stream: out, output: output)
    }

    func sound(reencoder: Outlet<Packet>?, mux: Outlet<MuxPacket>) throws(CropZoomError) -> any Reading {
        guard let s = job.sound else { preconditionFailure("no sound device") }
        let live = job.live
        return try SoundStage(
            demuxer: s.demuxer, index: s.index, route: s.routes[s.index], times: s.times, reencoder: reencoder,
            mux: mux, end: { live?.soundEnd })
    }
}
