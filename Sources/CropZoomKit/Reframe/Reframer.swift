import CropZoomFFmpeg
import Foundation

/// `--follow` for one job: the window path its render follows. The input is analysed (``FramingPass``) or the path
/// read (`--path-in`), the subject chosen frame by frame, the path solved (``FramePathSolver``), written
/// (`--path-out`) and handed to the geometry as the window's keyframes (``apply(_:to:)``). Where there is nothing to
/// follow (the window is the whole picture; nothing found) a notice says so and the window stays centred: never a
/// failure, never a changed frame count.
enum Reframer {
    struct Outcome {
        var path: ReframePath?
        var notices: [String]
        /// The picture and window the path is for (nil: nothing was read).
        var shape: Shape? = nil
    }

    /// How a camera operator moves: the most the window travels in a second, and its speed changes in a second, as
    /// shares of the picture's side along that axis; the dead zone (a share of the window's side) the subject's
    /// centre may wander without the window moving.
    static let maxSpeed = 1.5
    static let maxAcceleration = 0.4
    static let deadZone = 0.02
    /// A face switches the camera to itself when it outweighs the followed one by this much for this long.
    static let switchRatio = 1.5
    static let switchAfter = 1.0

    /// Where a `--path-out` or `--preview` of this input goes: the file named, or in a folder (a name ending in `/`
    /// or an existing folder, as a batch gives one for all its clips) the input's name with `ext`.
    static func file(_ given: String?, for cfg: TranscodeConfiguration, ext: String) -> String? {
        guard let given else { return nil }
        var folder: ObjCBool = false
        guard
            given.hasSuffix("/")
                || (FileManager.default.fileExists(atPath: given, isDirectory: &folder)
                    && folder.boolValue)
        else { return given }
        let name = URL(fileURLWithPath: cfg.input).deletingPathExtension().lastPathComponent
        return URL(fileURLWithPath: given, isDirectory: true).appendingPathComponent(name + "." + ext).path
    }

    /// Checks what can be checked before anything is read.
    static func check(_ cfg: TranscodeConfiguration) throws(CropZoomError) {
        guard var r = cfg.reframe, r.follow != .center || r.preview != nil else { return }
        r.pathOut = file(r.pathOut, for: cfg, ext: "csv")
        r.preview = file(r.preview, for: cfg, ext: "png")
        // The analysis is in the face plugin (OpenCV): one that cannot be opened stops the job before it starts.
        if r.follow != .center && r.path == nil && r.pathIn == nil {
            do throws(CropZoomError) { try FacePlugin.check(what: "following the subject") } catch {
                var e = error
                e.path = cfg.inputName
                throw e
            }
        }
        if cfg.isLive {
            // A causal path, made as the frames arrive (LiveReframer): no file of the whole path, no sheet.
            let files: [(String?, Setting)] = [(r.pathIn, .pathIn), (r.pathOut, .pathOut), (r.preview, .preview)]
            if let (_, setting) = files.first(where: { $0.0 != nil }) {
                throw CropZoomError(
                    .usage, path: cfg.inputName, setting: setting,
                    reason: "a live recording's window path is made as it records: \(setting: .pathIn), "
                        + "\(setting: .pathOut) and \(setting: .preview) are for files (record, then reframe the file)")
            }
            if cfg.stabilize != nil {
                throw CropZoomError(
                    .usage, path: cfg.inputName, setting: .follow,
                    reason: "a live source is steadied or reframed as it records, not both at once in this version: "
                        + "drop \(setting: .stabilize) or \(setting: .follow)")
            }
            return
        }
        if cfg.input == "-" && r.pathIn == nil && r.path == nil {
            throw CropZoomError(
                .usage, path: "stdin", setting: .follow,
                reason: "\(setting: .follow) reads the input twice (analysis, then render): name a file, not -")
        }
        if cfg.geometry.zoomTrack != nil || cfg.geometry.centerTrack != nil {
            throw CropZoomError(
                .usage, path: cfg.inputName, setting: .follow,
                reason: "\(setting: .follow) moves the window itself: drop the keyframes of \(setting: .zoom) and "
                    + "\(setting: .center)")
        }
        if cfg.geometry.crop != nil {
            throw CropZoomError(
                .usage, path: cfg.inputName, setting: .follow,
                reason: "\(setting: .follow) moves a window of \(setting: .aspect)'s shape: drop \(setting: .crop)")
        }
        if cfg.geometry.zoom < 1 {
            throw CropZoomError(
                .usage, path: cfg.inputName, setting: .follow,
                reason: "\(setting: .follow) needs a window inside the picture: \(setting: .zoom) of at least 1")
        }
        for (file, setting) in [(r.pathOut, Setting.pathOut), (r.preview, .preview)] {
            if let file, !cfg.overwrite, FileManager.default.fileExists(atPath: file) {
                throw CropZoomError(
                    .usage, path: file, setting: setting, reason: "already exists (use -y to overwrite)")
            }
        }
    }

    /// The upright picture and the window `cfg` asks for.
    struct Shape {
        var uprightWidth: Double, uprightHeight: Double
        var window: (width: Double, height: Double)
        var display: Orientation
        var codedWidth: Int, codedHeight: Int
    }

    static func frame(_ cfg: TranscodeConfiguration, source: InputSetup) -> Shape {
        let st = source.input.stream(source.videoIndex)
        let dec = source.decoder.context
        let auto = cfg.geometry.orientation == .auto
        let display: Orientation = auto ? st.displayOrientation : .identity
        let sar =
            auto ? SourcePicture.sampleAspect(st, source.decoder, width: dec.width, height: dec.height).ratio.value : 1
        let upright = display.apply(width: dec.width, height: dec.height)
        let (uw, uh) = (Double(upright.width), Double(upright.height))
        let (sx, sy) = display.swapsAxes ? (1.0, sar) : (sar, 1.0)
        let shown = cfg.geometry.aspect.map { $0.ratio } ?? (uw * sx / (uh * sy))
        let a = cfg.geometry.rotate % 180 != 0 ? 1 / shown : shown
        let w = GeometryPlan.aspectWindow(a, width: uw, height: uh, sx: sx, sy: sy)
        let z = max(1, cfg.geometry.zoom)
        return Shape(
            uprightWidth: uw, uprightHeight: uh, window: (Double(w.width) / z, Double(w.height) / z), display: display,
            codedWidth: dec.width, codedHeight: dec.height)
    }

    /// The path `cfg` asks for: given, read from `--path-in`, or analysed and chosen. `progress` (frames, media
    /// seconds, the media duration when known) during the analysis.
    /// `steadied`: the `--stabilize` path the render follows under the window (the subject is then placed in the
    /// steadied picture).
    static func path(
        _ cfg: TranscodeConfiguration, steadied: CameraPath?, cancel: CancelFlag,
        progress: ((Int, Double, Double?) -> Void)?
    ) throws(CropZoomError) -> Outcome {
        guard var r = cfg.reframe, r.follow != .center || r.preview != nil else {
            return Outcome(path: nil, notices: [])
        }
        r.pathOut = file(r.pathOut, for: cfg, ext: "csv")
        r.preview = file(r.preview, for: cfg, ext: "png")
        // A folder named for the files (a batch's) is made.
        for file in [r.pathOut, r.preview].compactMap({ $0 }) {
            let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let source = try InputSetup(cfg)
        let shape = frame(cfg, source: source)
        let (uw, uh) = (Int(shape.uprightWidth), Int(shape.uprightHeight))
        if r.follow == .center {
            let notices = try stillPreview(cfg, source: source, shape: shape, whole: false, to: r.preview, cancel)
            return Outcome(path: nil, notices: notices)
        }
        var read: ReframePath? = r.path
        if read == nil, let file = r.pathIn { read = try Reframer.read(file) }
        if let given = read {
            if let problem = given.problem(width: uw, height: uh) {
                throw CropZoomError(.usage, path: r.pathIn ?? cfg.inputName, setting: .pathIn, reason: problem)
            }
            if cfg.geometry.aspect != nil, let first = given.samples.first,
                abs(first.width / first.height - shape.window.width / shape.window.height) > 0.01
                    * shape.window.width / shape.window.height
            {
                throw CropZoomError(
                    .usage, path: r.pathIn ?? cfg.inputName, setting: .pathIn,
                    reason: "the path's window (\(Int(first.width))x\(Int(first.height))) is not of "
                        + "\(setting: .aspect)'s shape")
            }
            var notices: [String] = []
            if let sheet = r.preview {
                try ContactSheet.write(cfg, path: given, shape: shape, to: sheet, cancel: cancel)
                notices.append("\(cfg.inputName): preview written to \(sheet)")
            }
            return Outcome(path: given, notices: notices, shape: shape)
        }
        let name = cfg.inputName
        if cfg.geometry.fit == .contain && cfg.geometry.aspect != nil {
            let sheet = try stillPreview(cfg, source: source, shape: shape, whole: true, to: r.preview, cancel)
            return Outcome(
                path: nil,
                notices: [
                    "\(name): \(setting: .fit) contain shows the whole picture in the \(setting: .aspect) frame: "
                        + "there is nothing to follow (\(setting: .follow))"
                ] + sheet)
        }
        let roomX = shape.uprightWidth - shape.window.width
        let roomY = shape.uprightHeight - shape.window.height
        if roomX < 1 && roomY < 1 {
            let sheet = try stillPreview(cfg, source: source, shape: shape, whole: false, to: r.preview, cancel)
            return Outcome(
                path: nil,
                notices: [
                    "\(name): the window is the whole \(uw)x\(uh) picture: there is nothing to follow "
                        + "(\(setting: .follow)); it stays centred"
                ] + sheet)
        }
        let trim = try TrimWindow(cfg, input: source.input, videoIndex: source.videoIndex)
        let shift = trim.times.map { Double($0.shift[source.videoIndex]) } ?? 0
        let pass = FramingPass(
            configuration: cfg, source: source, timeOffset: shift * source.decoder.timeBase.seconds + trim.startTime,
            end: cfg.end.map { $0 - (cfg.start ?? 0) }, cancel: cancel, faces: r.follow != .motion,
            motion: r.follow != .faces, orientation: shape.display)
        let duration = trim.duration
        let result = try pass.run(progress: progress.map { report in { report($0, $1, duration) } })
        var outcome = plan(result, shape: shape, follow: r.follow, name: name, steadied: steadied)
        outcome.shape = shape
        if let path = outcome.path, let out = r.pathOut {
            try AtomicFile.write(Data(path.csv().utf8), to: out)
            outcome.notices.append("\(name): window path written to \(out)")
        }
        if let path = outcome.path, let sheet = r.preview {
            try ContactSheet.write(cfg, path: path, shape: shape, to: sheet, cancel: cancel)
            outcome.notices.append("\(name): preview written to \(sheet)")
        }
        return outcome
    }

    /// `--preview` when nothing moves the window (`--follow center`, a window the size of the picture, `--fit
    /// contain`): six frames spread over the clip with the still window drawn, at `--center` (`whole`: the whole
    /// picture, which the output shows between bars). The notice, or none without a `--preview`.
    static func stillPreview(
        _ cfg: TranscodeConfiguration, source: InputSetup, shape: Shape, whole: Bool, to sheet: String?,
        _ cancel: CancelFlag
    ) throws(CropZoomError) -> [String] {
        guard let sheet else { return [] }
        var shape = shape
        if whole { shape.window = (shape.uprightWidth, shape.uprightHeight) }
        let (ww, wh) = shape.window
        let x = min(max(cfg.geometry.center.x * shape.uprightWidth - ww / 2, 0), shape.uprightWidth - ww)
        let y = min(max(cfg.geometry.center.y * shape.uprightHeight - wh / 2, 0), shape.uprightHeight - wh)
        let duration = try TrimWindow(cfg, input: source.input, videoIndex: source.videoIndex).duration ?? 0
        let n = ContactSheet.rows
        let samples = (0..<n).map {
            ReframePath.Sample(time: duration * Double($0) / Double(n), x: x, y: y, width: ww, height: wh)
        }
        let path = ReframePath(width: Int(shape.uprightWidth), height: Int(shape.uprightHeight), samples: samples)
        try ContactSheet.write(cfg, path: path, shape: shape, to: sheet, cancel: cancel)
        return ["\(cfg.inputName): preview written to \(sheet)"]
    }

    static func read(_ file: String) throws(CropZoomError) -> ReframePath {
        let text: String
        do { text = try String(contentsOfFile: file, encoding: .utf8) } catch {
            throw CropZoomError(.inputUnreadable, path: file, setting: .pathIn, reason: "cannot be read")
        }
        do throws(CameraPathError) { return try ReframePath(csv: text) } catch {
            throw CropZoomError(
                .usage, path: file, setting: .pathIn,
                reason: "\(error.line > 0 ? "line \(error.line): " : "")\(error.reason)")
        }
    }

    /// The subject per frame and the window's path around it.
    static func plan(
        _ result: FramingPass.Result, shape: Shape, follow: Reframing.Follow, name: String, steadied: CameraPath? = nil
    ) -> Outcome {
        let obs = result.observations
        let n = obs.count
        guard n > 0 else { return Outcome(path: nil, notices: ["\(name): no frames: nothing to follow"]) }
        // Analysis px (upright) → upright px; under a steadied picture, through the frame's correction (coded,
        // centred, square pixels).
        let (fx, fy) = (
            shape.uprightWidth / Double(result.analysisWidth), shape.uprightHeight / Double(result.analysisHeight)
        )
        let (cw, ch) = (Double(result.codedWidth), Double(result.codedHeight))
        let sar = result.pixelAspect
        func upright(_ r: Rect, at t: Double) -> Rect {
            let box = Rect(x: r.x * fx, y: r.y * fy, width: r.width * fx, height: r.height * fy)
            guard let steadied else { return box }
            let coded = shape.display.inverse.apply(box, width: shape.uprightWidth, height: shape.uprightHeight)
            // Frame t's box in the steadied picture: its corners through the correction's inverse, the box around.
            let back = steadied.correction(at: t).inverse
            let corners = [
                (coded.x, coded.y), (coded.x + coded.width, coded.y), (coded.x, coded.y + coded.height),
                (coded.x + coded.width, coded.y + coded.height),
            ].map { x, y in
                let p = back.apply(x * sar - cw * sar / 2, y - ch / 2)
                return ((p.x + cw * sar / 2) / sar, p.y + ch / 2)
            }
            let (x0, x1) = (corners.map(\.0).min()!, corners.map(\.0).max()!)
            let (y0, y1) = (corners.map(\.1).min()!, corners.map(\.1).max()!)
            return shape.display.apply(Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0), width: cw, height: ch)
        }
        // Shots.
        var shots: [Range<Int>] = []
        var start = 0
        for i in 1..<max(1, n) where obs[i].cut {
            shots.append(start..<i)
            start = i
        }
        shots.append(start..<n)
        var subject = [Rect?](repeating: nil, count: n)
        var signal = [String](repeating: "", count: n)
        var followed: [String: Int] = [:]
        for shot in shots {
            let faceFrames = shot.filter { !obs[$0].faces.isEmpty }.count
            let motionFrames = shot.filter { i in
                obs[i].motion.map { isSubjectSized(upright($0, at: obs[i].time), shape) } ?? false
            }.count
            let useFaces = follow == .faces || (follow == .auto && Double(faceFrames) >= 0.2 * Double(shot.count))
            let useMotion =
                follow == .motion || (follow == .auto && !useFaces && Double(motionFrames) >= 0.2 * Double(shot.count))
            if useFaces {
                let chosen = dominantFace(obs, shot: shot, width: result.analysisWidth, height: result.analysisHeight)
                for i in shot {
                    if let f = chosen[i - shot.lowerBound] {
                        subject[i] = upright(f.box, at: obs[i].time)
                        signal[i] = f.detected ? "face" : "track"
                    }
                }
                followed["faces", default: 0] += 1
            } else if useMotion {
                for i in shot {
                    if let m = obs[i].motion.map({ upright($0, at: obs[i].time) }), isSubjectSized(m, shape) {
                        subject[i] = m
                        signal[i] = "motion"
                    }
                }
                followed["motion", default: 0] += 1
            } else {
                followed["center", default: 0] += 1
            }
        }
        var durations = zip(obs, obs.dropFirst()).map { max(1e-4, $1.time - $0.time) }
        durations.append(durations.last ?? 1 / 30)
        let cut = obs.map(\.cut)
        func axis(
            room: Double, size: Double, side: Double, position: (Rect) -> Double, extent: (Rect) -> Double
        ) -> [Double]? {
            guard room >= 1 else { return [Double](repeating: 0, count: n) }
            var target = [Double](repeating: .nan, count: n)
            var weight = [Double](repeating: 1, count: n)
            var lo = [Double](repeating: .nan, count: n)
            var hi = [Double](repeating: .nan, count: n)
            for shot in shots {
                let seen = shot.contains { subject[$0] != nil }
                for i in shot {
                    guard let s = subject[i] else {
                        if !seen {
                            // Nothing to follow in this shot: the window rests in the middle.
                            target[i] = room / 2
                            weight[i] = 0.2
                        }
                        continue
                    }
                    let (p, e) = (position(s), extent(s))
                    target[i] = min(max(p + e / 2 - size / 2, 0), room)
                    let margin = 0.1 * e
                    if signal[i] != "motion" && e + 2 * margin < size {
                        lo[i] = p + e + margin - size
                        hi[i] = p - margin
                    }
                }
            }
            return FramePathSolver.solve(
                FramePathSolver.Problem(
                    lo: 0, hi: room, target: target, weight: weight, insideLo: lo, insideHi: hi, cut: cut,
                    durations: durations, deadZone: deadZone * size, maxSpeed: maxSpeed * side,
                    maxAcceleration: maxAcceleration * side))
        }
        let (ww, wh) = shape.window
        guard
            let xs = axis(
                room: shape.uprightWidth - ww, size: ww, side: shape.uprightWidth, position: \.x, extent: \.width),
            let ys = axis(
                room: shape.uprightHeight - wh, size: wh, side: shape.uprightHeight, position: \.y,
                extent: \.height)
        else {
            return Outcome(
                path: nil, notices: ["\(name): the window's path could not be solved: the window stays centred"])
        }
        let samples = (0..<n).map { i in
            ReframePath.Sample(
                time: obs[i].time, x: xs[i], y: ys[i], width: ww, height: wh, cut: obs[i].cut, subject: subject[i],
                signal: signal[i])
        }
        let path = ReframePath(width: Int(shape.uprightWidth), height: Int(shape.uprightHeight), samples: samples)
        var notices: [String] = []
        let withSubject = subject.filter { $0 != nil }.count
        let what = followed.keys.sorted().map { k in "\(k) in \(followed[k]!) shot\(followed[k]! == 1 ? "" : "s")" }
        notices.append(
            "\(name): followed \(what.joined(separator: ", ")); a subject in \(withSubject) of \(n) frames"
                + (shots.count > 1 ? ", \(shots.count - 1) cut\(shots.count == 2 ? "" : "s")" : ""))
        if withSubject == 0 {
            notices.append("\(name): no face and nothing moving was found: the window stays centred")
        }
        return Outcome(path: path, notices: notices)
    }

    /// A moving region worth following: not a speck, not most of the picture (the camera moved).
    private static func isSubjectSized(_ r: Rect, _ shape: Shape) -> Bool {
        let share = r.width * r.height / (shape.uprightWidth * shape.uprightHeight)
        return share > 0.001 && share < 0.5
    }

    /// The face the camera follows in each frame of a shot: the largest and most central one, kept while it lasts;
    /// another takes over only when it outweighs it by ``switchRatio`` for ``switchAfter`` seconds, or when the
    /// followed one is gone. nil: no face.
    static func dominantFace(
        _ obs: [FramingPass.Observation], shot: Range<Int>, width: Int, height: Int
    ) -> [FramingPass.Face?] {
        var chooser = FaceChooser(width: width, height: height)
        return shot.map { chooser.choose(obs[$0].faces, at: obs[$0].time) }
    }

    /// `cfg` rendering `path`: the windows as the geometry's keyframes (its zoom in their size; the output keeps the
    /// size the whole `--aspect` window would have, unless `--size` says otherwise).
    static func apply(_ path: ReframePath, to cfg: inout TranscodeConfiguration, shape: Shape?) {
        guard let first = path.samples.first else { return }
        var g = cfg.geometry
        if g.size == nil, g.zoom > 1, let shape {
            // The digital zoom keeps the frame's size (as everywhere in cropzoom).
            let z = g.zoom
            let (w, h) =
                g.rotate % 180 != 0
                ? (shape.window.height * z, shape.window.width * z)
                : (shape.window.width * z, shape.window.height * z)
            g.size = .init(width: Int(w.rounded()), height: Int(h.rounded()))
        }
        g.zoom = 1
        g.aspect = nil
        g.crop = .init(width: Int(first.width.rounded()), height: Int(first.height.rounded()))
        g.cropTrack = path.samples.count > 1 ? path.track : nil
        if path.samples.count == 1 {
            g.crop?.x = Int(first.x.rounded())
            g.crop?.y = Int(first.y.rounded())
        }
        cfg.geometry = g
    }
}

/// The face the camera follows, frame by frame (causal: a file's analysis and a live source use it alike): the
/// largest and most central one, kept while it lasts; another takes over only when it outweighs it by
/// ``Reframer/switchRatio`` for ``Reframer/switchAfter`` seconds, or when the followed one is gone.
struct FaceChooser {
    let width: Int, height: Int
    private var current: Int? = nil
    private var rival: (id: Int, since: Double)? = nil

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Area, less for a face far from the middle (down to 0.4 of it at a corner).
    func weight(_ f: FramingPass.Face) -> Double {
        let (cx, cy) = (f.box.x + f.box.width / 2 - Double(width) / 2, f.box.y + f.box.height / 2 - Double(height) / 2)
        let off = (cx * cx + cy * cy).squareRoot() / (0.5 * (Double(width * width + height * height)).squareRoot())
        return f.box.width * f.box.height * (1 - 0.6 * min(1, off))
    }

    /// The followed face among `faces` (seen at media time `t`), nil: none.
    mutating func choose(_ faces: [FramingPass.Face], at t: Double) -> FramingPass.Face? {
        let best = faces.max { weight($0) < weight($1) }
        if let id = current, let mine = faces.first(where: { $0.id == id }) {
            if let best, best.id != id, weight(best) > Reframer.switchRatio * weight(mine) {
                if let r = rival, r.id == best.id {
                    if t - r.since >= Reframer.switchAfter {
                        current = best.id
                        rival = nil
                    }
                } else {
                    rival = (best.id, t)
                }
            } else {
                rival = nil
            }
        } else {
            current = best?.id
            rival = nil
        }
        return current.flatMap { id in faces.first { $0.id == id } }
    }

    /// Forgets the followed face (a cut).
    mutating func reset() {
        current = nil
        rival = nil
    }
}
