// The pure parts of `cropzoom repair` (issue 31): the bit reader and RBSP, box headers and sample tables, the H.264
// rules the walk relies on. The end-to-end tests (RepairTests) run them on real recordings.

import Testing

@testable import CropZoomCore

@Suite("Repair: boxes and bitstreams")
struct RepairSyntaxTests {
    @Test("Exp-Golomb codes: ue(v) 1, 010, 011, 00100 are 0, 1, 2, 3; se(v) maps 1, 2, 3, 4 to 1, -1, 2, -2")
    func expGolomb() throws {
        // 1 010 011 00100 | 010 011 00100 00101 (se: 1, -1, 2, -2), padded with ones.
        var r = BitReader([0b1010_0110, 0b0100_0100, 0b1100_1000, 0b0101_1111])
        #expect(try r.ue() == 0)
        #expect(try r.ue() == 1)
        #expect(try r.ue() == 2)
        #expect(try r.ue() == 3)
        #expect(try r.se() == 1)
        #expect(try r.se() == -1)
        #expect(try r.se() == 2)
        #expect(try r.se() == -2)
        #expect(r.bitsLeft == 4)
        #expect(throws: BitstreamEnd.self) { try r.bits(5) }
    }

    @Test(
        """
        the bit reader's 64-bit reads against a bit-at-a-time model: u(n), ue(v) (codes of 0 to 31 leading zeros), \
        se(v), the end of the bits, payloads held inline (64 bytes or fewer) and in an array
        """)
    func wordReads() throws {
        // A bit-at-a-time reader: what the reader must agree with.
        struct Model {
            let bytes: [UInt8]
            var position = 0
            mutating func bit() -> UInt64? {
                guard position < bytes.count * 8 else { return nil }
                defer { position += 1 }
                return UInt64(bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1)
            }
            mutating func bits(_ n: Int) -> UInt32? {
                guard n <= bytes.count * 8 - position else { return nil }
                var v: UInt64 = 0
                for _ in 0..<n { v = v << 1 | bit()! }
                return UInt32(v)
            }
            mutating func ue() -> UInt32? {
                var zeros = 0
                while true {
                    guard let b = bit() else { return nil }
                    if b == 1 { break }
                    zeros += 1
                    if zeros > 31 { return nil }
                }
                guard let rest = bits(zeros) else { return nil }
                return UInt32((UInt64(1) << zeros) - 1 + UInt64(rest))
            }
        }
        var rng = SystemRandomNumberGenerator()
        var reads = 0
        for length in [1, 5, 63, 64, 65, 200] {
            for round in 0..<60 {
                // Sparse ones (long codes, up to 31 zeros and past) in some rounds, dense in others.
                let sparse = round % 3 == 0
                let bytes = (0..<length).map { _ in
                    sparse
                        ? (UInt8.random(in: 0...40, using: &rng) == 0 ? UInt8.random(in: 1...255) : 0)
                        : UInt8.random(in: 0...255)
                }
                var reader = BitReader(bytes)
                var model = Model(bytes: bytes)
                while true {
                    let kind = Int.random(in: 0..<3, using: &rng)
                    let n = Int.random(in: 0...32, using: &rng)
                    let expected: Int64? =
                        switch kind {
                        case 0: model.bits(n).map(Int64.init)
                        case 1: model.ue().map(Int64.init)
                        default: model.ue().map { Int64($0 % 2 == 1 ? (Int64($0) + 1) / 2 : -(Int64($0) / 2)) }
                        }
                    let got: Int64? =
                        switch kind {
                        case 0: try? Int64(reader.bits(n))
                        case 1: try? Int64(reader.ue())
                        default: try? Int64(reader.se())
                        }
                    #expect(got == expected, "length \(length), read \(kind) (\(n)) at bit \(model.position)")
                    guard let expected, got == expected else { break }
                    #expect(reader.position == model.position)
                    reads += 1
                }
            }
        }
        #expect(reads > 1000)
        // Codes of 25 to 31 leading zeros at every bit of a byte (after `shift` codes of one bit), their values' bits
        // random: the longest run past what one 64-bit read holds.
        for zeros in 25...31 {
            for shift in 0..<8 {
                let value = UInt64.random(in: 0..<(UInt64(1) << zeros), using: &rng)
                var bits = [Bool](repeating: true, count: shift) + [Bool](repeating: false, count: zeros) + [true]
                bits += (0..<zeros).reversed().map { value >> UInt64($0) & 1 == 1 }
                bits += [Bool](repeating: true, count: (8 - bits.count % 8) % 8 + 8)
                let bytes = stride(from: 0, to: bits.count, by: 8).map { i in
                    bits[i..<i + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
                }
                var reader = BitReader(bytes)
                for _ in 0..<shift { #expect(try reader.ue() == 0) }
                #expect(try reader.ue() == UInt32((UInt64(1) << zeros) - 1 + value), "\(zeros) zeros after \(shift)")
                #expect(reader.position == shift + 2 * zeros + 1)
            }
        }
        // The longest codes: 31 zeros then 32 bits; 32 zeros is none.
        var long = BitReader([0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFE])
        #expect(try long.ue() == UInt32.max - 1)
        var tooLong = BitReader([0, 0, 0, 0, 0x80, 0, 0, 0, 0])
        #expect(throws: BitstreamEnd.self) { try tooLong.ue() }
        // A payload read without its emulation-prevention bytes, inline, as rbsp(_:limit:) gives it.
        let nal: [UInt8] = [0x41, 0, 0, 3, 1, 0xA5, 0, 0, 3, 0, 0x80] + [UInt8](repeating: 0x5A, count: 70)
        let payload: [UInt8] = [0, 0, 1, 0xA5, 0, 0, 0, 0x80] + [UInt8](repeating: 0x5A, count: 70)
        for limit in [1, 3, 8, 48, 64, 65, 512] {
            // Packed at once (contiguous bytes), and a byte at a time (a collection without contiguous storage).
            for var reader in [
                BitReader(rbspOf: nal.dropFirst(), limit: limit), BitReader(rbspOf: nal.lazy.dropFirst(), limit: limit),
            ] {
                var read: [UInt8] = []
                while reader.bitsLeft >= 8 { read.append(UInt8(try reader.bits(8))) }
                #expect(read == Array(payload.prefix(limit)) && reader.bitsLeft == 0, "limit \(limit)")
            }
        }
    }

    @Test(
        """
        the repair's line: tracks alike not recovered counted once (100 subtitle tracks), bytes between pictures named \
        as the data tracks' samples where the reference has data tracks and no sound
        """)
    func reportLineGroupsTracks() {
        let video = RepairReport.Track(
            index: 0, type: "video", codec: "h264", samples: 101, keyframes: 1, seconds: 10.1, recovered: true)
        let subtitles = (1...100).map {
            RepairReport.Track(
                index: $0, type: "data", codec: "mov_text", samples: 0, keyframes: 0, seconds: 0, recovered: false)
        }
        let stepped = RepairReport.Track(
            index: 101, type: "data", codec: "mebx", samples: 3, keyframes: 0, seconds: 0, recovered: false)
        var gap = RepairGap(offset: 28_100, bytes: 25_600, reason: "unmatched")
        gap.runs = 9
        let report = RepairReport(
            input: "in.mp4", reference: "good.mp4", output: "out.mp4", tracks: [video] + subtitles + [stepped],
            gaps: [gap], skippedBeforeKeyframe: 0, mediaBytes: 60_000, recoveredBytes: 34_000, audioStartOffset: nil,
            seconds: 0.1)
        #expect(
            report.found
                == "101 video frames (10.10 s), not recovered: 100 data tracks (mov_text), data (mebx, stepped over), "
                + "bytes between the pictures stepped over (25.6 kB in 9 runs from 28.1 kB: the samples of its data "
                + "tracks (mov_text), or sound the reference has no track for?)", "\(report.found)")
        let plain = RepairReport(
            input: "in.mp4", reference: "good.mp4", output: "out.mp4", tracks: [video], gaps: [gap],
            skippedBeforeKeyframe: 0, mediaBytes: 60_000, recoveredBytes: 34_000, audioStartOffset: nil, seconds: 0.1)
        #expect(plain.found.hasSuffix("the recording's sound? the reference has no sound track to read it with)"))
    }

    @Test("Dolby Vision: an RPU (NAL type 62) anywhere in a sample is found; other types, a cut length are not")
    func dolbyVisionRPU() {
        // A TRAIL_R slice (type 1: 0x02 0x01), then an RPU (type 62: 0x7C 0x01), four-byte lengths.
        let slice: [UInt8] = [0, 0, 0, 3, 0x02, 0x01, 0xAF]
        let rpu: [UInt8] = [0, 0, 0, 4, 0x7C, 0x01, 0x19, 0x08]
        #expect(HEVCSyntax.carriesDolbyVision(slice + rpu, nalLengthSize: 4))
        #expect(!HEVCSyntax.carriesDolbyVision(slice, nalLengthSize: 4))
        #expect(!HEVCSyntax.carriesDolbyVision(slice + [0, 0, 0, 4, 0x7E, 0x01, 0, 0], nalLengthSize: 4))
        // A length that runs past the sample ends the walk before the RPU.
        #expect(!HEVCSyntax.carriesDolbyVision([0, 0, 0, 20, 0x02, 0x01, 0xAF] + rpu, nalLengthSize: 4))
        #expect(HEVCSyntax.carriesDolbyVision([0, 3, 0x02, 0x01, 0xAF, 0, 2, 0x7C, 0x01], nalLengthSize: 2))
    }

    @Test("RBSP: an emulation-prevention byte (00 00 03) is removed, other bytes kept, the limit honoured")
    func rbsp() {
        #expect(BitReader.rbsp([0x67, 0, 0, 3, 1, 0, 3, 0, 0, 3]) == [0x67, 0, 0, 1, 0, 3, 0, 0])
        #expect(BitReader.rbsp([1, 2, 3, 4, 5], limit: 3) == [1, 2, 3])
        // A slice of a NAL unit (copied at once when no emulation-prevention byte lies within the limit), a byte
        // removed within the limit, one past it; and a collection without contiguous storage.
        let nal: [UInt8] = [0x41, 0, 0, 3, 1, 7]
        #expect(BitReader.rbsp(nal.dropFirst(), limit: 2) == [0, 0])
        #expect(BitReader.rbsp(nal.dropFirst(), limit: 3) == [0, 0, 1])
        #expect(BitReader.rbsp(nal.dropFirst()) == [0, 0, 1, 7])
        #expect(BitReader.rbsp(nal.lazy.map { $0 }, limit: 4) == [0x41, 0, 0, 1])
    }

    @Test("frame_num continuity: the same or the next (wrapping at MaxFrameNum), nothing else")
    func frameNumContinuity() {
        #expect(H264Syntax.frameNum(3, follows: 3, maxFrameNum: 16))
        #expect(H264Syntax.frameNum(4, follows: 3, maxFrameNum: 16))
        #expect(H264Syntax.frameNum(0, follows: 15, maxFrameNum: 16))
        #expect(!H264Syntax.frameNum(5, follows: 3, maxFrameNum: 16))
        #expect(!H264Syntax.frameNum(2, follows: 3, maxFrameNum: 16))
        #expect(!H264Syntax.frameNum(16, follows: 15, maxFrameNum: 16))
    }

    @Test(
        """
        picture order counts of type 1 (8.2.1.2): expected from frame_num through the SPS's cycle of reference \
        steps (across frame_num's wrap), a non-reference picture's offset, the slice's delta; fields; an IDR restarts
        """)
    func pictureOrderTypeOne() {
        var sps = H264Syntax.SPS(
            id: 0, profile: 100, log2MaxFrameNum: 4, pocType: 1, frameMbsOnly: false, widthInMbs: 40,
            heightInMapUnits: 23)
        sps.offsetForNonRefPic = -1
        sps.offsetForTopToBottomField = 1
        sps.offsetsForRefFrame = [2, 4]
        func slice(_ frameNum: UInt32, reference: Bool = true, idr: Bool = false, delta: Int64 = 0)
            -> H264Syntax.SliceHeader
        {
            var h = H264Syntax.SliceHeader(
                nalType: idr ? 5 : 1, nalRefIdc: reference ? 2 : 0, firstMbInSlice: 0, sliceType: idr ? 7 : 5,
                ppsID: 0, frameNum: frameNum)
            h.deltaPoc0 = delta
            return h
        }
        var order = H264Syntax.PictureOrder()
        // IDR: 0. Reference frames 1…15 then 0, 1 after the wrap (16): absolute 1, 2, … → steps 2, 4, 2, 4 …
        #expect(order.count(slice(0, idr: true), sps: sps) == 0)
        #expect(order.count(slice(1), sps: sps) == 2)
        #expect(order.count(slice(2), sps: sps) == 6)
        // A non-reference picture after frame 2 (frame_num 3, absolute 2): expected 6, less one, and its delta.
        #expect(order.count(slice(3, reference: false, delta: -2), sps: sps) == 3)
        for n in 3...15 { _ = order.count(slice(UInt32(n)), sps: sps) }
        // frame_num wraps to 0: absolute 16 (7 whole cycles of 6, then 2 + 4 = 48), then 17 (8 cycles, then 2).
        #expect(order.count(slice(0), sps: sps) == 48)
        #expect(order.count(slice(1), sps: sps) == 50)
        // A frame's count is the least of its fields' (the bottom field one later here, or earlier with a delta):
        // absolute 18 expects 54; the bottom field 54 + 1 - 3.
        var frame = slice(2)
        frame.deltaPoc1 = -3
        #expect(order.count(frame, sps: sps) == 52)
        // A bottom field alone: the top-to-bottom offset added (54 + 1).
        var bottom = slice(2)
        bottom.fieldPic = true
        bottom.bottomField = true
        #expect(order.count(bottom, sps: sps) == 55)
        #expect(order.count(slice(0, idr: true, delta: 4), sps: sps) == 4)
        // Type 2 pictures are shown as decoded: no count.
        sps.pocType = 2
        #expect(order.count(slice(1), sps: sps) == nil)
    }

    /// A box of `type` around `payload` (32-bit size, or 64-bit when `wide`).
    static func box(_ type: String, _ payload: [UInt8], wide: Bool = false) -> [UInt8] {
        let size = payload.count + (wide ? 16 : 8)
        let type = Array(type.utf8)
        if wide { return [0, 0, 0, 1] + type + be(UInt64(size), 8) + payload }
        return be(UInt64(size), 4) + type + payload
    }

    static func be(_ v: UInt64, _ width: Int) -> [UInt8] { (0..<width).reversed().map { UInt8(v >> (8 * $0) & 0xFF) } }

    @Test(
        """
        top-level boxes: 32- and 64-bit sizes; the walk stops at a box that runs past the end (a cut mdat) and at a \
        size-0 box (to the end); bytes that are no box end it
        """)
    func topLevel() throws {
        let file =
            Self.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0]) + Self.box("free", [])
            + Self.box("mdat", [UInt8](repeating: 7, count: 20), wide: true) + Self.box("moov", [1, 2, 3])
        var boxes = try ISOBoxes.topLevel(ByteWindow(MemoryBytes(file)))
        #expect(boxes.map(\.type) == ["ftyp", "free", "mdat", "moov"])
        #expect(boxes[2].headerSize == 16 && boxes[2].declaredSize == 36 && boxes[2].payloadOffset == 40)
        // Cut inside the mdat: it is the last box, ending past the file.
        let cut = Array(file.prefix(40))
        boxes = try ISOBoxes.topLevel(ByteWindow(MemoryBytes(cut)))
        #expect(boxes.map(\.type) == ["ftyp", "free", "mdat"] && boxes[2].end(in: 40) == 60)
        // Size 0: to the end of the file.
        var zero = file
        zero.replaceSubrange(16..<20, with: [0, 0, 0, 0])
        boxes = try ISOBoxes.topLevel(ByteWindow(MemoryBytes(zero)))
        #expect(boxes.map(\.type) == ["ftyp", "free"] && boxes[1].declaredSize == nil)
        #expect(boxes[1].end(in: Int64(zero.count)) == Int64(zero.count))
        // A size below a header's: not a box.
        #expect(try ISOBoxes.topLevel(ByteWindow(MemoryBytes([0, 0, 0, 5] + Array("ftyp".utf8)))).isEmpty)
    }

    @Test(
        """
        sample tables: offsets from stsc runs over stco chunks and stsz sizes, the chunks, the last sample's end; \
        durations from stts; elst
        """)
    func sampleTables() throws {
        func full(_ body: [UInt8]) -> [UInt8] { [0, 0, 0, 0] + body }
        let u32 = { (v: UInt32) in Self.be(UInt64(v), 4) }
        // 5 samples: chunks at 100 (2 samples, then a run of 1 sample per chunk from chunk 2) at 200 and 300 and 400.
        let stbl = Self.box(
            "stbl",
            Self.box("stsd", full(u32(1) + Self.box("avc1", [])))
                + Self.box("stts", full(u32(2) + u32(4) + u32(512) + u32(1) + u32(256)))
                + Self.box("stsz", full(u32(0) + u32(5) + u32(10) + u32(20) + u32(30) + u32(40) + u32(50)))
                + Self.box("stsc", full(u32(2) + u32(1) + u32(2) + u32(1) + u32(2) + u32(1) + u32(1)))
                + Self.box("stco", full(u32(4) + u32(100) + u32(200) + u32(300) + u32(400))))
        let mdhd = Self.box("mdhd", full([UInt8](repeating: 0, count: 8) + u32(15360) + u32(2304) + [0, 0, 0, 0]))
        let hdlr = Self.box("hdlr", full(u32(0) + Array("vide".utf8) + [UInt8](repeating: 0, count: 13)))
        let elst = Self.box("elst", full(u32(1) + u32(1000) + u32(1024) + [0, 1, 0, 0]))
        let trak = Self.box(
            "trak", Self.box("edts", elst) + Self.box("mdia", mdhd + hdlr + Self.box("minf", stbl)))
        let movie = MovieTables(moov: trak[...])
        let t = try #require(movie.tracks.first)
        #expect(t.handler == "vide" && t.timescale == 15360 && t.sampleEntry == "avc1")
        #expect(t.sampleOffsets() == [100, 110, 200, 300, 400])
        // The chunks, and where the last sample ends (a reference whose index points past its end is refused by it).
        #expect(t.chunks().map(\.offset) == [100, 200, 300, 400] && t.chunks().map(\.samples) == [2, 1, 1, 1])
        #expect(t.lastSampleEnd() == 450)
        var fewer = t
        fewer.chunkOffsets = [100, 200]
        #expect(fewer.lastSampleEnd() == 230, "the last sample the chunks place: the third, at 200, 30 bytes")
        var none = t
        none.chunkOffsets = []
        #expect(none.lastSampleEnd() == nil)
        #expect(t.sampleDurations() == [512, 512, 512, 512, 256])
        #expect(t.edits.count == 1 && t.edits[0].mediaTime == 1024 && t.edits[0].segmentDuration == 1000)
    }

    @Test(
        """
        one size for every sample (stsz's sample_size, as PCM is stored: a sample per sound frame): an hour at 48 kHz \
        read without listing its 172.8 million sizes — sizes, totals, the last sample's end; stts's runs added up a \
        chunk at a time
        """)
    func oneSampleSize() throws {
        func full(_ body: [UInt8]) -> [UInt8] { [0, 0, 0, 0] + body }
        let u32 = { (v: UInt32) in Self.be(UInt64(v), 4) }
        let hour: UInt32 = 172_800_000
        // Chunks of 48,000 frames of 4 bytes (16-bit stereo), one a second, the first at 1,000.
        let chunks: UInt32 = 3600
        let stbl = Self.box(
            "stbl",
            Self.box("stsd", full(u32(1) + Self.box("sowt", [])))
                + Self.box("stts", full(u32(1) + u32(hour) + u32(1)))
                + Self.box("stsz", full(u32(4) + u32(hour)))
                + Self.box("stsc", full(u32(1) + u32(1) + u32(48_000) + u32(1)))
                + Self.box("stco", full(u32(chunks) + (0..<chunks).flatMap { u32(1000 + $0 * 192_000) })))
        let hdlr = Self.box("hdlr", full(u32(0) + Array("soun".utf8) + [UInt8](repeating: 0, count: 13)))
        let trak = Self.box("trak", Self.box("mdia", hdlr + Self.box("minf", stbl)))
        let t = try #require(MovieTables(moov: trak[...]).tracks.first)
        #expect(t.sampleCount == Int(hour) && t.sampleSizes[123_456_789] == 4)
        #expect(t.sampleSizes.largest == 4 && t.sampleSizes.smallest == 4)
        #expect(t.sampleSizes.total(10..<48_010) == 192_000)
        #expect(t.lastSampleEnd() == 1000 + Int64(chunks) * 192_000)
        let each: SampleSizes = [3, 1, 2]
        #expect(each.total(1..<3) == 3 && each.largest == 2 + 1 && each.smallest == 1 && Array(each) == [3, 1, 2])
        #expect(SampleSizes([]).largest == nil && SampleSizes(every: 4, count: 0).largest == nil)
        // Durations: 2 of 512, 3 of 256, 1 of 1024, read 4, 1, then 5 (one past the end).
        var runs = DurationRuns([(2, 512), (3, 256), (1, 1024)])
        #expect(runs.next(4) == 2 * 512 + 2 * 256 && runs.next(1) == 256 && runs.next(5) == 1024)
        #expect(runs.next(1) == 0)
    }

    @Test("slots: values by track index or parameter set id, taken out, listed in order; no id past 255")
    func slots() {
        var s: Slots<String> = [3: "c", 1: "a"]
        #expect(s[1] == "a" && s[2] == nil && s[3] == "c" && s[40] == nil && s.filled == [1, 3])
        #expect(s.removeValue(at: 1) == "a" && s[1] == nil && s.removeValue(at: 99) == nil)
        s[UInt32(255)] = "z"
        s[UInt32(256)] = "no"
        #expect(s[UInt32(255)] == "z" && s[UInt32(256)] == nil && s.map(\.key) == [3, 255])
        #expect(!s.isEmpty)
        _ = s.removeValue(at: 3)
        s[255] = nil
        #expect(s.isEmpty && Slots<Int>().isEmpty)
    }

    @Test("timecode: a frame number as HH:MM:SS:FF, and with drop-frame counting (two numbers skipped a minute)")
    func timecode() {
        let plain = Timecode(framesPerSecond: 30, dropFrame: false)
        #expect(plain.string(sample: [0, 1, 0xA5, 0xE0]) == "01:00:00:00")
        #expect(plain.string(sample: [0, 0, 0, 59]) == "00:00:01:29")
        let drop = Timecode(framesPerSecond: 30, dropFrame: true)
        // An hour of 29.97 is 107,892 frames; minute 1 starts at ;02; minute 10 is not dropped.
        #expect(drop.string(sample: [0, 1, 0xA5, 0x74]) == "01:00:00;00")
        #expect(drop.string(sample: [0, 0, 0x07, 0x08]) == "00:01:00;02")
        #expect(drop.string(sample: [0, 0, 0x46, 0x3E]) == "00:10:00;00")
        #expect(plain.string(sample: [1, 2, 3]) == nil)
    }

    /// Bytes from hexadecimal digits.
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    /// NAL units with 4-byte lengths, as MP4 stores them.
    static func chain(_ units: [[UInt8]]) -> [UInt8] { units.flatMap { Self.be(UInt64($0.count), 4) + $0 } }

    @Test(
        """
        what a broken file's media data holds, for the error line: H.264 after a sound frame (its in-band SPS read \
        with its cropping: 640x360, not the 640x368 of its macroblocks), HEVC, zeros; nothing claimed from noise
        """)
    func mediaSniffer() throws {
        // x264's SPS and PPS for 640x360 High (from an avcC), then an IDR slice's first bytes.
        let sps = Self.hex("6764001eacb405017fcb8088000003000800000301e078b175")
        let parsed = try #require(H264Syntax.sps(sps))
        #expect(parsed.widthInMbs == 40 && parsed.heightInMapUnits == 23)
        #expect(parsed.width == 640 && parsed.height == 360)
        let aac = [0xDE, 0x02, 0x00, 0x4C] + Array("avc59.37.100".utf8) + [UInt8](repeating: 0x21, count: 40)
        let h264 = aac + Self.chain([sps, Self.hex("68ef0fcb"), [0x65, 0x88, 0x84, 0x00, 0x33, 0xFF]]) + aac
        #expect(MediaSniffer.guess(h264) == .pictures(codec: "H.264", size: "640x360"))
        #expect(MediaSniffer.describe(h264) == "its media data holds H.264 pictures (640x360)")
        // HEVC: VPS, SPS, PPS and an IDR slice's headers (layer 0, temporal id 1); H.264 reads 0x40 as type 0.
        let hevc = Self.chain([[0x40, 0x01, 0x0C], [0x42, 0x01, 0x01], [0x44, 0x01, 0xC1], [0x26, 0x01, 0xAF]])
        #expect(MediaSniffer.guess(hevc) == .pictures(codec: "HEVC", size: nil))
        #expect(MediaSniffer.guess([UInt8](repeating: 0, count: 10_000)) == .zeros)
        var rng = SystemRandomNumberGenerator()
        // Noise, many times over (a length that fits is 1 in 4,000 at 200 kB): nothing claimed.
        for _ in 0..<20 {
            let noise = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(MediaSniffer.guess(noise) == nil)
        }
        // A second unit whose length runs past the bytes is no unit (noise has such lengths often).
        let runaway = Self.chain([[0x65, 0x88, 0x84, 0x00]]) + [0x00, 0xFF, 0xFF, 0xFF, 0x65, 0x88]
        #expect(MediaSniffer.guess(runaway) == nil)
        // One NAL unit is not enough.
        #expect(MediaSniffer.guess(aac + Self.chain([sps]) + [UInt8](repeating: 0xFF, count: 40)) == nil)
    }

    @Test(
        """
        a look at the bytes before a probe (mightOpen): at every offset of noise, zero-heavy noise and H.264 samples \
        (opening with an IDR slice, an access unit delimiter, in-band parameter sets), wherever the recogniser reads a \
        sample or a cut one the look says one may open; the look turns most of the noise away
        """)
    func mightOpen() throws {
        let sps = Self.hex("6764001eacb405017fcb8088000003000800000301e078b175")
        let pps = Self.hex("68ef0fcb")
        let avcC: [UInt8] =
            [1, 0x64, 0x00, 0x1E, 0xFF, 0xE1] + Self.be(UInt64(sps.count), 2) + sps + [1]
            + Self.be(UInt64(pps.count), 2) + pps
        let recogniser = H264Recogniser(
            try #require(H264Syntax.DecoderConfiguration(avcC: avcC[...])), largestSample: 0)
        var rng = SystemRandomNumberGenerator()
        func noise(_ n: Int, zeros: Bool) -> [UInt8] {
            (0..<n).map { _ in zeros && Bool.random(using: &rng) ? 0 : UInt8.random(in: 0...255, using: &rng) }
        }
        let idr = [0x65, 0x88, 0x84, 0x00, 0x33, 0xFF] + noise(300, zeros: false)
        let samples = [Self.chain([idr]), Self.chain([[0x09, 0xF0], idr]), Self.chain([sps, pps, idr])]
        var bytes: [UInt8] = []
        for k in 0..<30 {
            bytes += noise(Int.random(in: 0...400, using: &rng), zeros: k % 2 == 0)
            bytes += samples[k % samples.count]
        }
        let window = ByteWindow(MemoryBytes(bytes))
        var read = 0
        var looked = 0
        for i in bytes.indices {
            let answer = try recogniser.recognise(at: Int64(i), in: window, end: Int64(bytes.count)).answer
            let might = recogniser.mightOpen(bytes.span, at: i)
            if answer != .none {
                #expect(might, "offset \(i): \(answer)")
                read += 1
            }
            if might { looked += 1 }
        }
        #expect(read >= 30)
        #expect(looked < bytes.count / 4, "\(looked) of \(bytes.count)")
        // The first such offset from several places, in steps of 1 and 3, as the walk looks through a run of sound.
        do {
            let b = bytes.span
            for start in stride(from: 0, to: bytes.count - 500, by: 997) {
                for step in [1, 3] {
                    let expected = stride(from: start, through: start + 500, by: step).first {
                        recogniser.mightOpen(b, at: $0)
                    }
                    let found = VideoRecogniser.h264(recogniser).firstOpening(
                        b, from: start, through: start + 500, step: step)
                    #expect(found == expected, "from \(start) by \(step)")
                    if let found { _ = try #require(found >= start && (found - start) % step == 0) }
                }
            }
        }
    }

    /// Bytes whose value is their offset's low byte, counting the reads made and the bytes they fetched.
    final class CountedBytes: ByteSource {
        let size: Int64
        var reads = 0
        var fetched = 0
        init(size: Int64) { self.size = size }
        func read(at offset: Int64, count: Int) throws(CropZoomError) -> [UInt8] {
            let n = Int(max(0, min(Int64(count), size - offset)))
            reads += 1
            fetched += n
            return (0..<n).map { UInt8(truncatingIfNeeded: offset + Int64($0)) }
        }
    }

    @Test(
        """
        the walk's window stays where the walk is: bytes within its reach are refilled from the anchor, bytes beyond it \
        read aside (the window still holding the walk's), before the anchor or with none refilled from there; every \
        read gives the file's bytes
        """)
    func windowAnchor() throws {
        let source = CountedBytes(size: 10 << 20)
        let window = ByteWindow(source, capacity: 1 << 20)
        window.anchor = 3 << 20
        #expect(try window.number(at: 3 << 20, width: 4) == 0x0001_0203)
        #expect(source.reads == 1 && window.heldBytes(at: 3 << 20, count: 100) != nil)
        // Far beyond the anchor's reach (a false NAL length in sound): read aside, 16 kB, the window kept.
        let far: Int64 = (3 << 20) + (5 << 20) + 7
        #expect(
            try window.number(at: far, width: 2) == UInt64(UInt8(far & 0xFF)) << 8 | UInt64(UInt8((far + 1) & 0xFF)))
        #expect(
            try window.bytes(at: far + 100, count: 3) == [0, 1, 2].map { UInt8(truncatingIfNeeded: far + 100 + $0) })
        #expect(source.reads == 2 && source.fetched == (1 << 20) + ByteWindow.asideBytes)
        #expect(window.heldBytes(at: 3 << 20, count: 100) != nil)
        // Past the window's end but within the anchor's reach: refilled from the anchor.
        window.anchor = (3 << 20) + 900_000
        #expect(try window.bytes(at: (3 << 20) + 1_500_000, count: 4).count == 4)
        #expect(source.reads == 3 && window.heldBytes(at: (3 << 20) + 900_000, count: 100) != nil)
        // Before the anchor, or with no anchor: refilled from the bytes asked for.
        #expect(try window.withBytes(at: 1 << 20, count: 2) { Array($0) } == [0, 1])
        #expect(source.reads == 4 && window.heldBytes(at: (3 << 20) + 900_000, count: 100) == nil)
        window.anchor = nil
        #expect(try window.number(at: far, width: 1) == UInt64(UInt8(far & 0xFF)))
        #expect(source.reads == 5 && window.heldBytes(at: far, count: 1000) != nil)
    }

    /// Bytes from a string of 0s and 1s (spaces ignored), the last byte padded with zeros.
    static func bits(_ text: String) -> [UInt8] {
        let digits = text.filter { $0 == "0" || $0 == "1" }
        var bytes: [UInt8] = []
        for (i, d) in digits.enumerated() {
            if i % 8 == 0 { bytes.append(0) }
            if d == "1" { bytes[bytes.count - 1] |= 0x80 >> UInt8(i % 8) }
        }
        return bytes
    }

    @Test(
        """
        AAC-LC whose decoded parameters are known without FFmpeg's decoder: object type 2, mono or stereo, SBR neither \
        signalled nor in the first frame's fill elements (FFmpeg's implicit HE-AAC), or its absence signalled in a \
        sync extension (as FFmpeg's encoder writes it); HE-AAC, 5.1, SBR data in the first frame, a non-frame are not
        """)
    func plainLowComplexity() throws {
        // A mono frame: an SCE of no band (ics_info with max_sfb 0), then a fill element (extension type `fill`: 4 bits,
        // padded), END, byte alignment.
        func frame(fill: String?) -> [UInt8] {
            let sce = "000 0000 01100100 0 00 0 000000 0 000"
            return Self.bits(sce + (fill.map { " 110 0001 \($0) 0000" } ?? "") + " 111")
        }
        let mono = Self.bits("00010 0011 0001 000")  // AOT 2, 48 kHz, one channel, GASpecificConfig
        let stereo = Self.bits("00010 0011 0010 000")
        let sbrAbsent = Self.bits("00010 0011 0010 000 01010110111 00101 0")  // sync extension: SBR, flag 0
        let heAAC = Self.bits("00101 0110 0010 0011 00010 000")  // AOT 5 (24 kHz core, 48 kHz), then LC
        let surround = Self.bits("00010 0011 0110 000")
        let config = try #require(AACSyntax.config(mono))
        for fill in [nil, "0001", "1101", "1110"] {
            #expect(AACSyntax.frameLength(frame(fill: fill), config: config) == frame(fill: fill).count)
        }
        #expect(mono == [0x11, 0x88] && sbrAbsent == [0x11, 0x90, 0x56, 0xE5, 0x00])
        #expect(AACSyntax.isPlainLowComplexity(mono, firstFrame: frame(fill: nil)))
        #expect(AACSyntax.isPlainLowComplexity(mono, firstFrame: frame(fill: "0001")))  // EXT_FILL_DATA
        #expect(!AACSyntax.isPlainLowComplexity(mono, firstFrame: frame(fill: "1101")))  // EXT_SBR_DATA
        #expect(!AACSyntax.isPlainLowComplexity(mono, firstFrame: frame(fill: "1110")))  // EXT_SBR_DATA_CRC
        #expect(!AACSyntax.isPlainLowComplexity(mono, firstFrame: [0xFF, 0xFF, 0xFF]))
        #expect(AACSyntax.isPlainLowComplexity(sbrAbsent, firstFrame: frame(fill: "1101")))
        #expect(AACSyntax.isPlainLowComplexity(sbrAbsent, firstFrame: []))
        #expect(!AACSyntax.isPlainLowComplexity(stereo + [0x56, 0xE5, 0x80], firstFrame: []))  // SBR signalled
        #expect(AACSyntax.config(heAAC) != nil && !AACSyntax.isPlainLowComplexity(heAAC, firstFrame: []))
        #expect(!AACSyntax.isPlainLowComplexity(surround, firstFrame: []))
    }
}
