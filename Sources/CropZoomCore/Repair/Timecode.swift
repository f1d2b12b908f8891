/// A QuickTime timecode track (`tmcd`, QuickTime File Format "Timecode Sample Description"): a camera's or editor's
/// clock for the recording, one 4-byte sample — the frame number of the first frame — read with the sample entry's
/// rate. A repaired recording gets its own timecode from its own sample, not the reference's.
package struct Timecode: Equatable, Sendable {
    /// Frames in a second of the timecode (`numberOfFrames`: 30 for 29.97 as for 30).
    package var framesPerSecond: Int
    /// Drop-frame counting (flag 0x1): frame numbers 0 and 1 (0–3 at 60) skipped each minute but every tenth.
    package var dropFrame: Bool

    /// Reads a `tmcd` sample entry's payload (after the 8-byte box header): 6 reserved bytes, the data reference
    /// index, 4 reserved, the flags, the time scale, the frame duration, the number of frames.
    package init?(sampleEntry payload: ArraySlice<UInt8>) {
        let p = Array(payload)
        guard p.count >= 25 else { return nil }
        func u32(_ i: Int) -> UInt32 { p[i..<i + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        let flags = u32(12)
        let frames = Int(p[24])
        guard frames > 0 else { return nil }
        framesPerSecond = frames
        dropFrame = flags & 1 != 0
    }

    package init(framesPerSecond: Int, dropFrame: Bool) {
        self.framesPerSecond = framesPerSecond
        self.dropFrame = dropFrame
    }

    /// `HH:MM:SS:FF` (`;` before the frames with drop-frame counting) of the 4-byte big-endian frame number `sample`
    /// (as FFmpeg's `av_timecode_make_string` writes it); nil when it is not 4 bytes.
    package func string(sample: [UInt8]) -> String? {
        guard sample.count == 4 else { return nil }
        var n = Int(sample.reduce(0) { $0 << 8 | UInt32($1) })
        let fps = framesPerSecond
        if dropFrame && fps % 30 == 0 {
            // Frame numbers skipped: 2 per minute at 30 (4 at 60), except every tenth minute (SMPTE 12M).
            let drop = fps / 15
            let perTenMinutes = fps * 600 - drop * 9
            let d = n / perTenMinutes
            let m = n % perTenMinutes
            n += 9 * drop * d + drop * ((m - drop) / (perTenMinutes / 10))
        }
        let ff = n % fps
        let ss = n / fps % 60
        let mm = n / (fps * 60) % 60
        let hh = n / (fps * 3600) % 24
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(two(hh)):\(two(mm)):\(two(ss))\(dropFrame ? ";" : ":")\(two(ff))"
    }
}
