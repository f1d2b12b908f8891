// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "cropzoom",
    products: [
        .executable(name: "cropzoom", targets: ["cropzoom"]),
        .library(name: "CropZoomKit", targets: ["CropZoomKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // The only C boundary: FFmpeg headers, static inline helpers for FFmpeg's macros,
        // signal handling, the zimg scaling kernel and the few kernels that want to be plain C.
        .target(
            name: "CFFmpeg",
            linkerSettings: [
                .linkedLibrary("avformat"),
                .linkedLibrary("avcodec"),
                .linkedLibrary("swscale"),
                .linkedLibrary("swresample"),
                .linkedLibrary("avutil"),
                .linkedLibrary("zimg"),
            ]
        ),
        .target(
            name: "CropZoomKit",
            dependencies: ["CFFmpeg"]
        ),
        .executableTarget(
            name: "cropzoom",
            dependencies: [
                "CropZoomKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Yams", package: "Yams"),
            ],
            // Release builds carry the Swift runtime and Foundation inside the binary: it starts
            // in 53 ms instead of 68 (the loader maps and binds 14 fewer libraries; README,
            // "Performance") and runs where FFmpeg's libraries are but no Swift toolchain is.
            // Debug builds (the tests) stay dynamic.
            swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))],
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]
        ),
        // Using the library from Swift: a CSV of clips, progress from the event stream, Ctrl-C cancels.
        .executableTarget(
            name: "ZoomFromCSV",
            dependencies: ["CropZoomKit"],
            path: "Examples/ZoomFromCSV"
        ),
        .testTarget(
            name: "CropZoomKitTests",
            dependencies: ["CropZoomKit"]
        ),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "cropzoom", "CropZoomKit", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["cropzoom", "CropZoomKit", "ZoomFromCSV"]
        ),
    ]
)
