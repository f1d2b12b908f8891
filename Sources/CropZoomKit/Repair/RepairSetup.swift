import CropZoomFFmpeg
import CropZoomSystem
import Foundation

/// A repair's set-up (docs/design/repair.md, "Triage"): the broken file's top-level boxes say whether there is
/// something to repair and where its media data lies; the reference is read twice — its boxes (``ReferenceModel``)
/// and FFmpeg's view of its streams (the codec parameters the output is written with) — and checked; the walker is
/// wired to a frame probe for each AAC track. Each refusal is one line naming the file and the reason.
struct RepairSetup {
    let window: ByteWindow
    /// The broken file itself: the samples are read from it one by one (`pread`), not through the walk's window,
    /// which has moved on past the pictures still held back for their times.
    let broken: FileBytes
    let model: ReferenceModel
    let referenceInput: InputFormat
    let walker: MediaWalker
    let mediaStart: Int64
    let mediaEnd: Int64
    /// The reference recording's path.
    let referencePath: String
    /// Uncompressed sound tracks: the bytes of one sample frame, by track.
    let pcmFrameBytes: [Int: Int]
    /// The sound tracks' parameters FFmpeg would learn by decoding (``DecodedParameters``), by track, known without
    /// probing the reference: AAC-LC's from its configuration, PCM's from its decoder opened.
    let soundParameters: [Int: DecodedParameters]
    /// Why the header must be written from the probed reference, when what the set-up knows cannot stand in for the
    /// probe (docs/design/repair.md, "Session 15"); nil when the check's decoder and ``soundParameters`` can.
    let needsProbedHeader: String?
    private let configuration: RepairConfiguration

    static let reading = "reading the recording to repair"

    /// What the broken file's top-level boxes say (docs/repair.md, "What repair does with a file").
    enum Triage {
        /// No index: the media data is walked with a reference's help.
        case indexless
        /// A fragmented recording (its index at the front, its media in fragments) whose end is cut: FFmpeg reads
        /// the whole fragments as they are; `mediaStart`: where the first fragment starts, `size`: the file's length.
        case fragmentedCut(mediaStart: Int64, size: Int64)
    }

    /// Reads the top-level boxes of `path`: refuses a file that is no MP4/MOV/3GP (exit 3) or is not broken (exit
    /// 2), and says how the rest is to be repaired.
    static func triage(_ path: String) throws(CropZoomError) -> Triage {
        let bytes = try FileBytes(path: path, what: reading)
        let window = ByteWindow(bytes, capacity: 1 << 16)
        let boxes = try ISOBoxes.topLevel(window)
        guard let first = boxes.first, ISOBoxes.isLeadingType(first.type) else {
            throw CropZoomError(
                .inputUnreadable, what: reading, path: path,
                reason: bytes.size == 0 ? "the file is empty" : "not an MP4/MOV/3GP file (no box structure)")
        }
        guard let moov = boxes.first(where: { $0.type == "moov" }), moov.end(in: window.size) <= window.size else {
            return .indexless
        }
        let last = boxes[boxes.count - 1]
        let cut = last.declaredSize.map { last.offset + $0 > window.size } ?? false
        if let moof = boxes.first(where: { $0.type == "moof" }), cut {
            return .fragmentedCut(mediaStart: moof.offset, size: window.size)
        }
        let fragmented = boxes.contains { $0.type == "moof" } ? "fragmented, with every fragment whole" : ""
        throw CropZoomError(
            .usage, what: reading, path: path,
            reason: "not broken: it has its index (moov)\(fragmented.isEmpty ? "" : " and is \(fragmented)"), so it "
                + "plays as it is; nothing to repair")
    }

    init(_ cfg: RepairConfiguration) throws(CropZoomError) {
        configuration = cfg
        let reading = Self.reading
        broken = try FileBytes(path: cfg.input, what: reading)
        // The box headers through a small window of their own: the walk's large one starts where the media does.
        let boxes = try ISOBoxes.topLevel(ByteWindow(broken, capacity: 1 << 16))
        guard let mdat = boxes.first(where: { $0.type == "mdat" }) else {
            throw CropZoomError(
                .inputUnreadable, what: reading, path: cfg.input,
                reason: "no media data (mdat): the writer stopped before writing any sample")
        }
        guard let given = cfg.reference else {
            throw CropZoomError(
                .usage, what: reading, path: cfg.input,
                reason: "its index (moov) is missing: repairing it needs a complete recording from the same camera and "
                    + "settings (--reference)")
        }
        referencePath = given
        // Size 0 (to the end), or a size past the end (the writer never came back to set it), or a size that ends
        // where the file ends: the media data runs to the end of the file.
        mediaStart = mdat.payloadOffset
        mediaEnd = min(mdat.end(in: broken.size), broken.size)

        let referencing = "reading the reference"
        let reference = try FileBytes(path: referencePath, what: referencing)
        // Its boxes through a small window: the index is read whole where it lies, the media data not at all.
        switch try ReferenceModel.read(ByteWindow(reference, capacity: 1 << 16)) {
        case .success(let m): model = m
        case .failure(let problem):
            throw CropZoomError(.usage, what: referencing, path: referencePath, reason: problem.reason)
        }
        // The walk's window: four of the reference's largest samples, at least 1 MiB (a smaller window than the
        // 16 MiB default touches fewer fresh pages; a sample the window does not hold is read on its own).
        window = ByteWindow(broken, capacity: max(1 << 20, 4 * (model.tracks.map(\.largestSample).max() ?? 0)))
        // FFmpeg's view of the reference as its header gives it, without decoding (`probe: false`, 3-5 ms of a small
        // repair): what the walk's set-up needs, and what the repaired file's header is written with (the parameters
        // only decoding finds are given before its index: ``DecodedParameters``).
        referenceInput = try Self.openReference(referencePath, probe: false)
        guard referenceInput.streamCount == model.tracks.count else {
            throw CropZoomError(
                .usage, what: referencing, path: referencePath,
                reason: "FFmpeg reads \(referenceInput.streamCount) streams, its index \(model.tracks.count) tracks")
        }
        var probes: [Int: AudioFrameProbe] = [:]
        for (i, t) in model.tracks.enumerated() where t.isAudio {
            if case .aac = t.kind {
                // Read by its syntax where the reader takes its configuration (AAC-LC, HE-AAC); else by decoding.
                let stream = referenceInput.stream(i)
                if let config = AACSyntax.config(stream.extradata) {
                    probes[i] = AACSyntaxProbe(config, channels: stream.channelCount)
                    continue
                }
                probes[i] = try AACFrameProbe(
                    reference: referenceInput, stream: i, frameSamples: Int(t.sampleDuration),
                    sizes: t.smallestSample...max(t.smallestSample, t.largestSample))
            }
        }
        // Uncompressed sound: a sample frame's bytes from FFmpeg's view of the stream (bits per sample × channels).
        var pcm: [Int: Int] = [:]
        for (i, t) in model.tracks.enumerated() where t.isAudio {
            if case .pcm = t.kind { pcm[i] = referenceInput.stream(i).sampleFrameBytes }
        }
        pcmFrameBytes = pcm
        // What the writer's header can be written with before anything is decoded: every sound track's decoded
        // parameters known here, the one picture track's from the picture check's decoder.
        var sound: [Int: DecodedParameters] = [:]
        var needsProbe: String?
        for (i, t) in model.tracks.enumerated() where t.isAudio {
            let stream = referenceInput.stream(i)
            switch t.kind {
            case .aac where probes[i] != nil:
                // The first frame (at most 8 KiB of it: an AAC-LC frame of two channels is under 1.6 KB).
                var first: [UInt8] = []
                if let sample = t.firstSample {
                    first = try reference.read(at: sample.lowerBound, count: min(sample.count, 8 << 10))
                }
                if AACSyntax.isPlainLowComplexity(stream.extradata, firstFrame: first) {
                    sound[i] = .aacLowComplexity(stream)
                } else {
                    needsProbe = "track \(i): AAC other than plain AAC-LC, mono or stereo"
                }
            case .pcm:
                sound[i] = try DecodedParameters(opening: stream, path: referencePath)
            default:
                break
            }
        }
        soundParameters = sound
        // Compressed sound tracks of one configuration (the same codec parameters): told apart by where they lie.
        var alike: [[UInt8]: [Int]] = [:]
        for i in probes.keys.sorted() {
            let stream = referenceInput.stream(i)
            alike[stream.extradata + [UInt8(truncatingIfNeeded: stream.channelCount)], default: []].append(i)
        }
        walker = MediaWalker(
            window: window, model: model, audio: probes, pcm: pcm, alike: alike.values.sorted { $0[0] < $1[0] },
            start: mediaStart, end: mediaEnd)
        guard !walker.walkedTracks.isEmpty else {
            let kinds = model.tracks.map(\.sampleEntry).joined(separator: ", ")
            throw CropZoomError(
                .usage, what: referencing, path: referencePath,
                reason:
                    "none of its tracks (\(kinds)) is one repair recognises yet (H.264 or HEVC video, AAC or PCM sound)"
            )
        }
        // The walk's recognisers tried on the reference's own first pictures: a writer whose samples they do not read
        // (a Samsung slow-motion clip puts an SVC prefix NAL unit and Annex B start codes inside one length) is named
        // here, not after a walk that found nothing.
        for i in walker.walkedTracks where model.tracks[i].isVideo {
            // A window the size of the picture: the picture is read, not the megabyte after it.
            guard let first = model.tracks[i].firstSample,
                let type = try walker.misreads(
                    track: i, sample: first, in: ByteWindow(reference, capacity: max(1 << 12, first.count + 16)))
            else { continue }
            let codec = if case .hevc = model.tracks[i].kind { "HEVC" } else { "H.264" }
            throw CropZoomError(
                .usage, what: referencing, path: referencePath,
                reason: "its own first picture (\(first.count) bytes at byte \(first.lowerBound), its first NAL unit "
                    + "of type \(type)) does not read as the \(codec) sample repair looks for (NAL units with their "
                    + "lengths, a picture's slices): repair cannot find the pictures of its recordings")
        }
        let tracks = model.tracks
        let videoTracks = walker.walkedTracks.filter { tracks[$0].isVideo }
        if videoTracks.count > 1 { needsProbe = "\(videoTracks.count) video tracks, one picture check" }
        needsProbedHeader = needsProbe
        // Pictures the walk cannot read it cannot step over either: the sound between them is out of reach.
        let walkedVideo = !videoTracks.isEmpty
        let unreadVideo = model.tracks.filter { $0.isVideo && $0.sampleCount > 0 }.map(\.sampleEntry)
        if !walkedVideo, !unreadVideo.isEmpty {
            throw CropZoomError(
                .usage, what: referencing, path: referencePath,
                reason: "its video (\(unreadVideo.joined(separator: ", "))) is not one repair recognises yet (H.264 or "
                    + "HEVC video): the sound between its pictures cannot be reached either")
        }
    }

    /// The reference opened by FFmpeg; `probe`: with `avformat_find_stream_info`, for the codec parameters only
    /// decoding finds — pixel format, aspect ratio, an audio frame's length, the profile — which the repaired file is
    /// written with. A reference FFmpeg cannot open is a usage error naming it.
    static func openReference(_ path: String, probe: Bool) throws(CropZoomError) -> InputFormat {
        do {
            return try InputFormat(path: path, probe: probe)
        } catch {
            throw CropZoomError(.usage, what: "reading the reference", path: path, reason: error.reason)
        }
    }

    /// The report of a walk that found `outcome`; `spans`: each track's first and last presentation time written
    /// (seconds).
    func report(
        _ outcome: MediaWalker.Outcome, spans: [Int: (first: Double, end: Double)], recoveredBytes: Int64,
        seconds: Double
    ) -> RepairReport {
        let walked = Set(walker.walkedTracks + walker.timecodeTracks)
        let tracks = model.tracks.enumerated().map { i, t -> RepairReport.Track in
            let stream = referenceInput.stream(i)
            let type = t.isVideo ? "video" : t.isAudio ? "audio" : "data"
            // What plays: from the first time shown (an AAC track's priming before 0 is not) to the end.
            let playing = spans[i].map { $0.end - max(0, $0.first) } ?? 0
            // FFmpeg names a metadata track it cannot read `none` or `bin_data`: its sample entry says more (gpmd).
            let named = !["none", "bin_data"].contains(stream.codecName)
            return RepairReport.Track(
                index: i, type: type, codec: named ? stream.codecName : t.sampleEntry,
                samples: outcome.samples[i] ?? 0, keyframes: outcome.keyframes[i] ?? 0, seconds: playing,
                recovered: walked.contains(i))
        }
        let video = model.tracks.indices.first { model.tracks[$0].isVideo && spans[$0] != nil }
        let audio = model.tracks.indices.first { model.tracks[$0].isAudio && spans[$0] != nil }
        var offset: Double?
        if let video, let audio, let v = spans[video]?.first, let a = spans[audio]?.first { offset = a - v }
        var report = RepairReport(
            input: configuration.input, reference: referencePath, output: configuration.output,
            tracks: tracks, gaps: (outcome.unmatched.map { [$0] } ?? []) + outcome.gaps,
            skippedBeforeKeyframe: outcome.skippedBeforeKeyframe,
            mediaBytes: mediaEnd - mediaStart, recoveredBytes: recoveredBytes, audioStartOffset: offset,
            seconds: seconds)
        // Pictures timed at the reference's rate that end far from the sound: the recording's frame rate was not the
        // reference's (a phone dropping to 24 fps in low light). Said, not hidden; a writer's chunk of slack allowed.
        if let video, let audio, let v = spans[video], let a = spans[audio] {
            let chunks = model.tracks.map {
                Double($0.typicalChunkSamples * Int($0.sampleDuration)) / Double(max(1, $0.timescale))
            }
            let slack = 0.5 + (chunks.max() ?? 0)
            let difference = (v.end - v.first) - (a.end - a.first)
            if abs(difference) > slack {
                report.videoMinusAudio = difference
                report.videoRate =
                    Double(model.tracks[video].timescale) / Double(max(1, model.tracks[video].sampleDuration))
            }
        }
        return report
    }
}
