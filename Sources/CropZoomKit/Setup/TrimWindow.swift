import CropZoomFFmpeg

/// Which part of the input is kept and where the output's times start: `--start`/`--end`
/// measured from the file's first timestamp, or, untrimmed, the origin of an input whose times
/// are a clock reading. Made once at set-up; ``TimestampPolicy`` applies it.
struct TrimWindow {
    /// Per input stream, in its own time base: the first kept time, the first time no longer
    /// kept, and what is subtracted from every kept time.
    struct Times: Sendable {
        var start: [Int64]
        var end: [Int64?]
        var shift: [Int64]
        /// Per input stream: a subtitle stream, whose packets are shown for their duration — one
        /// that overlaps the window is kept, cut to it.
        var subtitle: [Bool]

        func keeps(_ p: Packet) -> Bool {
            let t = p.pts != AVCode.noPTS ? p.pts : p.dts
            guard t != AVCode.noPTS else { return true }
            let i = p.streamIndex
            let d = p.duration
            if subtitle[i] && d > 0 { return t + d > start[i] && (end[i].map { t < $0 } ?? true) }
            return t >= start[i] && (end[i].map { t < $0 } ?? true)
        }

        /// A kept subtitle packet shown beyond the window starts or ends at its edge.
        func cut(_ p: Packet) {
            let i = p.streamIndex
            let d = p.duration
            guard subtitle[i], d > 0, p.pts != AVCode.noPTS else { return }
            let from = max(p.pts, start[i])
            let to = min(p.pts + d, end[i] ?? .max)
            p.pts = from
            if p.dts != AVCode.noPTS { p.dts = max(p.dts, from) }
            p.duration = to - from
        }

        /// True for a packet at or after the end (its stream has nothing more to give).
        func isPastEnd(_ p: Packet) -> Bool {
            let t = p.pts != AVCode.noPTS ? p.pts : p.dts
            guard t != AVCode.noPTS, let e = end[p.streamIndex] else { return false }
            return t >= e
        }
    }

    /// Nil when nothing is cut or moved.
    let times: Times?
    /// `--start`/`--end` in seconds from the file's start; nil without a trim.
    let range: (start: Double, end: Double?)?
    /// Where the video stream starts and ends, in seconds from the file's start (trims only).
    let videoSpan: (start: Double?, end: Double?)
    /// Seconds of media the output will hold when known (progress), and of its first video
    /// frame after the shift.
    let duration: Double?
    let startTime: Double
    /// The chapters kept and their shift, in `AV_TIME_BASE` units (`cz_copy_chapters`).
    let chapters: (from: Int64, to: Int64, shift: Int64)

    /// The window `cfg` asks for; with a start, the input is sought to a key frame a second
    /// before it (so frames a B-frame delay before a key frame's decode time are not skipped).
    /// A start past the end is a usage error that says where the file ends. A live input recorded with another
    /// (``LiveClock``) has an `anchor`: where the recording starts in its times, which then count as its start.
    init(
        _ cfg: TranscodeConfiguration, input: InputFormat, videoIndex: Int, anchor: Double? = nil
    ) throws(CropZoomError) {
        let subtitles = (0..<input.streamCount).map {
            input.stream($0).isSubtitle
        }
        let videoStream = input.stream(videoIndex)
        let fileStart = anchor ?? input.startSeconds
        if cfg.start != nil || cfg.end != nil || anchor != nil {
            let s = fileStart + (cfg.start ?? 0)
            let e = cfg.end.map { fileStart + $0 }
            let end = input.span().end.map { $0 - fileStart }
            if let d = end, (cfg.start ?? 0) >= d {
                let digits: Int32 = (cfg.start ?? 0) < 1e9 ? 13 : 4
                var reason = String(
                    format: "\(setting: .start) %.*g s is past the end of the file (%.3f s", digits, cfg.start ?? 0, d)
                if fileStart != 0 {
                    reason += String(format: ", counted from its first timestamp at %.3f s", fileStart)
                }
                throw CropZoomError(.usage, path: cfg.inputName, setting: .start, reason: reason + ")")
            }
            range = (cfg.start ?? 0, cfg.end)
            let video = input.span(stream: videoIndex)
            videoSpan = (video.start.map { $0 - fileStart }, video.end.map { $0 - fileStart })
            var starts: [Int64] = []
            var ends: [Int64?] = []
            for i in 0..<input.streamCount {
                let tb = input.stream(i).timeBase
                starts.append(Int64((s / tb.seconds).rounded(.up)))
                ends.append(e.map { Int64(($0 / tb.seconds).rounded(.up)) })
            }
            let shift = cfg.keepStartTime ? [Int64](repeating: 0, count: starts.count) : starts
            times = Times(start: starts, end: ends, shift: shift, subtitle: subtitles)
            if (cfg.start ?? 0) > 0 && anchor == nil {
                let target = Int64((s - 1.0) * AVTime.perSecond)
                if target > Int64(fileStart * AVTime.perSecond) { input.seek(toMicroseconds: target) }
            }
            let available = end.map { $0 - (cfg.start ?? 0) }
            duration = [available, cfg.end.map { $0 - (cfg.start ?? 0) }].compactMap { $0 }.min()
            startTime = 0
        } else {
            range = nil
            videoSpan = (nil, nil)
            let origin = cfg.keepStartTime ? nil : TrimWindow.clockOrigin(input, live: cfg.isLive)
            times = origin.map {
                Times(
                    start: [Int64](repeating: .min, count: $0.count), end: [Int64?](repeating: nil, count: $0.count),
                    shift: $0, subtitle: subtitles)
            }
            duration = input.duration
            let shift = origin.map { Double($0[videoIndex]) * videoStream.timeBase.seconds } ?? 0
            startTime = videoStream.startTime.map { Double($0) * videoStream.timeBase.seconds - shift } ?? 0
        }
        let second = AVTime.perSecond
        chapters =
            range.map { r -> (Int64, Int64, Int64) in
                let from = Int64(((fileStart + r.start) * second).rounded())
                let to = r.end.map { Int64(((fileStart + $0) * second).rounded()) } ?? .max
                return (from, to, cfg.keepStartTime ? 0 : from)
            } ?? (.min, .max, 0)
    }

    /// Per input stream, the earliest start time of any stream, in that stream's time base, when
    /// the input's times are a clock reading rather than presentation times: MPEG-TS/PS
    /// (`AVFMT_TS_DISCONT`) start wherever the encoder's clock stood, and a live source's times are its clock's
    /// (a capture device's are the wall clock's). Nil for other inputs — an MP4's or Matroska's start (an empty
    /// edit) is deliberate and kept.
    static func clockOrigin(_ input: InputFormat, live: Bool = false) -> [Int64]? {
        guard input.hasClockTimestamps || live else { return nil }
        var earliest: (time: Int64, base: TimeBase)? = nil
        for i in 0..<input.streamCount {
            let st = input.stream(i)
            guard let t = st.startTime else { continue }
            if earliest.map({ st.timeBase.compare(t, with: $0.time, in: $0.base) < 0 }) ?? true {
                earliest = (t, st.timeBase)
            }
        }
        guard let earliest, earliest.time != 0 else { return nil }
        return (0..<input.streamCount).map {
            earliest.base.rescale(earliest.time, to: input.stream($0).timeBase)
        }
    }
}
