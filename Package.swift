// swift-tools-version:6.0
import Foundation
import PackageDescription

// The shared libraries the executable names first, in this order. Debian's FFmpeg loads 135 libraries and binds
// ~30,000 symbols at start, each found by walking the process's libraries in order from the first; named first, the
// ones most bindings go to are found first, and the loader's work at start falls from 79 to 46 million instructions
// (docs/design/repair.md, "Session 14"). Each library comes after those that win a symbol it defines too, so every
// symbol binds where it did (Benchmarks/load_order.py derives the list and checks a release build; LoadOrderTests
// checks the debug build). Only the libraries this machine has are named.
let loadOrder = [
    "libm.so.6", "libc.so.6", "libcrypto.so.3", "libstdc++.so.6", "libglib-2.0.so.0", "libzimg.so.2", "libgme.so.0",
    "lib_FoundationICU.so", "libswiftCore.so", "libopenmpt.so.0", "libsrt-gnutls.so.1.5", "libX11.so.6",
    "libgio-2.0.so.0", "libgnutls.so.30", "libnettle.so.8", "libmbedcrypto.so.7", "libavutil.so.57", "libkrb5.so.3",
    "libcodec2.so.1.0", "libunistring.so.2", "libpango-1.0.so.0", "libgobject-2.0.so.0", "libgmp.so.10",
    "libcairo.so.2", "libharfbuzz.so.0", "liblcms2.so.2", "libzvbi.so.0", "libhogweed.so.6", "libmount.so.1",
    "libpng16.so.16", "libfreetype.so.6", "libssh-gcrypt.so.4", "libxml2.so.2", "libssl.so.3", "libsodium.so.23",
    "libkrb5support.so.0", "libgssapi_krb5.so.2", "libxcb.so.1", "libavcodec.so.59", "libvorbis.so.0",
    "libk5crypto.so.3", "libpixman-1.so.0", "libz.so.1", "libjpeg.so.62", "libselinux.so.1", "libgcc_s.so.1",
    "libfontconfig.so.1", "libpgm-5.3.so.0", "libmp3lame.so.0", "libmpg123.so.0", "libblkid.so.1",
    "libgdk_pixbuf-2.0.so.0", "libp11-kit.so.0", "libwebp.so.7", "libSvtAv1Enc.so.1", "libva.so.2", "libmd.so.0",
    "libogg.so.0", "libgcrypt.so.20", "librabbitmq.so.4", "liblzma.so.5", "libxcb-render.so.0", "libsnappy.so.1",
    "libaom.so.3", "libdrm.so.2", "libjxl.so.0.7", "libopus.so.0", "libpcre2-8.so.0", "libnuma.so.1", "libgomp.so.1",
    "libspeex.so.1", "libtwolame.so.0", "librist.so.4", "libtasn1.so.6", "libopenjp2.so.7", "libmfx.so.1",
    "libbluray.so.2", "libnorm.so.1", "libzmq.so.5", "libXext.so.6", "libXrender.so.1", "libavformat.so.59",
    "libcairo-gobject.so.2", "libtheoradec.so.1", "libvpx.so.7", "libffi.so.8", "libfribidi.so.0", "libcjson.so.1",
    "libx265.so.199", "libbz2.so.1.0", "libkeyutils.so.1", "libgsm.so.1", "libthai.so.0", "libdatrie.so.1",
    "libgpg-error.so.0", "libgraphite2.so.3", "libvorbisfile.so.3", "libpangocairo-1.0.so.0", "libOpenCL.so.1",
    "librav1e.so.0", "libbsd.so.0", "libwebpmux.so.3", "libdav1d.so.6", "libudfread.so.0", "libcom_err.so.2",
    "libchromaprint.so.1", "libXdmcp.so.6", "libsoxr.so.0", "libx264.so.164", "libtheoraenc.so.1", "libbrotlienc.so.1",
    "libbrotlicommon.so.1", "libva-x11.so.2", "libswresample.so.4", "libidn2.so.0", "libhwy.so.1", "libexpat.so.1",
    "libxcb-shm.so.0", "libshine.so.3", "libbrotlidec.so.1", "libpangoft2-1.0.so.0", "libgmodule-2.0.so.0",
    "libxcb-dri3.so.0", "libswscale.so.6", "libicuuc.so.72", "libvorbisenc.so.2", "libXfixes.so.3", "libxvidcore.so.4",
    "libXau.so.6", "libjxl_threads.so.0.7", "librsvg-2.so.2", "libresolv.so.2", "libicudata.so.72", "libX11-xcb.so.1",
    "libva-drm.so.2", "libvdpau.so.1",
].compactMap { name -> LinkerSetting? in
    // The Swift runtime's own libraries are linked in debug builds only (release builds carry them inside).
    if name.hasPrefix("libswift") || name.hasPrefix("lib_Foundation") {
        return .linkedLibrary(":" + name, .when(configuration: .debug))
    }
    let folders = [
        "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
    ]
    return folders.contains { FileManager.default.fileExists(atPath: $0 + "/" + name) }
        ? .linkedLibrary(":" + name) : nil
}

let package = Package(
    name: "cropzoom",
    products: [
        .executable(name: "cropzoom", targets: ["cropzoom"]),
        .library(name: "CropZoomKit", targets: ["CropZoomKit"]),
        // `--follow`'s faces and frame comparison over OpenCV, a plugin beside the executable (CFaceLoader opens it
        // when a job reframes): linked in, OpenCV cost every process 9 MiB at start (Benchmarks/results/issue30-ab.md).
        .library(name: "CropZoomFaces", type: .dynamic, targets: ["CFaceDetect"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // FilePath in the library's API (paths as bytes, beside String and URL).
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // `swift package generate-documentation --target CropZoomKit`: the library's DocC catalog
        // (Sources/CropZoomKit/CropZoomKit.docc), built by scripts/test.sh. A plugin only: nothing of it is linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The C targets, by concern (as swift-nio keeps syscall shims alone in CNIOLinux). Each
        // header says what its target holds and what it must not.
        //
        // CFFmpeg: the FFmpeg boundary, the only target that includes or links FFmpeg. Its
        // headers, `static inline` helpers for FFmpeg's macros (AVERROR(EAGAIN), AV_NOPTS_VALUE),
        // log routing with the decode-error counter, the I/O interrupt callback (which reads
        // CCropZoomSystem's signal flag), chapter copy, the first frame's HDR metadata.
        .target(
            name: "CFFmpeg",
            dependencies: ["CCropZoomSystem"],
            linkerSettings: [
                .linkedLibrary("avformat"),
                .linkedLibrary("avcodec"),
                .linkedLibrary("swscale"),
                .linkedLibrary("swresample"),
                .linkedLibrary("avutil"),
            ]
        ),
        // CCropZoomSystem: operating-system shims only, no FFmpeg: the signal flag, thread
        // priority, rename without replace, the parent-death signal, the CPU affinity count.
        .target(name: "CCropZoomSystem"),
        // CropZoomSystem: the one door to the operating system (as swift-nio's System.swift): CCropZoomSystem's
        // shims as Swift functions (signals, threads' ids and priorities, the parent-death signal, malloc's
        // thresholds, the affinity count, rename without replace, whole writes), RawPath's system side (C strings,
        // stat, readdir, FilePath) and ChildProcess. The rest of cropzoom calls these and spells no raw pointer.
        .target(
            name: "CropZoomSystem",
            dependencies: [
                "CCropZoomSystem", "CropZoomCore", .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // CPlaneKernels: cropzoom's picture kernels on plain planes, no FFmpeg: the orthogonal
        // turns, the spatial deinterlacer, the zimg crop+scale bridge (the only user of zimg),
        // the separable resampler, the 2-D warp and the box blur.
        .target(
            name: "CPlaneKernels",
            // Optimised in debug builds too: the tests run the debug build, and the kernels' speed at -O0 (ten times
            // slower) would only make them slower, not test anything more. Release builds take SwiftPM's own -O.
            cSettings: [.unsafeFlags(["-O2"], .when(configuration: .debug))],
            linkerSettings: [.linkedLibrary("zimg")]
        ),
        // CCameraPath: the L1-optimal camera path of `--stabilize` (Grundmann et al., CVPR 2011), a linear
        // programme solved by its own banded barrier method — the same answer as COIN-OR Clp and GLPK, 20–30
        // times faster, linear in the frame count, and nothing to install (Benchmarks/results/l1-solver.md).
        // Plain numbers in, no picture, no FFmpeg.
        .target(
            name: "CCameraPath",
            cSettings: [.unsafeFlags(["-O2"], .when(configuration: .debug))],
            linkerSettings: [.linkedLibrary("m")]
        ),
        // CFaceDetect: the faces `--follow` looks for and the tracker that keeps them (issue 30): OpenCV's cascade
        // detector and template matching behind a small C API, the only target that includes or links OpenCV (Debian's
        // libopencv-objdetect-dev; the cascades from opencv-data). Planes in, boxes out; no FFmpeg.
        .target(
            name: "CFaceDetect",
            cxxSettings: [
                .headerSearchPath("../CFaceLoader/include"),
                .unsafeFlags(["-I/usr/include/opencv4"]),
                .unsafeFlags(["-O2"], .when(configuration: .debug)),
            ],
            linkerSettings: [
                .linkedLibrary("opencv_objdetect"),
                .linkedLibrary("opencv_imgproc"),
                .linkedLibrary("opencv_core"),
            ]
        ),
        // CFaceLoader: the door to the CropZoomFaces plugin (dlopen on first use; the types of CFaceDetect's API).
        .target(name: "CFaceLoader", linkerSettings: [.linkedLibrary("dl")]),
        // The pure core: geometry and keyframe tracks, the settings (table, parsers, job files) and
        // the configuration, reports and errors, the thread plan, the engine's queues and scheduling
        // vocabulary. No C target of ours and no FFmpeg: its tests run without them.
        .target(
            name: "CropZoomCore",
            dependencies: [
                .product(name: "Yams", package: "Yams"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            // The repair's walk and the plane work mutate classes' stored properties per sample; release builds skip
            // the runtime's exclusivity checks there (6 % of a walk of small pictures: docs/design/repair.md,
            // "Session 16"). Debug builds, which the tests run, keep them.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        // CropZoomFFmpeg: the wrappers — one owner class per FFmpeg object (throwing init, *_free in deinit),
        // borrowed views, FFmpeg's small values as Swift ones, the FFmpeg work each stage drives (Drivers/) — and
        // the owners of CPlaneKernels' objects. With CropZoomSystem, the only Swift target that imports a C module;
        // its raw pointers are internal, so the library reaches FFmpeg through typed doors only
        // (scripts/c-boundary.sh checks the rest of Sources/).
        .target(
            name: "CropZoomFFmpeg",
            dependencies: [
                "CropZoomCore", "CropZoomSystem", "CFFmpeg", "CCropZoomSystem", "CPlaneKernels", "CCameraPath",
                "CFaceLoader",
            ]
        ),
        // CropZoomKit: the library — set-up, the stage types, the timestamp and live policies, the engines, the public
        // API. No C module, no raw pointer.
        .target(
            name: "CropZoomKit",
            dependencies: [
                "CropZoomCore", "CropZoomSystem", "CropZoomFFmpeg",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(
            name: "cropzoom",
            dependencies: [
                "CropZoomKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // Release builds carry the Swift runtime and Foundation inside the binary: it starts
            // in 53 ms instead of 68 (the loader maps and binds 14 fewer libraries; README,
            // "Performance") and runs where FFmpeg's libraries are but no Swift toolchain is.
            // Debug builds (the tests) stay dynamic.
            swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))],
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]
                + loadOrder
        ),
        // Using the library from Swift: a CSV of clips, progress from the event stream, Ctrl-C cancels.
        .executableTarget(
            name: "ZoomFromCSV",
            dependencies: ["CropZoomKit"],
            path: "Examples/ZoomFromCSV"
        ),
        // A long run of jobs in one process through the library, memory, descriptors and threads sampled every
        // second (Benchmarks/RELIABILITY.md).
        .executableTarget(
            name: "Soak",
            dependencies: ["CropZoomKit"],
            path: "Benchmarks/Soak"
        ),
        // In-process fuzzing (Benchmarks/RELIABILITY.md): kept beside the mutation harness in Tests/fuzz, as it is a
        // test tool, not a product. A plain build makes the replay driver (`CropZoomFuzz FILE…`, which the tests
        // run); scripts/fuzz.sh builds it with `-sanitize=fuzzer,address -D CZ_LIBFUZZER` as libFuzzer's target.
        .executableTarget(
            name: "CropZoomFuzz",
            dependencies: ["CropZoomKit"],
            path: "Tests/fuzz/libfuzzer"
        ),
        .testTarget(
            name: "CropZoomCoreTests",
            dependencies: ["CropZoomCore", "CropZoomSystem"]
        ),
        .testTarget(
            name: "CropZoomKitTests",
            dependencies: ["CropZoomKit", "CropZoomFFmpeg", "CFFmpeg", "CPlaneKernels"]
        ),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "cropzoom", "CropZoomKit", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "cropzoom", "CropZoomKit", "CropZoomSystem", "CropZoomFFmpeg", "ZoomFromCSV", "CropZoomFuzz",
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
    ]
)
