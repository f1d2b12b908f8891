import Foundation

/// The settings a person gave, as text, keyed by ``Setting``: what the command line's options and a job file's
/// fields both become, validated and turned into a ``TranscodeConfiguration`` in one place (``apply(to:)``).
///
/// Errors are `CropZoomError`s of kind `.usage` that name the setting (``CropZoomError/setting``) and refer to
/// settings by reference, so the command line shows `--crop` and a job file `crop`.
public struct Settings: Sendable, Equatable {
    /// The values given; a switch given as on holds `"true"`.
    public private(set) var values: [Setting: String] = [:]

    public init() {}

    public init(_ values: [Setting: String]) {
        for (setting, value) in values { self[setting] = value }
    }

    /// The value given for `setting` (nil: not given). Setting a switch to anything but `"true"` clears it.
    public subscript(setting: Setting) -> String? {
        get { values[setting] }
        set {
            if setting.isSwitch && newValue != "true" {
                values[setting] = nil
            } else {
                values[setting] = newValue
            }
        }
    }

    /// These settings with `other`'s on top (a job file's clip over its `defaults`).
    public func merging(_ other: Settings) -> Settings {
        var merged = self
        merged.values.merge(other.values) { _, new in new }
        return merged
    }

    /// The settings that differ from their defaults as command-line arguments, in the table's order: `--zoom 2`,
    /// `--keep-start-time`, and `--rotate=-3` (one word when the value starts with `-`, so it stays a value); a
    /// repeatable setting once per value. What `batch`, `bench` and job files pass to each run, and what reads like
    /// a command a person would type.
    public func arguments() -> [String] {
        Setting.allCases.flatMap { setting -> [String] in
            guard let value = values[setting], value != setting.defaultText else { return [] }
            if setting.isSwitch { return [setting.flag] }
            let each = setting.isRepeatable ? value.split(separator: "\n").map(String.init) : [value]
            return each.flatMap { $0.hasPrefix("-") ? ["\(setting.flag)=\($0)"] : [setting.flag, $0] }
        }
    }

    /// A new configuration for `input` → `output` with these settings.
    public func configuration(input: String, output: String) throws(CropZoomError) -> TranscodeConfiguration {
        var c = TranscodeConfiguration(input: input, output: output)
        try apply(to: &c)
        return c
    }

    /// Validates every value and writes them into `c` (what is not given gets its default).
    public func apply(to c: inout TranscodeConfiguration) throws(CropZoomError) {
        let ease = try choice(.ease, Track.Ease.self) ?? .linear
        c.geometry = try geometry(ease: ease)
        c.reframe = try reframing()
        c.stabilize = try stabilization(reframing: c.reframe != nil)
        c.background = try Settings.background(values[.background] ?? "black")
        c.scaler = try choice(.scaler, TranscodeConfiguration.Scaler.self) ?? .bicubic
        c.kernel = try choice(.kernel, TranscodeConfiguration.Kernel.self) ?? .auto
        c.deinterlace = try choice(.deinterlace, TranscodeConfiguration.Deinterlace.self) ?? .auto
        (c.start, c.end) = try trim()
        c.keepStartTime = values[.keepStartTime] == "true"
        c.codec = values[.codec]
        c.crf = try values[.crf].map { text throws(CropZoomError) in
            guard let crf = Double(text.trimmingCharacters(in: .whitespaces)), crf >= 0, crf <= 63 else {
                throw Settings.refuse(.crf, "\(setting: .crf) must be between 0 and 63 (got \(text))")
            }
            return crf
        }
        c.preset = values[.preset]
        c.bitrate = try values[.bitrate].map { text throws(CropZoomError) in
            guard let rate = Settings.bitrate(text) else {
                throw Settings.refuse(
                    .bitrate,
                    "\(setting: .bitrate) takes a number of bits per second, optionally with k or M (got '\(text)')")
            }
            return rate
        }
        c.pixelFormat = values[.pixFmt]
        c.toneMap = try choice(.toneMap, TranscodeConfiguration.ToneMap.self) ?? .auto
        c.profile = values[.profile]
        c.level = values[.level]
        c.tune = values[.tune]
        c.gop = try values[.gop].map { text throws(CropZoomError) in
            guard let n = Int(text.trimmingCharacters(in: .whitespaces)), (1...100_000).contains(n) else {
                throw Settings.refuse(.gop, "\(setting: .gop) takes a number of frames from 1 to 100000 (got \(text))")
            }
            return n
        }
        c.encoderOptions = try options(.encoderOption)
        c.tag = try values[.tag].map { text throws(CropZoomError) in
            guard text.utf8.count == 4, text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 32 }) else {
                throw Settings.refuse(.tag, "\(setting: .tag) takes four ASCII characters, e.g. hvc1 (got '\(text)')")
            }
            return text
        }
        try audio(into: &c)
        c.strict = values[.strict] == "true"
        c.reference = values[.reference]
        if c.reference?.isEmpty == true {
            throw Settings.refuse(.reference, "\(setting: .reference) takes the path of a complete recording")
        }
        c.live = values[.live] == "true"
        c.inputFormat = values[.inputFormat]
        c.inputOptions = try options(.inputOption)
        c.frameRate = try values[.framerate].map { text throws(CropZoomError) in
            let t = text.trimmingCharacters(in: .whitespaces)
            let parts = t.split(separator: "/", omittingEmptySubsequences: false).map { Double($0) }
            let value = parts.count == 2 ? (parts[0] ?? 0) / (parts[1] ?? 0) : (parts.count == 1 ? parts[0] : nil)
            guard let value, value.isFinite, (0.001...1000).contains(value) else {
                throw Settings.refuse(
                    .framerate,
                    "\(setting: .framerate) takes frames per second from 0.001 to 1000: 30, 29.97 or "
                        + "30000/1001 (got '\(text)')")
            }
            return t
        }
        c.audioInput = values[.audioInput]
        if let text = c.audioInput {
            guard let d = c.audioDevice, !d.format.isEmpty, !d.device.isEmpty else {
                throw Settings.refuse(
                    .audioInput, "\(setting: .audioInput) takes FORMAT:DEVICE, e.g. pulse:default (got '\(text)')")
            }
        }
        c.audioInputOptions = try options(.audioInputOption)
        c.segment = try seconds(.segment, range: 0.1...86400)
        c.maxLatency = try seconds(.maxLatency, range: 0.05...3600) ?? 1
        c.liveTimeout = try seconds(.liveTimeout, range: 0.1...86400) ?? 5
        c.force = values[.force] == "true"
        if c.force { c.overwrite = true }
        c.threads = try count(.threads)
        c.decoderThreads = try count(.decoderThreads)
        c.encoderThreads = try count(.encoderThreads)
        c.workers = try count(.workers)
        if c.threads == 1 {
            for setting in [Setting.decoderThreads, .encoderThreads, .workers] where values[setting] != nil {
                throw Settings.refuse(
                    setting,
                    "\(setting: setting) needs more than one thread: \(setting: .threads) 1 runs everything on one "
                        + "thread")
            }
        }
    }

    /// `--follow` and its path files (`--path-in`, `--path-out` belong to the window's path when `--follow` is
    /// given).
    private func reframing() throws(CropZoomError) -> Reframing? {
        // --preview alone implies --follow auto (as --path-in alone implies --stabilize).
        guard let follow = try choice(.follow, Reframing.Follow.self) ?? (values[.preview] != nil ? .auto : nil)
        else { return nil }
        for setting in [Setting.pathIn, .pathOut, .preview] where values[setting]?.isEmpty == true {
            throw Settings.refuse(setting, "\(setting: setting) takes a file name")
        }
        var r = Reframing(follow: follow)
        r.pathIn = values[.pathIn]
        r.pathOut = values[.pathOut]
        r.preview = values[.preview]
        // (A --preview of the still window is drawn: a batch is checked at a glance whatever it follows.)
        if follow == .center && (r.pathIn != nil || r.pathOut != nil) {
            throw Settings.refuse(
                r.pathIn != nil ? .pathIn : .pathOut,
                "\(setting: .follow) center keeps the window still: there is no path to read or write")
        }
        return r
    }

    /// `--stabilize` and the settings that refine it; each of them (`--path-in` and `--path-out` too, unless they
    /// are `--follow`'s) implies it, so that none is given in vain.
    private func stabilization(reframing: Bool) throws(CropZoomError) -> Stabilization? {
        let all: [Setting] =
            [.stabilize, .stabilizeSmoothing, .stabilizeMode, .stabilizeCrop, .stabilizeBorder]
            + (reframing ? [] : [.pathIn, .pathOut])
        guard all.contains(where: { values[$0] != nil }) else { return nil }
        var s = Stabilization()
        s.mode = try choice(.stabilizeMode, Stabilization.Mode.self) ?? .smooth
        s.border = try choice(.stabilizeBorder, Stabilization.Border.self) ?? .crop
        s.smoothing = try seconds(.stabilizeSmoothing, range: 0.1...3600)
        if let text = values[.stabilizeCrop] {
            guard let z = Double(text.trimmingCharacters(in: .whitespaces)), z >= 1, z <= 2 else {
                throw Settings.refuse(
                    .stabilizeCrop, "\(setting: .stabilizeCrop) takes a zoom from 1.0 to 2 (e.g. 1.1; got \(text))")
            }
            s.maxZoom = z
        }
        for setting in [Setting.pathIn, .pathOut] where values[setting]?.isEmpty == true {
            throw Settings.refuse(setting, "\(setting: setting) takes a file name")
        }
        if !reframing {
            s.pathIn = values[.pathIn]
            s.pathOut = values[.pathOut]
        }
        return s
    }

    /// `audio` and the settings that refine it, checked against each other.
    private func audio(into c: inout TranscodeConfiguration) throws(CropZoomError) {
        c.audio = try choice(.audio, TranscodeConfiguration.AudioMode.self) ?? .auto
        if let text = values[.audioCodec] {
            let name = text.trimmingCharacters(in: .whitespaces).lowercased()
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
                throw Settings.refuse(
                    .audioCodec, "\(setting: .audioCodec) takes an encoder or codec name (got '\(text)')")
            }
            if name == "copy" {
                if values[.audio] != nil && c.audio != .copy {
                    throw Settings.refuse(
                        .audioCodec, "\(setting: .audioCodec) copy contradicts \(setting: .audio) \(c.audio.rawValue)")
                }
                c.audio = .copy
            } else {
                c.audioCodec = name
            }
        }
        c.audioBitrate = try values[.audioBitrate].map { text throws(CropZoomError) in
            guard let rate = Settings.bitrate(text), (1000...10_000_000).contains(rate) else {
                throw Settings.refuse(
                    .audioBitrate,
                    "\(setting: .audioBitrate) takes bits per second from 1k to 10M, e.g. 96k (got '\(text)')")
            }
            return rate
        }
        c.audioChannels = try values[.audioChannels].map { text throws(CropZoomError) in
            let t = text.trimmingCharacters(in: .whitespaces).lowercased()
            if let n = Int(t) {
                guard (1...64).contains(n) else {
                    throw Settings.refuse(
                        .audioChannels, "\(setting: .audioChannels) takes 1 to 64 channels (got \(text))")
                }
                return .count(n)
            }
            guard !t.isEmpty, t.allSatisfy({ $0.isLetter || $0.isNumber || "._()+-|".contains($0) }) else {
                throw Settings.refuse(
                    .audioChannels,
                    "\(setting: .audioChannels) takes a channel count or a layout (mono, stereo, 5.1 …; got '\(text)')")
            }
            return .layout(t)
        }
        c.audioStreams = try (values[.audioStream] ?? "").split(separator: "\n").map {
            line throws(CropZoomError) -> TranscodeConfiguration.StreamSelector in
            try Settings.selector(String(line), for: .audioStream)
        }
        if let text = values[.streams] {
            var kinds = TranscodeConfiguration.StreamKinds()
            kinds.subtitles = nil
            kinds.data = false
            kinds.cover = false
            var audio: [TranscodeConfiguration.StreamSelector]? = nil
            var video = false
            for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
                let parts = item.split(separator: ":", maxSplits: 1).map(String.init)
                let selector = try parts.count == 2 ? Settings.selector(parts[1], for: .streams) : nil
                switch parts.first ?? "" {
                case "video", "v": video = true
                case "audio", "a": audio = (audio ?? []) + (selector.map { [$0] } ?? [])
                case "subtitles", "subtitle", "s":
                    kinds.subtitles = (kinds.subtitles ?? []) + (selector.map { [$0] } ?? [])
                case "data", "d": kinds.data = true
                case "cover": kinds.cover = true
                default:
                    throw Settings.refuse(
                        .streams,
                        "\(setting: .streams) takes video, audio, subtitles, data and cover, with :LANG or :N "
                            + "(got '\(item)')")
                }
            }
            guard video else {
                throw Settings.refuse(
                    .streams, "\(setting: .streams) must name video: cropzoom makes a video (got '\(text)')")
            }
            c.streamKinds = kinds
            if let audio {
                if !audio.isEmpty && !c.audioStreams.isEmpty {
                    throw Settings.refuse(
                        .audioStream,
                        "\(setting: .audioStream) and \(setting: .streams) audio:… both choose audio: use one")
                }
                if !audio.isEmpty { c.audioStreams = audio }
            } else if let given = [Setting.audioCodec, .audioBitrate, .audioChannels, .audioStream].first(where: {
                values[$0] != nil
            }) {
                throw Settings.refuse(given, "\(setting: given) contradicts \(setting: .streams) without audio")
            } else if values[.audio] != nil && c.audio != .none {
                throw Settings.refuse(
                    .streams, "\(setting: .streams) without audio contradicts \(setting: .audio) \(c.audio.rawValue)")
            } else {
                c.audio = .none
            }
        }
        let refinements: [Setting] = [.audioCodec, .audioBitrate, .audioChannels, .audioStream]
        if c.audio == .none, let given = refinements.first(where: { values[$0] != nil }) {
            throw Settings.refuse(given, "\(setting: given) contradicts \(setting: .audio) none")
        }
        if c.audio == .copy,
            let given = [Setting.audioBitrate, .audioChannels].first(where: { values[$0] != nil })
                ?? (c.audioCodec != nil ? .audioCodec : nil)
        {
            throw Settings.refuse(given, "\(setting: given) re-encodes audio, which \(setting: .audio) copy forbids")
        }
        if c.audio == .aac, let codec = c.audioCodec, codec != "aac" {
            throw Settings.refuse(.audioCodec, "\(setting: .audioCodec) \(codec) contradicts \(setting: .audio) aac")
        }
    }

    /// A stream by number (`1`) or language (`eng`, `en`).
    static func selector(_ text: String, for setting: Setting) throws(CropZoomError)
        -> TranscodeConfiguration
        .StreamSelector
    {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let n = Int(t), n >= 0 { return .index(n) }
        guard (2...3).contains(t.count), t.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw Settings.refuse(
                setting, "\(setting: setting) takes a stream number (1) or a language code (eng; got '\(text)')")
        }
        return .language(t)
    }

    // MARK: Value parsers (public: a caller with its own front end parses as the command line does)

    /// `"12.5"`, `"1:02.5"`, `"01:02:03.250"` → seconds; nil when malformed.
    public static func seconds(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (i, p) in parts.enumerated() {
            let last = i == parts.count - 1
            guard !p.isEmpty, let v = last ? Double(p) : Double(p).flatMap({ $0 == $0.rounded() ? $0 : nil }),
                v >= 0, v.isFinite
            else { return nil }
            if !last && parts.count > 1 && i > 0 && v >= 60 { return nil }
            if last && parts.count > 1 && v >= 60 { return nil }
            total = total * 60 + v
        }
        return total
    }

    /// `"4M"`, `"800k"`, `"123456"` → bits per second; nil when malformed or beyond 100 Gbit/s.
    public static func bitrate(_ text: String) -> Int? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        var multiplier = 1.0
        var number = Substring(t)
        if t.hasSuffix("k") {
            multiplier = 1e3
            number = number.dropLast()
        } else if t.hasSuffix("m") {
            multiplier = 1e6
            number = number.dropLast()
        }
        // Up to 100 Gbit/s: beyond any encoder, and the Int conversion must not trap.
        guard let v = Double(number), v > 0, v * multiplier <= 1e11 else { return nil }
        return Int(v * multiplier)
    }

    /// `black`, `white`, `gray`, `#RRGGBB`, `edge`, `blur`, `cover` → the configuration's background.
    public static func background(_ text: String) throws(CropZoomError) -> TranscodeConfiguration.Background {
        switch text.lowercased() {
        case "black": return .color(red: 0, green: 0, blue: 0)
        case "white": return .color(red: 255, green: 255, blue: 255)
        case "gray", "grey": return .color(red: 128, green: 128, blue: 128)
        case "edge": return .edge
        case "blur": return .blur
        case "cover": return .cover
        default:
            let hex = text.hasPrefix("#") ? String(text.dropFirst()) : ""
            guard hex.count == 6, let v = Int(hex, radix: 16) else {
                throw refuse(
                    .background,
                    "\(setting: .background) takes black, white, gray, #RRGGBB, edge, blur or cover (got '\(text)')")
            }
            return .color(red: v >> 16 & 255, green: v >> 8 & 255, blue: v & 255)
        }
    }

    /// `W:H[:X:Y]` or keyframes `'TIMEs:W:H[:X:Y], …'` (every key with X:Y or none, one aspect ratio): the window
    /// as a track of [W, H, X, Y] in whole pixels, X and Y NaN when the window is centred on the centre setting.
    public static func crop(_ text: String) throws(CropZoomError) -> Track {
        var track: Track
        do {
            track = try Track.parse(text, counts: [2, 4], separator: ":", setting: .crop)
        } catch {
            throw refuse(.crop, "\(error.reason) (W:H[:X:Y], or keyframes 'TIMEs:W:H[:X:Y], …')")
        }
        for k in track.keys {
            // Whole pixels within what a picture can have (an Int conversion must not trap).
            guard k.value.allSatisfy({ $0 == $0.rounded() && abs($0) <= 1_048_576 }), k.value[0] > 0, k.value[1] > 0
            else {
                throw refuse(
                    .crop,
                    "\(setting: .crop) takes W:H or W:H:X:Y in whole pixels (e.g. 1280:720), or keyframes "
                        + "'TIMEs:W:H[:X:Y], …' (e.g. '0s:1920:1080:0:0, 4s:960:540:480:270') (got '\(text)')")
            }
            if k.value.count == 4, k.value[2] < 0 || k.value[3] < 0 {
                throw refuse(.crop, "\(setting: .crop) offsets must not be negative (got '\(text)')")
            }
        }
        try GeometryPlan.checkCropAspect(track)
        track.keys = track.keys.map {
            .init(time: $0.time, value: $0.value.count == 4 ? $0.value : $0.value + [.nan, .nan])
        }
        return track
    }

    // MARK: Groups

    /// The geometry request: zoom, centre, crop, size, rotation (a quarter turn, or any angle), matrix, flip.
    private func geometry(ease: Track.Ease) throws(CropZoomError) -> GeometryRequest {
        var g = GeometryRequest()
        let zoomText = values[.zoom] ?? "1"
        var zoom: Track
        do { zoom = try Track.parse(zoomText, components: 1, setting: .zoom) } catch {
            throw Settings.refuse(
                .zoom,
                "\(setting: .zoom) must be a number (≥ 0.1) or keyframes like '0s:1, 4s:1.65' (got '\(zoomText)')")
        }
        guard zoom.keys.allSatisfy({ $0.value[0] >= GeometryPlan.minimumZoom }) else {
            throw Settings.refuse(
                .zoom, "\(setting: .zoom) must be a number ≥ \(GeometryPlan.minimumZoom) (got \(zoomText))")
        }
        _ = try Settings.background(values[.background] ?? "black")
        zoom.ease = ease
        g.zoom = zoom.keys[0].value[0]
        if zoom.isAnimated { g.zoomTrack = zoom }

        let centerText = values[.center] ?? "0.5,0.5"
        var center: Track
        do { center = try Track.parse(centerText, components: 2, setting: .center) } catch {
            throw Settings.refuse(
                .center,
                "\(setting: .center) takes X,Y as fractions between 0 and 1, e.g. 0.5,0.4, or keyframes like "
                    + "'0s:0.5,0.5, 4s:0.6,0.4' (got '\(centerText)')")
        }
        guard center.keys.allSatisfy({ $0.value.allSatisfy { (0...1).contains($0) } }) else {
            throw Settings.refuse(
                .center,
                "\(setting: .center) takes X,Y as fractions between 0 and 1, e.g. 0.5,0.4 (got '\(centerText)')")
        }
        center.ease = ease
        g.center = UnitPoint(x: center.keys[0].value[0], y: center.keys[0].value[1])
        if center.isAnimated { g.centerTrack = center }

        if let text = values[.crop] {
            var track = try Settings.crop(text)
            track.ease = ease
            let first = track.keys[0].value
            g.crop = .init(
                width: Int(first[0]), height: Int(first[1]),
                x: first[2].isNaN ? nil : Int(first[2]), y: first[3].isNaN ? nil : Int(first[3]))
            if track.isAnimated { g.cropTrack = track }
        }
        if let text = values[.aspect] {
            let p = text.split(separator: ":", omittingEmptySubsequences: false).map {
                Double($0.trimmingCharacters(in: .whitespaces))
            }
            guard p.count == 2, let w = p[0], let h = p[1], w > 0, h > 0, w.isFinite, h.isFinite, w / h >= 0.01,
                w / h <= 100
            else {
                throw Settings.refuse(.aspect, "\(setting: .aspect) takes W:H, e.g. 9:16, 1:1 or 4:5 (got '\(text)')")
            }
            guard values[.crop] == nil else {
                throw Settings.refuse(
                    .aspect, "\(setting: .aspect) chooses the window itself: give it or \(setting: .crop), not both")
            }
            g.aspect = .init(width: w, height: h)
        }
        if let text = values[.size] {
            let p = text.lowercased().split(separator: "x").map { Int($0) }
            guard p.count == 2, let w = p[0], let h = p[1], w > 0 || w == -1 || w == -2, h > 0 || h == -1 || h == -2,
                w > 0 || h > 0
            else {
                throw Settings.refuse(
                    .size, "\(setting: .size) takes WxH, with -1 or -2 for one side to keep the aspect (got '\(text)')")
            }
            guard w <= 16384, h <= 16384 else {
                throw Settings.refuse(.size, "\(setting: .size): at most 16384 pixels a side (got '\(text)')")
            }
            g.size = .init(width: w, height: h)
        }

        let rotateText = values[.rotate] ?? "0"
        var angle: Track
        do { angle = try Track.parse(rotateText, components: 1, setting: .rotate) } catch {
            throw Settings.refuse(
                .rotate,
                "\(setting: .rotate) takes degrees clockwise (90, 180, 270, or any angle such as 7.5 or -3) or "
                    + "keyframes like '0s:0, 2s:10' (got '\(rotateText)')")
        }
        angle.ease = ease
        guard angle.keys.allSatisfy({ abs($0.value[0]) <= 1_000_000 }) else {
            throw Settings.refuse(
                .rotate, "\(setting: .rotate): at most 1000000 degrees either way (got '\(rotateText)')")
        }
        let degrees = angle.keys[0].value[0]
        if !angle.isAnimated, degrees.truncatingRemainder(dividingBy: 90) == 0 {
            g.rotate = (Int(degrees.truncatingRemainder(dividingBy: 360)) + 360) % 360
        } else {
            g.angle = angle
        }

        if let text = values[.transform] {
            var m: Track
            do { m = try Track.parse(text, components: 6, setting: .transform) } catch {
                throw Settings.refuse(
                    .transform,
                    "\(setting: .transform) takes six numbers a,b,c,d,tx,ty (e.g. 1.2,0,0,1.2,-192,-108) or keyframes "
                        + "like '0s:1,0,0,1,0,0, 4s:1.5,0,0,1.5,-480,-270' (got '\(text)')")
            }
            m.ease = ease
            try GeometryPlan.checkTransform(m)
            g.transform = m
        }
        g.flip = try choice(.flip, GeometryRequest.Flip.self)
        g.fit = try choice(.fit, GeometryRequest.Fit.self) ?? .stretch
        g.orientation = try choice(.orientation, GeometryRequest.OrientationMode.self) ?? .auto
        return g
    }

    /// Start and end in seconds (a duration becomes the end).
    private func trim() throws(CropZoomError) -> (start: Double?, end: Double?) {
        var parsed: [Setting: Double] = [:]
        for setting in [Setting.start, .end, .duration] {
            guard let text = values[setting] else { continue }
            guard let seconds = Settings.seconds(text) else {
                throw Settings.refuse(
                    setting, "\(setting: setting) \(text): not a time (seconds like 12.5, or [hh:]mm:ss[.mmm])")
            }
            parsed[setting] = seconds
        }
        if parsed[.end] != nil && parsed[.duration] != nil {
            throw Settings.refuse(
                .duration, "\(setting: .end) and \(setting: .duration) both say where to stop: give one")
        }
        let start = parsed[.start] ?? 0
        if let end = parsed[.end], end <= start {
            throw Settings.refuse(
                .end, "\(setting: .end) \(values[.end]!) is not after \(setting: .start) \(values[.start] ?? "0")")
        }
        if let duration = parsed[.duration] {
            guard duration > 0 else { throw Settings.refuse(.duration, "\(setting: .duration) must be more than 0") }
            return (parsed[.start], start + duration)
        }
        return (parsed[.start], parsed[.end])
    }

    /// A word from the setting's choices.
    private func choice<T: RawRepresentable<String>>(_ setting: Setting, _: T.Type) throws(CropZoomError) -> T? {
        guard let text = values[setting] else { return nil }
        guard let value = T(rawValue: text.lowercased()) else {
            let words = setting.choices ?? []
            let list = words.dropLast().joined(separator: ", ") + (words.count > 1 ? " or " : "") + (words.last ?? "")
            throw Settings.refuse(setting, "\(setting: setting) takes \(list) (got '\(text)')")
        }
        return value
    }

    /// A number of seconds within `range`.
    private func seconds(_ setting: Setting, range: ClosedRange<Double>) throws(CropZoomError) -> Double? {
        guard let text = values[setting] else { return nil }
        guard let s = Settings.seconds(text), range.contains(s) else {
            throw Settings.refuse(
                setting,
                "\(setting: setting) takes seconds from \(range.lowerBound) to \(Int(range.upperBound)) (got \(text))")
        }
        return s
    }

    /// A repeatable setting's KEY=VALUE lines.
    private func options(_ setting: Setting) throws(CropZoomError) -> [String: String] {
        var options: [String: String] = [:]
        for line in (values[setting] ?? "").split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else {
                throw Settings.refuse(setting, "\(setting: setting) takes KEY=VALUE (got '\(line)')")
            }
            options[String(parts[0])] = String(parts[1])
        }
        return options
    }

    /// A thread count from 1 to 256.
    private func count(_ setting: Setting) throws(CropZoomError) -> Int? {
        guard let text = values[setting] else { return nil }
        guard let n = Int(text.trimmingCharacters(in: .whitespaces)), (1...256).contains(n) else {
            throw Settings.refuse(setting, "\(setting: setting) takes a number from 1 to 256 (got \(text))")
        }
        return n
    }

    static func refuse(_ setting: Setting, _ reason: String) -> CropZoomError {
        CropZoomError(.usage, setting: setting, reason: reason)
    }
}
