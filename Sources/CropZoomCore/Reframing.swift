import Foundation

/// `--follow`: where a window of the output's shape (`--aspect`, ``GeometryRequest/aspect``) goes, frame by frame,
/// in a landscape recording made portrait (or square): the subject found (faces detected and tracked, or what moves),
/// a virtual camera path chosen around it (holds while the subject stays near the middle, pans with bounded speed and
/// acceleration, jumps only at cuts: the stabiliser's L1 path with the subject as its data), and every frame rendered
/// through that window. Frames, times and audio are those of any transcode.
public struct Reframing: Sendable, Equatable, Codable {
    /// What the window follows: `faces` (the dominant face, kept while it lasts), `motion` (the region that moves),
    /// `auto` (faces where there are some, else motion, else the middle) or `center` (a fixed centred window).
    public enum Follow: String, Sendable, CaseIterable, Codable { case auto, faces, motion, center }

    public var follow: Follow = .auto
    /// `--path-in`: render this window path (CSV, as `--path-out` writes it) instead of analysing the input.
    public var pathIn: String? = nil
    /// `--path-out`: write the chosen window path there (CSV).
    public var pathOut: String? = nil
    /// `--preview`: write a contact sheet there (PNG): frames with the window drawn, beside the output's view.
    public var preview: String? = nil
    /// A window path to render, as `TranscodeJob.reframePath()` returns it (an app may have edited it): no
    /// analysis. Before ``pathIn``.
    public var path: ReframePath? = nil

    public init(follow: Follow = .auto) { self.follow = follow }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        try c.update(&follow, .follow)
        try c.update(&pathIn, .pathIn)
        try c.update(&pathOut, .pathOut)
        try c.update(&preview, .preview)
        try c.update(&path, .path)
    }
}

/// The window a reframed render shows, frame by frame (`--follow`, `--path-out`): in pixels of the upright picture
/// (as a player shows it, before any `--rotate`), the window's top-left corner and size; between two samples the
/// window moves in a straight line.
public struct ReframePath: Sendable, Equatable, Codable {
    public struct Sample: Sendable, Equatable, Codable {
        /// Media seconds of the frame, from the output's start (as keyframes are).
        public var time: Double
        public var x: Double, y: Double, width: Double, height: Double
        /// A cut comes before this frame: the window jumped here.
        public var cut: Bool
        /// What the window followed in this frame: the subject's box (upright px), nil where none was seen.
        public var subject: Rect?
        /// Which signal gave the subject: `face`, `track` (a face followed between detections), `motion`, or empty.
        public var signal: String

        public init(
            time: Double, x: Double, y: Double, width: Double, height: Double, cut: Bool = false,
            subject: Rect? = nil, signal: String = ""
        ) {
            self.time = time
            self.x = x
            self.y = y
            self.width = width
            self.height = height
            self.cut = cut
            self.subject = subject
            self.signal = signal
        }
    }

    /// The upright picture the windows are in.
    public var width: Int, height: Int
    public var samples: [Sample]

    public init(width: Int, height: Int, samples: [Sample]) {
        self.width = width
        self.height = height
        self.samples = samples
    }

    /// The windows as `--crop` keyframes (W, H, X, Y at each sample's time): what the render follows.
    public var track: Track {
        Track(keys: samples.map { Track.Key(time: $0.time, value: [$0.width, $0.height, $0.x, $0.y]) })
    }

    /// The path's problems against an upright picture of `width` x `height`: a window outside it, windows of
    /// different sizes, times that do not increase. nil: none.
    public func problem(width w: Int, height h: Int) -> String? {
        guard let first = samples.first else { return "no frames" }
        if width != w || height != h {
            return "the path is for a \(width)x\(height) picture; the input's upright picture is \(w)x\(h)"
        }
        for (i, s) in samples.enumerated() {
            if i > 0, s.time <= samples[i - 1].time {
                return "time \(s.time) does not follow \(samples[i - 1].time) (row \(i + 1))"
            }
            if abs(s.width - first.width) > 0.5 || abs(s.height - first.height) > 0.5 {
                return "the window is \(fmt(s.width))x\(fmt(s.height)) at \(s.time) s, \(fmt(first.width))x"
                    + "\(fmt(first.height)) at the start: one size for the whole path (the output has one)"
            }
            if s.width < 2 || s.height < 2 || s.x < -0.01 || s.y < -0.01 || s.x + s.width > Double(w) + 0.01
                || s.y + s.height > Double(h) + 0.01
            {
                return "the window \(fmt(s.width))x\(fmt(s.height)) at (\(fmt(s.x)), \(fmt(s.y))) at \(s.time) s "
                    + "reaches outside the \(w)x\(h) picture"
            }
        }
        return nil
    }

    private func fmt(_ v: Double) -> String { String(format: "%g", v) }

    public static let csvColumns = [
        "frame", "time", "x", "y", "width", "height", "cut", "signal", "subject_x", "subject_y", "subject_width",
        "subject_height",
    ]

    /// The path as CSV: a first line `# cropzoom reframe path WxH` (the upright picture), a header, a row per frame.
    public func csv() -> String {
        var lines = ["# cropzoom reframe path \(width)x\(height)", Self.csvColumns.joined(separator: ",")]
        func n(_ v: Double) -> String { String(format: "%.10g", v) }
        for (i, s) in samples.enumerated() {
            var row = [String(i), n(s.time), n(s.x), n(s.y), n(s.width), n(s.height), s.cut ? "1" : "0", s.signal]
            if let b = s.subject { row += [n(b.x), n(b.y), n(b.width), n(b.height)] } else { row += ["", "", "", ""] }
            lines.append(row.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads a path written by ``csv()`` and edited: `time,x,y,width,height` per row at least (rows may be deleted:
    /// the window moves in a straight line between those left). Throws a reason naming the line.
    public init(csv text: String) throws(CameraPathError) {
        var size: (Int, Int)? = nil
        var header: [String: Int]? = nil
        var samples: [Sample] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let words = line.split(separator: " ")
                if words.contains("reframe") {
                    for word in words {
                        let wh = word.split(separator: "x", omittingEmptySubsequences: false).compactMap { Int($0) }
                        if wh.count == 2, wh[0] > 0, wh[1] > 0 { size = (wh[0], wh[1]) }
                    }
                }
                continue
            }
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard let columns = header else {
                header = Dictionary(cells.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
                for needed in ["time", "x", "y", "width", "height"] where header?[needed] == nil {
                    throw CameraPathError(line: number + 1, reason: "no column '\(needed)' in the header")
                }
                continue
            }
            func value(_ name: String) throws(CameraPathError) -> Double? {
                guard let i = columns[name], i < cells.count, !cells[i].isEmpty else { return nil }
                guard let v = Double(cells[i]), v.isFinite else {
                    throw CameraPathError(line: number + 1, reason: "'\(cells[i])' is not a number ('\(name)')")
                }
                return v
            }
            func needed(_ name: String) throws(CameraPathError) -> Double {
                guard let v = try value(name) else {
                    throw CameraPathError(line: number + 1, reason: "no value for '\(name)'")
                }
                return v
            }
            let time = try needed("time")
            if let last = samples.last, time <= last.time {
                throw CameraPathError(line: number + 1, reason: "time \(time) does not follow \(last.time)")
            }
            var subject: Rect? = nil
            if let sx = try value("subject_x"), let sy = try value("subject_y"), let sw = try value("subject_width"),
                let sh = try value("subject_height")
            {
                subject = Rect(x: sx, y: sy, width: sw, height: sh)
            }
            let signal = columns["signal"].flatMap { $0 < cells.count ? cells[$0] : nil } ?? ""
            samples.append(
                Sample(
                    time: time, x: try needed("x"), y: try needed("y"), width: try needed("width"),
                    height: try needed("height"), cut: (try value("cut") ?? 0) != 0, subject: subject, signal: signal))
        }
        guard !samples.isEmpty else { throw CameraPathError(line: 0, reason: "no frames") }
        guard let size else { throw CameraPathError(line: 1, reason: "no '# cropzoom reframe path WxH' line") }
        self.init(width: size.0, height: size.1, samples: samples)
    }
}

/// What `cropzoom analyze-motion --follow` prints: the window's path in a few figures.
public struct ReframeReport: Codable, Sendable, Equatable {
    public var frames: Int
    /// The upright picture and the window.
    public var width: Int, height: Int
    public var windowWidth: Double, windowHeight: Double
    /// Frames where a subject was seen: by signal (`face`, `track`, `motion`).
    public var subjectFrames: Int
    public var signals: [String: Int]
    public var cuts: Int
    /// The RMS second difference of the window's centre outside cuts (px/frame²), and its fastest move (px/s).
    public var jitterPx: Double
    public var fastestPxPerSecond: Double

    public init(_ path: ReframePath) {
        let s = path.samples
        frames = s.count
        width = path.width
        height = path.height
        windowWidth = s.first?.width ?? 0
        windowHeight = s.first?.height ?? 0
        subjectFrames = s.filter { $0.subject != nil }.count
        signals = Dictionary(s.filter { !$0.signal.isEmpty }.map { ($0.signal, 1) }, uniquingKeysWith: +)
        cuts = s.filter(\.cut).count
        var d2: [Double] = []
        var fastest = 0.0
        for i in s.indices.dropFirst() where !s[i].cut {
            let dt = max(1e-6, s[i].time - s[i - 1].time)
            fastest = max(
                fastest,
                ((s[i].x - s[i - 1].x) * (s[i].x - s[i - 1].x) + (s[i].y - s[i - 1].y)
                    * (s[i].y - s[i - 1].y))
                    .squareRoot() / dt)
            guard i + 1 < s.count, !s[i + 1].cut else { continue }
            let (ax, ay) = (s[i + 1].x - 2 * s[i].x + s[i - 1].x, s[i + 1].y - 2 * s[i].y + s[i - 1].y)
            d2.append(ax * ax + ay * ay)
        }
        jitterPx = d2.isEmpty ? 0 : (d2.reduce(0, +) / Double(d2.count)).squareRoot()
        fastestPxPerSecond = fastest
    }
}
