// cropzoom's own hot path through CropZoomKit's benchmarking hooks (Sources/CropZoomKit/
// Benchmarking.swift): the frame pool's acquire/release, and the transform stage (crop by
// pointer offset + zimg (the default kernel) or swscale into a pooled frame + release) per frame.
// mallocCountTotal shows that neither allocates once warm; the custom "pool allocations" metric is
// the pool's own counter after the run (1 = one frame allocated, then reused every time).
import Benchmark
@_spi(Benchmarking) import CropZoomKit

let benchmarks: @Sendable () -> Void = {
    let poolAllocations = BenchmarkMetric.custom("pool allocations (after run)", useScalingFactor: false)
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal, poolAllocations],
        timeUnits: .microseconds,
        warmupIterations: 10,
        maxDuration: .seconds(1),
        maxIterations: 250
    )

    Benchmark("baseline-empty-frame", configuration: configuration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(benchmark) }
    }

    var poolConfiguration = configuration
    poolConfiguration.timeUnits = .nanoseconds
    poolConfiguration.maxIterations = 100_000
    Benchmark("pool acquire+release 1920x1080 yuv420p", configuration: poolConfiguration) { benchmark, pool in
        for _ in benchmark.scaledIterations { try! pool.acquireRelease() }
        benchmark.measurement(poolAllocations, pool.statistics.allocations)
    } setup: {
        try PoolBench(width: 1920, height: 1080, pixelFormat: "yuv420p", capacity: 8)
    }

    let transforms: [(name: String, width: Int, height: Int, format: String, size: (width: Int, height: Int)?,
                      scaler: TranscodeConfiguration.Scaler)] = [
        ("transform 1080p-zoom1.65 bicubic", 1920, 1080, "yuv420p", nil, .bicubic),
        ("transform 1080p-zoom1.65 bilinear", 1920, 1080, "yuv420p", nil, .bilinear),
        ("transform 1080p-zoom1.65 lanczos", 1920, 1080, "yuv420p", nil, .lanczos),
        ("transform 1080p-zoom1.65 bicubic yuv420p10le", 1920, 1080, "yuv420p10le", nil, .bicubic),
        ("transform 4k-zoom1.65-to-1080p bicubic", 3840, 2160, "yuv420p", (1920, 1080), .bicubic),
    ]
    // What moves per frame (issue 6): against the static zoom above, in the same run. The
    // animated window and the warp go through cropzoom's own kernels whatever --kernel says.
    let moving: [(name: String, motion: TransformBench.Motion, zoom: Double)] = [
        ("transform 1080p-zoom1.65 static (swscale)", .still, 1.65),
        ("transform 1080p-zoom1.65-ramp animated", .zoomRamp, 1.65),
        ("transform 1080p rotate 7.5", .rotate(7.5), 1),
        ("transform 1080p-zoom0.6 blurred background", .blurredZoomOut, 0.6),
    ]
    for m in moving {
        Benchmark(m.name, configuration: configuration) { benchmark, bench in
            for _ in benchmark.scaledIterations { try! bench.runOnce() }
            benchmark.measurement(poolAllocations, bench.pool.allocations)
        } setup: {
            try TransformBench(sourceWidth: 1920, sourceHeight: 1080, zoom: m.zoom, scaler: .bicubic,
                               kernel: .swscale, motion: m.motion)
        }
    }

    for t in transforms {
        for kernel in [TranscodeConfiguration.Kernel.zimg, .swscale] {
            Benchmark("\(t.name) \(kernel.rawValue)", configuration: configuration) { benchmark, bench in
                for _ in benchmark.scaledIterations { try! bench.runOnce() }
                benchmark.measurement(poolAllocations, bench.pool.allocations)
            } setup: {
                try TransformBench(sourceWidth: t.width, sourceHeight: t.height, pixelFormat: t.format, zoom: 1.65,
                                   outputSize: t.size, scaler: t.scaler, kernel: kernel)
            }
        }
    }
}
