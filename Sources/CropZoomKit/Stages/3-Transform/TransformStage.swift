import CropZoomFFmpeg

/// The transform stage: renders a decoded frame into an output frame of the output's size and
/// format (crop, scale, warp, turn: ``Transformer``), stamps it (``TimestampPolicy/stamp(_:from:)``)
/// and sends it to the encoder. One per transform worker; each owns its transformer.
///
/// The output frame comes with the input: the engine takes it from the frame pool in decode
/// order (so workers that finish out of order cannot starve the pool) and gives it back once
/// the encoder is done with it.
///
/// `@unchecked Sendable`: driven by one thread at a time (a transform worker).
final class TransformStage: TransformingStage, @unchecked Sendable {
    private let transformer: Transformer
    private let times: TimestampPolicy
    private let output: Outlet<Frame>

    init(transformer: Transformer, times: TimestampPolicy, output: Outlet<Frame>) {
        self.transformer = transformer
        self.times = times
        self.output = output
    }

    func receive(_ work: TransformWork) throws(CropZoomError) -> Demand {
        try transformer.render(work.input, into: work.output)
        times.stamp(work.output, from: work.input)
        return try output.send(work.output)
    }

    func finish() throws(CropZoomError) { try output.finish() }
}
