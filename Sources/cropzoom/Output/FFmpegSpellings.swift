/// ffmpeg's options as people type them out of habit, and what cropzoom calls each: a usage error caused by one
/// names cropzoom's.
enum FFmpegSpellings {
    static let table: [String: String] = [
        "-c:v": "--codec", "-vcodec": "--codec", "-codec:v": "--codec",
        "-c:a": "--audio", "-acodec": "--audio", "-codec:a": "--audio", "-an": "--audio none",
        "-b:v": "--bitrate", "-crf": "--crf", "-preset": "--preset", "-pix_fmt": "--pix-fmt",
        "-ss": "--start", "-to": "--end", "-t": "--duration", "-f": "--format", "-s": "--size",
        "-vf": "--crop, --zoom, --size, --rotate", "-filter:v": "--crop, --zoom, --size, --rotate",
        "-i": "nothing: the input is the first argument",
    ]

    /// The hint for the first ffmpeg spelling among `arguments`, or nil.
    static func hint(_ arguments: [String]) -> String? {
        for a in arguments {
            if let ours = table[a] { return "\(a) is ffmpeg's spelling; cropzoom's is \(ours)" }
        }
        return nil
    }
}
