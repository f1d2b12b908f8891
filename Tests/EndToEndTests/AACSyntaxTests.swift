// AACSyntax (Sources/CropZoomCore/Repair/AACSyntax.swift), the AAC frame reader of `cropzoom repair`: the length it
// reads from each frame's syntax is the packet size ffprobe gives, for every packet of ffmpeg's own encodes (and of
// the real-world corpus's AAC tracks when ../shared/corpus is there), each read with the rest of the file after it;
// cut frames, H.264 samples, frames with a field broken, and frames made bit by bit with one value out of range are
// refused.

import CropZoomCore
import Foundation
import Testing

/// An encode with ffmpeg's native AAC encoder: a lavfi graph, output options, and the configuration it must have.
struct AACEncode: Sendable, CustomTestStringConvertible {
    var name: String
    var source: String
    var options: [String] = []
    var samplingIndex: Int
    var channels: Int
    /// A mono encode whose frames must include short windows (EIGHT_SHORT_SEQUENCE).
    var shortWindows = false
    var testDescription: String { name }

    static let noise2 =
        "anoisesrc=c=white:a=0.8:seed=1:r=48000:d=3[a];anoisesrc=c=pink:a=0.9:seed=2:r=48000:d=3[b];"
        + "[a][b]amerge=inputs=2[out0]"

    static let all: [AACEncode] = [
        AACEncode(name: "mono 48 kHz sine", source: "sine=f=440:r=48000:d=3", samplingIndex: 3, channels: 1),
        AACEncode(
            name: "mono 48 kHz tone bursts (short windows)",
            source: "aevalsrc=0.9*sin(2*PI*440*t)*gt(mod(t\\,0.5)\\,0.3):s=48000:d=3", samplingIndex: 3, channels: 1,
            shortWindows: true),
        AACEncode(
            name: "stereo 48 kHz noise, 128k", source: noise2, options: ["-b:a", "128k"], samplingIndex: 3, channels: 2),
        AACEncode(
            name: "stereo 48 kHz noise, 320k", source: noise2, options: ["-b:a", "320k"], samplingIndex: 3, channels: 2),
        AACEncode(
            name: "stereo 48 kHz noise, 320k, fast coder", source: noise2,
            options: ["-b:a", "320k", "-aac_coder", "fast"], samplingIndex: 3, channels: 2),
        AACEncode(
            name: "stereo 44.1 kHz tones and noise",
            source: "aevalsrc=sin(2*PI*440*t)|0.5*sin(2*PI*660*t)+0.3*(random(0)-0.5):s=44100:d=3", samplingIndex: 4,
            channels: 2),
        AACEncode(
            name: "mono 22.05 kHz sine, fast coder",
            source: "sine=f=1000:r=22050:d=3", options: ["-aac_coder", "fast"], samplingIndex: 7, channels: 1),
        AACEncode(
            name: "mono 8 kHz brown noise",
            source: "anoisesrc=c=brown:a=0.5:r=8000:d=3", samplingIndex: 11, channels: 1),
        AACEncode(
            name: "5.1 48 kHz",
            source: "aevalsrc=sin(2*PI*440*t)|sin(2*PI*550*t)|0.5*(random(0)-0.5)|0.3*sin(2*PI*50*t)"
                + "|(random(1)-0.5)*sin(3*t)|sin(2*PI*880*t)*gt(mod(t\\,1)\\,0.5):s=48000:d=3:c=5.1",
            samplingIndex: 3, channels: 6),
        AACEncode(
            name: "stereo 48 kHz silence", source: "anullsrc=cl=stereo:r=48000:d=2", samplingIndex: 3, channels: 2),
    ]

    /// Every sampling frequency (index 0, 96 kHz, … 12, 7.35 kHz): noise and a tone, stereo.
    static let rates: [AACEncode] = [
        96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350,
    ]
    .enumerated().map { index, rate in
        AACEncode(
            name: "stereo \(rate) Hz noise and tone",
            source: "anoisesrc=c=pink:a=0.7:r=\(rate):d=1.5[a];sine=f=300:r=\(rate):d=1.5[b];[a][b]amerge[out0]",
            samplingIndex: index, channels: 2)
    }
}

/// Frames of AAC tracks in MP4 files, as ffprobe sees them.
enum AACFrames {
    /// The AudioSpecificConfig of stream `stream` of `path` (ffprobe's hex dump of its extradata).
    static func audioSpecificConfig(_ path: String, stream: Int) throws -> [UInt8] {
        let json = try Oracle.runChecked(
            "ffprobe",
            ["-v", "error", "-select_streams", "\(stream)", "-show_streams", "-show_data", "-of", "json", path]
        ).stdout
        let report = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let streams = report?["streams"] as? [[String: Any]] ?? []
        let dump = try #require(streams.first?["extradata"] as? String, "no extradata for stream \(stream) of \(path)")
        // Lines `00000000: 1188 56e5 00                             ..V..`: the hex before the two spaces.
        var bytes: [UInt8] = []
        for line in dump.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            var hex = line[line.index(after: colon)...].drop(while: { $0 == " " })
            if let gap = hex.range(of: "  ") { hex = hex[..<gap.lowerBound] }
            let digits = Array(hex.filter { $0 != " " })
            for i in stride(from: 0, to: digits.count - 1, by: 2) {
                bytes.append(try #require(UInt8(String(digits[i...(i + 1)]), radix: 16)))
            }
        }
        return bytes
    }

    /// Where each packet of stream `stream` is in the file and its size.
    static func packets(_ path: String, stream: Int) throws -> [(position: Int, size: Int)] {
        try Oracle.packets(path, streamIndex: stream).map { (try #require($0.pos), $0.size) }
    }

    /// The packets of stream `stream` whose length `AACSyntax` does not read right, each handed the packet and
    /// everything after it in `file`; and those it reads although cut one byte short or in half.
    static func wrongLengths(
        _ file: [UInt8], packets: [(position: Int, size: Int)], config: AACSyntax.Config
    ) -> [String] {
        var wrong: [String] = []
        file.withUnsafeBytes { all in
            for (i, packet) in packets.enumerated() {
                let rest = UnsafeRawBufferPointer(rebasing: all[packet.position...])
                let length = AACSyntax.frameLength(rest, config: config)
                if length != packet.size {
                    wrong.append(
                        "packet \(i) at \(packet.position): \(packet.size) bytes, read \(String(describing: length))")
                }
                for cut in [packet.size - 1, packet.size / 2] {
                    let part = UnsafeRawBufferPointer(rebasing: all[packet.position..<(packet.position + cut)])
                    if let length = AACSyntax.frameLength(part, config: config) {
                        wrong.append("packet \(i) cut to \(cut) of \(packet.size) bytes read as \(length)")
                    }
                }
            }
        }
        return wrong
    }
}

/// Writes bits, the first most significant, for frames made by hand.
struct BitWriter {
    var bytes: [UInt8] = []
    var count = 0

    mutating func put(_ value: Int, _ bits: Int) {
        for i in (0..<bits).reversed() {
            if count % 8 == 0 { bytes.append(0) }
            bytes[count / 8] |= UInt8((value >> i) & 1) << (7 - UInt8(count % 8))
            count += 1
        }
    }

    /// A single channel element's start: its id (0), instance tag 0 and `gain` as its global gain.
    mutating func singleChannel(gain: Int = 100) {
        put(0, 3)
        put(0, 4)
        put(gain, 8)
    }

    /// The code of `index` in spectral codebook `book` (1…11), or of the scalefactor codebook (book 0).
    mutating func code(_ index: Int, book: Int) {
        if book == 0 {
            put(Int(AACTables.scalefactorCodes[index]), Int(AACTables.scalefactorBits[index]))
        } else {
            put(Int(AACTables.spectralCodes[book - 1][index]), Int(AACTables.spectralBits[book - 1][index]))
        }
    }

    /// ics_info of a long window (ONLY_LONG_SEQUENCE) with `maxSfb` bands.
    mutating func longWindow(maxSfb: Int) {
        put(0, 4)  // ics_reserved_bit, window_sequence, window_shape
        put(maxSfb, 6)
        put(0, 1)  // predictor_data_present
    }

    /// A channel stream (with its own ics_info unless `common`) of no band: global_gain, ics_info, no pulse, TNS or
    /// gain control.
    mutating func emptyStream(common: Bool = false) {
        put(100, 8)
        if !common { longWindow(maxSfb: 0) }
        put(0, 3)
    }

    /// The bytes through END and the byte alignment, and the expected length.
    mutating func end() -> (bytes: [UInt8], length: Int) {
        put(7, 3)
        return (bytes, (count + 7) / 8)
    }
}

@Suite("AAC syntax (repair's frame reader)")
struct AACSyntaxTests {
    static let mono48 = AACSyntax.Config(samplingIndex: 3, channelConfiguration: 1)

    @Test("every packet's length is read from its syntax, and a cut packet is refused", arguments: AACEncode.all)
    func everyPacket(_ encode: AACEncode) throws {
        try check(encode)
    }

    @Test("every sampling frequency's band tables", arguments: AACEncode.rates)
    func samplingFrequencies(_ encode: AACEncode) throws {
        try check(encode)
    }

    private func check(_ encode: AACEncode) throws {
        let scratch = try Scratch()
        let path = try Clip.lavfi(encode.source).audioCodec("aac").extra(encode.options).write(
            in: scratch, name: "a.m4a")
        let asc = try AACFrames.audioSpecificConfig(path, stream: 0)
        let config = try #require(AACSyntax.config(asc), "AudioSpecificConfig \(asc)")
        #expect(config == AACSyntax.Config(samplingIndex: encode.samplingIndex, channelConfiguration: encode.channels))
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let packets = try AACFrames.packets(path, stream: 0)
        #expect(packets.count > 10)
        let wrong = AACFrames.wrongLengths(file, packets: packets, config: config)
        #expect(wrong.isEmpty, "\(wrong.count) wrong of \(packets.count) packets: \(wrong.prefix(5))")
        if encode.shortWindows {
            // An SCE first (bits 0-2: 0), then its tag and global_gain: window_sequence is byte 2's top bits.
            let short = packets.filter { file[$0.position] >> 5 == 0 && file[$0.position + 2] >> 6 == 2 }
            #expect(short.count >= 5, "only \(short.count) frames of short windows")
        }
    }

    @Test("the real-world corpus's AAC tracks (MP4 and QuickTime files), when ../shared/corpus is there")
    func corpus() throws {
        guard let folder = Oracle.corpusDirectory else {
            print("corpus absent: ../shared/corpus not found — AAC corpus check not run")
            return
        }
        var tracks = 0
        for file in CorpusFile.all where [".mp4", ".mov", ".m4a"].contains(where: file.name.lowercased().hasSuffix) {
            let path = folder.appendingPathComponent(file.name).path
            guard let streams = try? Oracle.streams(path) else { continue }
            for stream in streams where stream.codecName == "aac" {
                let asc = try AACFrames.audioSpecificConfig(path, stream: stream.index)
                let config = try #require(AACSyntax.config(asc), "\(file.name) stream \(stream.index): \(asc)")
                let packets = try AACFrames.packets(path, stream: stream.index)
                let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
                let wrong = AACFrames.wrongLengths(bytes, packets: packets, config: config)
                #expect(wrong.isEmpty, "\(file.name) stream \(stream.index): \(wrong.count) wrong: \(wrong.prefix(5))")
                tracks += 1
            }
        }
        print("AAC corpus check: \(tracks) tracks")
        #expect(tracks > 0)
    }

    @Test("no H.264 sample reads as an AAC frame, whatever the channel configuration and sampling frequency")
    func videoIsNotAudio() throws {
        let scratch = try Scratch()
        let path = try Clip.video(.testsrc2, seconds: 10, size: "320x240", rate: 30).write(in: scratch, name: "v.mp4")
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let packets = try AACFrames.packets(path, stream: 0)
        #expect(packets.count == 300)
        var accepted: [String] = []
        file.withUnsafeBytes { all in
            for channels in 1...7 {
                for samplingIndex in 0...12 {
                    let config = AACSyntax.Config(samplingIndex: samplingIndex, channelConfiguration: channels)
                    for packet in packets {
                        let rest = UnsafeRawBufferPointer(rebasing: all[packet.position...])
                        if let length = AACSyntax.frameLength(rest, config: config) {
                            accepted.append(
                                "\(packet.position) as \(length) bytes (\(channels) ch, index \(samplingIndex))")
                        }
                    }
                }
            }
        }
        #expect(accepted.isEmpty, "\(accepted)")
    }

    @Test("a broken field of a real frame is refused: the reserved bit, max_sfb, the element, a section")
    func brokenFields() throws {
        let scratch = try Scratch()
        let path = try Clip.lavfi("sine=f=440:r=48000:d=3").audioCodec("aac").write(in: scratch, name: "a.m4a")
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let config = try #require(AACSyntax.config(try AACFrames.audioSpecificConfig(path, stream: 0)))
        #expect(config == Self.mono48)
        func bit(_ frame: [UInt8], _ i: Int) -> Int { Int(frame[i / 8] >> (7 - UInt8(i % 8)) & 1) }
        func bits(_ frame: [UInt8], _ i: Int, _ n: Int) -> Int { (i..<(i + n)).reduce(0) { $0 << 1 | bit(frame, $1) } }
        func set(_ frame: inout [UInt8], _ i: Int, _ n: Int, _ value: Int) {
            for k in 0..<n {
                let mask = UInt8(0x80) >> UInt8((i + k) % 8)
                if (value >> (n - 1 - k)) & 1 == 1 { frame[(i + k) / 8] |= mask } else { frame[(i + k) / 8] &= ~mask }
            }
        }
        var checked = 0
        for packet in try AACFrames.packets(path, stream: 0) {
            // The frame and the rest of the file after it.
            let frame = Array(file[packet.position...])
            // Frames that start with an SCE of a long window with bands: ID 0, tag, global_gain (bits 7-14),
            // ics_reserved_bit (15), window_sequence (16-17), window_shape, max_sfb (19-24), predictor bit (25).
            guard bits(frame, 0, 3) == 0, bits(frame, 16, 2) != 2, bits(frame, 19, 6) > 0 else { continue }
            #expect(AACSyntax.frameLength(frame, config: config) == packet.size)
            let maxSfb = bits(frame, 19, 6)
            // section_data from bit 26: codebook (4 bits), then 5-bit lengths while they are 31.
            var position = 26
            var band = 0
            var lastLength = 0
            while band < maxSfb {
                position += 4
                while true {
                    let increment = bits(frame, position, 5)
                    lastLength = position
                    position += 5
                    band += increment
                    if increment != 31 { break }
                }
            }
            #expect(band == maxSfb)
            var broken = frame
            set(&broken, 15, 1, 1)
            #expect(AACSyntax.frameLength(broken, config: config) == nil, "ics_reserved_bit set")
            broken = frame
            set(&broken, 19, 6, 50)  // 49 bands at 48 kHz
            #expect(AACSyntax.frameLength(broken, config: config) == nil, "max_sfb past the bands")
            broken = frame
            set(&broken, 0, 3, 1)
            #expect(AACSyntax.frameLength(broken, config: config) == nil, "a CPE where the layout has an SCE")
            broken = frame
            set(&broken, 26, 4, 12)
            #expect(AACSyntax.frameLength(broken, config: config) == nil, "the reserved codebook 12")
            // The last section ends at max_sfb: one more bit set in its last length makes it end past it.
            for i in lastLength..<(lastLength + 5) where bit(frame, i) == 0 {
                broken = frame
                set(&broken, i, 1, 1)
                #expect(
                    AACSyntax.frameLength(broken, config: config) == nil,
                    "the last section's length \(bits(frame, lastLength, 5)) with bit \(i - lastLength) set")
            }
            checked += 1
        }
        #expect(checked > 50)
    }

    @Test("frames made bit by bit: the exact length, and nil for one value out of range")
    func madeFrames() throws {
        let mono = Self.mono48
        func length(_ frame: [UInt8], _ config: AACSyntax.Config = Self.mono48) -> Int? {
            // Bytes that are not zero after the frame: a parser that reads on does not stop at the same place.
            AACSyntax.frameLength(frame + [UInt8](repeating: 0xA5, count: 16), config: config)
        }

        // An SCE of no band, then END: 3 + 4 + 8 + 11 + 3 + 3 bits.
        var w = BitWriter()
        w.put(0, 3)
        w.put(0, 4)
        w.emptyStream()
        var frame = w.end()
        #expect(frame.length == 4 && length(frame.bytes) == 4)
        #expect(length(frame.bytes, AACSyntax.Config(samplingIndex: 3, channelConfiguration: 2)) == nil)

        // Codebook 11 with an escape of `ones` ones (at most 8): (16, 0), its sign bit, the escape; then (0, 0).
        func escapeFrame(ones: Int) -> (bytes: [UInt8], length: Int) {
            var w = BitWriter()
            w.singleChannel()
            w.longWindow(maxSfb: 1)
            w.put(11, 4)  // sect_cb
            w.put(1, 5)  // sect_len
            w.code(60, book: 0)  // scalefactor difference 0
            w.put(0, 3)
            w.code(16 * 17, book: 11)
            w.put(1, 1)  // sign
            w.put((1 << ones) - 1, ones)
            w.put(0, 1)
            w.put(0x5A5 & ((1 << (ones + 4)) - 1), ones + 4)
            w.code(0, book: 11)
            return w.end()
        }
        for ones in [0, 3, 8] {
            frame = escapeFrame(ones: ones)
            #expect(length(frame.bytes) == frame.length, "escape of \(ones) ones")
        }
        #expect(length(escapeFrame(ones: 9).bytes) == nil, "escape of 9 ones")

        // Unsigned books' sign bits: codebook 3, (1, 2, 0, 1) and its 3 sign bits, in a band of 4 lines.
        w = BitWriter()
        w.singleChannel()
        w.longWindow(maxSfb: 1)
        w.put(3, 4)
        w.put(1, 5)
        w.code(60, book: 0)
        w.put(0, 3)
        w.code(1 * 27 + 2 * 9 + 0 * 3 + 1, book: 3)
        w.put(0b101, 3)
        frame = w.end()
        #expect(length(frame.bytes) == frame.length)

        // Noise substitution: the first band's energy in 9 bits, the second's as a scalefactor difference; no
        // spectral data.
        w = BitWriter()
        w.singleChannel()
        w.longWindow(maxSfb: 2)
        w.put(13, 4)
        w.put(2, 5)
        w.put(0b1_0110_1101, 9)
        w.code(63, book: 0)
        w.put(0, 3)
        frame = w.end()
        #expect(length(frame.bytes) == frame.length)

        // Scalefactors stay in 0…255: global_gain 255, then +1 (refused) or -1 (a band of codebook 1, one codeword).
        func gainFrame(gain: Int, difference: Int) -> (bytes: [UInt8], length: Int) {
            var w = BitWriter()
            w.put(0, 3)
            w.put(0, 4)
            w.put(gain, 8)
            w.longWindow(maxSfb: 1)
            w.put(1, 4)
            w.put(1, 5)
            w.code(60 + difference, book: 0)
            w.put(0, 3)
            w.code(40, book: 1)  // (0, 0, 0, 0)
            return w.end()
        }
        frame = gainFrame(gain: 255, difference: -1)
        #expect(length(frame.bytes) == frame.length)
        #expect(length(gainFrame(gain: 255, difference: 1).bytes) == nil)
        #expect(length(gainFrame(gain: 0, difference: -1).bytes) == nil)

        // Eight short windows grouped 4 + 1 + 1 + 1 + 1: the first group's band 0 (4 lines a window) holds 16
        // values of codebook 11, 8 codewords; the other groups' one section each is of codebook 0.
        func shortFrame(pulse: Bool) -> (bytes: [UInt8], length: Int) {
            var w = BitWriter()
            w.singleChannel()
            w.put(0, 1)
            w.put(2, 2)  // EIGHT_SHORT_SEQUENCE
            w.put(0, 1)
            w.put(1, 4)  // max_sfb
            w.put(0b111_0000, 7)  // scale_factor_grouping
            w.put(11, 4)
            w.put(1, 3)
            for _ in 0..<4 {
                w.put(0, 4)
                w.put(1, 3)
            }
            w.code(60, book: 0)
            w.put(pulse ? 1 : 0, 1)
            if pulse { w.put(0, 8 + 9) }
            w.put(0, 2)
            for _ in 0..<8 { w.code(0, book: 11) }
            return w.end()
        }
        frame = shortFrame(pulse: false)
        #expect(length(frame.bytes) == frame.length)
        #expect(length(shortFrame(pulse: true).bytes) == nil, "pulse data in short windows")

        // TNS of a long window: order 12 (4-bit coefficients) is LC's most; 13 is refused.
        func tnsFrame(order: Int) -> (bytes: [UInt8], length: Int) {
            var w = BitWriter()
            w.singleChannel()
            w.longWindow(maxSfb: 0)
            w.put(0, 1)  // pulse
            w.put(1, 1)  // tns_data_present
            w.put(1, 2)  // n_filt
            w.put(1, 1)  // coef_res
            w.put(20, 6)  // length
            w.put(order, 5)
            w.put(0b10, 2)  // direction, coef_compress
            w.put(0xABC_DEF0_1234 & ((1 << (4 * order)) - 1), 4 * order)
            w.put(0, 1)  // gain_control_data_present
            return w.end()
        }
        frame = tnsFrame(order: 12)
        #expect(length(frame.bytes) == frame.length)
        #expect(length(tnsFrame(order: 13).bytes) == nil)

        // A CPE with a common window and an M/S mask of 2 bands; ms_mask_present 3 is reserved.
        let stereo = AACSyntax.Config(samplingIndex: 3, channelConfiguration: 2)
        func pairFrame(msMaskPresent: Int) -> (bytes: [UInt8], length: Int) {
            var w = BitWriter()
            w.put(1, 3)
            w.put(0, 4)
            w.put(1, 1)  // common_window
            w.longWindow(maxSfb: 2)
            w.put(msMaskPresent, 2)
            w.put(0b10, 2)
            for _ in 0..<2 {
                w.put(100, 8)
                w.put(0, 4)
                w.put(2, 5)
                w.put(0, 3)
            }
            return w.end()
        }
        frame = pairFrame(msMaskPresent: 1)
        #expect(length(frame.bytes, stereo) == frame.length)
        #expect(length(pairFrame(msMaskPresent: 3).bytes, stereo) == nil)
        #expect(length(frame.bytes, mono) == nil)

        // 5.1: SCE CPE CPE LFE, with a DSE (byte-aligned, 3 bytes) and fill elements (2 bytes, and 15 + 10 - 1)
        // between (8 stands for the second kind of FIL).
        let surround = AACSyntax.Config(samplingIndex: 3, channelConfiguration: 6)
        func surroundFrame(_ elements: [Int]) -> (bytes: [UInt8], length: Int) {
            var w = BitWriter()
            for id in elements {
                w.put(id == 8 ? 6 : id, 3)
                switch id {
                case 1:
                    w.put(0, 4)
                    w.put(0, 1)
                    w.emptyStream()
                    w.emptyStream()
                case 4:
                    w.put(0, 4)
                    w.put(1, 1)
                    w.put(3, 8)
                    w.put(0, (8 - w.count % 8) % 8)
                    w.put(0xABCDEF, 24)
                case 6:
                    w.put(2, 4)
                    w.put(0xFFFF, 16)
                case 8:
                    w.put(15, 4)
                    w.put(10, 8)
                    for _ in 0..<24 { w.put(0xFF, 8) }
                default:
                    w.put(0, 4)
                    w.emptyStream()
                }
            }
            return w.end()
        }
        frame = surroundFrame([0, 6, 1, 4, 1, 3])
        #expect(length(frame.bytes, surround) == frame.length)
        frame = surroundFrame([4, 0, 1, 1, 8, 3, 6])
        #expect(length(frame.bytes, surround) == frame.length)
        // The DSE after the SCE's 29 bits: its 16-bit header ends mid-byte, so its bytes start after 3 bits of
        // alignment.
        frame = surroundFrame([0, 4, 1, 1, 3])
        #expect(length(frame.bytes, surround) == frame.length)
        for wrong in [[0, 1, 1], [0, 1, 3, 1], [0, 1, 1, 3, 0], [1, 0, 1, 3], [0, 1, 1, 0], [0, 1, 2, 1, 3]] {
            #expect(length(surroundFrame(wrong).bytes, surround) == nil, "\(wrong)")
        }
        // A PCE in the frame is not read.
        w = BitWriter()
        w.put(5, 3)
        #expect(length(w.end().bytes) == nil)
    }

    @Test("AudioSpecificConfig: LC, SBR and PS over LC; other object types, 960-sample frames, a PCE refused")
    func audioSpecificConfig() {
        #expect(AACSyntax.config([0x12, 0x10]) == AACSyntax.Config(samplingIndex: 4, channelConfiguration: 2))
        #expect(AACSyntax.config([0x11, 0x88]) == AACSyntax.Config(samplingIndex: 3, channelConfiguration: 1))
        // ffmpeg's: LC 48 kHz mono, then the backward-compatible extension saying there is no SBR.
        #expect(
            AACSyntax.config([0x11, 0x88, 0x56, 0xE5, 0x00])
                == AACSyntax.Config(samplingIndex: 3, channelConfiguration: 1))
        // Type 5 (SBR): 24 kHz stereo core, 48 kHz extension, then the core's type 2.
        #expect(
            AACSyntax.config([0x2B, 0x11, 0x88, 0x00]) == AACSyntax.Config(samplingIndex: 6, channelConfiguration: 2))
        // Type 29 (PS): 24 kHz mono core.
        #expect(
            AACSyntax.config([0xEB, 0x09, 0x88, 0x00]) == AACSyntax.Config(samplingIndex: 6, channelConfiguration: 1))
        #expect(AACSyntax.config([0x0A, 0x10]) == nil, "Main")
        #expect(AACSyntax.config([0x1A, 0x10]) == nil, "SSR")
        #expect(AACSyntax.config([0x22, 0x10]) == nil, "LTP")
        #expect(AACSyntax.config([0x8A, 0x10]) == nil, "ER AAC LC")
        #expect(AACSyntax.config([0x12, 0x14]) == nil, "frameLengthFlag: 960 samples")
        #expect(AACSyntax.config([0x12, 0x00]) == nil, "channel configuration 0: a PCE")
        #expect(AACSyntax.config([0x17, 0x90]) == nil, "an explicit sampling frequency")
        #expect(AACSyntax.config([0x12]) == nil, "cut short")
    }
}
