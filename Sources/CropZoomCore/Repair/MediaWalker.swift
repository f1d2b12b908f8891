/// A sample found in a broken file's media data.
package struct RecoveredSample: Equatable, Sendable {
    /// The reference's track it belongs to.
    package var track: Int
    package var offset: Int64
    package var size: Int
    package var isKey: Bool
    /// A video picture's order count (H.264 picture order count), where pictures may be shown in another order than
    /// decoded; counts restart at each keyframe that starts a new sequence (``startsSequence``).
    package var pictureOrder: Int64? = nil
    /// An IDR picture: the pictures from here on are shown after every picture before it.
    package var startsSequence = false
    /// How many of the track's stored samples this stands for (a run of uncompressed sound: its sample frames).
    package var count = 1
    /// The first sample after a damaged region the walk stepped over (a keyframe): the tracks resume together here
    /// (``RecoveredTiming``).
    package var resumes = false
}

/// Bytes of the media data the walk did not take as samples.
public struct RepairGap: Codable, Equatable, Sendable {
    /// Where they start in the broken file, and how many.
    public var offset: Int64
    public var bytes: Int64
    /// `damaged` (no track's sample starts there; the walk resumed at the next keyframe after them), `unrecognised`
    /// (the same, with no keyframe after them: the walk stopped), `cut` (a sample the end of the file went through),
    /// `unmatched` (sound the reference's settings do not read, stepped over between pictures: ``runs``).
    public var reason: String

    /// For `unmatched` (sound of other settings than the reference's, stepped over between pictures: the offset is
    /// the first run's, `bytes` all of them together): how many runs; nil for the other reasons.
    public var runs: Int? = nil

    package init(offset: Int64, bytes: Int64, reason: String) {
        self.offset = offset
        self.bytes = bytes
        self.reason = reason
    }
}

extension RepairGap? {
    /// Counts one more run of `unmatched` bytes.
    mutating func note(offset: Int64, bytes: Int64) {
        if var gap = self {
            gap.bytes += bytes
            gap.runs = (gap.runs ?? 1) + 1
            self = gap
        } else {
            var gap = RepairGap(offset: offset, bytes: bytes, reason: "unmatched")
            gap.runs = 1
            self = gap
        }
    }
}

/// Walks a broken file's media data from its start, sample by sample (docs/design/repair.md, "The walker"): at each
/// offset a video track's recogniser is asked first (its checks are strict and cheap), then each audio track's frame
/// probe; the sample found is handed on and the walk moves past it. Video pictures before the first keyframe are
/// skipped (nothing could decode them). Where nothing is recognised, the walk looks ahead for the next keyframe it can
/// take and resumes there (the bytes between reported as a `damaged` gap). It ends at the end of the media data, at a
/// sample the file's end cuts, or where nothing is recognised and no keyframe follows (an `unrecognised` gap).
package final class MediaWalker {
    private let window: ByteWindow
    private let model: ReferenceModel
    /// Each video track's recogniser, by the reference's track index.
    private var video: Slots<VideoRecogniser> = [:]
    /// The probe ``pcmRun(at:video:)`` last made with the walk's recognisers, where it found a picture: the walk's next
    /// offset, asked again at once (nil once a recogniser takes a picture: its state changed). Where and for which
    /// track apart, compared at every offset without copying the probe.
    private var probeAhead: VideoRecogniser.Probe?
    private var probeAheadAt = (offset: Int64(-1), track: -1)
    private let audio: [Int: AudioFrameProbe]
    /// Uncompressed sound tracks: the bytes of one sample frame (all channels), by track.
    private let pcm: [Int: Int]
    /// How runs of uncompressed sound are looked for (``stepping(_:pcm:)``).
    private var pcmStepping: (block: Int, step: Int, limit: Int) = (0, 0, 0)
    private let start: Int64
    private let end: Int64
    /// Sound tracks of one configuration from a writer of long chunks (their frames cannot be told apart by their
    /// bytes, nor past the reference's layout by the order of frames): each group, by the reference's track index.
    private let twins: [[Int]]
    /// Past the reference's layout of sound chunks: the frames of such a group found since the last other sample,
    /// held until the run ends and then shared out by time (``shares(of:found:cut:)``).
    private var heldRun: [(offset: Int64, size: Int)] = []
    private var heldGroup: [Int] = []
    /// The frames each such track took in the last whole run (its chunk's length, for a run the file's end cut).
    private var lastShares: [Int: Int] = [:]

    /// What the walk found, besides the samples it handed on.
    package struct Outcome: Sendable {
        package var samples: [Int: Int] = [:]
        package var keyframes: [Int: Int] = [:]
        package var gaps: [RepairGap] = []
        /// Video pictures skipped because no keyframe came before them.
        package var skippedBeforeKeyframe = 0
        /// Bytes between pictures that follow each other where no sound of the reference's settings was ever found
        /// (``walk(progress:emit:)``): one gap, `unmatched`, counting its runs.
        package var unmatched: RepairGap?
    }

    /// `audio`: a frame probe for each audio track the walk should find (by the reference's track index); `start`
    /// and `end`: the media data's bounds in the broken file.
    /// `pcm`: for each uncompressed sound track, the bytes of one sample frame. `alike`: groups of compressed sound
    /// tracks of one configuration (the same codec parameters).
    package init(
        window: ByteWindow, model: ReferenceModel, audio: [Int: AudioFrameProbe], pcm: [Int: Int] = [:],
        alike: [[Int]] = [], start: Int64, end: Int64
    ) {
        self.window = window
        self.model = model
        self.audio = audio
        // Long chunks: more frames to a chunk than a packet interleave puts between two pictures.
        twins = alike.filter { group in
            group.count > 1 && group.allSatisfy { model.tracks[$0].meanChunkSamples >= Double(Self.longChunkFrames) }
        }
        self.pcm = pcm.filter { $0.value > 0 }
        self.start = start
        self.end = end
        pcmStepping = Self.stepping(model, pcm: self.pcm)
        for (i, t) in model.tracks.enumerated() {
            switch t.kind {
            case .h264(let config): video[i] = .h264(H264Recogniser(config, largestSample: t.largestSample))
            case .hevc(let config): video[i] = .hevc(HEVCRecogniser(config, largestSample: t.largestSample))
            default: break
            }
        }
    }

    /// Whether video track `track`'s recogniser reads `sample` (bytes of `window`, a healthy file's: the reference's
    /// own first picture) as one whole sample: nil when it does, else the sample's first NAL unit type, for the line
    /// that says why the walk cannot find such pictures.
    package func misreads(track: Int, sample: ClosedRange<Int64>, in window: ByteWindow) throws(CropZoomError)
        -> Int?
    {
        guard let recogniser = video[track] else { return nil }
        let size = Int(sample.count)
        let probe = try recogniser.probe(at: sample.lowerBound, in: window, end: sample.upperBound + 1)
        if case .sample(let found, _) = probe.answer, found == size { return nil }
        let lengthSize: Int
        switch model.tracks[track].kind {
        case .h264(let config): lengthSize = config.nalLengthSize
        case .hevc(let config): lengthSize = config.nalLengthSize
        default: return nil
        }
        let first = try window.bytes(at: sample.lowerBound + Int64(lengthSize), count: 1).first ?? 0
        if case .hevc = model.tracks[track].kind { return Int(HEVCSyntax.nalType(first)) }
        return Int(first & 0x1F)
    }

    /// Frames to a sound chunk from which a writer's chunks are long (a packet interleave has one or two).
    static let longChunkFrames = 4

    /// The media tracks the walk looks for (the others are reported as not recovered, but ``timecodeTracks``).
    package var walkedTracks: [Int] { (video.filled + Array(audio.keys) + Array(pcm.keys)).sorted() }

    /// Timecode tracks: their one sample is looked for where nothing else starts, as often as the reference has it.
    package var timecodeTracks: [Int] {
        video.isEmpty
            ? []
            : model.tracks.indices.filter {
                if case .timecode = model.tracks[$0].kind { return true }
                return false
            }
    }

    /// Walks the media data, handing each sample to `emit` in file order; `progress` is told the offset reached now
    /// and then.
    package func walk(
        progress: (Int64) -> Void, emit: (RecoveredSample) throws(CropZoomError) -> Void
    ) throws(CropZoomError) -> Outcome {
        var outcome = Outcome()
        var keyed: Set<Int> = []
        var offset = start
        // After damaged bytes: the keyframe the walk resumed at is marked, and pictures that lean on pictures before
        // it are skipped until the next keyframe.
        var resuming = false
        var afterDamage = false
        var reported = start
        // Asked at every offset where nothing else starts: worked out once.
        let timecodeTracks = self.timecodeTracks
        let metadataTracks =
            video.isEmpty
            ? [] : model.tracks.indices.filter { model.tracks[$0].isMetadata && model.tracks[$0].sampleCount > 0 }
        let videoTracks = video.filled
        // The held run of sound of one configuration, shared out and handed on (before any other sample: file order).
        func release(cut: Bool = false) throws(CropZoomError) {
            guard !heldRun.isEmpty else { return }
            var k = 0
            let shared = shares(of: heldRun.count, found: outcome.samples, cut: cut)
            if !cut { for (track, frames) in shared { lastShares[track] = frames } }
            for (track, frames) in shared {
                for held in heldRun[k..<k + frames] {
                    try emit(RecoveredSample(track: track, offset: held.offset, size: held.size, isKey: true))
                }
                outcome.samples[track, default: 0] += frames
                k += frames
            }
            heldRun.removeAll(keepingCapacity: true)
        }
        // The video tracks whose recognisers read the sample at the offset (the storage kept from sample to sample).
        var candidates: [(track: Int, probe: VideoRecogniser.Probe)] = []
        candidates.reserveCapacity(videoTracks.count)
        // The video track whose pictures were read last, and how many of them in a row.
        var videoRun = (track: -1, count: 0)
        /// Which of `candidates` (the video tracks whose recognisers read the sample) it is given to: not one whose
        /// own parameter sets the sample's would resize (it carries another track's: a motion photo's still), then
        /// the reference writer's turn — the track read last while its run is shorter than the reference's, else the
        /// next in track order; the reference's first at the start — where the reference's turns are regular, else
        /// the first track. Pictures of one codec and the same parameter set ids carry nothing else that tells
        /// their track, so a writer whose turns vary (chunks of changing length, tracks at other rates) is not
        /// followed: the picture check then refuses the mix.
        func videoTurn() -> Int? {
            guard candidates.count > 1 else { return candidates.isEmpty ? nil : 0 }
            func fits(_ k: Int) -> Bool { video[candidates[k].track]?.changesSize(candidates[k].probe) == false }
            var fitting = 0
            var only = 0
            for k in candidates.indices where fits(k) {
                fitting += 1
                only = k
            }
            if fitting == 1 { return only }
            func usable(_ k: Int) -> Bool { fitting == 0 || fits(k) }
            guard let firstTrack = model.firstVideoTrack else { return candidates.indices.first(where: usable) }
            if let k = candidates.indices.first(where: { usable($0) && candidates[$0].track == videoRun.track }) {
                if videoRun.count < max(1, model.tracks[videoRun.track].videoRun) { return k }
                return candidates.indices.first { usable($0) && candidates[$0].track > videoRun.track }
                    ?? candidates.indices.first { usable($0) && $0 != k } ?? k
            }
            return candidates.indices.first { usable($0) && candidates[$0].track == firstTrack }
                ?? candidates.indices.first(where: usable)
        }
        // The window stays where the walk is (probes far ahead are read aside), and lets go at the end.
        defer { window.anchor = nil }
        walking: while offset < end {
            window.anchor = offset
            if offset - reported >= 8 << 20 {
                progress(offset)
                reported = offset
            }
            var cutVideo: Int?
            // Every video track's recogniser asked where there are several (their pictures may read alike), else
            // the one; a sample read by more than one goes to the track `videoTurn` chooses.
            candidates.removeAll(keepingCapacity: true)
            for i in videoTracks {
                guard let recogniser = video[i] else { continue }
                let probe: VideoRecogniser.Probe
                if probeAheadAt == (offset, i), let ahead = probeAhead {
                    probe = ahead
                } else {
                    probe = try recogniser.probe(at: offset, in: window, end: end)
                }
                switch probe.answer {
                case .sample(let size, _):
                    guard size > 0, probe.takes else { continue }
                    candidates.append((i, probe))
                case .cut(let bytes):
                    // Only if no other track's sample starts here (an audio frame can look like the start of one).
                    guard probe.takes else { continue }
                    cutVideo = cutVideo ?? bytes
                case .none:
                    continue
                }
            }
            if let k = videoTurn(), case (let i, let probe) = candidates[k],
                case .sample(let size, let key) = probe.answer, var recogniser = video.removeValue(at: i)
            {
                // Taken out while it changes (one left in `video` would be copied), and put back.
                if key { keyed.insert(i) }
                if key && !resuming { afterDamage = false }
                let started = keyed.contains(i) && !(afterDamage && recogniser.leansOnEarlierPictures(probe))
                let order = recogniser.accept(probe)
                video[i] = recogniser
                probeAhead = nil
                if started {
                    try release()
                    try emit(
                        RecoveredSample(
                            track: i, offset: offset, size: size, isKey: key, pictureOrder: order,
                            startsSequence: probe.startsSequence, resumes: resuming))
                    resuming = false
                    outcome.samples[i, default: 0] += 1
                    if key { outcome.keyframes[i, default: 0] += 1 }
                } else {
                    outcome.skippedBeforeKeyframe += 1
                }
                videoRun = videoRun.track == i ? (i, videoRun.count + 1) : (i, 1)
                offset += Int64(size)
                continue walking
            }
            // A timecode sample (4 bytes, a writer puts it first): where a sample of the media tracks follows it.
            for i in timecodeTracks where outcome.samples[i, default: 0] < model.tracks[i].sampleCount {
                if end - offset > 4, try followed(at: offset + 4, video: video) {
                    try release()
                    try emit(RecoveredSample(track: i, offset: offset, size: 4, isKey: true))
                    outcome.samples[i, default: 0] += 1
                    offset += 4
                    continue walking
                }
            }
            // Eight zero bytes start no audio frame (a raw data block opens with its element and gain): a zero run
            // (a writer's preallocated space, a wiped block) is damage, whatever a lenient decoder makes of it.
            let zeros = try window.bytes(at: offset, count: 8)
            let zeroRun = zeros.count == 8 && zeros.allSatisfy { $0 == 0 }
            for i in audioOrder(found: outcome.samples) where !zeroRun {
                guard let probe = audio[i] else { continue }
                if let length = try audioFrame(at: offset, track: i, probe) {
                    if soundChunk.index >= model.soundChunks.count, let group = twins.first(where: { $0.contains(i) }) {
                        // Past the reference's layout, a long-chunk writer's tracks of one configuration: held.
                        heldGroup = group
                        heldRun.append((offset, length))
                        offset += Int64(length)
                        continue walking
                    }
                    try release()
                    try emit(RecoveredSample(track: i, offset: offset, size: length, isKey: true))
                    outcome.samples[i, default: 0] += 1
                    followSoundChunks(took: i)
                    offset += Int64(length)
                    continue walking
                }
            }
            // After the sound: a camera metadata sample (mebx, gpmd, rtmd …), stepped over where a sample of the
            // media tracks follows it — at one of the sizes the reference's samples have, or at the end of a chain of
            // boxes (size, type) as Apple's mebx and GoPro's KLV-in-box samples are laid out. Counted, not kept.
            if let (track, length) = try metadataSample(at: offset, tracks: metadataTracks) {
                outcome.samples[track, default: 0] += 1
                offset += Int64(length)
                continue walking
            }
            // Uncompressed sound: no syntax to check; a run ends where the next picture continues the video. With
            // several such tracks the run is their chunks one after another, shared out as the reference lays them.
            if !pcm.isEmpty, !video.isEmpty {
                let run = try pcmRun(at: offset)
                // The run the media data ends with holds each track's last chunks: shared so that they end together.
                var shares =
                    pcm.count > 1 && offset + Int64(run) >= end ? lastPCMShares(run, found: outcome.samples) : [:]
                var taken = 0
                while taken < run {
                    var (track, chunk) = nextPCMChunk(found: outcome.samples, among: shares)
                    if let share = shares[track] {
                        chunk = min(chunk, share)
                        shares[track] = share - chunk
                        if shares[track] == 0 { shares[track] = nil }
                    }
                    let block = pcm[track] ?? 1
                    let piece = pcm.count == 1 ? run : min(run - taken, chunk) / block * block
                    guard piece > 0 else { break }
                    try release()
                    try emit(
                        RecoveredSample(
                            track: track, offset: offset + Int64(taken), size: piece, isKey: true,
                            count: piece / block))
                    outcome.samples[track, default: 0] += piece / block
                    followSoundChunks(took: track, count: piece / block)
                    taken += piece
                }
                if taken > 0 {
                    offset += Int64(taken)
                    continue walking
                }
            }
            if let cutVideo {
                outcome.gaps.append(RepairGap(offset: offset, bytes: Int64(cutVideo), reason: "cut"))
                offset = end
                break
            }
            // Sound the reference's settings do not read (none of it found yet: mono where the reference has
            // stereo, another rate), between two pictures that follow each other: stepped over, the pictures kept.
            if !keyed.isEmpty, soundUnread(outcome), let next = try bridge(after: offset, video: video, first: false) {
                outcome.unmatched.note(offset: offset, bytes: next - offset)
                offset = next
                continue walking
            }
            // Nothing starts here. Within an audio frame of the end, a frame the cut went through.
            let longest = audio.values.map(\.longestFrame).max() ?? 0
            let reason = end - offset < Int64(longest) && end == window.size ? "cut" : "unrecognised"
            if reason == "unrecognised", keyed.isEmpty, outcome.samples.isEmpty, soundUnread(outcome),
                let next = try bridge(after: offset - 1, video: video, first: true)
            {
                // Nothing taken yet, and the recording starts with sound the reference's settings do not read.
                outcome.unmatched.note(offset: offset, bytes: next - offset)
                offset = next
                continue walking
            }
            if reason == "unrecognised", let next = try resynchronise(after: offset) {
                // Damaged bytes: the walk resumes at the next keyframe, the tracks together (RecoveredTiming).
                outcome.gaps.append(RepairGap(offset: offset, bytes: next - offset, reason: "damaged"))
                offset = next
                resuming = true
                afterDamage = true
                continue walking
            }
            outcome.gaps.append(RepairGap(offset: offset, bytes: end - offset, reason: reason))
            break
        }
        try release(cut: outcome.gaps.last.map { $0.reason == "cut" && $0.offset + $0.bytes >= end } ?? false)
        progress(offset)
        return outcome
    }

    /// How the held run of `count` frames is shared out among ``heldGroup`` (`found`: each track's frames so far), in
    /// file order. A writer of long chunks closes each track's chunk after the same stretch of time and lays them out
    /// by their first times: the track furthest behind first (the first on a tie), each up to the time they all end
    /// at together. A run the file's end cut short (`cut`, less than the tracks' usual chunks together): the tracks
    /// take their usual chunks in turn — as many frames as in the last whole run (a writer's chunks of one
    /// configuration differ by a frame or two), else the reference's average —, the last what is left.
    private func shares(of count: Int, found: [Int: Int], cut: Bool) -> [(track: Int, frames: Int)] {
        let tracks = heldGroup.sorted { (elapsed($0, found: found), $0) < (elapsed($1, found: found), $1) }
        let usual = tracks.map { lastShares[$0] ?? Int(model.tracks[$0].meanChunkSamples.rounded()) }
        var left = count
        var out: [(track: Int, frames: Int)] = []
        if cut && count < usual.reduce(0, +) * 9 / 10 {
            for (k, track) in tracks.enumerated() where left > 0 {
                let frames = k == tracks.count - 1 ? left : min(left, usual[k])
                out.append((track, frames))
                left -= frames
            }
            return out
        }
        return endingTogether(count, tracks: tracks, found: found) { _ in 1 }.map { ($0.track, $0.units) }
    }

    /// How `total` units are shared among `tracks` (furthest behind in time first) so that each track's sound ends at
    /// one time, as a writer closes its tracks' chunks together: `unit`, the units of one of a track's samples (1 for
    /// an audio frame counted in frames, a sample frame's bytes for uncompressed sound counted in bytes). Each takes
    /// whole samples up to that time; the last takes what is left. Tracks given nothing are left out.
    private func endingTogether(_ total: Int, tracks: [Int], found: [Int: Int], unit: (Int) -> Int)
        -> [(track: Int, units: Int)]
    {
        // Samples per second, and units per second, of each track.
        let rate = { (i: Int) in
            Double(self.model.tracks[i].timescale) / Double(max(1, self.model.tracks[i].sampleDuration))
        }
        let perSecond = tracks.map { rate($0) * Double(unit($0)) }
        let already = zip(tracks, perSecond).reduce(0.0) { $0 + elapsed($1.0, found: found) * $1.1 }
        let endTime = (Double(total) + already) / perSecond.reduce(0, +)
        var left = total
        var out: [(track: Int, units: Int)] = []
        for (k, track) in tracks.enumerated() where left > 0 {
            let samples = max(0, ((endTime - elapsed(track, found: found)) * rate(track)).rounded())
            let units = k == tracks.count - 1 ? left : min(left, Int(samples) * unit(track))
            if units > 0 { out.append((track, units)) }
            left -= units
        }
        return out
    }

    /// Frame lengths found ahead by one decode of several frames (``AudioFrameProbe/frameLengths(_:)``): where the
    /// next frame of `track` starts and the lengths from there. Used only at that offset, after the video tracks had
    /// their turn there (so a picture is never taken for sound).
    private var aheadOf: [Int: (offset: Int64, lengths: ArraySlice<Int>)] = [:]

    /// Frames decoded at once by ``AudioFrameProbe/frameLengths(_:)``.
    static let framesAhead = 16

    /// The length of the audio frame of `track` at `offset`, if one starts there.
    private func audioFrame(at offset: Int64, track: Int, _ probe: AudioFrameProbe) throws(CropZoomError) -> Int? {
        if let ahead = aheadOf[track], ahead.offset == offset, let length = ahead.lengths.first {
            aheadOf[track] = (offset + Int64(length), ahead.lengths.dropFirst())
            return length
        }
        let room = end - offset
        guard probe.readsAhead else {
            return probe.frameLength(try window.bytes(at: offset, count: Int(min(Int64(probe.longestFrame), room))))
        }
        let lengths = probe.frameLengths(
            try window.bytes(at: offset, count: Int(min(Int64(probe.longestFrame * Self.framesAhead), room))))
        if let first = lengths.first {
            aheadOf[track] = (offset + Int64(first), lengths.dropFirst())
            return first
        }
        aheadOf[track] = nil
        return probe.frameLength(try window.bytes(at: offset, count: Int(min(Int64(probe.longestFrame), room))))
    }

    /// Where the walk is in the reference's sound chunks (``ReferenceModel/soundChunks``): the chunk, and the frames
    /// of it taken.
    private var soundChunk = (index: 0, frames: 0)

    /// The order in which the sound tracks are asked at the next offset (docs/design/repair.md, "Several sound
    /// tracks"): tracks of one codec and configuration cannot be told apart by their bytes, so by where the writer
    /// puts them — the track whose chunk comes next in the reference's layout, as long as the reference lasts; then
    /// the track furthest behind in time (a muxer interleaves by time), the first one on a tie.
    private func audioOrder(found: [Int: Int]) -> [Int] {
        let tracks = audio.keys.sorted()
        guard tracks.count > 1 else { return tracks }
        let elapsed = { (i: Int) in self.elapsed(i, found: found) }
        var order = tracks.sorted { (elapsed($0), $0) < (elapsed($1), $1) }
        if soundChunk.index < model.soundChunks.count,
            let at = order.firstIndex(of: model.soundChunks[soundChunk.index].track)
        {
            order.insert(order.remove(at: at), at: 0)
        }
        return order
    }

    /// The seconds of track `i` found so far (`found`: its samples), from where the reference starts it.
    private func elapsed(_ i: Int, found: [Int: Int]) -> Double {
        let t = model.tracks[i]
        let ticks = Double(found[i] ?? 0) * Double(t.sampleDuration) + Double(t.firstDecodeTime)
        return ticks / Double(max(1, t.timescale))
    }

    /// Moves along the reference's sound chunks once track `track` took `count` samples (an audio frame, or sample
    /// frames of uncompressed sound); samples of another track than the layout says end the following of it.
    private func followSoundChunks(took track: Int, count: Int = 1) {
        guard soundChunk.index < model.soundChunks.count else { return }
        let chunk = model.soundChunks[soundChunk.index]
        guard chunk.track == track else {
            soundChunk.index = model.soundChunks.count
            return
        }
        soundChunk.frames += count
        if soundChunk.frames >= chunk.samples { soundChunk = (soundChunk.index + 1, 0) }
    }

    /// The uncompressed sound track whose chunk comes next in a run, and the chunk's bytes: the reference's layout
    /// while it lasts (what is left of its chunk), then the track furthest behind in time with a chunk of the size
    /// the reference's chunks of it have most often.
    /// `among`: the tracks to choose from, where not empty (the last run's shares).
    private func nextPCMChunk(found: [Int: Int], among: [Int: Int] = [:]) -> (track: Int, bytes: Int) {
        if soundChunk.index < model.soundChunks.count {
            let chunk = model.soundChunks[soundChunk.index]
            if let block = pcm[chunk.track], among.isEmpty || among[chunk.track] != nil {
                return (chunk.track, (chunk.samples - soundChunk.frames) * block)
            }
        }
        let tracks = among.isEmpty ? Array(pcm.keys) : Array(among.keys)
        let track = tracks.min { (elapsed($0, found: found), $0) < (elapsed($1, found: found), $1) } ?? 0
        return (track, max(1, model.tracks[track].typicalChunkSamples) * (pcm[track] ?? 1))
    }

    /// What each uncompressed sound track has left in the run the media data ends with, `run` bytes together: each
    /// track's sound up to one end time (the writer ends its tracks together); the last of them takes what is left.
    private func lastPCMShares(_ run: Int, found: [Int: Int]) -> [Int: Int] {
        let tracks = pcm.keys.sorted { (elapsed($0, found: found), $0) < (elapsed($1, found: found), $1) }
        let shares = endingTogether(run, tracks: tracks, found: found) { self.pcm[$0] ?? 1 }
        return Dictionary(uniqueKeysWithValues: shares.map { ($0.track, $0.units) })
    }

    /// How runs of uncompressed sound are looked for: `block`, the bytes they come in (a sample frame; with several
    /// tracks, the greatest common divisor of theirs); `step`, where a picture after them is looked for (the
    /// reference's chunk granularity where it is a whole number of sample frames, else a sample frame; with several
    /// tracks, the greatest common divisor of theirs); `limit`, the longest run looked for (four of each track's
    /// largest chunks).
    static func stepping(_ model: ReferenceModel, pcm: [Int: Int]) -> (block: Int, step: Int, limit: Int) {
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        var result = (block: 0, step: 0, limit: 0)
        for (track, block) in pcm {
            let t = model.tracks[track]
            let step = t.chunkGranularity > 0 && t.chunkGranularity % block == 0 ? t.chunkGranularity : block
            result = (gcd(result.block, block), gcd(result.step, step), result.limit + 4 * t.largestChunk)
        }
        result.limit += result.step
        return result
    }

    /// The metadata track whose sample starts at `offset`, and its length (see ``walk(progress:emit:)``).
    private func metadataSample(at offset: Int64, tracks: [Int]) throws(CropZoomError) -> (Int, Int)? {
        guard !tracks.isEmpty else { return nil }
        var boxEnds: [Int] = []
        var at = offset
        while boxEnds.count < 16, let size = try window.number(at: at, width: 4), size >= 8,
            at + Int64(size) <= end, Int(size) <= 1 << 20
        {
            at += Int64(size)
            boxEnds.append(Int(at - offset))
        }
        for track in tracks {
            let t = model.tracks[track]
            let largest = max(t.largestSample, boxEnds.last ?? 0)
            for length in Set(t.metadataSizes + boxEnds).sorted() where length > 0 && length <= largest {
                if offset + Int64(length) <= end, try followed(at: offset + Int64(length), video: video) {
                    return (track, length)
                }
            }
        }
        return nil
    }

    /// Whether no sound was found so far (``bridge(after:video:first:)``): the reference's sound, or the reference
    /// has none (a recording with sound repaired from one without: its sound is stepped over, the pictures kept).
    private func soundUnread(_ outcome: Outcome) -> Bool {
        (Array(audio.keys) + Array(pcm.keys)).allSatisfy { outcome.samples[$0, default: 0] == 0 }
    }

    /// The most bytes ``bridge(after:video:first:)`` steps over: a run of sound chunks of other settings.
    private var bridgeReach: Int {
        let sound = model.tracks.filter(\.isAudio).map(\.largestChunk).max() ?? 0
        return max(1 << 18, 8 * sound)
    }

    /// The first offset after `offset`, within ``bridgeReach``, where a picture starts that continues the pictures
    /// taken (`first`: a keyframe the walk can take, no picture being taken yet) and is followed by a sample, or
    /// again by bytes a bridge steps over: where the walk goes on past sound the reference's settings do not read.
    private func bridge(after offset: Int64, video recognisers: Slots<VideoRecogniser>, first: Bool)
        throws(CropZoomError) -> Int64?
    {
        let reach = min(end, offset + 1 + Int64(bridgeReach))
        let tracks = recognisers.filled
        let found = try search(from: offset + 1, to: reach) { (at, bytes, i) throws(CropZoomError) -> Int64? in
            for track in tracks {
                guard let r = recognisers[track],
                    first ? r.mightStartKeyframe(bytes, at: i) : r.mightStartPicture(bytes, at: i)
                else { continue }
                let probe = try r.probe(at: at, in: window, end: end)
                guard case .sample(let size, let key) = probe.answer, first ? key && probe.takes : probe.continues
                else { continue }
                var taken = r
                _ = taken.accept(probe)
                if try followed(at: at + Int64(size), video: [track: taken]) { return at }
                // Followed by more of the unread sound: then a picture must continue this one.
                var next = recognisers
                next[track] = taken
                if try continuation(after: at + Int64(size) - 1, video: next) != nil { return at }
            }
            return nil
        }
        // The unread sound runs to the end of the media data.
        return found ?? (!first && end <= reach ? end : nil)
    }

    /// The first offset after `offset`, within ``bridgeReach``, where a picture starts that continues `video`'s, or
    /// the end of the media data where it comes first: one step of ``bridge(after:video:first:)``, no further.
    private func continuation(after offset: Int64, video recognisers: Slots<VideoRecogniser>)
        throws(CropZoomError) -> Int64?
    {
        let reach = min(end, offset + 1 + Int64(bridgeReach))
        let found = try search(from: offset + 1, to: reach) { (at, bytes, i) throws(CropZoomError) -> Int64? in
            for (_, r) in recognisers where r.mightStartPicture(bytes, at: i) {
                let probe = try r.probe(at: at, in: window, end: end)
                if case .sample = probe.answer, probe.continues { return at }
            }
            return nil
        }
        return found ?? (end <= reach ? end : nil)
    }

    /// Asks `match` at each offset from `from` up to `reach`, with the bytes around it (a search block read at a
    /// time, and `i`, the offset's index in them), until it answers an offset.
    private func search(
        from: Int64, to reach: Int64, _ match: (Int64, [UInt8], Int) throws(CropZoomError) -> Int64?
    ) throws(CropZoomError) -> Int64? {
        var base = from
        while base < reach {
            let bytes = try window.bytes(at: base, count: Self.searchBlock + 8)
            let n = min(Self.searchBlock, bytes.count, Int(reach - base))
            guard n > 0 else { break }
            for i in 0..<n {
                if let found = try match(base + Int64(i), bytes, i) { return found }
            }
            base += Int64(n)
        }
        return nil
    }

    /// Bytes looked at in one piece by ``resynchronise(after:)``.
    static let searchBlock = 1 << 16

    /// The first offset after `offset` where a video keyframe starts that the walk can take and that is followed by
    /// the end of the media data, a picture that continues it, an audio frame or a run of uncompressed sound: where the
    /// walk resumes after damaged bytes (docs/design/repair.md, "Damage"); nil when there is none.
    private func resynchronise(after offset: Int64) throws(CropZoomError) -> Int64? {
        let tracks = video.filled
        guard !tracks.isEmpty else { return nil }
        return try search(from: offset + 1, to: end) { (at, bytes, i) throws(CropZoomError) -> Int64? in
            for track in tracks {
                guard let r = video[track], r.mightStartKeyframe(bytes, at: i) else { continue }
                let probe = try r.probe(at: at, in: window, end: end)
                guard case .sample(let size, true) = probe.answer, probe.takes else { continue }
                var taken = r
                _ = taken.accept(probe)
                if try followed(at: at + Int64(size), video: [track: taken]) { return at }
            }
            return nil
        }
    }

    /// Whether a sample of some track starts at `offset` (or the media data ends there), with `video`'s recognisers
    /// in place of the walk's.
    private func followed(at offset: Int64, video taken: Slots<VideoRecogniser>) throws(CropZoomError) -> Bool {
        if offset >= end { return true }
        for (_, r) in taken {
            let probe = try r.probe(at: offset, in: window, end: end)
            switch probe.answer {
            case .sample: if probe.continues { return true }
            case .cut: return true
            case .none: break
            }
        }
        for probe in audio.values {
            let room = Int(min(Int64(probe.longestFrame), end - offset))
            if probe.frameLength(try window.bytes(at: offset, count: room)) != nil { return true }
        }
        if !pcm.isEmpty, try pcmRun(at: offset, video: taken) > 0 { return true }
        return false
    }

    /// The bytes of a run of uncompressed sound at `offset` (sample frames, looked at in steps: ``pcmStepping``): up
    /// to where a picture that continues a video track starts, at most its limit; to the end of the media data (in
    /// whole frames) when that comes first; 0 when neither is found. `video`: the recognisers to ask (the walk's).
    ///
    /// Where no picture lies at the step, one is looked for in steps of a sample frame (``verifiedRun(at:upTo:_:)``):
    /// a short reference shows too few chunks for their granularity (93 and 48 packets of 1024 sample frames: 3,072),
    /// and the sound may end before the pictures (a last packet shorter than the rest). The step is then the greatest
    /// common divisor of the run found and the step, from there on.
    private func pcmRun(at offset: Int64, video taken: Slots<VideoRecogniser>? = nil) throws(CropZoomError) -> Int {
        let (block, step, limit) = pcmStepping
        let recognisers = taken ?? video
        // Asked only where a look at the bytes says a picture may open (in sound resampled to a rate whose chunks
        // vary by a sample frame, the steps are a frame apart: hundreds in a run).
        let last = Int(min(Int64(limit), end - 1 - offset))
        let run = try firstOpening(at: offset, step: step, through: last, recognisers) { length throws(CropZoomError) in
            let next = offset + Int64(length)
            for (track, recogniser) in recognisers {
                let probe = try recogniser.probe(at: next, in: window, end: end)
                if case .sample = probe.answer, probe.continues {
                    // The walk asks the same recogniser at the same offset next.
                    if taken == nil {
                        probeAhead = probe
                        probeAheadAt = (next, track)
                    }
                    return length
                }
            }
            return nil
        }
        if let run { return run }
        let reach = min(Int64(limit), end - offset)
        if step > block, let found = try verifiedRun(at: offset, upTo: reach, recognisers) {
            func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
            pcmStepping.step = max(block, gcd(step, found))
            return found
        }
        return reach == end - offset ? Int((end - offset) / Int64(block)) * block : 0
    }

    /// The first length from `offset` — `step` apart, from `step` through `last` — that `found` answers, asked only
    /// at those where one of `recognisers` might open a sample (``H264Recogniser/mightOpen(_:at:)``: the first NAL
    /// unit's length and header as its recogniser requires them; the only places its probe can find one), looked
    /// for in the window's bytes, some kilobytes at a time.
    private func firstOpening(
        at offset: Int64, step: Int, through last: Int, _ recognisers: Slots<VideoRecogniser>,
        _ found: (Int) throws(CropZoomError) -> Int?
    ) throws(CropZoomError) -> Int? {
        guard step > 0 else { return nil }
        // The bytes looked at in one piece (one length where the step is longer).
        let span = step * max(0, Self.openingsBytes / step - 1)
        var length = step
        while length <= last {
            let from = length
            let to = min(last, from + span)
            // The first where any recogniser's look says one may open.
            let opening = try window.withBytes(at: offset + Int64(from), count: to - from + 8) { slice -> Int? in
                let bytes = slice.span
                var first: Int?
                for (_, r) in recognisers {
                    if let i = r.firstOpening(bytes, from: 0, through: (first ?? to + step) - from - step, step: step) {
                        first = from + i
                    }
                }
                return first
            }
            guard let opening else {
                length = to + step
                continue
            }
            if let answer = try found(opening) { return answer }
            length = opening + step
        }
        return nil
    }

    /// Bytes looked at together by ``firstOpening(at:step:through:_:_:)``.
    static let openingsBytes = 4096

    /// ``pcmRun(at:video:)`` in steps of a sample frame, up to `reach` bytes: where a picture that continues the video
    /// starts and is followed by another whole sample, one the end cuts, or the end (loud noise holds a false picture
    /// start now and then, not two in a row).
    private func verifiedRun(at offset: Int64, upTo reach: Int64, _ recognisers: Slots<VideoRecogniser>)
        throws(CropZoomError) -> Int?
    {
        try firstOpening(at: offset, step: pcmStepping.block, through: Int(reach) - 1, recognisers) {
            length throws(CropZoomError) in
            let at = offset + Int64(length)
            for (_, recogniser) in recognisers {
                let probe = try recogniser.probe(at: at, in: window, end: end)
                guard case .sample(let size, _) = probe.answer, probe.continues else { continue }
                let next = at + Int64(size)
                if next == end { return length }
                switch try recogniser.probe(at: next, in: window, end: end).answer {
                case .sample, .cut: return length
                case .none: break
                }
            }
            return nil
        }
    }
}
