// Per-frame cost of each scaling kernel on cropzoom's crop+scale cases (see KernelSupport):
// wall clock, throughput, and malloc count inside the measured frame (0 = the hot path
// allocates nothing). Kernels, source pictures and destination planes are built in `setup`,
// outside the measurement.
import Benchmark
import Foundation
import KernelSupport

/// Built once per source size (the synthetic picture of KernelQuality; speed hardly depends
/// on content, but it is a real picture, not zeros).
final class Sources: @unchecked Sendable {
    // @unchecked: filled once under the lock, then only read.
    static let shared = Sources()
    private var pictures: [Int: Picture] = [:]
    private let lock = NSLock()
    func picture(width: Int, height: Int) -> Picture {
        lock.withLock {
            if let p = pictures[width] { return p }
            let p = SyntheticPicture(componentsPerPlane: 48).render(width: width, height: height).picture
            pictures[width] = p
            return p
        }
    }
}

/// What one benchmark keeps between setup and teardown.
struct Prepared {
    let kernel: Kernel
    let source: Picture
    let destination: Picture
}

let benchmarks: @Sendable () -> Void = {
    // Short runs: the whole suite (about 40 benchmarks) stays around a minute.
    let kernelConfiguration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 10,
        maxDuration: .seconds(1),
        maxIterations: 250
    )

    // Harness overhead: an empty frame, with the same metrics (expect 0 mallocs).
    Benchmark("baseline-empty-frame", configuration: kernelConfiguration) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(benchmark) }
    }

    let subpixel: Set<String> = ["zimg-bicubic", "zimg-bicubic-b0c06", "zimg-bicubic-b0c06-avx512"]
    for scaleCase in ScaleCase.all {
        for spec in KernelSpec.all where !scaleCase.isFractional || subpixel.contains(spec.id) {
            Benchmark("\(scaleCase.id) \(spec.id)", configuration: kernelConfiguration) { benchmark, prepared in
                for _ in benchmark.scaledIterations {
                    prepared.kernel.run(prepared.source, into: prepared.destination)
                }
                blackHole(prepared.destination)
            } setup: { () -> Prepared in
                let source = Sources.shared.picture(width: scaleCase.sourceWidth, height: scaleCase.sourceHeight)
                let destination = Picture(width: scaleCase.outputWidth, height: scaleCase.outputHeight)
                let kernel = try Kernel(spec, scaleCase)
                kernel.run(source, into: destination)
                return Prepared(kernel: kernel, source: source, destination: destination)
            }
        }
    }
}

