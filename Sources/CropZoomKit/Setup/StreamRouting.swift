import CropZoomFFmpeg

/// What happens to one input stream.
enum StreamRoute {
    /// The video stream cropzoom transforms (output -1: `--codec none`, nothing written).
    case video(output: Int)
    /// Packets copied unchanged.
    case copy(output: Int)
    /// Audio re-encoded: the container cannot hold its codec, or `--audio aac` asks.
    case reencode(AudioTranscoder, output: Int)
    case drop
}

/// Every input stream's route and the output streams they make, decided from the
/// configuration and what the container can hold; each decision that changes or drops a stream
/// says so in a notice (streams dropped for one reason share one).
struct StreamRouting {
    let routes: [StreamRoute]
    /// The `--audio-input` device's streams' routes (empty without one).
    let soundRoutes: [StreamRoute]
    /// The output's video stream (nil with `--codec none`).
    let videoOutput: Int?
    let audioCopied: Int, audioReencoded: Int, otherCopied: Int, dropped: Int
    /// Per output stream: what the muxer adds to its times (a copied Matroska Opus stream's
    /// codec delay, `TimestampPolicy` rule 4).
    let codecDelay: [Int: Int64]

    init(
        _ cfg: TranscodeConfiguration, input source: InputSetup, sound: AudioInputSetup? = nil,
        output target: OutputSetup, video: VideoSetup, muxer: Muxer, notices: NoticeLog
    ) throws(CropZoomError) {
        let input = source.input
        let videoIndex = source.videoIndex
        let container = target.container
        let containerName = target.containerName
        let output = target.output
        let plan = video.plan
        let inInfo = video.inputInfo
        let outInfo = video.outputInfo
        let hdr = video.hdr
        var codecDelay: [Int: Int64] = [:]
        // Route every input stream.
        var routes = [StreamRoute](repeating: .drop, count: input.streamCount)
        func notice(_ s: String) { notices.add(s) }
        var audioCopied = 0
        var audioReencoded = 0
        var otherCopied = 0
        var dropped = 0
        // Streams dropped for the same reason get one note between them (`DropGroup`).
        var drops: [DropGroup] = []
        func group(_ kind: String, _ i: Int, _ codec: String, _ reason: String, verb: String) {
            if let g = drops.firstIndex(where: { $0.kind == kind && $0.reason == reason && $0.verb == verb }) {
                drops[g].streams.append((i, codec))
            } else {
                drops.append(DropGroup(kind: kind, reason: reason, verb: verb, streams: [(i, codec)]))
            }
        }
        func drop(_ kind: String, _ i: Int, _ codec: String, _ reason: String) {
            dropped += 1
            group(kind, i, codec, reason, verb: "dropped")
        }
        var videoOutput: Int? = nil
        let sameFamily = input.formatName.split(separator: ",").contains {
            $0 == containerName || ($0 == "mov" && containerName == "mp4") || ($0 == "mp4" && containerName == "mov")
        }
        /// The route of an audio stream (nil: dropped, with the reason noted), by `--audio` and what the container
        /// can hold.
        func routeAudio(_ st: StreamRef, _ i: Int, in input: InputFormat, named what: String) throws(CropZoomError)
            -> StreamRoute?
        {
            let codecName = st.codecName
            // (An MPEG-TS can declare a stream whose first packets come after the probe.)
            if st.sampleRate <= 0 || st.channelCount <= 0 {
                drop(
                    "audio", i, codecName,
                    "its sample rate and channels are unknown "
                        + "(no packet of it in the part of the file FFmpeg probes)")
                return nil
            }
            // A damaged header (65281 channels) would be copied into a file nothing can play: dropped, said.
            // AAC from a container that keeps its configuration in the header (MP4, Matroska …) without one:
            // nothing can decode it, and a muxer refuses it.
            let configInHeader = input.formatName.split(separator: ",").contains { $0 == "mov" || $0 == "matroska" }
            if st.codecID == .aac && st.extradataSize < 2 && configInHeader {
                drop("audio", i, codecName, "its header is damaged (no AAC configuration)")
                return nil
            }
            if let damage = st.damagedParameters {
                drop("audio", i, codecName, "its header is damaged (a decoder refuses it: \(damage))")
                return nil
            }
            // FLV takes PCM at 44.1, 22.05 and 11.025 kHz only (its header has two bits for the rate).
            let flvRate =
                containerName != "flv" || !codecName.hasPrefix("pcm_")
                || [44100, 22050, 11025].contains(
                    Int(st.sampleRate))
            let canCopy = container.canStore(st.codecID) && flvRate
            if cfg.audio == .aac && !container.canStore(.aac) {
                throw CropZoomError(
                    .usage, path: cfg.output,
                    setting: .audio,
                    reason: "\(setting: .audio) aac: \(containerName) cannot hold AAC")
            }
            if cfg.reencodesAudio || (cfg.audio == .auto && !canCopy) {
                let target: String
                if let asked = cfg.audioCodec ?? (cfg.audio == .aac ? "aac" : nil) {
                    let codec = try AudioTranscoder.encoderRef(named: asked)
                    guard container.canStore(codec.id) else {
                        throw CropZoomError(
                            .usage, path: cfg.output, setting: cfg.audioCodec != nil ? .audioCodec : .audio,
                            reason: "\(containerName) cannot hold "
                                + "\(codec.id.name) audio "
                                + "(\(setting: cfg.audioCodec != nil ? .audioCodec : .audio) \(asked))")
                    }
                    target = codec.name
                } else {
                    guard let name = AudioTranscoder.encoderName(for: container) else {
                        drop("audio", i, codecName, "\(containerName) holds no audio")
                        return nil
                    }
                    target = name
                }
                // FFmpeg 5.1's MXF muxer takes 48 kHz audio only ("only 48khz is implemented").
                let rate: Int32? = containerName.hasPrefix("mxf") ? 48000 : nil
                let t = try AudioTranscoder(
                    input: input, streamIndex: i, encoderName: target,
                    globalHeader: output.needsGlobalHeader, sampleRate: rate,
                    request: .init(bitRate: cfg.audioBitrate, channels: cfg.audioChannels), strict: cfg.strict)
                let out = try muxer.addEncodedStream(from: t.encoder, input: st)
                audioReencoded += 1
                if !cfg.reencodesAudio {
                    let id = t.encoder.codecKind
                    let targetName = id == .opus ? "Opus" : id.name.uppercased()
                    notice(
                        "\(what) (\(codecName)) cannot go in \(containerName); "
                            + "re-encoding it to \(targetName)")
                }
                if let change = t.layoutChange {
                    let verb =
                        cfg.audioChannels != nil ? "mixed" : "mixed (\(t.encoder.name) takes no \(change.from))"
                    notice("\(what): its channels are \(verb) from \(change.from) to \(change.to)")
                }
                if t.bitRateIgnored {
                    notice("\(setting: .audioBitrate) does nothing for \(t.encoder.name): it is lossless")
                }
                return .reencode(t, output: out)
            } else if canCopy {
                let mkvIn = input.formatName.hasPrefix("matroska")
                let mkvOut = containerName == "matroska" || containerName == "webm"
                let out = try muxer.addCopiedStream(from: st, sameContainerFamily: sameFamily && sound == nil)
                if mkvIn && mkvOut && st.codecID == .opus && st.initialPadding > 0 {
                    // Opus counts its pre-skip at 48 kHz whatever the stream's rate.
                    codecDelay[out] = TimeBase(num: 1, den: 48000).rescale(st.initialPadding, to: st.timeBase)
                }
                audioCopied += 1
                return .copy(output: out)
            } else {
                throw CropZoomError(
                    .usage, path: cfg.output,
                    setting: .audio,
                    reason:
                        "\(what) (\(codecName)) cannot be copied into \(containerName) "
                        + "(\(setting: .audio) "
                        + "copy); use \(setting: .audio) auto or aac"
                )
            }
        }
        for i in 0..<input.streamCount {
            let st = input.stream(i)
            let codecName = st.codecName
            if i == videoIndex {
                if let encoder = video.encoder {
                    let out = try muxer.addEncodedStream(from: encoder.context, input: st)
                    if let tag = cfg.tag { muxer.videoTag = (out, tag) }
                    hdr?.attach(to: muxer.output.stream(out))
                    if plan.keepsInputAspectAndMatrix {
                        if !muxer.copyDisplayMatrix(from: st, to: out, container: containerName) {
                            let turn = st.displayOrientation
                            notice(
                                "video stream #\(i): \(containerName) cannot store its display matrix "
                                    + "(\(turn)); the output shows the coded picture unturned")
                        }
                    } else {
                        muxer.dropHTCRotation(out)
                    }
                    // VP9 keeps alpha beside the picture (ALPHA_MODE 1), which FFmpeg's decoder skips.
                    let alphaMode = st.metadata("alpha_mode")
                    if inInfo.hasAlpha && !outInfo.hasAlpha {
                        let what = "\(encoder.context.name) \(outInfo.name)"
                        notice("video stream #\(i): its alpha channel is dropped (\(what) has none)")
                    } else if alphaMode == "1" && !inInfo.hasAlpha {
                        notice("video stream #\(i): its alpha channel (VP9 ALPHA_MODE) is dropped: it is not decoded")
                    }
                    if let dv = st.dolbyVision {
                        // Re-encoding keeps the base layer; the Dolby Vision metadata (RPU) is not re-made.
                        let base = [1: "HDR10", 2: "SDR", 4: "HLG", 6: "HDR10"][dv.compatibility] ?? "base layer"
                        let mapped = video.toneMapping == nil ? "" : ", tone mapped to SDR"
                        notice(
                            "video stream #\(i): its Dolby Vision (profile \(dv.profile)) is not kept; the output "
                                + "is its \(base) picture\(mapped)")
                    }
                    if let f = st.fieldOrder, f.name != "progressive" {
                        if cfg.deinterlace == .off {
                            notice(
                                "video stream #\(i) is interlaced (\(f.meaning)); \(setting: .deinterlace) off: "
                                    + "its fields "
                                    + "are scaled woven together")
                        } else {
                            notice(
                                "video stream #\(i) is interlaced (\(f.meaning)); its interlaced frames are "
                                    + "deinterlaced (the first field kept, the second rebuilt from it)")
                        }
                    }
                    videoOutput = out
                    routes[i] = .video(output: out)
                } else {
                    routes[i] = .video(output: -1)
                }
                continue
            }
            // A QuickTime chapter track is kept as the chapters (copied below), not as a stream.
            if Self.isChapterTrack(st, in: input) { continue }
            switch st.mediaType {
            case .audio:
                if cfg.audio == .none {
                    dropped += 1
                    continue
                }
                if !cfg.audioStreams.isEmpty && !cfg.audioStreams.contains(where: { Self.selects($0, st, i) }) {
                    drop("audio", i, codecName, "not chosen")
                    continue
                }
                if sound != nil {
                    drop("audio", i, codecName, "\(setting: .audioInput) replaces it")
                    continue
                }
                if let route = try routeAudio(st, i, in: input, named: "audio stream #\(i)") { routes[i] = route }
            case .subtitle, .data:
                let kind = st.isSubtitle ? "subtitle" : "data"
                let kinds = cfg.streamKinds
                let wanted =
                    st.isSubtitle
                    ? kinds.subtitles.map { $0.isEmpty || $0.contains { Self.selects($0, st, i) } } ?? false
                    : kinds.data
                if !wanted {
                    drop(kind, i, codecName, "\(setting: .streams) does not name it")
                    continue
                }
                if st.codecID != .none && container.canStore(st.codecID) {
                    routes[i] = .copy(output: try muxer.addCopiedStream(from: st, sameContainerFamily: sameFamily))
                    otherCopied += 1
                } else if st.isSubtitle, SubtitleConverter.isText(st.codecID),
                    let target = Self.textSubtitleCodec(for: container)
                {
                    routes[i] = .copy(output: try muxer.addConvertedSubtitle(from: st, target: target))
                    otherCopied += 1
                    let name = target.name
                    group("subtitle", i, codecName, "\(containerName) cannot hold it", verb: "converted to \(name)")
                } else {
                    drop(kind, i, codecName, "\(containerName) cannot hold it")
                }
            case .video:
                // A cover picture is one packet, copied where the container keeps cover art (MP4/MOV's `covr`,
                // Matroska's attachment).
                if st.isAttachedPicture && !cfg.streamKinds.cover {
                    drop("", i, codecName, "\(setting: .streams) does not name it")
                    continue
                }
                if st.isAttachedPicture && ["mp4", "ipod"].contains(containerName) && container.canStore(st.codecID) {
                    routes[i] = .copy(output: try muxer.addCopiedStream(from: st, sameContainerFamily: sameFamily))
                    otherCopied += 1
                    continue
                }
                // Matroska keeps it as an attachment, written with the header (its packet is not needed).
                if st.isAttachedPicture && containerName == "matroska", try muxer.addCoverAttachment(from: st) {
                    otherCopied += 1
                    continue
                }
                dropped += 1
                if st.isAttachedPicture {
                    notice("cover picture #\(i) (\(codecName)) dropped: \(containerName) cannot hold it")
                } else {
                    notice(
                        "video stream #\(i) (\(codecName)) dropped: cropzoom transforms one video stream "
                            + "(#\(videoIndex))")
                }
            default:
                drop("", i, codecName, "\(containerName) cannot hold it")
            }
        }
        try Self.checkSelection(cfg, input: input, sound: sound != nil)
        try Self.checkSubtitleSelection(cfg, input: input)
        // The sound device's first audio stream, after the input's streams (`--audio-input`).
        var soundRoutes: [StreamRoute] = []
        if let sound, cfg.audio != .none {
            let input = sound.input
            soundRoutes = [StreamRoute](repeating: .drop, count: input.streamCount)
            let name = cfg.audioInput ?? "the audio input"
            soundRoutes[sound.audioIndex] =
                try routeAudio(input.stream(sound.audioIndex), sound.audioIndex, in: input, named: name) ?? .drop
        }
        for g in drops { notice(g.note) }
        self.routes = routes
        self.soundRoutes = soundRoutes
        self.videoOutput = videoOutput
        self.audioCopied = audioCopied
        self.audioReencoded = audioReencoded
        self.otherCopied = otherCopied
        self.dropped = dropped
        self.codecDelay = codecDelay
    }

    /// The text subtitle format `container` holds, with an encoder here: SubRip where it can (Matroska), else
    /// `mov_text` (MP4/MOV), WebVTT (WebM), ASS, or its own default; nil when it holds no text subtitles.
    static func textSubtitleCodec(for container: OutputFormat) -> CodecID? {
        let candidates: [CodecID] = [.subrip, .movText, .webvtt, .ass, container.defaultCodec(.subtitle)]
        for id in candidates where id != .none && container.canStore(id) && SubtitleConverter.isText(id) {
            if id.hasEncoder { return id }
        }
        return nil
    }

    /// Whether `selector` names input stream `i` (`--audio-stream`): its number, or its language tag (`eng`, or
    /// a BCP 47 tag starting with the code, `en-US`).
    static func selects(_ selector: TranscodeConfiguration.StreamSelector, _ st: StreamRef, _ i: Int) -> Bool {
        switch selector {
        case .index(let n): return n == i
        case .language(let code):
            guard let tag = st.metadata("language")?.lowercased() else { return false }
            return tag == code || tag.hasPrefix(code + "-")
        }
    }

    /// Every `--audio-stream` value names an audio stream of the input: a usage error listing them otherwise.
    static func checkSelection(_ cfg: TranscodeConfiguration, input: InputFormat, sound: Bool) throws(CropZoomError) {
        guard !cfg.audioStreams.isEmpty else { return }
        if sound {
            throw CropZoomError(
                .usage, setting: .audioStream,
                reason: "\(setting: .audioStream) chooses the input's audio, which \(setting: .audioInput) replaces")
        }
        let audio = (0..<input.streamCount).filter {
            input.stream($0).isAudio && !isChapterTrack(input.stream($0), in: input)
        }
        try checkChoices(cfg.audioStreams, among: audio, kind: "audio", in: input) { given in
            (.audioStream, "\(setting: .audioStream) \(given)")
        }
    }

    /// Every `--streams subtitles:…` choice names a subtitle stream of the input: a usage error listing them
    /// otherwise.
    static func checkSubtitleSelection(_ cfg: TranscodeConfiguration, input: InputFormat) throws(CropZoomError) {
        guard let selectors = cfg.streamKinds.subtitles, !selectors.isEmpty else { return }
        let subtitles = (0..<input.streamCount).filter { input.stream($0).isSubtitle }
        try checkChoices(selectors, among: subtitles, kind: "subtitle", in: input) { given in
            (.streams, "\(setting: .streams) subtitles:\(given)")
        }
    }

    /// A usage error for the first of `selectors` that names none of `streams` (input stream numbers of one
    /// kind), listing them with their languages; `named` words the choice (its setting and how it was given).
    private static func checkChoices(
        _ selectors: [TranscodeConfiguration.StreamSelector], among streams: [Int], kind: String,
        in input: InputFormat, named: (String) -> (Setting, String)
    ) throws(CropZoomError) {
        for selector in selectors where !streams.contains(where: { selects(selector, input.stream($0), $0) }) {
            let list =
                streams.isEmpty
                ? "it has no \(kind) stream"
                : "its \(kind) streams: "
                    + streams.map { "#\($0)" + (input.stream($0).metadata("language").map { " \($0)" } ?? "") }
                    .joined(separator: ", ")
            let given: String
            switch selector {
            case .index(let n): given = "\(n)"
            case .language(let code): given = code
            }
            let (setting, choice) = named(given)
            throw CropZoomError(
                .usage, path: input.path, setting: setting, reason: "\(choice) names no \(kind) stream (\(list))")
        }
    }

    /// True for a QuickTime chapter track: FFmpeg 5.1's mov demuxer reads it into the file's
    /// chapters (`mov_read_chapters`), makes it a data stream and discards it (`AVDISCARD_ALL`).
    static func isChapterTrack(_ st: StreamRef, in input: InputFormat) -> Bool {
        input.chapterCount > 0 && st.isDiscarded
            && st.mediaType == .data
    }
}

/// Input streams dropped (or converted) for one reason, and the one note that says so.
struct DropGroup {
    var kind: String
    var reason: String
    /// What happened to them: "dropped", "converted to mov_text".
    var verb: String
    var streams: [(index: Int, codec: String)]

    /// "subtitle stream #2 (subrip) dropped: mp4 cannot hold it", or for many
    /// "100 subtitle streams (#2–#101: subrip) dropped: mpegts cannot hold them".
    var note: String {
        let noun = kind.isEmpty ? "stream" : "\(kind) stream"
        guard streams.count > 1 else {
            return "\(noun) #\(streams[0].index) (\(streams[0].codec)) \(verb): \(reason)"
        }
        var ranges: [String] = []
        var start = streams[0].index
        var last = start
        for s in streams.dropFirst() {
            if s.index == last + 1 {
                last = s.index
                continue
            }
            ranges.append(start == last ? "#\(start)" : "#\(start)–#\(last)")
            start = s.index
            last = s.index
        }
        ranges.append(start == last ? "#\(start)" : "#\(start)–#\(last)")
        var codecs: [String] = []
        for s in streams where !codecs.contains(s.codec) { codecs.append(s.codec) }
        let plural = reason.hasSuffix(" it") ? String(reason.dropLast(2)) + "them" : reason
        let which = "\(ranges.joined(separator: ", ")): \(codecs.joined(separator: ", "))"
        return "\(streams.count) \(noun)s (\(which)) \(verb): \(plural)"
    }
}
