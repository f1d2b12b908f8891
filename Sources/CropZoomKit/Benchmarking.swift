import CropZoomFFmpeg

// Hooks for Benchmarks/ (a package of its own): the transform stage and the frame pool, driven
// through the same internal types the pipeline uses. Not public API: `@_spi(Benchmarking)`
// (`@_spi(Benchmarking) import CropZoomKit` sees them). No C type crosses this API.

/// cropzoom's transform (crop by pointer offset + swscale into a pooled frame) on one synthetic
/// source frame, as the pipeline runs it per decoded frame.
@_spi(Benchmarking) public final class TransformBench {
    private let transformer: Transformer
    private let framePool: FramePool
    private let source: Frame
    /// The crop window read and the output size, for labels.
    public let window: (x: Int, y: Int, width: Int, height: Int)
    public let output: (width: Int, height: Int)

    /// What moves from frame to frame: nothing (a static zoom), the zoom (a keyframed ramp from
    /// `zoom` to 1.1 × `zoom` over 10 s: a new sub-pixel window every frame), a rotation by any
    /// angle (the 2-D warp), or a zoom below 1 over the blurred picture.
    public enum Motion: Sendable {
        case still, zoomRamp
        case rotate(Double)
        case blurredZoomOut
    }

    private var frameIndex: Int64 = 0

    public init(
        sourceWidth: Int, sourceHeight: Int, pixelFormat: String = "yuv420p", zoom: Double,
        outputSize: (width: Int, height: Int)? = nil,
        scaler: TranscodeConfiguration.Scaler = .bicubic, kernel: TranscodeConfiguration.Kernel = .auto,
        motion: Motion = .still
    ) throws {
        guard let info = PixelFormatInfo(name: pixelFormat), !info.isHardware, !info.isBitstream else {
            throw CropZoomError(.usage, reason: "unknown pixel format \(pixelFormat)")
        }
        var request = GeometryRequest()
        request.zoom = zoom
        var background = TranscodeConfiguration.Background.color(red: 0, green: 0, blue: 0)
        switch motion {
        case .still: break
        case .zoomRamp:
            request.zoomTrack = Track(keys: [.init(time: 0, value: [zoom]), .init(time: 10, value: [zoom * 1.1])])
        case .rotate(let degrees): request.angle = Track(constant: [degrees])
        case .blurredZoomOut:
            request.zoom = min(zoom, 0.9)
            background = .blur
        }
        if let outputSize { request.size = .init(width: outputSize.width, height: outputSize.height) }
        let plan = try GeometryPlan.make(
            request,
            source: SourcePicture(
                width: sourceWidth, height: sourceHeight, alignX: info.alignment.x, alignY: info.alignment.y),
            outputAlign: info.alignment)
        window = (plan.source.x, plan.source.y, plan.source.width, plan.source.height)
        output = plan.output
        source = try Frame(width: sourceWidth, height: sourceHeight, format: info.pixelFormat)
        source.pts = 0
        source.fillWithTestPattern(info)
        framePool = FramePool(
            width: plan.output.width, height: plan.output.height, format: info.pixelFormat, capacity: 4)
        // Frame n is shown at n / 30 s.
        transformer = Transformer(
            plan: plan, outputFormat: info.pixelFormat, outputFullRange: info.isJ,
            scaler: scaler, kernel: kernel,
            frameTime: { Double($0) / 30 }, background: background)
        try runOnce()  // builds the scaler and the pool's first frame outside the measurement
    }

    /// Transforms the source frame into a pooled frame and gives it back to the pool.
    public func runOnce() throws {
        source.pts = frameIndex % 300  // the next frame (a moving window moves), within 10 s
        frameIndex += 1
        let out = try framePool.acquire()
        defer { framePool.release(out) }
        try transformer.render(source, into: out)
        out.pts = source.pts
    }

    public var pool: PoolStatistics { framePool.snapshot() }
}

/// The frame pool alone: one acquire and one release per call.
@_spi(Benchmarking) public final class PoolBench {
    private let pool: FramePool

    public init(width: Int, height: Int, pixelFormat: String = "yuv420p", capacity: Int = 8) throws {
        guard let info = PixelFormatInfo(name: pixelFormat) else {
            throw CropZoomError(.usage, reason: "unknown pixel format \(pixelFormat)")
        }
        pool = FramePool(width: width, height: height, format: info.pixelFormat, capacity: capacity)
        try acquireRelease()  // the first acquire allocates; later ones reuse
    }

    public func acquireRelease() throws {
        let frame = try pool.acquire()
        pool.release(frame)
    }

    public var statistics: PoolStatistics { pool.snapshot() }
}
