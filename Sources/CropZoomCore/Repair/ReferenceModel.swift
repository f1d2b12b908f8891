/// What a healthy recording from the same camera and settings teaches about a broken one (docs/design/repair.md):
/// its tracks' kinds, time scales, durations, sizes and starts, and where its media data begins. Read from its boxes
/// (``ISOBoxes``); the codec parameters the output needs come from FFmpeg's reading of the same file.
package struct ReferenceModel: Sendable {
    /// One track of the reference, in `moov` order (FFmpeg's stream order for MP4/MOV).
    package struct Track: Sendable {
        package enum Kind: Sendable {
            case h264(H264Syntax.DecoderConfiguration)
            case hevc(HEVCSyntax.DecoderConfiguration)
            case aac
            /// Uncompressed sound (`sowt`, `twos`, `lpcm`, `in24`, `in32`, `fl32`, `fl64`, `raw `): no syntax to
            /// check; its runs are the bytes between the other tracks' samples.
            case pcm
            /// A timecode track: one 4-byte sample, the first frame's number (``Timecode``).
            case timecode(Timecode)
            /// A track the walk does not recognise yet (its sample entry's type).
            case other(String)
        }
        package var kind: Kind
        package var handler: String
        package var sampleEntry: String
        /// Units per second of the track's times.
        package var timescale: UInt32
        /// The most common sample duration (a frame's, an audio frame's samples).
        package var sampleDuration: UInt32
        /// Whether samples are shown in another order than decoded (`ctts` with offsets that differ: B-frames).
        package var reordered: Bool
        /// The first sample's decode time on the reference's timeline (track units): where the writer put the track
        /// against the others — negative by an audio track's priming or a B-frame delay cut by the edit list, positive
        /// by an empty edit.
        package var firstDecodeTime: Int64
        /// The first sample's composition offset (`ctts`): the first picture shows this long after it is decoded.
        package var firstCompositionOffset: Int64
        /// The least composition offset when some are negative (`ctts` version 1, as Apple writes reordered HEVC
        /// without a decode delay), else 0: decode times are moved that much earlier so that no picture is shown
        /// before it is decoded (``RecoveredTiming``).
        package var negativeCompositionOffset: Int64 = 0
        /// The largest sample.
        package var largestSample: Int
        /// The smallest sample.
        package var smallestSample: Int
        package var sampleCount: Int
        /// The most bytes a chunk of this track holds (a PCM run is looked for up to a few times that).
        package var largestChunk: Int
        /// The greatest common divisor of its chunks' byte sizes, the last chunk left out (a writer that stores sound
        /// in packets of 1024 sample frames: 4096 bytes for 16-bit stereo); 0 without chunks.
        package var chunkGranularity: Int
        /// Samples from one keyframe to the next where the reference's keyframes come at a fixed interval (a
        /// camera's GOP), read from the second keyframe on; nil where they do not, or with fewer than three keyframes.
        package var keyInterval: Int? = nil
        /// How many pictures a keyframe after the first is shown after it is decoded, counted in pictures: 0 in a
        /// closed GOP, the RASL pictures of an open GOP's CRA (decoded after it, shown before it); the most common.
        package var keyLead = 0
        /// The most common number of samples in one of its chunks (`stsc`, weighted by chunks): a writer that
        /// interleaves packet by packet stores one or two, a camera a second's worth.
        package var typicalChunkSamples = 1
        /// Samples to a chunk on average (a short reference's chunks may all differ: 46, 47 and 48 sound frames).
        package var meanChunkSamples = 1.0
        /// A track of neither sound nor pictures (camera metadata: `mebx`, `gpmd`, `rtmd`): its samples' sizes where
        /// there are few of them (at most 64), for the walk to step over such a sample (``MediaWalker``).
        package var metadataSizes: [Int] = []
        /// With other video tracks beside it: how many of its pictures the writer stores in a row before another
        /// video track's (in file order, where every run of each track but the first and the last is as long; 0 with
        /// no other video track, or where the runs vary). Where two tracks'
        /// pictures read alike (one codec, the same parameter set ids: a dash camera's front and rear, a motion
        /// photo's stills) the walk takes turns as the reference's writer did.
        package var videoRun = 0
        /// The bytes of the reference's first sample in its file (nil without samples): the walk's recognisers are
        /// tried on it (a reference they do not read is named before the walk).
        package var firstSample: ClosedRange<Int64>? = nil
        package var isMetadata: Bool { !isVideo && !isAudio }

        package var isVideo: Bool { handler == "vide" }
        package var isAudio: Bool { handler == "soun" }
    }

    package var tracks: [Track]
    /// With several sound tracks: the reference's sound chunks in file order (track, samples), up to the first chunk
    /// that ends a track (the writer's flush at its end lays those out otherwise). A deterministic writer interleaves
    /// by time, so a recording with the same settings lays out its sound the same way (``MediaWalker``).
    package var soundChunks: [(track: Int, samples: Int)] = []
    /// With several video tracks taking regular turns (``Track/videoRun``): the one whose picture the reference
    /// stores first (where the walk's turns start); nil otherwise.
    package var firstVideoTrack: Int? = nil

    /// Where the reference's writer put its pictures against its sound (``SoundClock``); nil without both.
    package var soundClock: SoundClock? = nil

    /// How far a picture's decode time lies from the end of the sound stored before it in the file, over the
    /// reference: a writer that interleaves by time stores a picture after the sound up to its time, so the sound
    /// read so far bounds a picture's time — within an audio frame for FFmpeg's packet interleave, within a chunk for
    /// a camera's (docs/design/repair.md, "Session 6"). Times as the repair gives them (each track from its
    /// ``Track/firstDecodeTime``), in seconds.
    package struct SoundClock: Equatable, Sendable {
        /// The video track timed by it and the sound track that is the clock (the first of each).
        package var video: Int
        package var sound: Int
        /// The least and the most of (decode time − end of the sound before it) over the pictures that come first after
        /// some sound (a chunk's first picture; nearly every picture where the writer interleaves packets), in seconds.
        package var low: Double
        package var high: Double
        /// The sound's step: its most common chunk's duration, in seconds (the clock advances by it).
        package var step: Double
        /// A writer of long chunks (a second of pictures, then a second of sound, as ffmpeg's `-chunk_duration` and
        /// cameras write): the bound holds only each chunk's first picture, and the pictures of a chunk are timed
        /// between its first picture and the next chunk's (``RecoveredTiming``).
        package var chunked = false
    }

    /// Reads the reference at `window` (a whole, healthy file); the reason it cannot serve otherwise.
    package static func read(_ window: ByteWindow) throws(CropZoomError) -> Result<ReferenceModel, ReferenceProblem> {
        let boxes = try ISOBoxes.topLevel(window)
        guard let first = boxes.first, ISOBoxes.isLeadingType(first.type) else { return .failure(.notISOMedia) }
        guard let moov = boxes.first(where: { $0.type == "moov" }) else { return .failure(.noIndex) }
        let end = moov.end(in: window.size)
        guard end <= window.size, end - moov.payloadOffset < 512 << 20 else { return .failure(.noIndex) }
        let payload = try window.bytes(at: moov.payloadOffset, count: Int(end - moov.payloadOffset))
        let movie = MovieTables(moov: payload[...])
        if movie.isFragmented { return .failure(.fragmented) }
        guard !movie.tracks.isEmpty, movie.tracks.contains(where: { $0.sampleCount > 0 }) else {
            return .failure(.noSamples)
        }
        guard boxes.contains(where: { $0.type == "mdat" }) else { return .failure(.noSamples) }
        var tracks: [Track] = []
        for t in movie.tracks {
            if let end = t.lastSampleEnd(), end > window.size { return .failure(.samplesPastEnd) }
            tracks.append(Self.track(t, movieTimescale: movie.timescale))
        }
        var model = ReferenceModel(tracks: tracks)
        if tracks.filter(\.isAudio).count > 1 { model.soundChunks = Self.soundChunks(movie.tracks) }
        model.soundClock = Self.soundClock(movie.tracks, tracks)
        let runs = Self.videoRuns(movie.tracks, tracks)
        for (track, run) in runs.runs { model.tracks[track].videoRun = run }
        model.firstVideoTrack = runs.first
        return .success(model)
    }

    /// ``Track/videoRun`` of each video track, where there are several: their chunks in file order, a track's
    /// neighbouring chunks one run.
    private static func videoRuns(_ tables: [TrackTables], _ tracks: [Track]) -> (runs: [Int: Int], first: Int?) {
        let videoTracks = tracks.indices.filter { tracks[$0].isVideo && tables[$0].sampleCount > 0 }
        guard videoTracks.count > 1 else { return ([:], nil) }
        var chunks: [(offset: Int64, track: Int, samples: Int)] = []
        for i in videoTracks { chunks += tables[i].chunks().map { ($0.offset, i, $0.samples) } }
        chunks.sort { $0.offset < $1.offset }
        var runs: [(track: Int, samples: Int)] = []
        for chunk in chunks {
            if let last = runs.last, last.track == chunk.track {
                runs[runs.count - 1].samples += chunk.samples
            } else {
                runs.append((chunk.track, chunk.samples))
            }
        }
        // Turns are followed only where the writer keeps them: every run of a track the same length, but the first
        // and the last (a writer of chunks by time whose chunks hold 28 to 30 pictures, or tracks at other rates,
        // is not: its turns would be guessed wrong).
        var lengths: [Int: Int] = [:]
        for (k, run) in runs.enumerated() where k > 0 && k < runs.count - 1 {
            if let length = lengths[run.track], length != run.samples { return ([:], nil) }
            lengths[run.track] = run.samples
        }
        var modes: [Int: Int] = [:]
        for run in runs where modes[run.track] == nil { modes[run.track] = lengths[run.track] ?? run.samples }
        return (modes, runs.first?.track)
    }

    /// ``soundChunks`` of `tables`.
    private static func soundChunks(_ tables: [TrackTables]) -> [(track: Int, samples: Int)] {
        var chunks: [(offset: Int64, track: Int, samples: Int)] = []
        var ends: [Int64] = []
        for (i, t) in tables.enumerated() where t.handler == "soun" {
            chunks += t.chunks().map { ($0.offset, i, $0.samples) }
            if let last = t.chunkOffsets.max() { ends.append(last) }
        }
        let stop = ends.min() ?? .max
        return chunks.sorted { $0.offset < $1.offset }.filter { $0.offset < stop }.map { ($0.track, $0.samples) }
    }

    /// Pictures after sound a reference shows for its bound to be taken as it is (two seconds at 24 fps: every
    /// phase of the common rates against 44.1 and 48 kHz sound), else it is widened.
    private static let clockPictures = 48

    /// Pictures to a chunk from which a writer's chunks are long (``SoundClock/chunked``): a packet interleave has one
    /// or two pictures between sound frames.
    private static let chunkPictures = 4

    /// ``soundClock`` of the reference's first video and first sound track: each picture's decode time against the
    /// end of the last sound sample stored before it (none for the pictures before the first sound).
    private static func soundClock(_ tables: [TrackTables], _ tracks: [Track]) -> SoundClock? {
        guard let v = tracks.indices.first(where: { tracks[$0].isVideo && tables[$0].sampleCount > 0 }),
            let a = tracks.indices.first(where: { tracks[$0].isAudio && tables[$0].sampleCount > 0 }),
            tracks[v].timescale > 0, tracks[a].timescale > 0
        else { return nil }
        // Decode times as the repair gives them: from the first decode time, moved earlier by negative offsets.
        var pictureTime = tracks[v].firstDecodeTime + tracks[v].negativeCompositionOffset
        var pictureDurations = tables[v].timeToSample.lazy.flatMap {
            repeatElement(Int64($0.delta), count: Int($0.count))
        }
        .makeIterator()
        // The sound by chunks (a picture never lies inside one): where each starts, and its end time.
        var soundEnds: [(offset: Int64, end: Int64)] = []
        var soundTime = tracks[a].firstDecodeTime
        var soundDurations = DurationRuns(tables[a].timeToSample)
        for chunk in tables[a].chunks() {
            soundTime += soundDurations.next(chunk.samples)
            soundEnds.append((chunk.offset, soundTime))
        }
        soundEnds.sort { $0.offset < $1.offset }
        let (pictureScale, soundScale) = (Double(tracks[v].timescale), Double(tracks[a].timescale))
        var low = Double.infinity
        var high = -Double.infinity
        var observed = 0
        var before = 0
        // How far a picture after sound lies outside the run of sound stored just before it (0 inside): before the
        // run's start (`early`, a negative distance) or after its end (`late`).
        var (early, late) = (0.0, 0.0)
        let firstSound = Double(tracks[a].firstDecodeTime) / soundScale
        for offset in tables[v].sampleOffsets() {
            guard let duration = pictureDurations.next() else { break }
            defer { pictureTime += duration }
            let was = before
            while before < soundEnds.count && soundEnds[before].offset < offset { before += 1 }
            // The first picture after some sound (a chunk's first picture; every picture in a packet interleave).
            guard before > was else { continue }
            let time = Double(pictureTime) / pictureScale
            let d = time - Double(soundEnds[before - 1].end) / soundScale
            low = min(low, d)
            high = max(high, d)
            observed += 1
            let runStart = was > 0 ? Double(soundEnds[was - 1].end) / soundScale : firstSound
            early = min(early, time - runStart)
            late = max(late, d)
        }
        // A writer of long chunks: a picture after sound only where a chunk of pictures starts (four and more
        // pictures to a chunk); two such starts bound the chunks' pictures. Otherwise, too few pictures after sound
        // bound nothing (a very short reference).
        let chunked = observed >= 2 && tables[v].sampleCount >= Self.chunkPictures * observed
        guard observed >= 8 || chunked else { return nil }
        let step = Double(tracks[a].typicalChunkSamples) * Double(tracks[a].sampleDuration) / soundScale
        if chunked {
            // Each chunk's first picture lies where the chunks' boundaries put it, within a sound frame and a
            // picture of where the reference's few lie (the writer starts a chunk at the first packet past its
            // length, so the phase of the sound's chunks against the pictures' wanders by that much).
            let jitter =
                Double(tracks[a].sampleDuration) / soundScale + Double(tracks[v].sampleDuration) / pictureScale
            // The recording's chunks are placed within the sound stored just before them, as a writer that orders
            // its chunks by their first times stores them. A reference whose chunks are not (a file rewritten by an
            // editor: two seconds of sound, then pictures from before it) shows the sound is no clock for it.
            guard early >= -jitter && late <= jitter else { return nil }
            return SoundClock(video: v, sound: a, low: low - jitter, high: high + jitter, step: step, chunked: true)
        }
        if observed < Self.clockPictures {
            // A short reference may not show every phase of pictures against sound: the bound is any sound step's
            // worth that holds what it shows (measured: half a second at 23.976 fps with 48 kHz sound left phases
            // out, and the pictures of a steady recording were moved).
            (low, high) = (min(low, high - step), max(high, low + step))
        }
        return SoundClock(video: v, sound: a, low: low, high: high, step: step)
    }

    /// The bytes of `t`'s largest chunk (its samples per chunk from `stsc`, their sizes from `stsz`), and the
    /// greatest common divisor of its chunks' sizes but the last.
    private static func chunks(_ t: TrackTables) -> (largest: Int, granularity: Int) {
        var sizes: [Int] = []
        var sample = 0
        for chunk in t.chunks() {
            let end = min(t.sampleSizes.count, sample + chunk.samples)
            guard sample < end else { break }
            sizes.append(Int(t.sampleSizes.total(sample..<end)))
            sample = end
        }
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let granularity = sizes.dropLast().reduce(0, gcd)
        return (sizes.max() ?? 0, granularity == 0 ? sizes.first ?? 0 : granularity)
    }

    private static func track(_ t: TrackTables, movieTimescale: UInt32) -> Track {
        let chunks = Self.chunks(t)
        let kind: Track.Kind
        switch t.sampleEntry {
        case "avc1", "avc3":
            // The visual sample entry's fixed fields (78 bytes) come before its boxes.
            if let avcC = ISOBoxes.Box(type: t.sampleEntry, payload: t.sampleEntryPayload).child("avcC", skip: 78),
                let config = H264Syntax.DecoderConfiguration(avcC: avcC.payload)
            {
                kind = .h264(config)
            } else {
                kind = .other(t.sampleEntry)
            }
        case "hvc1", "hev1":
            let boxes = ISOBoxes.Box(type: t.sampleEntry, payload: t.sampleEntryPayload).children(skip: 78)
            if let hvcC = boxes.first(where: { $0.type == "hvcC" }),
                var config = HEVCSyntax.DecoderConfiguration(hvcC: hvcC.payload)
            {
                config.dolbyVision = boxes.contains { ["dvcC", "dvvC", "dvwC"].contains($0.type) }
                kind = .hevc(config)
            } else {
                kind = .other(t.sampleEntry)
            }
        case "mp4a": kind = .aac
        case "sowt", "twos", "lpcm", "in24", "in32", "fl32", "fl64", "raw ": kind = .pcm
        case "tmcd":
            // Every sample 4 bytes (largest and smallest: no walk through a count `stsz` may claim in billions).
            let fours = t.sampleSizes.isEmpty || (t.sampleSizes.largest == 4 && t.sampleSizes.smallest == 4)
            if let timecode = Timecode(sampleEntry: t.sampleEntryPayload), fours {
                kind = .timecode(timecode)
            } else {
                kind = .other(t.sampleEntry)
            }
        default: kind = .other(t.sampleEntry)
        }
        var counts: [UInt32: UInt64] = [:]
        // A delta of 0 is a writer's "not known" (a last sample's: a motion photo's two stills are 159652 and 0), never
        // a duration to give every sample: counted only where no other is there.
        for run in t.timeToSample where run.delta > 0 { counts[run.delta, default: 0] += UInt64(run.count) }
        let duration = counts.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key ?? 0
        let offsets = Set(t.compositionOffsets.map(\.offset))
        // The edit list: empty edits delay the track (movie time scale); the first real edit's media time is where
        // its presentation starts (priming, a B-frame delay).
        var delay: Int64 = 0
        var mediaStart: Int64 = 0
        for edit in t.edits {
            if edit.mediaTime == -1 {
                if movieTimescale > 0 {
                    delay += Int64(edit.segmentDuration) * Int64(t.timescale) / Int64(movieTimescale)
                }
            } else {
                mediaStart = edit.mediaTime
                break
            }
        }
        return Track(
            kind: kind, handler: t.handler, sampleEntry: t.sampleEntry, timescale: t.timescale,
            sampleDuration: duration,
            reordered: offsets.count > 1, firstDecodeTime: delay - mediaStart,
            firstCompositionOffset: Int64(t.compositionOffsets.first?.offset ?? 0),
            negativeCompositionOffset: min(0, Int64(t.compositionOffsets.map(\.offset).min() ?? 0)),
            largestSample: Int(t.sampleSizes.largest ?? 0), smallestSample: Int(t.sampleSizes.smallest ?? 0),
            sampleCount: t.sampleCount,
            largestChunk: chunks.largest, chunkGranularity: chunks.granularity,
            keyInterval: Self.keyInterval(t.syncSamples), keyLead: Self.keyLead(t),
            typicalChunkSamples: Self.typicalChunkSamples(t),
            meanChunkSamples: Double(t.sampleCount) / Double(max(1, t.chunkOffsets.count)),
            metadataSizes: t.handler == "vide" || t.handler == "soun" ? [] : Self.fewSizes(t.sampleSizes),
            firstSample: Self.firstSample(t))
    }

    /// ``Track/firstSample``: the first chunk's offset and the first sample's size.
    private static func firstSample(_ t: TrackTables) -> ClosedRange<Int64>? {
        guard let offset = t.chunkOffsets.first, let size = t.sampleSizes.first, size > 0 else { return nil }
        return offset...(offset + Int64(size) - 1)
    }

    /// The distinct sizes of `sizes`, ascending, when there are at most 64.
    private static func fewSizes(_ sizes: SampleSizes) -> [Int] {
        if let one = sizes.largest, one == sizes.smallest { return [Int(one)] }
        let distinct = Set(sizes.map(Int.init))
        return distinct.count <= 64 ? distinct.sorted() : []
    }

    /// ``Track/typicalChunkSamples``: chunks counted per samples-per-chunk value of `stsc`'s runs.
    private static func typicalChunkSamples(_ t: TrackTables) -> Int {
        var chunks: [UInt32: Int] = [:]
        for (i, run) in t.sampleToChunk.enumerated() {
            let next = i + 1 < t.sampleToChunk.count ? Int(t.sampleToChunk[i + 1].firstChunk) : t.chunkOffsets.count + 1
            chunks[run.samplesPerChunk, default: 0] += max(0, next - Int(run.firstChunk))
        }
        let mode = chunks.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key ?? 1
        return max(1, Int(mode))
    }

    /// ``Track/keyLead``: for each sync sample after the first, its place in display order (by `stts` + `ctts`) less
    /// its place in decode order; the most common.
    private static func keyLead(_ t: TrackTables) -> Int {
        guard let sync = t.syncSamples, sync.count >= 2, t.compositionOffsets.count > 1 else { return 0 }
        var shown: [Int64] = []
        var time: Int64 = 0
        for run in t.timeToSample {
            for _ in 0..<run.count {
                shown.append(time)
                time += Int64(run.delta)
            }
        }
        var k = 0
        for run in t.compositionOffsets {
            for _ in 0..<run.count where k < shown.count {
                shown[k] += Int64(run.offset)
                k += 1
            }
        }
        let order = shown.sorted()
        var leads: [Int: Int] = [:]
        for number in sync.dropFirst() {
            let i = Int(number) - 1
            guard i < shown.count else { continue }
            var low = 0
            var high = order.count
            while low < high {
                let mid = (low + high) / 2
                if order[mid] < shown[i] { low = mid + 1 } else { high = mid }
            }
            leads[low - i, default: 0] += 1
        }
        return leads.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key ?? 0
    }

    /// The one distance between consecutive sync samples after the first (whose own distance an open GOP shortens:
    /// the pictures shown before a CRA are decoded after it), when there is one.
    private static func keyInterval(_ sync: [UInt32]?) -> Int? {
        guard let sync, sync.count >= 3 else { return nil }
        let later = sync.dropFirst()
        let steps = Set(zip(later.dropFirst(), later).map { Int($0) - Int($1) })
        guard steps.count == 1, let step = steps.first, step > 1 else { return nil }
        return step
    }
}

/// Why a file cannot serve as a reference.
package enum ReferenceProblem: Error, Equatable {
    case notISOMedia, noIndex, fragmented, noSamples, samplesPastEnd

    package var reason: String {
        switch self {
        case .notISOMedia: return "not an MP4/MOV/3GP file"
        case .noIndex: return "has no index (moov): the reference must be a complete recording"
        case .fragmented:
            return "is a fragmented MP4: the reference must be a complete, regular recording from the same camera"
        case .noSamples: return "holds no media samples"
        case .samplesPastEnd: return "is itself cut short (its index points past its end): use a complete recording"
        }
    }
}

/// `stts`'s runs read a number of samples at a time: their durations added up without listing them one by one.
struct DurationRuns {
    private let runs: [(count: UInt32, delta: UInt32)]
    private var run = 0
    /// Samples of `runs[run]` already read.
    private var used: UInt32 = 0

    init(_ runs: [(count: UInt32, delta: UInt32)]) { self.runs = runs }

    /// The next `samples` samples' durations added up (as far as the runs go).
    mutating func next(_ samples: Int) -> Int64 {
        var left = samples
        var total: Int64 = 0
        while left > 0 && run < runs.count {
            let take = min(left, Int(runs[run].count - used))
            total += Int64(take) * Int64(runs[run].delta)
            left -= take
            used += UInt32(take)
            if used == runs[run].count {
                run += 1
                used = 0
            }
        }
        return total
    }
}
