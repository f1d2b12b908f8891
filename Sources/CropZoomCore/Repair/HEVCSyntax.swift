/// The HEVC syntax `cropzoom repair` reads to tell a video sample from other bytes (ITU-T H.265, 7.3): the parameter
/// sets' fields a slice segment header depends on, the header's first fields, and picture order counts (8.3.1).
package enum HEVCSyntax {
    /// A sequence parameter set's fields (7.3.2.2.1).
    package struct SPS: Equatable, Sendable {
        package var id: UInt32
        package var maxSubLayers: Int
        package var separateColourPlane: Bool
        package var width: Int
        package var height: Int
        package var log2MaxPocLsb: Int
    }

    /// A picture parameter set's first fields (7.3.2.3.1).
    package struct PPS: Equatable, Sendable {
        package var id: UInt32
        package var spsID: UInt32
        package var dependentSliceSegments: Bool
        package var outputFlagPresent: Bool
        package var extraSliceHeaderBits: Int
    }

    /// A picture's first slice segment header, up to its picture order count (7.3.6.1).
    package struct SliceHeader: Equatable, Sendable {
        package var nalType: UInt8
        package var temporalID: UInt8
        package var ppsID: UInt32
        package var sliceType: UInt32
        package var pocLsb: UInt32
        /// An IRAP picture (BLA, IDR, CRA): a decoder can start here.
        package var isKey: Bool { (16...23).contains(nalType) }
        /// IDR or BLA: picture order counts start again.
        package var restartsOrder: Bool { (16...20).contains(nalType) }
        /// RASL, RADL, or a sub-layer non-reference picture: not a `prevTid0Pic` (8.3.1).
        package var isDiscardable: Bool { (6...9).contains(nalType) || (nalType < 16 && nalType % 2 == 0) }
    }

    /// The NAL unit type of a NAL's first byte, and the temporal id (plus one) and layer of its two header bytes.
    package static func nalType(_ first: UInt8) -> UInt8 { first >> 1 & 0x3F }

    /// Parses an SPS NAL unit (with its two header bytes).
    package static func sps(_ nal: some Collection<UInt8>) -> SPS? {
        var r = BitReader(rbspOf: nal.dropFirst(2), limit: 512)
        do throws(BitstreamEnd) {
            try r.skip(4)
            let maxSubLayersMinus1 = Int(try r.bits(3))
            try r.skip(1)
            try skipProfileTierLevel(&r, maxSubLayersMinus1: maxSubLayersMinus1)
            let id = try r.ue()
            guard id < 16 else { return nil }
            let chroma = try r.ue()
            guard chroma <= 3 else { return nil }
            let separate = chroma == 3 ? try r.flag() : false
            let width = Int(try r.ue())
            let height = Int(try r.ue())
            if try r.flag() { for _ in 0..<4 { _ = try r.ue() } }
            _ = try r.ue()
            _ = try r.ue()
            let log2MaxPocLsb = Int(try r.ue()) + 4
            guard log2MaxPocLsb <= 16, width > 0, height > 0 else { return nil }
            return SPS(
                id: id, maxSubLayers: maxSubLayersMinus1 + 1, separateColourPlane: separate, width: width,
                height: height, log2MaxPocLsb: log2MaxPocLsb)
        } catch {
            return nil
        }
    }

    /// profile_tier_level(1, maxSubLayersMinus1) (7.3.3).
    private static func skipProfileTierLevel(_ r: inout BitReader, maxSubLayersMinus1: Int) throws(BitstreamEnd) {
        try r.skip(96)
        var profilePresent: [Bool] = []
        var levelPresent: [Bool] = []
        for _ in 0..<maxSubLayersMinus1 {
            profilePresent.append(try r.flag())
            levelPresent.append(try r.flag())
        }
        if maxSubLayersMinus1 > 0 { try r.skip(2 * (8 - maxSubLayersMinus1)) }
        for i in 0..<maxSubLayersMinus1 {
            if profilePresent[i] { try r.skip(88) }
            if levelPresent[i] { try r.skip(8) }
        }
    }

    /// Parses a PPS NAL unit (with its two header bytes).
    package static func pps(_ nal: some Collection<UInt8>) -> PPS? {
        var r = BitReader(rbspOf: nal.dropFirst(2), limit: 64)
        do throws(BitstreamEnd) {
            let id = try r.ue()
            let spsID = try r.ue()
            guard id < 64, spsID < 16 else { return nil }
            return PPS(
                id: id, spsID: spsID, dependentSliceSegments: try r.flag(), outputFlagPresent: try r.flag(),
                extraSliceHeaderBits: Int(try r.bits(3)))
        } catch {
            return nil
        }
    }

    /// Whether a sample (length-prefixed NAL units, `nalLengthSize` bytes of length) holds a Dolby Vision RPU (NAL
    /// type 62, unspecified in H.265, after the picture's slices): an HDR recording from a phone in Dolby Vision mode.
    package static func carriesDolbyVision(_ sample: some Collection<UInt8>, nalLengthSize: Int) -> Bool {
        var i = sample.startIndex
        while sample.distance(from: i, to: sample.endIndex) > nalLengthSize {
            var length = 0
            for _ in 0..<nalLengthSize {
                length = length << 8 | Int(sample[i])
                i = sample.index(after: i)
            }
            if nalType(sample[i]) == 62 { return true }
            guard length > 0, sample.distance(from: i, to: sample.endIndex) >= length else { return false }
            i = sample.index(i, offsetBy: length)
        }
        return false
    }

    /// Whether a coded slice segment NAL unit (with its header) starts a picture (`first_slice_segment_in_pic_flag`).
    package static func startsPicture(_ nal: some Collection<UInt8>) -> Bool {
        nal.dropFirst(2).first.map { $0 & 0x80 != 0 } ?? false
    }

    /// Parses the header of a picture's first slice segment (VCL NAL types 0–9 and 16–21, with its two header bytes)
    /// with the parameter sets it names; nil when it cannot be one.
    package static func sliceHeader(
        _ nal: some Collection<UInt8>, sps: Slots<SPS>, pps: Slots<PPS>
    ) -> SliceHeader? {
        let header = Array(nal.prefix(2))
        guard header.count == 2, header[0] & 0x80 == 0 else { return nil }
        let type = nalType(header[0])
        let layer = (header[0] & 1) << 5 | header[1] >> 3
        let tidPlus1 = header[1] & 7
        guard (0...9).contains(type) || (16...21).contains(type), layer == 0, tidPlus1 > 0 else { return nil }
        var r = BitReader(rbspOf: nal.dropFirst(2), limit: 48)
        do throws(BitstreamEnd) {
            guard try r.flag() else { return nil }
            if (16...23).contains(type) { try r.skip(1) }
            let ppsID = try r.ue()
            guard let p = pps[ppsID], let s = sps[p.spsID], Int(tidPlus1) <= s.maxSubLayers else { return nil }
            try r.skip(p.extraSliceHeaderBits)
            let sliceType = try r.ue()
            guard sliceType <= 2 else { return nil }
            // An IRAP picture has only I slices (7.4.7.1).
            if (16...23).contains(type) && sliceType != 2 { return nil }
            if p.outputFlagPresent { try r.skip(1) }
            if s.separateColourPlane { try r.skip(2) }
            let lsb = type == 19 || type == 20 ? 0 : try r.bits(s.log2MaxPocLsb)
            return SliceHeader(nalType: type, temporalID: tidPlus1 - 1, ppsID: ppsID, sliceType: sliceType, pocLsb: lsb)
        } catch {
            return nil
        }
    }

    /// Picture order counts (8.3.1): the most significant part follows the previous `prevTid0Pic`'s (TemporalId 0,
    /// not RASL, RADL or a sub-layer non-reference picture); IDR and BLA pictures, and the first picture, start at 0.
    package struct PictureOrder: Sendable {
        private var previousMsb: Int64 = 0
        private var previousLsb: Int64 = 0
        private var started = false

        package init() {}

        package mutating func count(_ slice: SliceHeader, log2MaxPocLsb: Int) -> Int64 {
            let maxLsb = Int64(1) << Int64(log2MaxPocLsb)
            let lsb = Int64(slice.pocLsb)
            var msb: Int64
            if slice.restartsOrder || (!started && slice.isKey) {
                msb = 0
            } else {
                msb = previousMsb
                if lsb < previousLsb && previousLsb - lsb >= maxLsb / 2 {
                    msb += maxLsb
                } else if lsb > previousLsb && lsb - previousLsb > maxLsb / 2 {
                    msb -= maxLsb
                }
            }
            started = true
            if slice.temporalID == 0 && !slice.isDiscardable {
                previousMsb = msb
                previousLsb = lsb
            }
            return msb + lsb
        }
    }

    /// An `hvcC` box's payload (HEVCDecoderConfigurationRecord, ISO/IEC 14496-15 8.3.3.1): the NAL length size and
    /// the parameter sets — none where a writer of `hev1` carries them only in the stream (the walk reads them from the
    /// recording's keyframes, ``HEVCRecogniser``).
    package struct DecoderConfiguration: Sendable {
        package var nalLengthSize: Int
        package var sps: Slots<SPS> = [:]
        package var pps: Slots<PPS> = [:]
        /// The sample entry declares Dolby Vision (`dvcC`/`dvvC`/`dvwC` beside `hvcC`): a phone's HDR video, whose
        /// every picture carries an RPU (``carriesDolbyVision(_:nalLengthSize:)``).
        package var dolbyVision = false

        package init?(hvcC p: ArraySlice<UInt8>) {
            guard p.count >= 23, p[p.startIndex] == 1 else { return nil }
            nalLengthSize = Int(p[p.startIndex + 21] & 3) + 1
            guard nalLengthSize != 3 else { return nil }
            var i = p.startIndex + 23
            for _ in 0..<Int(p[p.startIndex + 22]) {
                guard p.endIndex - i >= 3 else { return nil }
                let type = p[i] & 0x3F
                let count = Int(ISOBoxes.Reader.u16(p, i + 1))
                i += 3
                for _ in 0..<count {
                    guard p.endIndex - i >= 2 else { return nil }
                    let n = Int(ISOBoxes.Reader.u16(p, i))
                    guard p.endIndex - i - 2 >= n else { return nil }
                    let nal = p[(i + 2)..<(i + 2 + n)]
                    if type == 33, let s = HEVCSyntax.sps(nal) { sps[s.id] = s }
                    if type == 34, let q = HEVCSyntax.pps(nal) { pps[q.id] = q }
                    i += 2 + n
                }
            }
        }
    }
}
