/// ISO base media file format boxes (ISO/IEC 14496-12; MP4, MOV, 3GP), read without FFmpeg: the file layout and
/// sample tables `cropzoom repair` learns from a reference recording, and the top-level boxes of a broken one, which
/// FFmpeg refuses to open at all (docs/design/repair.md).
package enum ISOBoxes {
    /// A box header as found in a file.
    package struct Header: Equatable, Sendable {
        /// The four-character type (`ftyp`, `mdat`, …); bytes that are not ASCII are shown as `?`.
        package var type: String
        /// Where the box starts.
        package var offset: Int64
        /// 8, or 16 with a 64-bit size.
        package var headerSize: Int
        /// The whole box's size as declared; nil for size 0 ("to the end of the file").
        package var declaredSize: Int64?
        package var payloadOffset: Int64 { offset + Int64(headerSize) }
        /// Where the box ends in a file of `fileSize` bytes: as declared, or the file's end for size 0.
        package func end(in fileSize: Int64) -> Int64 { declaredSize.map { offset + $0 } ?? fileSize }
    }

    /// The four characters of a box type.
    package static func fourCC(_ bytes: some Collection<UInt8>) -> String {
        String(bytes.prefix(4).map { (0x20..<0x7F).contains($0) ? Character(UnicodeScalar($0)) : "?" })
    }

    /// The box header at `offset` in `window`; nil when there is no room for one or its size is impossible (less than
    /// its header).
    package static func header(at offset: Int64, in window: ByteWindow) throws(CropZoomError) -> Header? {
        guard let size32 = try window.number(at: offset, width: 4) else { return nil }
        let type = fourCC(try window.bytes(at: offset + 4, count: 4))
        guard type.count == 4 else { return nil }
        switch size32 {
        case 0: return Header(type: type, offset: offset, headerSize: 8, declaredSize: nil)
        case 1:
            guard let size64 = try window.number(at: offset + 8, width: 8), size64 >= 16, size64 <= UInt64(Int64.max)
            else { return nil }
            return Header(type: type, offset: offset, headerSize: 16, declaredSize: Int64(size64))
        case 2..<8: return nil
        default: return Header(type: type, offset: offset, headerSize: 8, declaredSize: Int64(size32))
        }
    }

    /// The top-level boxes of a file in order. The walk stops at the first box that ends past the file's end (it is
    /// the last one listed: a cut file's `mdat`), at a size-0 box, or at bytes that are no box header.
    package static func topLevel(_ window: ByteWindow) throws(CropZoomError) -> [Header] {
        var boxes: [Header] = []
        var offset: Int64 = 0
        while offset < window.size, let h = try header(at: offset, in: window) {
            boxes.append(h)
            let end = h.end(in: window.size)
            if h.declaredSize == nil || end > window.size { break }
            offset = end
        }
        return boxes
    }

    /// Whether `type` is a box a recording starts with (the top-level types writers put first).
    package static func isLeadingType(_ type: String) -> Bool {
        ["ftyp", "mdat", "moov", "free", "wide", "skip", "uuid", "pnot"].contains(type)
    }

    /// A box held in memory (inside a `moov`): its type and payload.
    package struct Box: Sendable {
        package var type: String
        package var payload: ArraySlice<UInt8>

        /// The boxes the payload holds (from `skip` bytes on: a full box's version and flags, a sample entry's
        /// fixed fields); boxes that do not fit are left out.
        package func children(skip: Int = 0) -> [Box] { ISOBoxes.boxes(in: payload.dropFirst(skip)) }
        /// The first child of `type`.
        package func child(_ type: String, skip: Int = 0) -> Box? { children(skip: skip).first { $0.type == type } }
        /// The box at the end of a path of types (`["mdia", "minf", "stbl"]`).
        package func find(_ path: [String]) -> Box? {
            var box: Box? = self
            for type in path { box = box?.child(type) }
            return box
        }
        /// A full box's version (its payload's first byte).
        package var version: UInt8 { payload.first ?? 0 }
    }

    /// The boxes in `bytes`, in order.
    package static func boxes(in bytes: ArraySlice<UInt8>) -> [Box] {
        var out: [Box] = []
        var i = bytes.startIndex
        while bytes.endIndex - i >= 8 {
            var size = Int(Reader.u32(bytes, i))
            let type = fourCC(bytes[(i + 4)..<(i + 8)])
            var header = 8
            if size == 1 {
                guard bytes.endIndex - i >= 16 else { break }
                size = Int(clamping: Reader.u64(bytes, i + 8))
                header = 16
            } else if size == 0 {
                size = bytes.endIndex - i
            }
            guard size >= header, size <= bytes.endIndex - i else { break }
            out.append(Box(type: type, payload: bytes[(i + header)..<(i + size)]))
            i += size
        }
        return out
    }

    /// Big-endian numbers in a byte slice (indices are the slice's own).
    package enum Reader {
        package static func u16(_ b: ArraySlice<UInt8>, _ i: Int) -> UInt16 { UInt16(b[i]) << 8 | UInt16(b[i + 1]) }
        package static func u32(_ b: ArraySlice<UInt8>, _ i: Int) -> UInt32 {
            UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
        }
        package static func u64(_ b: ArraySlice<UInt8>, _ i: Int) -> UInt64 {
            UInt64(u32(b, i)) << 32 | UInt64(u32(b, i + 4))
        }
    }
}

/// `stsz`/`stz2`'s sample sizes: a size each, or one size for every sample — `stsz`'s `sample_size`, as PCM is stored
/// (a sample per sound frame: 172.8 million in an hour at 48 kHz, which listed one by one took 691 MB and seconds to
/// read). A collection either way; ``total(_:)``, ``largest`` and ``smallest`` take no time for one size.
package struct SampleSizes: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
    /// The size of every sample, or 0 when each has its own (`each`).
    private let fixed: UInt32
    private let each: [UInt32]
    package let endIndex: Int

    /// `count` samples of `size` bytes each.
    package init(every size: UInt32, count: Int) {
        fixed = size
        each = []
        endIndex = Swift.max(0, count)
    }

    package init(_ sizes: [UInt32]) {
        fixed = 0
        each = sizes
        endIndex = sizes.count
    }

    package init(arrayLiteral sizes: UInt32...) { self.init(sizes) }

    package var startIndex: Int { 0 }
    package subscript(i: Int) -> UInt32 { fixed != 0 ? fixed : each[i] }

    /// The sizes of the samples in `range` added up.
    package func total(_ range: Range<Int>) -> Int64 {
        fixed != 0 ? Int64(fixed) * Int64(range.count) : each[range].reduce(0) { $0 + Int64($1) }
    }

    package var largest: UInt32? { isEmpty ? nil : fixed != 0 ? fixed : each.max() }
    package var smallest: UInt32? { isEmpty ? nil : fixed != 0 ? fixed : each.min() }
}

/// One track's sample tables as a `trak` box states them.
package struct TrackTables: Sendable {
    package var trackID: UInt32 = 0
    /// `hdlr`'s handler type: `vide`, `soun`, `tmcd`, `meta`, …
    package var handler = ""
    /// `mdhd`'s time scale (units per second) and duration in it.
    package var timescale: UInt32 = 0
    package var mediaDuration: UInt64 = 0
    /// The sample entry's type (`avc1`, `hvc1`, `mp4a`, `sowt`, …) and its whole payload.
    package var sampleEntry = ""
    package var sampleEntryPayload: ArraySlice<UInt8> = []
    /// `stts`: runs of (sample count, duration).
    package var timeToSample: [(count: UInt32, delta: UInt32)] = []
    /// `ctts`: runs of (sample count, composition offset).
    package var compositionOffsets: [(count: UInt32, offset: Int32)] = []
    /// `stss`: 1-based numbers of the sync samples; nil when the box is absent (every sample is one).
    package var syncSamples: [UInt32]? = nil
    /// `stsz`/`stz2`: each sample's size.
    package var sampleSizes: SampleSizes = []
    /// `stsc`: (first chunk, 1-based; samples per chunk; sample description index).
    package var sampleToChunk: [(firstChunk: UInt32, samplesPerChunk: UInt32, description: UInt32)] = []
    /// `stco`/`co64`: each chunk's file offset.
    package var chunkOffsets: [Int64] = []
    /// `elst`: (segment duration in the movie's time scale, media time in the track's, -1 = empty; rate).
    package var edits: [(segmentDuration: UInt64, mediaTime: Int64)] = []

    package var sampleCount: Int { sampleSizes.count }

    /// Each chunk's file offset and number of samples (`stco`/`co64` with `stsc`'s runs), in chunk order.
    package func chunks() -> [(offset: Int64, samples: Int)] {
        var chunks: [(offset: Int64, samples: Int)] = []
        for (i, run) in sampleToChunk.enumerated() {
            let firstChunk = Int(run.firstChunk) - 1
            let nextFirst = i + 1 < sampleToChunk.count ? Int(sampleToChunk[i + 1].firstChunk) - 1 : chunkOffsets.count
            guard firstChunk >= 0 else { continue }
            for chunk in firstChunk..<max(firstChunk, min(nextFirst, chunkOffsets.count)) {
                chunks.append((chunkOffsets[chunk], Int(run.samplesPerChunk)))
            }
        }
        return chunks
    }

    /// Where the last sample the chunks place ends in the file (its chunk's offset plus the sizes up to it), without
    /// listing every sample's offset (a PCM track stores one per sample frame); nil when no chunk holds a sample.
    package func lastSampleEnd() -> Int64? {
        var sample = 0
        var last: (offset: Int64, first: Int, count: Int)?
        for chunk in chunks() {
            let count = min(chunk.samples, sampleSizes.count - sample)
            guard count > 0 else { break }
            last = (chunk.offset, sample, count)
            sample += count
        }
        guard let last else { return nil }
        return last.offset + sampleSizes.total(last.first..<last.first + last.count)
    }

    /// Each sample's file offset, from the chunks and the sample-to-chunk runs.
    package func sampleOffsets() -> [Int64] {
        let chunks = chunks()
        var offsets: [Int64] = []
        // No more than the chunks hold: `stsz` can claim any number of samples of one size.
        offsets.reserveCapacity(min(sampleSizes.count, chunks.reduce(0) { $0 + $1.samples }))
        var sample = 0
        for chunk in chunks {
            var offset = chunk.offset
            for _ in 0..<chunk.samples where sample < sampleSizes.count {
                offsets.append(offset)
                offset += Int64(sampleSizes[sample])
                sample += 1
            }
        }
        return offsets
    }

    /// Each sample's duration (from `stts`).
    package func sampleDurations() -> [UInt32] {
        timeToSample.flatMap { Array(repeating: $0.delta, count: Int($0.count)) }
    }

    /// The track from its `trak` box; nil when it has no sample table.
    package init?(trak: ISOBoxes.Box) {
        typealias R = ISOBoxes.Reader
        if let tkhd = trak.child("tkhd") {
            let p = tkhd.payload
            let at = p.startIndex + (tkhd.version == 1 ? 20 : 12)
            if p.endIndex - at >= 4 { trackID = R.u32(p, at) }
        }
        guard let mdia = trak.child("mdia"), let stbl = mdia.find(["minf", "stbl"]) else { return nil }
        if let mdhd = mdia.child("mdhd") {
            let p = mdhd.payload
            let v1 = mdhd.version == 1
            let at = p.startIndex + (v1 ? 20 : 12)
            if p.endIndex - at >= (v1 ? 12 : 8) {
                timescale = R.u32(p, at)
                mediaDuration = v1 ? R.u64(p, at + 4) : UInt64(R.u32(p, at + 4))
            }
        }
        if let hdlr = mdia.child("hdlr"), hdlr.payload.count >= 12 {
            handler = ISOBoxes.fourCC(hdlr.payload.dropFirst(8))
        }
        if let stsd = stbl.child("stsd"), let entry = stsd.children(skip: 8).first {
            sampleEntry = entry.type
            sampleEntryPayload = entry.payload
        }
        timeToSample = Self.entries(stbl.child("stts"), width: 8) { p, i in (R.u32(p, i), R.u32(p, i + 4)) }
        compositionOffsets = Self.entries(stbl.child("ctts"), width: 8) { p, i in
            (R.u32(p, i), Int32(bitPattern: R.u32(p, i + 4)))
        }
        if let stss = stbl.child("stss") {
            syncSamples = Self.entries(stss, width: 4) { p, i in R.u32(p, i) }
        }
        if let stsz = stbl.child("stsz"), stsz.payload.count >= 12 {
            let p = stsz.payload
            let fixed = R.u32(p, p.startIndex + 4)
            let count = Int(R.u32(p, p.startIndex + 8))
            if fixed != 0 {
                sampleSizes = SampleSizes(every: fixed, count: count)
            } else {
                let n = min(count, (p.count - 12) / 4)
                sampleSizes = SampleSizes((0..<n).map { R.u32(p, p.startIndex + 12 + 4 * $0) })
            }
        } else if let stz2 = stbl.child("stz2"), stz2.payload.count >= 12 {
            let p = stz2.payload
            let field = Int(p[p.startIndex + 7])
            let count = Int(R.u32(p, p.startIndex + 8))
            let body = p.dropFirst(12)
            sampleSizes = SampleSizes(
                (0..<count).compactMap { i -> UInt32? in
                    switch field {
                    case 4:
                        guard i / 2 < body.count else { return nil }
                        let b = body[body.startIndex + i / 2]
                        return UInt32(i % 2 == 0 ? b >> 4 : b & 0x0F)
                    case 8: return i < body.count ? UInt32(body[body.startIndex + i]) : nil
                    case 16: return 2 * i + 1 < body.count ? UInt32(R.u16(body, body.startIndex + 2 * i)) : nil
                    default: return nil
                    }
                })
        }
        sampleToChunk = Self.entries(stbl.child("stsc"), width: 12) { p, i in
            (R.u32(p, i), R.u32(p, i + 4), R.u32(p, i + 8))
        }
        if let co64 = stbl.child("co64") {
            chunkOffsets = Self.entries(co64, width: 8) { p, i in Int64(bitPattern: R.u64(p, i)) }
        } else {
            chunkOffsets = Self.entries(stbl.child("stco"), width: 4) { p, i in Int64(R.u32(p, i)) }
        }
        if let elst = trak.find(["edts", "elst"]) {
            let v1 = elst.version == 1
            edits = Self.entries(elst, width: v1 ? 20 : 12) { p, i in
                v1
                    ? (R.u64(p, i), Int64(bitPattern: R.u64(p, i + 8)))
                    : (UInt64(R.u32(p, i)), Int64(Int32(bitPattern: R.u32(p, i + 4))))
            }
        }
    }

    /// A full box's table: a 4-byte entry count after version and flags, then entries of `width` bytes each, read by
    /// `entry(payload, index)`; as many as fit.
    private static func entries<T>(
        _ box: ISOBoxes.Box?, width: Int, _ entry: (ArraySlice<UInt8>, Int) -> T
    ) -> [T] {
        guard let p = box?.payload, p.count >= 8 else { return [] }
        let count = Int(ISOBoxes.Reader.u32(p, p.startIndex + 4))
        let n = min(count, (p.count - 8) / width)
        return (0..<n).map { entry(p, p.startIndex + 8 + width * $0) }
    }
}

/// A `moov` box: the movie's time scale and its tracks' tables.
package struct MovieTables: Sendable {
    package var timescale: UInt32 = 0
    package var tracks: [TrackTables] = []
    /// Whether the movie is fragmented (`mvex`: its samples are in `moof` boxes).
    package var isFragmented = false

    package init(moov payload: ArraySlice<UInt8>) {
        let moov = ISOBoxes.Box(type: "moov", payload: payload)
        if let mvhd = moov.child("mvhd") {
            let p = mvhd.payload
            let at = p.startIndex + (mvhd.version == 1 ? 20 : 12)
            if p.endIndex - at >= 4 { timescale = ISOBoxes.Reader.u32(p, at) }
        }
        isFragmented = moov.child("mvex") != nil
        tracks = moov.children().filter { $0.type == "trak" }.compactMap { TrackTables(trak: $0) }
    }
}
