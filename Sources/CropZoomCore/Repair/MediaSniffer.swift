/// What the first bytes of a broken file's media data look like, for the line that says why nothing in them matched
/// the reference: a chain of NAL units with 4-byte lengths (as MP4/MOV writers store H.264 and HEVC) whose headers
/// are valid H.264 ones or valid HEVC ones from the start on — with the picture size, where a sequence parameter set
/// is among them — or zeros. Nothing is claimed from fewer than two NAL units, or where both codecs accept as many.
package enum MediaSniffer {
    /// What the bytes look like.
    package enum Guess: Equatable, Sendable {
        /// Pictures of a codec ("H.264", "HEVC"), with their coded size when a sequence parameter set says it.
        case pictures(codec: String, size: String?)
        /// Zero bytes (space a writer reserved and never filled).
        case zeros
    }

    /// NAL units looked at, at most.
    static let units = 16

    /// The guess for `bytes` (the start of the media data), nil when they look like neither. The first offset (within
    /// ``searched`` bytes) where a run of NAL units starts is taken: a writer may put a sound frame first.
    package static func guess(_ bytes: [UInt8]) -> Guess? {
        if bytes.count >= 64 && bytes.prefix(4096).allSatisfy({ $0 == 0 }) { return .zeros }
        for start in 0..<min(searched, max(0, bytes.count - 6)) {
            if let found = pictures(bytes, at: start) { return found }
        }
        return nil
    }

    /// Bytes from the start of the media data where a run of NAL units is looked for.
    static let searched = 1 << 16

    /// Pictures whose NAL units run from `start`, if both codecs do not accept as many of them.
    static func pictures(_ bytes: [UInt8], at start: Int) -> Guess? {
        var nals: [ArraySlice<UInt8>] = []
        var at = start
        while nals.count < units, at + 6 <= bytes.count {
            let length = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            // Whole units only: a length that merely fits past the end would let noise pass.
            guard length >= 2, at + 4 + length <= bytes.count else { break }
            let nal = bytes[(at + 4)..<(at + 4 + length)]
            guard validH264(nal[nal.startIndex]) || validHEVC(nal[nal.startIndex], nal[nal.startIndex + 1]) else {
                break
            }
            nals.append(nal)
            at += 4 + length
        }
        guard nals.count >= 2 else { return nil }
        // The run of NAL units from the start that each codec accepts: a sample's units, then whatever follows it
        // (another track's sample ends the run).
        let h264 = nals.prefix { validH264($0[$0.startIndex]) }
        let hevc = nals.prefix { validHEVC($0[$0.startIndex], $0[$0.startIndex + 1]) }
        if h264.count >= 2 && h264.count > hevc.count {
            let sps = h264.lazy.filter { H264Syntax.nalType($0[$0.startIndex]) == 7 }.compactMap(H264Syntax.sps).first
            return .pictures(
                codec: "H.264",
                size: sps.map { "\($0.width ?? $0.widthInMbs * 16)x\($0.height ?? $0.heightInMapUnits * 16)" })
        }
        if hevc.count >= 2 && hevc.count > h264.count {
            let sps = hevc.lazy.filter { HEVCSyntax.nalType($0[$0.startIndex]) == 33 }.compactMap(HEVCSyntax.sps).first
            return .pictures(codec: "HEVC", size: sps.map { "\($0.width)x\($0.height)" })
        }
        return nil
    }

    /// The guess in words, for an error line: "its media data holds HEVC pictures (1920x1080)".
    package static func describe(_ bytes: [UInt8]) -> String? {
        switch guess(bytes) {
        case .pictures(let codec, let size)?: "its media data holds \(codec) pictures" + (size.map { " (\($0))" } ?? "")
        case .zeros?: "its media data starts with zeros (space the writer reserved and never filled)"
        case nil: nil
        }
    }

    /// An H.264 NAL header (7.3.1) a writer puts in a sample: a slice, an IDR slice, SEI, SPS, PPS, an access unit
    /// delimiter or filler, with a `nal_ref_idc` its type allows.
    static func validH264(_ header: UInt8) -> Bool {
        let type = H264Syntax.nalType(header)
        let referenced = header >> 5 & 3 != 0
        guard header & 0x80 == 0 else { return false }
        switch type {
        case 1: return true
        case 5, 7, 8: return referenced
        case 6, 9, 12: return !referenced
        default: return false
        }
    }

    /// An HEVC NAL header (7.3.1.2): a defined type (slices 0–9 and 16–21, parameter sets, delimiters, SEI 32–40),
    /// layer 0, a temporal id.
    static func validHEVC(_ first: UInt8, _ second: UInt8) -> Bool {
        let type = HEVCSyntax.nalType(first)
        guard first & 0x81 == 0, second >> 3 == 0, second & 7 != 0 else { return false }
        return type <= 9 || (16...21).contains(type) || (32...40).contains(type)
    }
}
