/// The H.264 syntax `cropzoom repair` reads to tell a video sample from other bytes (ITU-T H.264, 7.3): the sequence
/// and picture parameter sets a slice header needs, and the slice header's first fields.
package enum H264Syntax {
    /// A sequence parameter set (7.3.2.1.1): the fields slice headers depend on.
    package struct SPS: Equatable, Sendable {
        package var id: UInt32
        package var profile: UInt8
        package var chromaFormat: UInt32 = 1
        package var separateColourPlane = false
        package var log2MaxFrameNum: Int
        package var pocType: UInt32
        package var log2MaxPocLsb: Int = 0
        package var deltaPicOrderAlwaysZero = false
        /// Type 1's expected counts (8.2.1.2): what a non-reference picture adds, what the bottom field adds, and
        /// each reference frame's step within the cycle.
        package var offsetForNonRefPic: Int64 = 0
        package var offsetForTopToBottomField: Int64 = 0
        package var offsetsForRefFrame: [Int64] = []
        package var frameMbsOnly: Bool
        package var widthInMbs: Int
        package var heightInMapUnits: Int
        /// The picture's size after the SPS's frame cropping (7.4.2.1.1); nil when the SPS ends before it.
        package var width: Int? = nil
        package var height: Int? = nil
        package var maxFrameNum: UInt32 { UInt32(1) << UInt32(log2MaxFrameNum) }
    }

    /// A picture parameter set's first fields (7.3.2.2).
    package struct PPS: Equatable, Sendable {
        package var id: UInt32
        package var spsID: UInt32
        package var bottomFieldPicOrderInFramePresent: Bool
    }

    /// A slice header's first fields (7.3.3), up to the picture order count.
    package struct SliceHeader: Equatable, Sendable {
        package var nalType: UInt8
        package var nalRefIdc: UInt8
        package var firstMbInSlice: UInt32
        package var sliceType: UInt32
        package var ppsID: UInt32
        package var frameNum: UInt32
        package var fieldPic = false
        package var bottomField = false
        package var idrPicID: UInt32? = nil
        package var pocLsb: UInt32? = nil
        /// Type 1's `delta_pic_order_cnt[0]` and `[1]` (0 where the stream leaves them out).
        package var deltaPoc0: Int64 = 0
        package var deltaPoc1: Int64 = 0
        package var isIDR: Bool { nalType == 5 }
        package var isReference: Bool { nalRefIdc != 0 }

        /// Whether this slice starts a new picture after `previous` (7.4.1.2.4, the fields read here).
        package func startsNewPicture(after previous: SliceHeader) -> Bool {
            firstMbInSlice == 0 || frameNum != previous.frameNum || ppsID != previous.ppsID
                || fieldPic != previous.fieldPic || bottomField != previous.bottomField
                || (nalRefIdc == 0) != (previous.nalRefIdc == 0) || isIDR != previous.isIDR
                || idrPicID != previous.idrPicID || pocLsb != previous.pocLsb || deltaPoc0 != previous.deltaPoc0
                || deltaPoc1 != previous.deltaPoc1
        }
    }

    /// Whether a picture's `frameNum` may follow a reference picture's `previous` (7.4.3, without gaps): the same
    /// (a non-reference picture, a second field) or the next, modulo `maxFrameNum`.
    package static func frameNum(_ frameNum: UInt32, follows previous: UInt32, maxFrameNum: UInt32) -> Bool {
        frameNum == previous || frameNum == (previous + 1) % maxFrameNum
    }

    /// Picture order counts (8.2.1). Type 0 (8.2.1.1): the most significant part is carried from the previous
    /// reference picture's and follows the least significant bits as they wrap. Type 1 (8.2.1.2): a count expected
    /// from frame_num (the frame's place in the SPS's cycle of reference-frame steps, a non-reference picture's
    /// offset) plus the slice's `delta_pic_order_cnt`. An IDR picture starts again at 0. (A memory management
    /// operation 5 is not read: such a stream's order restarts where the count jumps back.)
    package struct PictureOrder: Sendable {
        private var previousMsb: Int64 = 0
        private var previousLsb: Int64 = 0
        /// Type 1: the previous picture's frame_num and frame-number offset.
        private var previousFrameNum: Int64 = 0
        private var previousFrameNumOffset: Int64 = 0

        package init() {}

        /// The order count of the picture whose first slice is `slice` under `sps` (type 0 or 1; a frame's is its top
        /// field's and bottom field's least), updating the state; nil for type 2, whose pictures are shown as decoded.
        package mutating func count(_ slice: SliceHeader, sps: SPS) -> Int64? {
            switch sps.pocType {
            case 0: return count(slice, log2MaxPocLsb: sps.log2MaxPocLsb)
            case 1: return typeOne(slice, sps: sps)
            default: return nil
            }
        }

        /// 8.2.1.2.
        private mutating func typeOne(_ slice: SliceHeader, sps: SPS) -> Int64 {
            let frameNum = Int64(slice.frameNum)
            var offset: Int64 = 0
            if !slice.isIDR {
                offset = previousFrameNumOffset + (previousFrameNum > frameNum ? Int64(sps.maxFrameNum) : 0)
            }
            let cycle = Int64(sps.offsetsForRefFrame.count)
            var absolute = cycle != 0 ? offset + frameNum : 0
            if !slice.isReference && absolute > 0 { absolute -= 1 }
            var expected: Int64 = 0
            if absolute > 0 {
                let perCycle = sps.offsetsForRefFrame.reduce(0, +)
                let (cycles, within) = ((absolute - 1) / cycle, Int((absolute - 1) % cycle))
                expected = cycles * perCycle + sps.offsetsForRefFrame[...within].reduce(0, +)
            }
            if !slice.isReference { expected += sps.offsetForNonRefPic }
            previousFrameNum = frameNum
            previousFrameNumOffset = offset
            if !slice.fieldPic {
                let top = expected + slice.deltaPoc0
                return min(top, top + sps.offsetForTopToBottomField + slice.deltaPoc1)
            }
            return slice.bottomField
                ? expected + sps.offsetForTopToBottomField + slice.deltaPoc0
                : expected + slice.deltaPoc0
        }

        /// The order count of the picture whose first slice is `slice` (its SPS's `log2MaxPocLsb`), updating the
        /// state when it is a reference picture.
        package mutating func count(_ slice: SliceHeader, log2MaxPocLsb: Int) -> Int64 {
            let maxLsb = Int64(1) << Int64(log2MaxPocLsb)
            if slice.isIDR {
                previousMsb = 0
                previousLsb = 0
            }
            let lsb = Int64(slice.pocLsb ?? 0)
            var msb = previousMsb
            if lsb < previousLsb && previousLsb - lsb >= maxLsb / 2 {
                msb += maxLsb
            } else if lsb > previousLsb && lsb - previousLsb > maxLsb / 2 {
                msb -= maxLsb
            }
            if slice.isReference {
                previousMsb = msb
                previousLsb = lsb
            }
            return msb + lsb
        }
    }

    /// The NAL unit type of a NAL's first byte.
    package static func nalType(_ header: UInt8) -> UInt8 { header & 0x1F }

    /// Parses an SPS NAL unit (with its header byte).
    package static func sps(_ nal: some Collection<UInt8>) -> SPS? {
        var r = BitReader(rbspOf: nal.dropFirst(), limit: 512)
        do throws(BitstreamEnd) {
            let profile = UInt8(try r.bits(8))
            try r.skip(16)
            let id = try r.ue()
            guard id < 32 else { return nil }
            var chromaFormat: UInt32 = 1
            var separate = false
            if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
                chromaFormat = try r.ue()
                guard chromaFormat <= 3 else { return nil }
                if chromaFormat == 3 { separate = try r.flag() }
                _ = try r.ue()
                _ = try r.ue()
                try r.skip(1)
                if try r.flag() {
                    for i in 0..<(chromaFormat == 3 ? 12 : 8) where try r.flag() {
                        try skipScalingList(&r, size: i < 6 ? 16 : 64)
                    }
                }
            }
            let log2MaxFrameNum = Int(try r.ue()) + 4
            guard log2MaxFrameNum <= 16 else { return nil }
            let pocType = try r.ue()
            guard pocType <= 2 else { return nil }
            var log2MaxPocLsb = 0
            var alwaysZero = false
            var (nonReference, topToBottom, referenceSteps): (Int64, Int64, [Int64]) = (0, 0, [])
            if pocType == 0 {
                log2MaxPocLsb = Int(try r.ue()) + 4
                guard log2MaxPocLsb <= 16 else { return nil }
            } else if pocType == 1 {
                alwaysZero = try r.flag()
                nonReference = Int64(try r.se())
                topToBottom = Int64(try r.se())
                let cycle = try r.ue()
                guard cycle < 256 else { return nil }
                for _ in 0..<cycle { referenceSteps.append(Int64(try r.se())) }
            }
            _ = try r.ue()
            try r.skip(1)
            let width = Int(try r.ue()) + 1
            let height = Int(try r.ue()) + 1
            let frameMbsOnly = try r.flag()
            var sps = SPS(
                id: id, profile: profile, chromaFormat: chromaFormat, separateColourPlane: separate,
                log2MaxFrameNum: log2MaxFrameNum, pocType: pocType, log2MaxPocLsb: log2MaxPocLsb,
                deltaPicOrderAlwaysZero: alwaysZero, frameMbsOnly: frameMbsOnly, widthInMbs: width,
                heightInMapUnits: height)
            sps.offsetForNonRefPic = nonReference
            sps.offsetForTopToBottomField = topToBottom
            sps.offsetsForRefFrame = referenceSteps
            // The size after cropping, in crop units of the chroma format (Table 6-1, 7.4.2.1.1); an SPS that ends
            // before it is still read.
            let fields = frameMbsOnly ? 1 : 2
            do throws(BitstreamEnd) {
                if !frameMbsOnly { try r.skip(1) }
                try r.skip(1)
                var crop = (left: UInt32(0), right: UInt32(0), top: UInt32(0), bottom: UInt32(0))
                if try r.flag() { crop = (try r.ue(), try r.ue(), try r.ue(), try r.ue()) }
                let sampled = separate ? 0 : chromaFormat
                let unitX = sampled == 1 || sampled == 2 ? 2 : 1
                let unitY = (sampled == 1 ? 2 : 1) * fields
                sps.width = width * 16 - unitX * Int(crop.left + crop.right)
                sps.height = height * 16 * fields - unitY * Int(crop.top + crop.bottom)
            } catch {}
            return sps
        } catch {
            return nil
        }
    }

    private static func skipScalingList(_ r: inout BitReader, size: Int) throws(BitstreamEnd) {
        var last: Int32 = 8
        var next: Int32 = 8
        for _ in 0..<size {
            if next != 0 { next = (last + (try r.se()) + 256) % 256 }
            last = next == 0 ? last : next
        }
    }

    /// Parses a PPS NAL unit (with its header byte).
    package static func pps(_ nal: some Collection<UInt8>) -> PPS? {
        var r = BitReader(rbspOf: nal.dropFirst(), limit: 64)
        do throws(BitstreamEnd) {
            let id = try r.ue()
            let spsID = try r.ue()
            guard id < 256, spsID < 32 else { return nil }
            try r.skip(1)
            return PPS(id: id, spsID: spsID, bottomFieldPicOrderInFramePresent: try r.flag())
        } catch {
            return nil
        }
    }

    /// Parses a coded slice's header (NAL types 1 and 5, with the header byte) with the parameter sets it names;
    /// nil when it cannot be one (an unknown PPS, a slice type out of range, bits running out).
    package static func sliceHeader(
        _ nal: some Collection<UInt8>, sps: Slots<SPS>, pps: Slots<PPS>
    ) -> SliceHeader? {
        guard let header = nal.first else { return nil }
        let type = nalType(header)
        guard type == 1 || type == 5 else { return nil }
        var r = BitReader(rbspOf: nal.dropFirst(), limit: 48)
        do throws(BitstreamEnd) {
            let firstMb = try r.ue()
            let sliceType = try r.ue()
            guard sliceType <= 9 else { return nil }
            let ppsID = try r.ue()
            guard let p = pps[ppsID], let s = sps[p.spsID] else { return nil }
            guard firstMb < UInt32(s.widthInMbs * s.heightInMapUnits * (s.frameMbsOnly ? 1 : 2)) else { return nil }
            if s.separateColourPlane { try r.skip(2) }
            var h = SliceHeader(
                nalType: type, nalRefIdc: header >> 5 & 3, firstMbInSlice: firstMb, sliceType: sliceType,
                ppsID: ppsID, frameNum: try r.bits(s.log2MaxFrameNum))
            if !s.frameMbsOnly {
                h.fieldPic = try r.flag()
                if h.fieldPic { h.bottomField = try r.flag() }
            }
            if type == 5 {
                h.idrPicID = try r.ue()
                // An IDR picture is an I or SI picture with frame_num 0 (7.4.3).
                guard h.frameNum == 0, [2, 4, 7, 9].contains(sliceType) else { return nil }
            }
            if s.pocType == 0 { h.pocLsb = try r.bits(s.log2MaxPocLsb) }
            if s.pocType == 1 && !s.deltaPicOrderAlwaysZero {
                h.deltaPoc0 = Int64(try r.se())
                if p.bottomFieldPicOrderInFramePresent && !h.fieldPic { h.deltaPoc1 = Int64(try r.se()) }
            }
            return h
        } catch {
            return nil
        }
    }

    /// An `avcC` box's payload (AVCDecoderConfigurationRecord, ISO/IEC 14496-15 5.3.3.1): the NAL length size and
    /// the parameter sets — none where a writer of `avc3` carries them only in the stream (the walk reads them from the
    /// recording's keyframes, ``H264Recogniser``).
    package struct DecoderConfiguration: Sendable {
        package var nalLengthSize: Int
        package var sps: Slots<SPS> = [:]
        package var pps: Slots<PPS> = [:]

        package init?(avcC p: ArraySlice<UInt8>) {
            guard p.count >= 7, p[p.startIndex] == 1 else { return nil }
            nalLengthSize = Int(p[p.startIndex + 4] & 3) + 1
            guard nalLengthSize != 3 else { return nil }
            var i = p.startIndex + 5
            // Each set: a 16-bit length, then the NAL unit; `take` parses one.
            func sets(count: Int, _ take: (ArraySlice<UInt8>) -> Void) -> Bool {
                for _ in 0..<count {
                    guard p.endIndex - i >= 2 else { return false }
                    let n = Int(ISOBoxes.Reader.u16(p, i))
                    guard p.endIndex - i - 2 >= n else { return false }
                    take(p[(i + 2)..<(i + 2 + n)])
                    i += 2 + n
                }
                return true
            }
            var sps: Slots<SPS> = [:]
            var pps: Slots<PPS> = [:]
            let spsCount = Int(p[i] & 0x1F)
            i += 1
            guard sets(count: spsCount, { if let s = H264Syntax.sps($0) { sps[s.id] = s } }) else { return nil }
            guard i < p.endIndex else { return nil }
            let ppsCount = Int(p[i])
            i += 1
            guard sets(count: ppsCount, { if let q = H264Syntax.pps($0) { pps[q.id] = q } }) else { return nil }
            self.sps = sps
            self.pps = pps
        }
    }
}
