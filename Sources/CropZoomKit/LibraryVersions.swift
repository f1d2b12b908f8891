import CropZoomFFmpeg

/// The libraries this build runs on, as `cropzoom --version` (and `ffmpeg -version`) says them.
public enum LibraryVersions {
    /// FFmpeg's own version string ("5.1.6-0+deb12u1").
    public static var ffmpeg: String { FFmpegVersions.ffmpeg }

    /// Each FFmpeg library loaded, with the version it reports (major.minor.micro).
    public static var ffmpegLibraries: [(name: String, version: String)] { FFmpegVersions.ffmpegLibraries }

    /// zimg's version.
    public static var zimg: String { FFmpegVersions.zimg }

    /// Lines for `--version`: FFmpeg with its libraries, then zimg.
    public static var description: String { FFmpegVersions.description }
}
