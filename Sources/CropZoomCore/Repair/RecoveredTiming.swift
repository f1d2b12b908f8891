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
package struct RecoveredTiming: Sendable {
    /// Pictures held back before their rank is settled.
    package static let reorderWindow = 17

    private let model: ReferenceModel
    private var nextDecode: [Int: Int64] = [:]
    private var video: [Int: Sequence] = [:]
    /// Where the first sample taken starts and the last one ends in the file: the recording's bytes per second, for
    /// the time a damaged region stood for.
    private var firstOffset: Int64?
    private var lastEnd: Int64 = 0

    /// One video track's pictures of the current sequence.
    private struct Sequence: Sendable {
        /// Pictures shown before this sequence.
        var shownBefore: Int64 = 0
        /// The order counts of the sequence's pictures read so far, ascending.
        var counts: [Int64] = []
        /// Pictures read and not yet given their times, in decode order, with their decode times.
        var held: [(sample: RecoveredSample, dts: Int64)] = []
    }

    package init(model: ReferenceModel) { self.model = model }

    /// Takes the next sample of its track, in file order; returns the samples whose times are now settled (this
    /// one, or pictures held back before it).
    package mutating func take(_ sample: RecoveredSample) -> [TimedSample] {
        var out: [TimedSample] = sample.resumes ? resume(at: sample) : []
        firstOffset = firstOffset ?? sample.offset
        lastEnd = max(lastEnd, sample.offset + Int64(sample.size))
        let t = model.tracks[sample.track]
        let duration = Int64(t.sampleDuration) * Int64(sample.count)
        let dts = nextDecode[sample.track] ?? t.firstDecodeTime + t.negativeCompositionOffset
        nextDecode[sample.track] = dts + duration
        guard let order = sample.pictureOrder else {
            let pts = dts - t.negativeCompositionOffset + t.firstCompositionOffset
            return out + [TimedSample(sample: sample, pts: pts, dts: dts, duration: duration)]
        }
        var s = video[sample.track] ?? Sequence()
        if sample.startsSequence && !(s.counts.isEmpty && s.held.isEmpty) {
            out += settle(&s, all: true, track: sample.track)
            s.shownBefore += Int64(s.counts.count)
            s.counts = []
        }
        s.counts.insert(order, at: Self.lowerBound(s.counts, order))
        s.held.append((sample, dts))
        if s.held.count > Self.reorderWindow { out += settle(&s, all: false, track: sample.track) }
        video[sample.track] = s
        return out
    }

    /// The walk stepped over damaged bytes and resumes at `keyframe` (docs/design/repair.md, "Damage"): the pictures
    /// held back are settled as at a cut; the time the damaged bytes stood for is their size over the recording's
    /// bytes per second so far, in whole frames, moved to the reference's keyframe interval where it has a fixed one
    /// (a camera's GOP: the keyframe lands on its grid), and it is decoded as many pictures before that as the
    /// reference's keyframes lead (``ReferenceModel/Track/keyLead``); every other track resumes at the keyframe's
    /// decode time, on its own sample grid, never before where it stopped.
    private mutating func resume(at keyframe: RecoveredSample) -> [TimedSample] {
        var out: [TimedSample] = []
        var placed: [Int: Int64] = [:]
        for track in video.keys.sorted() {
            guard var s = video[track] else { continue }
            out += settle(&s, all: true, track: track, atCut: true)
            s.shownBefore += Int64(s.counts.count)
            s.counts = []
            video[track] = s
            placed[track] = s.shownBefore
        }
        let track = keyframe.track
        let t = model.tracks[track]
        let duration = Int64(max(1, t.sampleDuration))
        let scale = Double(max(1, t.timescale))
        // Pictures so far: those placed in display order, or as many as were decoded (no reordering).
        let start = t.firstDecodeTime + t.negativeCompositionOffset
        let shown = placed[track] ?? ((nextDecode[track] ?? start) - start) / duration
        let seconds = Double(shown * duration) / scale
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
        nextDecode[track] = start + decoded * duration
        let resumeSeconds = Double(start + decoded * duration) / scale
        for (i, other) in model.tracks.enumerated() where i != track {
            guard let current = nextDecode[i] else { continue }
            let unit = Int64(max(1, other.sampleDuration))
            let ticks = resumeSeconds * Double(other.timescale) - Double(other.firstDecodeTime)
            nextDecode[i] = max(current, other.firstDecodeTime + Int64((ticks / Double(unit)).rounded()) * unit)
        }
        return out
    }

    /// The pictures still held back, with their times (at the end of the walk).
    package mutating func finish() -> [TimedSample] {
        var out: [TimedSample] = []
        for track in video.keys.sorted() {
            guard var s = video[track] else { continue }
            out += settle(&s, all: true, track: track, atCut: true)
            video[track] = s
        }
        return out
    }

    /// Gives the held pictures their times: all of them, or the oldest one. `atCut`: the walk ended, maybe inside
    /// the sequence, so pictures shown before the last ones read may be missing (they lay past the cut): a picture is
    /// then given at least the place its order count says — its distance from the sequence's first count in steps
    /// of the counts' common step (x264 counts in 2s, x265 in 1s) — so the pictures before the cut keep their times.
    private func settle(_ s: inout Sequence, all: Bool, track: Int, atCut: Bool = false) -> [TimedSample] {
        let t = model.tracks[track]
        let duration = Int64(t.sampleDuration)
        let firstShown = t.firstDecodeTime + t.firstCompositionOffset
        let count = all ? s.held.count : 1
        let lowest = s.counts.first ?? 0
        func gcd(_ a: Int64, _ b: Int64) -> Int64 { b == 0 ? a : gcd(b, a % b) }
        let step = atCut ? max(1, s.counts.reduce(0) { gcd($0, $1 - lowest) }) : 1
        let settled = s.held.prefix(count).map { held -> TimedSample in
            var rank = Int64(Self.lowerBound(s.counts, held.sample.pictureOrder ?? 0))
            if atCut, let order = held.sample.pictureOrder { rank = max(rank, (order - lowest) / step) }
            let pts = firstShown + (s.shownBefore + rank) * duration
            return TimedSample(sample: held.sample, pts: pts, dts: held.dts, duration: duration)
        }
        s.held.removeFirst(count)
        return settled
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
