/// The one place recovered samples get their times (the repair's counterpart of a container's timestamps; from the
/// packets on, the remux writes them as they are). Each track starts where the reference's writer started it — its
/// edit list's delay and media start (``ReferenceModel/Track/firstDecodeTime``: an AAC track's priming, an empty
/// edit) — so the tracks line up as that writer lines up every recording; each sample lasts the reference's sample
/// duration (a video frame's, an audio frame's samples). Times are in the track's time scale.
package struct RecoveredTiming: Sendable {
    private var next: [Int: Int64] = [:]
    private let model: ReferenceModel

    package init(model: ReferenceModel) { self.model = model }

    /// The presentation and decode time and the duration of the next sample of `track`, in file order.
    package mutating func times(forNextOf track: Int) -> (pts: Int64, dts: Int64, duration: Int64) {
        let t = model.tracks[track]
        let dts = next[track] ?? t.firstDecodeTime
        let duration = Int64(t.sampleDuration)
        next[track] = dts + duration
        return (dts, dts, duration)
    }

    /// Where each track's recovered samples end (track time scale), for the tracks that had any.
    package var ends: [Int: Int64] { next }
}
