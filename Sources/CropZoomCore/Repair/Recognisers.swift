/// What the bytes at an offset of a broken file's media data are, for one track.
package enum Recognised: Equatable, Sendable {
    /// A whole sample of `size` bytes; `key`: a decoder can start there.
    case sample(size: Int, key: Bool)
    /// A sample that starts here but runs past the end of the file (the cut one): `bytes` are left.
    case cut(bytes: Int)
    /// Not this track's sample.
    case none
}

/// Finds an audio frame's length by decoding (`CropZoomFFmpeg.AACFrameProbe`: FFmpeg's decoder opened with the
/// reference's configuration).
package protocol AudioFrameProbe: AnyObject {
    /// The most bytes one frame can take (the window handed to ``frameLength(_:)``).
    var longestFrame: Int { get }
    /// The length of the frame `bytes` start with, when one whole frame of the reference's format does; nil when
    /// none does.
    func frameLength(_ bytes: [UInt8]) -> Int?
    /// The lengths of the consecutive frames `bytes` start with, as far as one pass tells (may be fewer than the
    /// frames there, or none: ``frameLength(_:)`` then decides).
    func frameLengths(_ bytes: [UInt8]) -> [Int]
    /// Whether ``frameLengths(_:)`` saves work over a ``frameLength(_:)`` a frame (one decode for several frames);
    /// where a frame is cheap to read alone, the walk hands over one frame's bytes at a time.
    var readsAhead: Bool { get }
}

/// A recogniser's look at the bytes before its probe: where a sample may open (its first NAL unit's length and header
/// as the recogniser requires them), so that a search through hundreds of places asks the probe at few.
package protocol SampleOpenings {
    /// Whether a sample may open at `bytes[i...]`: false where the recogniser reads none there.
    func mightOpen(_ bytes: Span<UInt8>, at i: Int) -> Bool
}

extension SampleOpenings {
    /// The first index of `bytes` — `step` apart from `first` through `last` — where ``mightOpen(_:at:)``; nil where
    /// there is none.
    package func firstOpening(_ bytes: Span<UInt8>, from first: Int, through last: Int, step: Int) -> Int? {
        var i = first
        while i <= last {
            if mightOpen(bytes, at: i) { return i }
            i += step
        }
        return nil
    }
}

/// Recognises H.264 samples as MP4 stores them (length-prefixed NAL units, ISO/IEC 14496-15): a chain of NAL units
/// whose lengths fit, whose headers are allowed, whose first coded slice starts a picture with a parameter set the
/// reference (or the stream itself) defined, ending where the next access unit starts (H.264 7.4.1.2.3-4). A sample
/// is accepted only where frame_num continues the previous picture's (7.4.3), or at an IDR picture: audio or
/// metadata bytes that happen to look like a NAL chain do not continue a picture sequence.
package struct H264Recogniser: Sendable, SampleOpenings {
    package let lengthSize: Int
    package private(set) var sps: Slots<H264Syntax.SPS>
    package private(set) var pps: Slots<H264Syntax.PPS>
    /// A sample larger than this is not taken (8 times the reference's largest, at least 4 MiB).
    package let largestSample: Int
    /// The most a NAL length's first byte can be with the length within ``largestSample`` (``mightOpen(_:at:)``
    /// turns most bytes away by it).
    private let firstByteBound: UInt8
    /// The frame_num of the last reference picture accepted (nil before the first IDR).
    package private(set) var previousReferenceFrameNum: UInt32?
    private var order = H264Syntax.PictureOrder()

    package init(_ config: H264Syntax.DecoderConfiguration, largestSample: Int) {
        lengthSize = config.nalLengthSize
        sps = config.sps
        pps = config.pps
        self.largestSample = max(4 << 20, 8 * largestSample)
        firstByteBound = UInt8(min(255, self.largestSample >> (8 * (lengthSize - 1))))
    }

    /// What ``recognise(at:in:end:)`` found: the answer, the sample's first slice, and where the sample carries
    /// parameter sets, the sets as they stand after it (the reference's, and the sample's).
    package struct Found: Sendable {
        package var answer: Recognised
        package var slice: H264Syntax.SliceHeader?
        /// Nil where the sample carries none (most pictures: nothing copied or retained for them).
        package var inBand: (sps: Slots<H264Syntax.SPS>, pps: Slots<H264Syntax.PPS>)?
    }

    /// Whether a sample may open at `bytes[i...]`: its first NAL unit's length and header pass the checks
    /// ``recognise(at:in:end:)`` makes of a first NAL unit before it reads a slice header (a length that fits, the
    /// forbidden bit clear, a type a sample may open with). False means that reads none there; true, that it may.
    package func mightOpen(_ bytes: Span<UInt8>, at i: Int) -> Bool {
        guard i >= 0, i + lengthSize < bytes.count, bytes[unchecked: i] <= firstByteBound else { return false }
        let length = Self.nalLength(bytes, at: i, size: lengthSize)
        let header = bytes[unchecked: i + lengthSize]
        guard length > 0, header & 0x80 == 0, lengthSize + length <= largestSample else { return false }
        switch H264Syntax.nalType(header) {
        case 1, 5, 6, 7, 8, 9, 12...19: return true
        default: return false
        }
    }

    /// The big-endian NAL length of `size` bytes (1, 2 or 4) at `bytes[i]`, which the caller has checked it holds
    /// (one load where the size is 4).
    @inline(__always)
    static func nalLength(_ bytes: Span<UInt8>, at i: Int, size: Int) -> Int {
        var length = 0
        switch size {
        case 4: for k in 0..<4 { length = length << 8 | Int(bytes[unchecked: i + k]) }
        case 2: length = Int(bytes[unchecked: i]) << 8 | Int(bytes[unchecked: i + 1])
        default: length = Int(bytes[unchecked: i])
        }
        return length
    }

    /// Reads the sample that may start at `offset` in `window`, up to `end` (where the media data ends). Does not
    /// change the state: ``accept(_:)`` does, once the walk takes the sample.
    package func recognise(at offset: Int64, in window: ByteWindow, end: Int64) throws(CropZoomError) -> Found {
        let none = Found(answer: .none, slice: nil, inBand: nil)
        var position = offset
        var first: H264Syntax.SliceHeader?
        var inBand: (sps: Slots<H264Syntax.SPS>, pps: Slots<H264Syntax.PPS>)?
        var nalCount = 0
        while position < end {
            guard let length = try window.number(at: position, width: lengthSize), end - position >= Int64(lengthSize)
            else { break }
            let header = try window.number(at: position + Int64(lengthSize), width: 1).map { UInt8($0) }
            guard length > 0, let header, header & 0x80 == 0 else {
                if first == nil { return none }
                break
            }
            let type = H264Syntax.nalType(header)
            let nalEnd = position + Int64(lengthSize) + Int64(length)
            var ends = false
            // The first coded slice, once this NAL unit is taken.
            var opening: H264Syntax.SliceHeader?
            switch type {
            case 1, 5:
                // Its first bytes, read where the window holds them.
                let parsed = try window.withBytes(at: position + Int64(lengthSize), count: min(Int(length), 64)) {
                    if let inBand {
                        H264Syntax.sliceHeader($0, sps: inBand.sps, pps: inBand.pps)
                    } else {
                        H264Syntax.sliceHeader($0, sps: sps, pps: pps)
                    }
                }
                guard let slice = parsed else {
                    if first == nil { return none }
                    ends = true
                    break
                }
                if let first {
                    if slice.startsNewPicture(after: first) { ends = true }
                } else {
                    guard slice.firstMbInSlice == 0 else { return none }
                    opening = slice
                }
            case 6, 7, 8, 9, 13, 14, 15, 16, 17, 18:
                // After a coded slice these start the next access unit; an AUD only opens one.
                if first != nil {
                    ends = true
                } else if type == 9 && nalCount > 0 {
                    return none
                } else if type == 7 || type == 8 {
                    let nal = try window.bytes(at: position + Int64(lengthSize), count: min(Int(length), 4096))
                    var sets = inBand ?? (sps, pps)
                    if type == 7, let s = H264Syntax.sps(nal) { sets.sps[s.id] = s }
                    if type == 8, let p = H264Syntax.pps(nal) { sets.pps[p.id] = p }
                    inBand = sets
                }
            case 10, 11, 12, 19:
                if first == nil && type != 12 && type != 19 { return none }
            default:
                if first == nil { return none }
                ends = true
            }
            if ends { break }
            if nalEnd - offset > Int64(largestSample) {
                // Larger than any sample: not this track's (the first NAL unit), or the bytes after the sample.
                if nalCount == 0 { return none }
                break
            }
            if nalEnd > end {
                // This NAL unit runs past the end: the sample is the one the cut went through.
                guard let slice = first ?? opening else { return none }
                return Found(answer: .cut(bytes: Int(end - offset)), slice: slice, inBand: inBand)
            }
            if let opening { first = opening }
            position = nalEnd
            nalCount += 1
        }
        guard let first, position > offset else { return none }
        return Found(
            answer: .sample(size: Int(position - offset), key: first.isIDR), slice: first, inBand: inBand)
    }

    /// Whether a picture whose first slice is `slice` continues the pictures accepted so far: an IDR picture always
    /// does; another needs a previous reference picture whose frame_num it equals or follows.
    package func continues(_ slice: H264Syntax.SliceHeader) -> Bool {
        if slice.isIDR { return true }
        guard let previous = previousReferenceFrameNum, let p = pps[slice.ppsID], let s = sps[p.spsID] else {
            return false
        }
        return H264Syntax.frameNum(slice.frameNum, follows: previous, maxFrameNum: s.maxFrameNum)
    }

    /// Whether the walk takes a picture whose first slice is `slice`: any before the first picture (one before the
    /// first keyframe is then skipped), else one that ``continues(_:)`` the stream.
    package func takes(_ slice: H264Syntax.SliceHeader) -> Bool {
        previousReferenceFrameNum == nil || continues(slice)
    }

    /// Takes the sample `found` as the stream's latest picture, and the parameter sets it carried (a camera that
    /// repeats them before each keyframe). Returns the picture's order count where its SPS says pictures may be
    /// shown in another order than decoded (types 0 and 1); nil where they are shown as decoded (type 2).
    @discardableResult
    package mutating func accept(_ found: Found) -> Int64? {
        guard let slice = found.slice else { return nil }
        if slice.isReference { previousReferenceFrameNum = slice.frameNum }
        if let inBand = found.inBand { (sps, pps) = inBand }
        guard let p = pps[slice.ppsID], let s = sps[p.spsID] else { return nil }
        return order.count(slice, sps: s)
    }
}

/// Recognises HEVC samples as MP4 stores them (length-prefixed NAL units): a chain of NAL units whose lengths fit and
/// whose two-byte headers are allowed (layer 0, a temporal id), whose first slice segment starts a picture
/// (`first_slice_segment_in_pic_flag`) with a parameter set the reference defines, ending where the next access unit
/// starts (H.265 7.4.2.4.4). HEVC has no frame_num: a picture continues the stream when its order count lies within
/// ``orderReach`` of the previous picture's, or it is an IRAP picture.
package struct HEVCRecogniser: Sendable, SampleOpenings {
    package let lengthSize: Int
    package private(set) var sps: Slots<HEVCSyntax.SPS>
    package private(set) var pps: Slots<HEVCSyntax.PPS>
    package let largestSample: Int
    private let firstByteBound: UInt8
    /// The order count of the last picture accepted (nil before the first).
    package private(set) var previousOrder: Int64?
    private var order = HEVCSyntax.PictureOrder()
    /// How far a picture's order count may lie from the previous picture's (a GOP's reordering, several times over).
    package static let orderReach: Int64 = 64

    package init(_ config: HEVCSyntax.DecoderConfiguration, largestSample: Int) {
        lengthSize = config.nalLengthSize
        sps = config.sps
        pps = config.pps
        self.largestSample = max(4 << 20, 8 * largestSample)
        firstByteBound = UInt8(min(255, self.largestSample >> (8 * (lengthSize - 1))))
    }

    /// What ``recognise(at:in:end:)`` found, and where the sample carries parameter sets, the sets as they stand
    /// after it (the reference's, and the sample's); nil where it carries none.
    package struct Found: Sendable {
        package var answer: Recognised
        package var slice: HEVCSyntax.SliceHeader?
        package var inBand: (sps: Slots<HEVCSyntax.SPS>, pps: Slots<HEVCSyntax.PPS>)?
    }

    /// Whether a sample may open at `bytes[i...]`: its first NAL unit's length and two-byte header pass the checks
    /// ``recognise(at:in:end:)`` makes of a first NAL unit before it reads a slice header. False means that reads
    /// none there; true, that it may.
    package func mightOpen(_ bytes: Span<UInt8>, at i: Int) -> Bool {
        guard i >= 0, i + lengthSize + 1 < bytes.count, bytes[unchecked: i] <= firstByteBound else { return false }
        let length = H264Recogniser.nalLength(bytes, at: i, size: lengthSize)
        let header = UInt16(bytes[unchecked: i + lengthSize]) << 8 | UInt16(bytes[unchecked: i + lengthSize + 1])
        guard length >= 2, header & 0x8000 == 0, header & 7 != 0, lengthSize + length <= largestSample else {
            return false
        }
        switch HEVCSyntax.nalType(UInt8(header >> 8)) {
        case 0...9, 16...21, 32, 33, 34, 35, 38, 39, 41...44, 48...55: return true
        default: return false
        }
    }

    /// Reads the sample that may start at `offset`, up to `end`; does not change the state.
    package func recognise(at offset: Int64, in window: ByteWindow, end: Int64) throws(CropZoomError) -> Found {
        let none = Found(answer: .none, slice: nil, inBand: nil)
        var position = offset
        var first: HEVCSyntax.SliceHeader?
        var inBand: (sps: Slots<HEVCSyntax.SPS>, pps: Slots<HEVCSyntax.PPS>)?
        var nalCount = 0
        while position < end {
            guard let length = try window.number(at: position, width: lengthSize), end - position >= Int64(lengthSize)
            else { break }
            let header = try window.number(at: position + Int64(lengthSize), width: 2).map { UInt16($0) }
            guard length >= 2, let header, header & 0x8000 == 0, header & 7 != 0 else {
                if first == nil { return none }
                break
            }
            let type = HEVCSyntax.nalType(UInt8(header >> 8))
            let nalEnd = position + Int64(lengthSize) + Int64(length)
            var ends = false
            var opening: HEVCSyntax.SliceHeader?
            switch type {
            case 0...9, 16...21:
                // Its first bytes, read where the window holds them.
                let at = position + Int64(lengthSize)
                let count = min(Int(length), 64)
                if first != nil {
                    if try window.withBytes(at: at, count: count, HEVCSyntax.startsPicture) { ends = true }
                } else {
                    let parsed = try window.withBytes(at: at, count: count) {
                        if let inBand {
                            HEVCSyntax.sliceHeader($0, sps: inBand.sps, pps: inBand.pps)
                        } else {
                            HEVCSyntax.sliceHeader($0, sps: sps, pps: pps)
                        }
                    }
                    guard let slice = parsed else { return none }
                    opening = slice
                }
            case 32, 33, 34, 35, 39, 41...44, 48...55:
                // After a slice these start the next access unit; an access unit delimiter only opens one.
                if first != nil {
                    ends = true
                } else if type == 35 && nalCount > 0 {
                    return none
                } else if type == 33 || type == 34 {
                    // A camera's parameter sets before its keyframe (`hev1`): what the slices after them use.
                    let nal = try window.bytes(at: position + Int64(lengthSize), count: min(Int(length), 4096))
                    var sets = inBand ?? (sps, pps)
                    if type == 33, let s = HEVCSyntax.sps(nal) { sets.sps[s.id] = s }
                    if type == 34, let p = HEVCSyntax.pps(nal) { sets.pps[p.id] = p }
                    inBand = sets
                }
            case 36, 37, 38, 40, 45...47, 56...63:
                // End of sequence or bitstream, filler, suffix SEI, reserved and unspecified types that do not open
                // an access unit (H.265 7.4.2.4.4): a Dolby Vision RPU (type 62) ends a picture's sample.
                if first == nil && type != 38 { return none }
            default:
                if first == nil { return none }
                ends = true
            }
            if ends { break }
            if nalEnd - offset > Int64(largestSample) {
                if nalCount == 0 { return none }
                break
            }
            if nalEnd > end {
                guard let slice = first ?? opening else { return none }
                return Found(answer: .cut(bytes: Int(end - offset)), slice: slice, inBand: inBand)
            }
            if let opening { first = opening }
            position = nalEnd
            nalCount += 1
        }
        guard let first, position > offset else { return none }
        return Found(
            answer: .sample(size: Int(position - offset), key: first.isKey), slice: first, inBand: inBand)
    }

    /// The order count `slice`'s picture would get, without taking it.
    private func orderCount(_ slice: HEVCSyntax.SliceHeader) -> Int64? {
        guard let p = pps[slice.ppsID], let s = sps[p.spsID] else { return nil }
        var copy = order
        return copy.count(slice, log2MaxPocLsb: s.log2MaxPocLsb)
    }

    /// Whether a picture whose first slice segment is `slice` continues the pictures accepted so far: an IRAP picture
    /// always does; another needs an order count near the previous picture's.
    package func continues(_ slice: HEVCSyntax.SliceHeader) -> Bool {
        if slice.isKey { return true }
        guard let previous = previousOrder, let count = orderCount(slice) else { return false }
        return abs(count - previous) <= Self.orderReach
    }

    /// Whether the walk takes the picture: any before the first picture, else one that continues the stream.
    package func takes(_ slice: HEVCSyntax.SliceHeader) -> Bool { previousOrder == nil || continues(slice) }

    /// Takes the picture, and the parameter sets it carried; returns its order count.
    @discardableResult
    package mutating func accept(_ found: Found) -> Int64? {
        guard let slice = found.slice else { return nil }
        if let inBand = found.inBand { (sps, pps) = inBand }
        guard let p = pps[slice.ppsID], let s = sps[p.spsID] else { return nil }
        let count = order.count(slice, log2MaxPocLsb: s.log2MaxPocLsb)
        previousOrder = count
        return count
    }
}

/// A video track's recogniser, whatever its codec: what the walk asks at an offset.
package enum VideoRecogniser: Sendable {
    case h264(H264Recogniser)
    case hevc(HEVCRecogniser)

    /// What starts at an offset, as the walk needs it.
    package struct Probe: Sendable {
        package var answer: Recognised
        /// The walk may take it here (the stream's first picture, or one that continues it).
        package var takes: Bool
        /// It continues the pictures taken so far.
        package var continues: Bool
        /// Picture order counts start again with it (H.264 IDR; HEVC IDR, BLA).
        package var startsSequence: Bool
        fileprivate var found: Found

        fileprivate enum Found: Sendable {
            case h264(H264Recogniser.Found)
            case hevc(HEVCRecogniser.Found)
        }
    }

    package func probe(at offset: Int64, in window: ByteWindow, end: Int64) throws(CropZoomError) -> Probe {
        switch self {
        case .h264(let r):
            let found = try r.recognise(at: offset, in: window, end: end)
            let slice = found.slice
            return Probe(
                answer: found.answer, takes: slice.map(r.takes) ?? false, continues: slice.map(r.continues) ?? false,
                startsSequence: slice?.isIDR ?? false, found: .h264(found))
        case .hevc(let r):
            let found = try r.recognise(at: offset, in: window, end: end)
            let slice = found.slice
            return Probe(
                answer: found.answer, takes: slice.map(r.takes) ?? false, continues: slice.map(r.continues) ?? false,
                startsSequence: slice?.restartsOrder ?? false, found: .hevc(found))
        }
    }

    /// The first index of `bytes` — `step` apart from `first` through `last` — where a sample may open (the
    /// recogniser's `mightOpen`: its first NAL unit's length and header); nil where there is none. The loop runs in
    /// the recogniser's own type: a run of sound is hundreds of indices.
    package func firstOpening(_ bytes: Span<UInt8>, from first: Int, through last: Int, step: Int)
        -> Int?
    {
        switch self {
        case .h264(let r): r.firstOpening(bytes, from: first, through: last, step: step)
        case .hevc(let r): r.firstOpening(bytes, from: first, through: last, step: step)
        }
    }

    /// Whether `bytes[i...]` may start a keyframe's sample: a NAL length that fits and a first NAL unit that opens a
    /// keyframe's access unit (H.264: an access unit delimiter, parameter set, SEI or IDR slice; HEVC: the same, or
    /// an IRAP slice). A quick look before ``probe(at:in:end:)``, for the walk's search past damaged bytes.
    package func mightStartKeyframe(_ bytes: [UInt8], at i: Int) -> Bool { mightStart(bytes, at: i, keyframe: true) }

    /// Whether `bytes[i...]` may start a picture's sample: as ``mightStartKeyframe(_:at:)``, with any slice.
    package func mightStartPicture(_ bytes: [UInt8], at i: Int) -> Bool { mightStart(bytes, at: i, keyframe: false) }

    private func mightStart(_ bytes: [UInt8], at i: Int, keyframe: Bool) -> Bool {
        let (lengthSize, largest) =
            switch self {
            case .h264(let r): (r.lengthSize, r.largestSample)
            case .hevc(let r): (r.lengthSize, r.largestSample)
            }
        guard i + lengthSize + 2 <= bytes.count else { return false }
        var length = 0
        for k in 0..<lengthSize { length = length << 8 | Int(bytes[i + k]) }
        let h0 = bytes[i + lengthSize]
        let h1 = bytes[i + lengthSize + 1]
        guard length >= 2, length <= largest else { return false }
        switch self {
        case .h264:
            guard h0 & 0x80 == 0 else { return false }
            let type = h0 & 0x1F
            return [5, 6, 7, 8, 9].contains(type) || (!keyframe && type == 1)
        case .hevc:
            // Forbidden bit and layer id 0; a temporal id (plus one) of at least 1.
            guard h0 & 0x81 == 0, h1 & 0xF8 == 0, h1 & 7 != 0 else { return false }
            let type = h0 >> 1 & 0x3F
            return (16...21).contains(type) || [32, 33, 34, 35, 39].contains(type) || (!keyframe && type <= 9)
        }
    }

    /// A picture a decoder cannot show when it starts at the keyframe before it (HEVC's RASL pictures, which refer
    /// to pictures before their CRA): skipped after the walk resumed past damaged bytes.
    package func leansOnEarlierPictures(_ probe: Probe) -> Bool {
        if case .hevc(let found) = probe.found, let type = found.slice?.nalType { return type == 8 || type == 9 }
        return false
    }

    /// Whether the parameter sets `probe`'s sample carries (in the stream, before its slices) give a picture size
    /// other than this track's sets of the same id: the sample is another track's (a motion photo's still).
    package func changesSize(_ probe: Probe) -> Bool {
        switch (self, probe.found) {
        case (.h264(let r), .h264(let found)):
            return found.inBand?.sps.contains { id, s in
                r.sps[id].map { $0.widthInMbs != s.widthInMbs || $0.heightInMapUnits != s.heightInMapUnits } ?? false
            } ?? false
        case (.hevc(let r), .hevc(let found)):
            return found.inBand?.sps.contains { id, s in
                r.sps[id].map { $0.width != s.width || $0.height != s.height } ?? false
            } ?? false
        default: return false
        }
    }

    /// Takes the probed picture; its order count where pictures may be reordered.
    @discardableResult
    package mutating func accept(_ probe: Probe) -> Int64? {
        // The recogniser moved out of `self` and back (a copy would retain its parameter sets, every picture).
        switch consume self {
        case .h264(var r):
            var order: Int64?
            if case .h264(let found) = probe.found { order = r.accept(found) }
            self = .h264(r)
            return order
        case .hevc(var r):
            var order: Int64?
            if case .hevc(let found) = probe.found { order = r.accept(found) }
            self = .hevc(r)
            return order
        }
    }
}

/// Finds an AAC frame's length by reading its syntax (``AACSyntax``: a raw data block's elements, its Huffman-coded
/// sections, scale factors and spectral data, up to its END element), without decoding it: what the walk asks for
/// each sound frame of an AAC-LC (or HE-AAC) track whose configuration the reader takes.
package final class AACSyntaxProbe: AudioFrameProbe {
    package let config: AACSyntax.Config
    package let longestFrame: Int

    /// The probe for a track of `config`; `channels`: its channel count (a frame holds at most 6144 bits of each).
    package init(_ config: AACSyntax.Config, channels: Int) {
        self.config = config
        longestFrame = 768 * max(1, channels)
    }

    package func frameLength(_ bytes: [UInt8]) -> Int? { AACSyntax.frameLength(bytes, config: config) }

    /// A frame's syntax reads in microseconds: copying sixteen frames' bytes for each run would cost more.
    package var readsAhead: Bool { false }

    /// Frame after frame, as long as each one reads.
    package func frameLengths(_ bytes: [UInt8]) -> [Int] {
        AACSyntax.frameLengths(bytes, config: config, limit: MediaWalker.framesAhead)
    }
}
