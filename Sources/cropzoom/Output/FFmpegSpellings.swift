/// ffmpeg's options as people type them out of habit, and what cropzoom calls each.
///
/// cropzoom's own short options are `-o`, `-y`, `-v` and `-h`; every other word of one dash and a letter is a usage
/// error before anything is parsed (``check(_:)``), naming cropzoom's spelling where there is one. Without it the
/// argument parser reads `-hide_banner` and `-threads` as bundled short flags that include `-h`: help on stdout,
/// exit 0, nothing written, and a script believes it worked.
enum FFmpegSpellings {
    static let table: [String: String] = [
        "-c:v": "--codec", "-vcodec": "--codec", "-codec:v": "--codec",
        "-c:a": "--audio-codec (or --audio copy, --audio none)", "-acodec": "--audio-codec",
        "-codec:a": "--audio-codec",
        "-an": "--audio none", "-b:v": "--bitrate", "-b:a": "--audio-bitrate", "-ac": "--audio-channels",
        "-crf": "--crf", "-preset": "--preset", "-pix_fmt": "--pix-fmt", "-profile:v": "--profile",
        "-profile": "--profile", "-level": "--level", "-tune": "--tune", "-g": "--gop", "-tag:v": "--tag",
        "-x264-params": "--encoder-option x264-params=…", "-x265-params": "--encoder-option x265-params=…",
        "-ss": "--start", "-to": "--end", "-t": "--duration", "-f": "--format", "-s": "--size",
        "-vf": "--crop, --zoom, --size, --rotate", "-filter:v": "--crop, --zoom, --size, --rotate",
        "-i": "nothing: the input is the first argument",
        "-threads": "--threads", "-hide_banner": "nothing: cropzoom prints no banner",
        "-nostdin": "nothing: cropzoom reads standard input only for the input -",
        "-nostats": "nothing: --progress none", "-stats": "--progress", "-progress": "--progress json",
        "-loglevel": "-v (--verbose)", "-n": "nothing: an existing output is replaced only with -y",
        "-vn": "--streams (the video is what cropzoom transforms: it is always kept)",
        "-sn": "--streams", "-dn": "--streams", "-map": "--streams and --audio-stream",
        "-r": "--framerate (for an image sequence; every input frame is kept at its time)",
        "-movflags": "nothing: cropzoom writes MP4 with its index at the front",
        "-copyts": "--keep-start-time", "-re": "--live",
    ]

    /// cropzoom's own short options (also bundled: `-yv`).
    static let ownShort: Set<Character> = ["o", "y", "v", "h"]

    /// Options whose next word is their value whatever it looks like (`parsing: .unconditional`, and sbatch's
    /// options): that word is not checked.
    static let takesAnyValue: Set<String> = [
        "--zoom", "--size", "--rotate", "--transform", "--start", "--end", "--duration", "--crf", "--bitrate",
        "--segment", "--scheduler-option",
    ]

    /// A usage error for the first word of `arguments` that is one dash and a letter but not one of cropzoom's short
    /// options (up to a `--`, and never the value of an option in ``takesAnyValue``).
    static func check(_ arguments: [String]) throws(CommandError) {
        var previous = ""
        for (k, a) in arguments.enumerated() {
            defer { previous = a }
            if a == "--" { return }
            guard a.count >= 2, a.hasPrefix("-"), !a.hasPrefix("--"), !takesAnyValue.contains(previous) else {
                continue
            }
            let second = a[a.index(after: a.startIndex)]
            guard second.isLetter else { continue }
            let name = String(a.split(separator: "=", maxSplits: 1)[0])
            if name.dropFirst().allSatisfy(ownShort.contains) { continue }
            let next = k + 1 < arguments.count ? arguments[k + 1] : ""
            throw CommandError.usage(message(name, next: next))
        }
    }

    /// The message for ffmpeg's (or an unknown) single-dash option `name`, followed by the word `next`.
    static func message(_ name: String, next: String) -> String {
        let copyVideo = ["-c", "-codec", "-c:v", "-vcodec", "-codec:v"]
        if next == "copy" && copyVideo.contains(name) {
            return "\(name) copy is ffmpeg's; cropzoom's --codec has no copy for video, because every frame is "
                + "transformed (--audio copy copies the audio) (see cropzoom --help)"
        }
        if next == "copy" && ["-c:a", "-acodec", "-codec:a"].contains(name) {
            return "\(name) copy is ffmpeg's spelling; cropzoom's is --audio copy (see cropzoom --help)"
        }
        if let ours = table[name] {
            return "\(name) is ffmpeg's spelling; cropzoom's is \(ours) (see cropzoom --help)"
        }
        return "\(name) is not an option of cropzoom: its options are spelled with two dashes (--\(name.dropFirst()))"
            + ", and its only short ones are -o, -y, -v and -h (see cropzoom --help)"
    }
}
