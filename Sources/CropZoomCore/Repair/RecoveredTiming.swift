/// A recovered sample with its times, in its track's time scale.
package struct TimedSample: Equatable, Sendable {
    package var sample: RecoveredSample
    package var pts: Int64
    package var dts: Int64
    package var duration: Int64
}

/// The one place recovered samples get their times (the repair's counterpart of a container's timestamps; from the
/// packets on, the remux writes them as they are).
///
/// - Each track starts where the reference's writer started it — its edit list's delay and media start
///   (``ReferenceModel/Track/firstDecodeTime``: an AAC track's priming, a B-frame delay, an empty edit) — so the
///   tracks line up as that writer lines up every recording; each sample lasts the reference's sample duration (a
///   video frame's, an audio frame's samples): `dts = start + n × duration`.
/// - A picture is shown at its place in display order: within a sequence (an IDR picture and what follows up to the
///   next) its rank among the sequence's picture order counts, after every picture of the sequences before:
///   `pts = first shown + (shown before + rank) × duration`, where the first picture shows
///   ``ReferenceModel/Track/firstCompositionOffset`` after its decode time. So every frame is at its original time
///   and the composition offsets (`ctts`) follow, whatever the B-frame pattern — where untrunc tiles the
///   reference's pattern or drops it.
/// - A picture's rank is known once every picture that may show before it has been read: pictures are held back
///   ``reorderWindow`` pictures (the most H.264 reorders is 16) or to the end of their sequence, so times come out
///   in decode order with that lag; audio samples come out at once.
/// - Where the recording's frame rate was not the reference's (a phone dropping to 20 fps in low light), the
///   reference's frame duration would put the pictures ever further from the sound. The sound, timed by its count,
///   keeps the recording's clock, and the sound stored before a picture bounds the picture's time as the reference's
///   writer bounded it (``ReferenceModel/SoundClock``): a picture's decode time is the previous one's plus the
///   reference's duration while that stays within the bound (so a steady recording keeps its times to the tick);
///   once it does not, the pictures follow the pace the sound gives them, within the bound (``soundTimed`` counts
///   them). A picture is shown at the decode time of the picture as many places on as the reference's first picture
///   is shown after its decode (the reorder delay, as a writer derives decode times from the sorted presentation
///   times), so a B-frame keeps its time too.
package struct RecoveredTiming: Sendable {
    /// Pictures held back before their rank is settled.
    package static let reorderWindow = 17

    private let model: ReferenceModel
    private var nextDecode = Slots<Int64>()
    private var video = Slots<Sequence>()
    /// Where the first sample taken starts and the last one ends in the file: the recording's bytes per second, for
    /// the time a damaged region stood for.
    private var firstOffset: Int64?
    private var lastEnd: Int64 = 0
    /// The next picture's number in decode order, per video track, and the decode times given lately (by number).
    private var decodeIndex = Slots<Int64>()
    private var decodeTimes = Slots<[(index: Int64, dts: Int64)]>()
    /// The sound's clock: where the sound taken since the start or the last resume ends (seconds); the shift of the
    /// clock against the pictures, and the shifts that keep every observation so far within the bound (only 0 from
    /// the start; any after a resume, where both resumed at estimated times); whether the clock leads (no shift
    /// keeps the reference's frame duration within the bound: the rate is not the reference's).
    private var soundEnd: Double?
    private var clockShift = 0.0
    private var shifts: (low: Double, high: Double) = (0, 0)
    private var clockLeads = false
    /// Whether sound of the clock's track was taken since the last picture of its video track.
    private var soundSincePicture = false
    /// The clock's observations since the start or the last resume: a picture's number and its time (seconds).
    private var observations: [(index: Int64, time: Double)] = []
    /// Pictures whose decode time the sound's clock set (the reference's frame duration would have put them outside
    /// the bound the reference's writer keeps).
    package private(set) var soundTimed = 0
    /// A writer of long chunks: the clock's pictures of the current chunk, held (``chunked(_:clock:)``), where its
    /// first picture lies on the clock (seconds; nil for pictures before any sound), and the last chunk's pace
    /// (seconds a picture) where the clock led.
    private var run: [RecoveredSample] = []
    private var runStart: Double?
    /// Where the clock's sound stored since the last picture starts (seconds).
    private var soundRunStart: Double?
    private var lastPace: Double?

    /// One video track's pictures of the current sequence.
    private struct Sequence: Sendable {
        /// Pictures shown before this sequence.
        var shownBefore: Int64 = 0
        /// The order counts of the sequence's pictures read so far, ascending.
        var counts: [Int64] = []
        /// Pictures read and not yet given their times, in decode order, with their decode times.
        var held: [(sample: RecoveredSample, dts: Int64)] = []
        /// The settled picture of the highest order count, and its place: where a cut's pictures are counted from.
        var highest: (order: Int64, rank: Int64)? = nil

        /// Starts the next sequence after `shown` more pictures.
        mutating func next(after shown: Int64) {
            shownBefore += shown
            counts = []
            highest = nil
        }
    }

    package init(model: ReferenceModel) { self.model = model }

    /// Takes the next sample of its track, in file order; appends to `out` the samples whose times are now settled
    /// (this one, or pictures held back before it).
    package mutating func take(_ sample: RecoveredSample, into out: inout [TimedSample]) {
        if sample.resumes {
            flushRun(until: nil, into: &out)
            resume(at: sample, into: &out)
        }
        firstOffset = firstOffset ?? sample.offset
        lastEnd = max(lastEnd, sample.offset + Int64(sample.size))
        // The track's fields read in place (a copy of the track would retain each of its tables, every sample).
        let duration = Int64(model.tracks[sample.track].sampleDuration) * Int64(sample.count)
        var dts =
            nextDecode[sample.track] ?? model.tracks[sample.track].firstDecodeTime
            + model.tracks[sample.track].negativeCompositionOffset
        if let clock = model.soundClock {
            if sample.track == clock.video && clock.chunked {
                chunked(sample, clock: clock, into: &out)
                return
            } else if sample.track == clock.video {
                dts = clocked(dts, clock: clock, track: model.tracks[sample.track])
            } else if sample.track == clock.sound {
                let scale = Double(max(1, model.tracks[sample.track].timescale))
                if !soundSincePicture { soundRunStart = Double(dts) / scale }
                soundEnd = Double(dts + duration) / scale
                soundSincePicture = true
            }
        }
        place(sample, dts: dts, into: &out)
    }

    /// Gives `sample` decode time `dts`: settled at once (appended to `out`), or held back in its sequence until its
    /// rank is known.
    private mutating func place(_ sample: RecoveredSample, dts: Int64, into out: inout [TimedSample]) {
        let duration = Int64(model.tracks[sample.track].sampleDuration) * Int64(sample.count)
        nextDecode[sample.track] = dts + duration
        if model.tracks[sample.track].isVideo {
            let index = decodeIndex[sample.track] ?? 0
            decodeIndex[sample.track] = index + 1
            var times = decodeTimes.removeValue(at: sample.track) ?? []
            Self.keep(&times, index: index, dts: dts)
            decodeTimes[sample.track] = times
        }
        guard let order = sample.pictureOrder else {
            let pts =
                dts - model.tracks[sample.track].negativeCompositionOffset
                + model.tracks[sample.track].firstCompositionOffset
            out.append(TimedSample(sample: sample, pts: pts, dts: dts, duration: duration))
            return
        }
        // Taken out of the dictionary while changed: a copy left in it would have every insert copy the arrays.
        var s = video.removeValue(at: sample.track) ?? Sequence()
        if sample.startsSequence && !(s.counts.isEmpty && s.held.isEmpty) {
            settle(&s, all: true, track: sample.track, into: &out)
            s.next(after: Int64(s.counts.count))
        }
        s.counts.insert(order, at: Self.lowerBound(s.counts, order))
        s.held.append((sample, dts))
        if s.held.count > Self.reorderWindow { settle(&s, all: false, track: sample.track, into: &out) }
        video[sample.track] = s
    }

    /// A picture of the clock's video track from a writer of long chunks (``ReferenceModel/SoundClock/chunked``):
    /// held with the rest of its chunk until the next chunk's first picture (the first after some sound) says where
    /// it ends, or the walk ends. Each chunk's first picture is an observation of the sound's clock: it lies within
    /// the bound of the end of the sound before it. While the reference's frame duration keeps every observation
    /// within the bound (one shift of the clock against the pictures, none at the start), the chunk's pictures keep
    /// it, to the tick; once it does not, the clock leads: a chunk's pictures are spread evenly from its first
    /// picture's place on the clock to the next chunk's (the last chunk at the pace of the one before).
    private mutating func chunked(
        _ sample: RecoveredSample, clock: ReferenceModel.SoundClock, into out: inout [TimedSample]
    ) {
        if soundSincePicture, let soundEnd {
            soundSincePicture = false
            let t = model.tracks[clock.video]
            let scale = Double(max(1, t.timescale))
            // Where this picture falls at the reference's frame duration: after the pictures held.
            let start = t.firstDecodeTime + t.negativeCompositionOffset
            let nominal = (nextDecode[clock.video] ?? start) + Int64(run.count) * Int64(t.sampleDuration)
            let d = Double(nominal) / scale - soundEnd
            if !clockLeads && !keepsShift(d, within: clock.low...clock.high) { clockLeads = true }
            // Kept within the sound stored just before it: a writer puts a chunk after the sound chunks that start
            // before it, and before those that start after it.
            var estimate = soundEnd + clockShift + (clock.low + clock.high) / 2
            estimate = min(max(estimate, soundRunStart ?? estimate), soundEnd)
            flushRun(until: estimate, into: &out)
            runStart = estimate
        }
        run.append(sample)
        // A writer that never interleaved (every picture in one chunk): no more than ``longestRun`` pictures are
        // held; they are timed as at the end.
        if run.count > Self.longestRun { flushRun(until: nil, into: &out) }
    }

    /// Pictures held in one chunk at most (``chunked(_:clock:)``): a minute at 60 fps.
    private static let longestRun = 3600

    /// Times the held chunk's pictures (``chunked(_:clock:)``), which end where the next chunk starts, `until`
    /// (seconds on the clock), nil when not known (the walk's end, damage).
    private mutating func flushRun(until end: Double?, into out: inout [TimedSample]) {
        guard let clock = model.soundClock, !run.isEmpty else { return }
        let first = runStart
        runStart = nil
        // The chunk's storage is kept for the next one (no allocation per chunk).
        defer { run.removeAll(keepingCapacity: true) }
        let t = model.tracks[clock.video]
        let scale = Double(max(1, t.timescale))
        var previous = decodeTimes[clock.video]?.last?.dts
        let origin = t.firstDecodeTime + t.negativeCompositionOffset
        guard clockLeads else {
            for i in run.indices { place(run[i], dts: nextDecode[clock.video] ?? origin, into: &out) }
            return
        }
        // From the chunk's first picture's place on the clock (or where the reference's duration puts it), to the
        // next chunk's, or on at the last chunk's pace.
        let start = first ?? Double(nextDecode[clock.video] ?? origin) / scale
        let n = Double(run.count)
        let pace = end.map { ($0 - start) / n } ?? lastPace ?? Double(t.sampleDuration) / scale
        if end != nil, pace > 0 { lastPace = pace }
        for i in run.indices {
            var dts = Int64(((start + Double(i) * pace) * scale).rounded())
            if let p = previous { dts = max(dts, p + 1) }
            previous = dts
            soundTimed += 1
            place(run[i], dts: dts, into: &out)
        }
    }

    /// Decode times kept per video track for the presentation times of the pictures held back (far more than the
    /// reorder window and delay together).
    private static let keptDecodeTimes = 128

    /// Adds picture `index`'s decode time to `times` (in place: no copy per picture), dropping the oldest now and
    /// then, and any numbered from `index` on (a resume that numbered pictures again from before the last).
    private static func keep(_ times: inout [(index: Int64, dts: Int64)], index: Int64, dts: Int64) {
        if times.count >= 4 * keptDecodeTimes { times.removeFirst(times.count - keptDecodeTimes) }
        while let last = times.last, last.index >= index { times.removeLast() }
        times.append((index, dts))
    }

    /// The decode time of a picture of the clock's video track (docs/design/repair.md, "Session 6"); `nominal` is the
    /// previous one's plus the reference's duration.
    ///
    /// The first picture after some sound is an observation: it lies within `[low, high]` of that sound's end, as
    /// the reference's writer put such pictures. While one shift of the clock against the pictures keeps every
    /// observation within that bound (widened by half its width, at most half a sound step, since a short reference
    /// may not show every phase of sound against pictures; no shift at the start, any after damage), `nominal`
    /// stands: a steady recording keeps its times to the tick. Once none does, the rate is not the reference's and
    /// the clock leads: every picture is timed on the line through the last observations' middles (the recording's
    /// own pace), a picture after some sound kept within the bound; never at or before the previous picture.
    private mutating func clocked(_ nominal: Int64, clock: ReferenceModel.SoundClock, track t: ReferenceModel.Track)
        -> Int64
    {
        let scale = Double(max(1, t.timescale))
        let index = decodeIndex[clock.video] ?? 0
        let previous = decodeTimes[clock.video]?.last?.dts
        func after(_ time: Int64) -> Int64 { previous.map { max(time, $0 + 1) } ?? time }
        var estimate = nominal
        if clockLeads, let time = fitted(at: index) { estimate = Int64((time * scale).rounded()) }
        guard let soundEnd, soundSincePicture else {
            if clockLeads { soundTimed += 1 }
            return after(estimate)
        }
        soundSincePicture = false
        var d = Double(estimate) / scale - soundEnd
        if !clockLeads {
            // The shifts of the sound's clock against the pictures that keep every picture so far within the bound
            // (widened by the slack): none at the start (the writer aligned the tracks as in the reference), any
            // after damage (both resumed at estimated times). None left: the rate is not the reference's.
            let margin = max(0.001, min(clock.step, clock.high - clock.low) / 2)
            if keepsShift(d, within: (clock.low - margin)...(clock.high + margin)) {
                observe(index, soundEnd + clockShift + (clock.low + clock.high) / 2)
                return nominal
            }
            clockLeads = true
        }
        let base = soundEnd + clockShift
        observe(index, base + (clock.low + clock.high) / 2)
        if let time = fitted(at: index) { estimate = Int64((time * scale).rounded()) }
        d = Double(estimate) / scale - base
        soundTimed += 1
        let kept = min(max(d, clock.low), clock.high)
        return after(d == kept ? estimate : Int64(((base + kept) * scale).rounded()))
    }

    /// Whether one shift of the sound's clock against the pictures keeps every observation so far within `bound`
    /// with this one, a picture `d` seconds from the end of the sound before it; if so the shifts that do are
    /// narrowed to it and ``clockShift`` moved into them (the packet interleave's and the long chunks' clocks).
    private mutating func keepsShift(_ d: Double, within bound: ClosedRange<Double>) -> Bool {
        let low = max(shifts.low, d - bound.upperBound)
        let high = min(shifts.high, d - bound.lowerBound)
        guard low <= high else { return false }
        shifts = (low, high)
        clockShift = min(max(clockShift, low), high)
        return true
    }

    /// Keeps an observation of the sound's clock: picture `index` at `time` (seconds).
    private mutating func observe(_ index: Int64, _ time: Double) {
        if observations.count >= 2 * Self.observed { observations.removeFirst(observations.count - Self.observed) }
        observations.append((index, time))
    }

    /// Observations of the sound's clock used for the line (about a second of pictures in a packet interleave).
    private static let observed = 24

    /// Picture `index`'s time (seconds) on the line through the last ``observed`` observations (least squares: the
    /// recording's own pace); nil with fewer than two pictures.
    private func fitted(at index: Int64) -> Double? {
        let recent = observations.suffix(Self.observed)
        guard let first = recent.first, let last = recent.last, last.index > first.index else { return nil }
        let n = Double(recent.count)
        let meanX = recent.reduce(0.0) { $0 + Double($1.index - first.index) } / n
        let meanY = recent.reduce(0.0) { $0 + $1.time } / n
        var covariance = 0.0
        var variance = 0.0
        for o in recent {
            let x = Double(o.index - first.index) - meanX
            covariance += x * (o.time - meanY)
            variance += x * x
        }
        guard variance > 0 else { return nil }
        let pace = covariance / variance
        return meanY + (Double(index - first.index) - meanX) * pace
    }

    /// The walk stepped over damaged bytes and resumes at `keyframe` (docs/design/repair.md, "Damage"): the pictures
    /// held back are settled as at a cut; the time the damaged bytes stood for is their size over the recording's
    /// bytes per second so far, in whole frames, moved to the reference's keyframe interval where it has a fixed one
    /// (a camera's GOP: the keyframe lands on its grid), and it is decoded as many pictures before that as the
    /// reference's keyframes lead (``ReferenceModel/Track/keyLead``); every other track resumes at the keyframe's
    /// decode time, on its own sample grid, never before where it stopped.
    private mutating func resume(at keyframe: RecoveredSample, into out: inout [TimedSample]) {
        var placed: [Int: Int64] = [:]
        for track in video.filled {
            guard var s = video.removeValue(at: track) else { continue }
            settle(&s, all: true, track: track, atCut: true, into: &out)
            s.next(after: Int64(s.counts.count))
            video[track] = s
            placed[track] = s.shownBefore
        }
        let track = keyframe.track
        let t = model.tracks[track]
        let duration = Int64(max(1, t.sampleDuration))
        let scale = Double(max(1, t.timescale))
        // Pictures so far: those placed in display order, or as many as were decoded (no reordering).
        let start = t.firstDecodeTime + t.negativeCompositionOffset
        // How far the sound's clock moved the pictures from the reference's grid (0 at a steady rate).
        let drift = (nextDecode[track] ?? start) - start - (decodeIndex[track] ?? 0) * duration
        let shown = placed[track] ?? (decodeIndex[track] ?? 0)
        let seconds = Double(shown * duration + drift) / scale
        let bytes = Double(lastEnd - (firstOffset ?? lastEnd))
        let lost = seconds > 0 && bytes > 0 ? Double(keyframe.offset - lastEnd) / (bytes / seconds) : 0
        var frames = shown + Int64((lost * scale / Double(duration)).rounded())
        if let g = t.keyInterval.map(Int64.init), g > 1 {
            let first = (shown + g - 1) / g * g
            frames = max(first, Int64((Double(frames) / Double(g)).rounded()) * g)
        }
        if var s = video[track] {
            s.shownBefore = frames
            video[track] = s
        }
        // Decoded that many pictures earlier than shown where the reference's keyframes lead (an open GOP's CRA).
        let decoded = max(0, frames - Int64(t.keyLead))
        decodeIndex[track] = decoded
        nextDecode[track] = start + decoded * duration + drift
        let resumeSeconds = Double(start + decoded * duration + drift) / scale
        // The sound resumes at an estimated time too: the clock starts again from the sound read after this.
        soundEnd = nil
        shifts = (-.infinity, .infinity)
        clockLeads = false
        observations = []
        for (i, other) in model.tracks.enumerated() where i != track {
            guard let current = nextDecode[i] else { continue }
            let unit = Int64(max(1, other.sampleDuration))
            let ticks = resumeSeconds * Double(other.timescale) - Double(other.firstDecodeTime)
            nextDecode[i] = max(current, other.firstDecodeTime + Int64((ticks / Double(unit)).rounded()) * unit)
        }
    }

    /// The pictures still held back, with their times (at the end of the walk), appended to `out`.
    package mutating func finish(into out: inout [TimedSample]) {
        flushRun(until: nil, into: &out)
        for track in video.filled {
            guard var s = video.removeValue(at: track) else { continue }
            settle(&s, all: true, track: track, atCut: true, into: &out)
            video[track] = s
        }
    }

    /// Gives the held pictures their times: all of them, or the oldest one. `atCut`: the walk ended, maybe inside
    /// the sequence, so pictures shown before the last ones read may be missing (they lay past the cut): a picture is
    /// then given at least the place its order count says — its distance from the settled picture of the highest
    /// count (the sequence's first count before any is settled) in steps of the counts' common step (x264 counts in
    /// 2s, x265 in 1s) — so the pictures before the cut keep their times. Counted from there, not from the sequence's
    /// start: a phone counts in its frame rate's ticks (2 a picture at 15 fps, 1 at 30), and gaps far before the cut
    /// are no pictures missing.
    private func settle(
        _ s: inout Sequence, all: Bool, track: Int, atCut: Bool = false, into out: inout [TimedSample]
    ) {
        let t = model.tracks[track]
        let duration = Int64(t.sampleDuration)
        // The first picture shows `delay` after the first decode: `lead` pictures on, and `rest` after that one's.
        let delay = t.firstCompositionOffset - t.negativeCompositionOffset
        let lead = duration > 0 ? max(0, delay) / duration : 0
        let rest = delay - lead * duration
        let times = decodeTimes[track] ?? []
        let count = all ? s.held.count : 1
        let lowest = s.counts.first ?? 0
        func gcd(_ a: Int64, _ b: Int64) -> Int64 { b == 0 ? a : gcd(b, a % b) }
        let step = atCut ? max(1, s.counts.reduce(0) { gcd($0, $1 - lowest) }) : 1
        let anchor = s.highest ?? (lowest, 0)
        for held in s.held.prefix(count) {
            var rank = Int64(Self.lowerBound(s.counts, held.sample.pictureOrder ?? 0))
            if atCut, let order = held.sample.pictureOrder, order > anchor.order {
                rank = max(rank, anchor.rank + (order - anchor.order) / step)
            }
            if !atCut, let order = held.sample.pictureOrder, order > (s.highest?.order ?? .min) {
                s.highest = (order, rank)
            }
            // Never shown before it is decoded: only pictures that are not this track's (another track's read alike,
            // which the picture check then refuses) could be placed so, and the muxer would fail on them first.
            let pts = max(held.dts, Self.decodeTime(times, at: s.shownBefore + rank + lead, duration: duration) + rest)
            out.append(TimedSample(sample: held.sample, pts: pts, dts: held.dts, duration: duration))
        }
        s.held.removeFirst(count)
    }

    /// The decode time of the picture numbered `index` in decode order: given, or on from the nearest given one
    /// before it (after it, for a number before all of them) at `duration` a picture — past the last one given, at
    /// the pace of the last few (the pictures after a cut: the reference's pace where the rate did not change).
    /// `times` is never empty where it is asked (every held picture added its own).
    private static func decodeTime(_ times: [(index: Int64, dts: Int64)], at index: Int64, duration: Int64) -> Int64 {
        var low = 0
        var high = times.count
        while low < high {
            let mid = (low + high) / 2
            if times[mid].index <= index { low = mid + 1 } else { high = mid }
        }
        guard let known = low > 0 ? times[low - 1] : times.first else { return index * duration }
        if low == times.count, index > known.index {
            let from = times[max(0, times.count - 9)]
            if known.index > from.index {
                let pace = Double(known.dts - from.dts) / Double(known.index - from.index)
                return known.dts + Int64((Double(index - known.index) * pace).rounded())
            }
        }
        return known.dts + (index - known.index) * duration
    }

    /// The index of the first element of `sorted` not less than `value`.
    private static func lowerBound(_ sorted: [Int64], _ value: Int64) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
