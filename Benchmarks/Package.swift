// swift-tools-version:6.1
// cropzoom's micro-benchmarks and scaling-kernel comparison: a package of its own so that the
// benchmark dependency (and the zimg/libyuv libraries the comparison links) stay out of the
// product. Run from this directory:
//   swift package --allow-writing-to-package-directory benchmark     (ordo-one/benchmark suites)
//   swift run -c release KernelQuality                                (PSNR vs a float reference)
import PackageDescription

let package = Package(
    name: "cropzoom-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "cropzoom", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The three scaling kernels (swscale, zimg, libyuv) behind one small C API, plus the
        // synthetic picture / float reference generator.
        .target(
            name: "CKernels",
            cSettings: [.unsafeFlags(["-O3"])],
            linkerSettings: [
                .linkedLibrary("swscale"),
                .linkedLibrary("avutil"),
                .linkedLibrary("zimg"),
                .linkedLibrary("yuv"),
            ]
        ),
        // Swift side shared by the benchmarks and KernelQuality: the list of kernels, pictures.
        .target(name: "KernelSupport", dependencies: ["CKernels"]),
        .executableTarget(name: "KernelQuality", dependencies: ["KernelSupport", "CKernels"]),
        .executableTarget(
            name: "ScalingKernels",
            dependencies: ["KernelSupport", .product(name: "Benchmark", package: "benchmark")],
            path: "Benchmarks/ScalingKernels",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "FramePoolAndTransform",
            dependencies: [
                .product(name: "CropZoomKit", package: "cropzoom"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/FramePoolAndTransform",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
