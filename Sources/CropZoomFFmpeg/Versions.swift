import CFFmpeg
import CPlaneKernels
import CropZoomCore

/// The libraries this build runs on (the library's public `LibraryVersions` says them).
package enum FFmpegVersions {
    /// FFmpeg's own version string (`av_version_info`: "5.1.6-0+deb12u1").
    package static var ffmpeg: String { String(cString: av_version_info()) }

    /// Each FFmpeg library loaded, with the version it reports (`avformat_version` …, major.minor.micro).
    package static var ffmpegLibraries: [(name: String, version: String)] {
        func text(_ v: UInt32) -> String { "\(v >> 16).\((v >> 8) & 0xFF).\(v & 0xFF)" }
        return [
            ("libavutil", text(avutil_version())), ("libavcodec", text(avcodec_version())),
            ("libavformat", text(avformat_version())), ("libswscale", text(swscale_version())),
            ("libswresample", text(swresample_version())),
        ]
    }

    /// zimg's version (`zimg_get_version_info`).
    package static var zimg: String {
        var major: UInt32 = 0
        var minor: UInt32 = 0
        var micro: UInt32 = 0
        cz_zimg_version(&major, &minor, &micro)
        return "\(major).\(minor).\(micro)"
    }

    /// Lines for `--version`: FFmpeg with its libraries, then zimg.
    package static var description: String {
        "FFmpeg \(ffmpeg)\n" + ffmpegLibraries.map { "  \($0.name) \($0.version)" }.joined(separator: "\n")
            + "\nzimg \(zimg)"
    }
}
