/// The AAC syntax `cropzoom repair` reads to find where an audio frame stored in MP4 ends (a raw_data_block, with no
/// ADTS header): ISO/IEC 14496-3, 4.4.2, parsed down to the last spectral codeword without dequantising anything.
///
/// AAC-LC (audio object type 2) and HE-AAC v1/v2 whose core is LC (types 5 and 29, or LC whose SBR data rides in fill
/// elements, which are skipped by their count). The parser doubles as a recogniser: anything the syntax or FFmpeg's
/// decoder (libavcodec/aacdec_template.c) rejects, and any channel element the channel configuration does not call
/// for, is not a frame.
package enum AACSyntax {
    /// What the AudioSpecificConfig says that the frames' syntax depends on.
    package struct Config: Equatable, Sendable {
        /// 2 (AAC-LC): HE-AAC's types 5 and 29 are given as their LC core.
        package var objectType: Int
        /// The core's sampling-frequency index, 0 (96 kHz) … 12 (7.35 kHz).
        package var samplingIndex: Int
        /// 1…7 (ISO/IEC 14496-3's channelConfiguration): which channel elements a frame holds.
        package var channelConfiguration: Int
        /// Samples a frame codes per channel: 1024 (960-sample frames are not read).
        package var frameLength: Int

        package init(objectType: Int = 2, samplingIndex: Int, channelConfiguration: Int, frameLength: Int = 1024) {
            self.objectType = objectType
            self.samplingIndex = samplingIndex
            self.channelConfiguration = channelConfiguration
            self.frameLength = frameLength
        }
    }

    /// Parses an AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1: the esds DecoderSpecificInfo bytes); nil when its
    /// frames are not ones ``frameLength(_:config:)`` reads: an object type other than LC (or SBR/PS over LC), an
    /// explicit or reserved sampling frequency, channel configuration 0 (a program_config_element) or above 7,
    /// 960-sample frames.
    package static func config(_ audioSpecificConfig: [UInt8]) -> Config? {
        var r = BitReader(audioSpecificConfig)
        do throws(BitstreamEnd) {
            var objectType = try audioObjectType(&r)
            let samplingIndex = Int(try r.bits(4))
            guard samplingIndex <= 12 else { return nil }
            let channels = Int(try r.bits(4))
            if objectType == 5 || objectType == 29 {
                // Explicit SBR (and PS) signalling: the extension's sampling frequency, then the core's object type.
                if try r.bits(4) == 15 { try r.skip(24) }
                objectType = try audioObjectType(&r)
            }
            guard objectType == 2, (1...7).contains(channels) else { return nil }
            // GASpecificConfig (4.4.1): frameLengthFlag, dependsOnCoreCoder (coreCoderDelay), extensionFlag.
            guard try !r.flag() else { return nil }
            if try r.flag() { try r.skip(14) }
            try r.skip(1)
            return Config(samplingIndex: samplingIndex, channelConfiguration: channels)
        } catch {
            return nil
        }
    }

    /// The byte length of the raw_data_block `bytes` start with (every element through END, then the byte
    /// alignment), or nil when they do not start with a whole valid one of `config`'s layout.
    package static func frameLength(_ bytes: UnsafeRawBufferPointer, config: Config) -> Int? {
        parse(bytes, config: config)?.length
    }

    /// The raw_data_block's length and the extension types of its fill elements' first payloads (bit `type` set).
    private static func parse(_ bytes: UnsafeRawBufferPointer, config: Config) -> (length: Int, extensions: UInt32)? {
        guard config.objectType == 2, config.frameLength == 1024, (0...12).contains(config.samplingIndex),
            let layout = ChannelLayout(config.channelConfiguration)
        else { return nil }
        let tables = Self.tables
        return tables.vlc.withUnsafeBufferPointer { vlc in
            tables.swb.withUnsafeBufferPointer { swb in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { bandTypes in
                    var parser = Parser(
                        bytes: bytes, vlc: vlc, swb: swb, bandTypes: bandTypes,
                        long: tables.long[config.samplingIndex], short: tables.short[config.samplingIndex],
                        longestLeaf: tables.longestLeaf)
                    return parser.rawDataBlock(layout).map { ($0, parser.extensions) }
                }
            }
        }
    }

    /// Whether FFmpeg's decoder reports the stream of `audioSpecificConfig` as its container describes it, but for
    /// what it reports of every AAC-LC stream (``/CropZoomFFmpeg/DecodedParameters/aacLowComplexity(_:)``): object
    /// type 2, mono or stereo, and no SBR — none signalled (FFmpeg's mpeg4audio.c looks for a sync extension, 0x2b7,
    /// at every bit after the channel configuration) and, unless its absence is signalled there, none in the first
    /// frame's fill elements (`firstFrame`, the track's first raw_data_block), which FFmpeg's decoder takes for
    /// HE-AAC (implicit signalling: twice the sample rate and the frame length).
    package static func isPlainLowComplexity(_ audioSpecificConfig: [UInt8], firstFrame: [UInt8]) -> Bool {
        guard let config = config(audioSpecificConfig), (1...2).contains(config.channelConfiguration),
            audioSpecificConfig[0] >> 3 == 2
        else { return false }
        var r = BitReader(audioSpecificConfig)
        var sbrAbsent = false
        do throws(BitstreamEnd) {
            try r.skip(13)
            while r.bitsLeft > 15 {
                var look = r
                guard try look.bits(11) == 0x2b7 else {
                    try r.skip(1)
                    continue
                }
                // The sync extension: SBR's object type and its flag (else another extension: not read here).
                guard try audioObjectType(&look) == 5, try !look.flag() else { return false }
                sbrAbsent = true
                break
            }
        } catch {
            return false
        }
        if sbrAbsent { return true }
        guard let block = firstFrame.withUnsafeBytes({ parse($0, config: config) }) else { return false }
        // EXT_SBR_DATA and EXT_SBR_DATA_CRC (ISO/IEC 14496-3, table 4.121).
        return block.extensions & (1 << 13 | 1 << 14) == 0
    }

    /// ``frameLength(_:config:)`` over an array.
    package static func frameLength(_ bytes: [UInt8], config: Config) -> Int? {
        bytes.withUnsafeBytes { frameLength($0, config: config) }
    }

    /// The lengths of the consecutive raw data blocks `bytes` start with, as many as read (at most `limit`).
    package static func frameLengths(_ bytes: [UInt8], config: Config, limit: Int) -> [Int] {
        var lengths: [Int] = []
        bytes.withUnsafeBytes { all in
            var at = 0
            while at < all.count, lengths.count < limit {
                guard let n = frameLength(UnsafeRawBufferPointer(rebasing: all[at...]), config: config) else { break }
                lengths.append(n)
                at += n
            }
        }
        return lengths
    }

    private static func audioObjectType(_ r: inout BitReader) throws(BitstreamEnd) -> Int {
        let type = Int(try r.bits(5))
        return type == 31 ? 32 + Int(try r.bits(6)) : type
    }
}

// MARK: - Layout

/// The channel elements a channel configuration's frames hold, in order (ISO/IEC 14496-3's channelConfiguration).
private struct ChannelLayout {
    /// The element IDs, 4 bits each, the first lowest.
    let elements: UInt32
    let count: Int

    init?(_ channelConfiguration: Int) {
        // SCE 0, CPE 1, LFE 3.
        switch channelConfiguration {
        case 1: (elements, count) = (0x0, 1)  // SCE
        case 2: (elements, count) = (0x1, 1)  // CPE
        case 3: (elements, count) = (0x10, 2)  // SCE CPE
        case 4: (elements, count) = (0x010, 3)  // SCE CPE SCE
        case 5: (elements, count) = (0x110, 3)  // SCE CPE CPE
        case 6: (elements, count) = (0x3110, 4)  // SCE CPE CPE LFE
        case 7: (elements, count) = (0x3_1110, 5)  // SCE CPE CPE CPE LFE
        default: return nil
        }
    }

    func element(_ index: Int) -> Int { Int(elements >> UInt32(4 * index) & 15) }
}

// MARK: - Tables

extension AACSyntax {
    /// Where one window length's scalefactor band offsets are in `Tables.swb`.
    fileprivate struct Bands: Sendable {
        /// The index of the first offset (0) in `Tables.swb`.
        var start: Int
        /// The number of bands (the offsets run to `start + count`).
        var count: Int
    }

    /// The lookup tables, built once from `AACTables`.
    ///
    /// `vlc` holds a two-level lookup table per codebook: entry `book` (0: scalefactors, 1…11: spectral books) is the
    /// index of that book's root table of `1 << rootBits` entries, indexed by the next `rootBits` bits. An entry is
    /// 0 for no code (none: every book is a complete code), a leaf (bit 30) with the bits to skip in its low byte (the
    /// code's length, plus a sign bit per value other than 0 for the unsigned books), the escapes in bits 8–9 (book
    /// 11: which of the two values is 16) and the symbol in bits 16–23 (the scalefactor index), or a link (bit 31):
    /// the index of a second-level table in bits 8–29, indexed by as many bits after the root's as bits 0–4 say.
    fileprivate struct Tables: Sendable {
        static let rootBits = 9
        let vlc: [UInt32]
        /// The most bits a spectral book's leaf consumes (its code and sign bits; 19: book 3's).
        let longestLeaf: Int
        /// Every sampling index's long-window offsets, then its short-window ones.
        let swb: [UInt16]
        let long: [Bands]
        let short: [Bands]
    }

    fileprivate static let tables: Tables = {
        var vlc = [UInt32](repeating: 0, count: 12)
        addBook(&vlc, book: 0, codes: AACTables.scalefactorCodes, lengths: AACTables.scalefactorBits) { symbol in
            UInt32(symbol) << 16
        }
        // Values per index (books 1–4: 4, 5–11: 2), the base each is written in, and whether the book is unsigned.
        let shapes: [(dimension: Int, base: Int, unsigned: Bool)] = [
            (4, 3, false), (4, 3, false), (4, 3, true), (4, 3, true), (2, 9, false), (2, 9, false),
            (2, 8, true), (2, 8, true), (2, 13, true), (2, 13, true), (2, 17, true),
        ]
        var longestLeaf = 0
        for (i, shape) in shapes.enumerated() {
            let codes = AACTables.spectralCodes[i].map(UInt32.init)
            addBook(&vlc, book: i + 1, codes: codes, lengths: AACTables.spectralBits[i]) { symbol in
                var rest = symbol
                var signs: UInt32 = 0
                var escapes: UInt32 = 0
                // The last value is the least significant digit; escapes: bit 8 the first value, bit 9 the second.
                for position in (0..<shape.dimension).reversed() {
                    let value = rest % shape.base
                    rest /= shape.base
                    if shape.unsigned && value != 0 { signs += 1 }
                    if i == 10 && value == 16 { escapes |= 1 << (8 + UInt32(position)) }
                }
                longestLeaf = max(longestLeaf, Int(AACTables.spectralBits[i][symbol]) + Int(signs))
                return signs | escapes
            }
        }
        var swb: [UInt16] = []
        var long: [Bands] = []
        var short: [Bands] = []
        for index in 0..<13 {
            long.append(Bands(start: swb.count, count: AACTables.swbCountLong[index]))
            swb += AACTables.swbOffsetLong[index]
            short.append(Bands(start: swb.count, count: AACTables.swbCountShort[index]))
            swb += AACTables.swbOffsetShort[index]
        }
        return Tables(vlc: vlc, longestLeaf: longestLeaf, swb: swb, long: long, short: short)
    }()

    /// Appends a codebook's lookup tables to `vlc` and points entry `book` at its root; `payload` gives a symbol's
    /// leaf bits other than the length and the leaf flag.
    private static func addBook(
        _ vlc: inout [UInt32], book: Int, codes: [UInt32], lengths: [UInt8], payload: (Int) -> UInt32
    ) {
        let rootBits = Tables.rootBits
        let root = vlc.count
        vlc[book] = UInt32(root)
        vlc += [UInt32](repeating: 0, count: 1 << rootBits)
        var longest: [Int: Int] = [:]
        for (code, length) in zip(codes, lengths.map(Int.init)) where length > rootBits {
            let prefix = Int(code) >> (length - rootBits)
            longest[prefix] = max(longest[prefix] ?? 0, length - rootBits)
        }
        for (prefix, bits) in longest.sorted(by: { $0.key < $1.key }) {
            vlc[root + prefix] = 1 << 31 | UInt32(vlc.count) << 8 | UInt32(bits)
            vlc += [UInt32](repeating: 0, count: 1 << bits)
        }
        for (symbol, (code, length)) in zip(codes, lengths.map(Int.init)).enumerated() {
            let leaf = (1 << 30 | payload(symbol)) + UInt32(length)
            let table: Int
            let index: Int
            let bits: Int
            if length <= rootBits {
                (table, index, bits) = (root, Int(code), rootBits)
            } else {
                let link = vlc[root + Int(code) >> (length - rootBits)]
                table = Int(link >> 8 & 0x3F_FFFF)
                bits = Int(link & 31)
                index = Int(code) & ((1 << (length - rootBits)) - 1)
            }
            let used = length <= rootBits ? length : length - rootBits
            let first = table + index << (bits - used)
            for slot in first..<(first + 1 << (bits - used)) { vlc[slot] = leaf }
        }
    }
}

// MARK: - The parser

/// One individual channel stream's window layout (ics_info).
private struct Window {
    var short: Bool
    var maxSfb: Int
    var groupCount: Int
    /// The windows in each group, 4 bits each, the first group lowest.
    var groupLengths: UInt32
    var bands: AACSyntax.Bands
}

private struct Parser {
    let base: UnsafeRawPointer?
    let count: Int
    let vlc: UnsafeBufferPointer<UInt32>
    /// Codewords are read from one 64-bit ``peek()`` (57 bits or more) while this many bits or fewer are used.
    let codewordsFromOnePeek: Int
    let swb: UnsafeBufferPointer<UInt16>
    /// The section data's codebook of each scalefactor band (group by group).
    let bandTypes: UnsafeMutableBufferPointer<UInt8>
    let long: AACSyntax.Bands
    let short: AACSyntax.Bands
    /// Bits read so far; may run past the end (the bits there read as 0), which `overrun` tells.
    var position = 0
    /// The extension types of the fill elements read (bit `extension_type` set).
    var extensions: UInt32 = 0

    init(
        bytes: UnsafeRawBufferPointer, vlc: UnsafeBufferPointer<UInt32>, swb: UnsafeBufferPointer<UInt16>,
        bandTypes: UnsafeMutableBufferPointer<UInt8>, long: AACSyntax.Bands, short: AACSyntax.Bands,
        longestLeaf: Int
    ) {
        base = bytes.baseAddress
        count = bytes.count
        self.vlc = vlc
        codewordsFromOnePeek = 57 - longestLeaf
        self.swb = swb
        self.bandTypes = bandTypes
        self.long = long
        self.short = short
    }

    var overrun: Bool { position > count << 3 }

    // MARK: Bits

    /// The next 64 bits, the first most significant (0 past the end).
    @inline(__always)
    func peek() -> UInt64 {
        let byte = position >> 3
        if byte &+ 8 <= count, let base {
            return UInt64(bigEndian: base.loadUnaligned(fromByteOffset: byte, as: UInt64.self)) &<< UInt64(position & 7)
        }
        return Self.peekNearEnd(base, count: count, position: position)
    }

    /// ``peek()`` within 8 bytes of the end. Static, of the fields it reads: a method would be given a copy of the
    /// whole parser at every ``peek()`` (its `self` is the mutating caller's), on the spectral codewords' path.
    private static func peekNearEnd(_ base: UnsafeRawPointer?, count: Int, position: Int) -> UInt64 {
        let byte = position >> 3
        var word: UInt64 = 0
        for i in 0..<8 {
            word <<= 8
            if byte + i < count, let base { word |= UInt64(base.load(fromByteOffset: byte + i, as: UInt8.self)) }
        }
        return word &<< UInt64(position & 7)
    }

    /// The next `n` bits (1…32) as a number.
    @inline(__always)
    mutating func read(_ n: Int) -> Int {
        let value = Int(truncatingIfNeeded: peek() &>> UInt64(64 - n))
        position &+= n
        return value
    }

    /// The leaf of the next code of the book whose root table is at `root`, consumed with its sign bits; nil for no
    /// code.
    @inline(__always)
    mutating func code(root: Int) -> UInt32? {
        let entry = Self.leaf(peek(), root: root, vlc: vlc)
        guard entry != 0 else { return nil }
        position &+= Int(entry & 0xFF)
        return entry
    }

    // MARK: Syntax

    /// raw_data_block: the elements through END; the block's length in bytes.
    mutating func rawDataBlock(_ layout: ChannelLayout) -> Int? {
        var next = 0
        while true {
            let id = read(3)
            switch id {
            case 0, 1, 3:  // SCE, CPE, LFE: the next the layout calls for.
                guard next < layout.count, layout.element(next) == id else { return nil }
                next += 1
                position += 4  // element_instance_tag
                guard id == 1 ? channelPair() : channelStream(common: nil) else { return nil }
            case 4:  // DSE
                position += 4
                let alignAndCount = read(9)
                var bytes = alignAndCount & 0xFF
                if bytes == 255 { bytes += read(8) }
                if alignAndCount >> 8 == 1 { position = (position + 7) & ~7 }
                position += 8 * bytes
            case 6:  // FIL: its payload skipped by its count, the first extension's type noted.
                var bytes = read(4)
                if bytes == 15 { bytes += read(8) - 1 }
                if bytes > 0 { extensions |= 1 << UInt32(truncatingIfNeeded: peek() >> 60) }
                position += 8 * bytes
            case 7:  // END
                guard next == layout.count, !overrun else { return nil }
                return (position + 7) >> 3
            default:  // CCE, PCE: not read.
                return nil
            }
            if overrun { return nil }
        }
    }

    /// channel_pair_element.
    mutating func channelPair() -> Bool {
        guard read(1) == 1 else { return channelStream(common: nil) && channelStream(common: nil) }
        guard let window = icsInfo() else { return false }
        let msMaskPresent = read(2)
        if msMaskPresent == 3 { return false }
        if msMaskPresent == 1 { position += window.groupCount * window.maxSfb }
        return channelStream(common: window) && channelStream(common: window)
    }

    /// ics_info; nil where a reserved bit is set, a predictor is present, or max_sfb is past the bands.
    mutating func icsInfo() -> Window? {
        let header = read(4)  // ics_reserved_bit, window_sequence, window_shape
        guard header & 8 == 0 else { return nil }
        if header >> 1 & 3 == 2 {  // EIGHT_SHORT_SEQUENCE
            let fields = read(11)
            let maxSfb = fields >> 7
            guard maxSfb <= short.count else { return nil }
            var lengths: UInt32 = 1
            var groups = 1
            for bit in (0..<7).reversed() {
                if fields >> bit & 1 == 1 {
                    lengths += 1 << UInt32(4 * (groups - 1))
                } else {
                    lengths |= 1 << UInt32(4 * groups)
                    groups += 1
                }
            }
            return Window(short: true, maxSfb: maxSfb, groupCount: groups, groupLengths: lengths, bands: short)
        }
        let fields = read(7)
        let maxSfb = fields >> 1
        guard fields & 1 == 0, maxSfb <= long.count else { return nil }
        return Window(short: false, maxSfb: maxSfb, groupCount: 1, groupLengths: 1, bands: long)
    }

    /// individual_channel_stream, with its window from the CPE when `common`.
    mutating func channelStream(common: Window?) -> Bool {
        let globalGain = read(8)
        guard let window = common ?? icsInfo(), sectionData(window), scalefactorData(window, globalGain: globalGain)
        else { return false }
        if read(1) == 1 {  // pulse_data: long windows only
            guard !window.short else { return false }
            let fields = read(8)
            let start = fields & 63
            guard start < window.bands.count else { return false }
            var line = Int(swb[window.bands.start + start])
            for _ in 0...(fields >> 6) {
                line += read(9) >> 4  // pulse_offset, pulse_amp
                guard line <= 1023 else { return false }
            }
        }
        if read(1) == 1 && !tnsData(window) { return false }
        guard read(1) == 0 else { return false }  // gain_control_data_present: SSR only
        return spectralData(window) && !overrun
    }

    /// section_data: each band's codebook into `bandTypes`.
    mutating func sectionData(_ window: Window) -> Bool {
        let lengthBits = window.short ? 3 : 5
        let escape = (1 << lengthBits) - 1
        var index = 0
        for _ in 0..<window.groupCount {
            var band = 0
            while band < window.maxSfb {
                let book = read(4)
                guard book != 12 else { return false }
                var end = band
                while true {
                    let increment = read(lengthBits)
                    end += increment
                    guard end <= window.maxSfb else { return false }
                    if increment != escape { break }
                }
                while band < end {
                    bandTypes[index] = UInt8(book)
                    index += 1
                    band += 1
                }
                if overrun { return false }  // sections of no band, read past the end
            }
        }
        return true
    }

    /// scale_factor_data: as FFmpeg's decode_scalefactors, an error where a scalefactor leaves 0…255
    /// (intensity positions and noise energies are clipped there, not rejected).
    mutating func scalefactorData(_ window: Window, globalGain: Int) -> Bool {
        let root = Int(vlc[0])
        var scalefactor = globalGain
        var firstNoise = true
        // Codes read several to a ``peek()``, as the spectral codewords are (``skipCodewords(_:root:)``).
        var word = peek()
        var used = 0
        for index in 0..<(window.groupCount * window.maxSfb) {
            let type = bandTypes[index]
            if type == 0 { continue }
            if used > codewordsFromOnePeek {
                position &+= used
                word = peek()
                used = 0
            }
            if type == 13 && firstNoise {  // NOISE_HCB: the first energy in 9 bits
                firstNoise = false
                used &+= 9
                continue
            }
            let leaf = Self.leaf(word &<< UInt64(used), root: root, vlc: vlc)
            guard leaf != 0 else {
                position &+= used
                return false
            }
            used &+= Int(leaf & 0xFF)
            // A spectral book's scalefactor (noise energies and intensity positions are clipped there, not refused).
            if type < 13 {
                scalefactor += Int(leaf >> 16 & 0xFF) - 60
                guard (0...255).contains(scalefactor) else {
                    position &+= used
                    return false
                }
            }
        }
        position &+= used
        return true
    }

    /// tns_data: at most order 12 for a long window (LC), 7 for a short one.
    mutating func tnsData(_ window: Window) -> Bool {
        let (filterBits, lengthBits, orderBits, maxOrder) = window.short ? (1, 4, 3, 7) : (2, 6, 5, 12)
        for _ in 0..<(window.short ? 8 : 1) {
            let filters = read(filterBits)
            if filters == 0 { continue }
            let coefficientResolution = read(1)
            for _ in 0..<filters {
                let order = read(lengthBits + orderBits) & ((1 << orderBits) - 1)
                guard order <= maxOrder else { return false }
                if order > 0 {
                    let compress = read(2) & 1  // direction, coef_compress
                    position += order * (coefficientResolution + 3 - compress)
                }
            }
        }
        return true
    }

    /// spectral_data: each band's codewords (4 or 2 values each, over the group's windows), their sign
    /// bits and codebook 11's escapes.
    mutating func spectralData(_ window: Window) -> Bool {
        var index = 0
        for group in 0..<window.groupCount {
            let groupLength = Int(window.groupLengths >> UInt32(4 * group) & 15)
            for band in 0..<window.maxSfb {
                let book = Int(bandTypes[index])
                index += 1
                guard book >= 1 && book <= 11 else { continue }
                let offset = window.bands.start + band
                let lines = Int(swb[offset + 1] &- swb[offset]) * groupLength
                var codewords = book <= 4 ? lines >> 2 : lines >> 1
                let root = Int(vlc[book])
                if book < 11 {
                    guard skipCodewords(codewords, root: root) else { return false }
                } else {
                    while codewords > 0 {
                        guard let leaf = code(root: root) else { return false }
                        if leaf & 0x300 != 0 {
                            if leaf & 0x100 != 0 && !escape() { return false }
                            if leaf & 0x200 != 0 && !escape() { return false }
                        }
                        codewords -= 1
                    }
                }
            }
        }
        return true
    }

    /// `count` codewords of the book whose root table is at `root` (books 1–10: no escapes), with their sign bits;
    /// false at no code. Several are read from each ``peek()``: the next codeword's bits do not wait for a load of the
    /// bytes where the last one ended (the loop's chain is a shift and a table look-up).
    @inline(__always)
    mutating func skipCodewords(_ count: Int, root: Int) -> Bool {
        var left = count
        while left > 0 {
            let word = peek()
            var used = 0
            repeat {
                let entry = Self.leaf(word &<< UInt64(used), root: root, vlc: vlc)
                guard entry != 0 else {
                    position &+= used
                    return false
                }
                used &+= Int(entry & 0xFF)
                left &-= 1
            } while left > 0 && used <= codewordsFromOnePeek
            position &+= used
        }
        return true
    }

    /// The leaf of the code at the top of `bits` in the book whose root table is at `root` in `vlc` (0: no code).
    @inline(__always)
    static func leaf(_ bits: UInt64, root: Int, vlc: UnsafeBufferPointer<UInt32>) -> UInt32 {
        let rootBits = AACSyntax.Tables.rootBits
        let entry = vlc[root &+ Int(truncatingIfNeeded: bits &>> UInt64(64 - rootBits))]
        guard entry >= 1 << 31 else { return entry }
        let next = (bits &<< UInt64(rootBits)) &>> (64 &- UInt64(entry & 31))
        return vlc[Int(entry >> 8 & 0x3F_FFFF) &+ Int(truncatingIfNeeded: next)]
    }

    /// An escape sequence (hcod_esc): N ones (at most 8), a zero, N + 4 bits.
    @inline(__always)
    mutating func escape() -> Bool {
        let ones = (~peek()).leadingZeroBitCount
        guard ones <= 8 else { return false }
        position += 2 * ones + 5
        return true
    }
}
