#if canImport(Glibc)
    import Glibc
#endif

/// The bits ran out before a syntax element ended.
package struct BitstreamEnd: Error {}

/// Reads a NAL unit's payload bit by bit (H.264 / HEVC syntax: fixed-width numbers, Exp-Golomb codes). Give it the
/// raw byte sequence payload (``rbsp(_:limit:)``), not the NAL as stored.
package struct BitReader {
    private let bytes: [UInt8]
    /// Bits read so far.
    package private(set) var position = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var bitsLeft: Int { bytes.count * 8 - position }

    /// One bit.
    package mutating func flag() throws(BitstreamEnd) -> Bool { try bits(1) == 1 }

    /// `count` bits (0…32) as an unsigned number, most significant first (`u(n)`).
    package mutating func bits(_ count: Int) throws(BitstreamEnd) -> UInt32 {
        guard count <= bitsLeft else { throw BitstreamEnd() }
        var value: UInt32 = 0
        for _ in 0..<count {
            let byte = bytes[position >> 3]
            value = value << 1 | UInt32(byte >> (7 - UInt8(position & 7)) & 1)
            position += 1
        }
        return value
    }

    /// An unsigned Exp-Golomb code (`ue(v)`); at most 31 leading zeros.
    package mutating func ue() throws(BitstreamEnd) -> UInt32 {
        var zeros = 0
        while try !flag() {
            zeros += 1
            if zeros > 31 { throw BitstreamEnd() }
        }
        return zeros == 0 ? 0 : UInt32((UInt64(1) << zeros) - 1 + UInt64(try bits(zeros)))
    }

    /// A signed Exp-Golomb code (`se(v)`).
    package mutating func se() throws(BitstreamEnd) -> Int32 {
        let k = Int64(try ue())
        return Int32(k % 2 == 1 ? (k + 1) / 2 : -(k / 2))
    }

    /// Skips `count` bits.
    package mutating func skip(_ count: Int) throws(BitstreamEnd) {
        guard count <= bitsLeft else { throw BitstreamEnd() }
        position += count
    }

    /// A NAL unit's payload without its emulation-prevention bytes (a `03` after two zero bytes), at most `limit`
    /// bytes of it (a slice header is in the first few dozen).
    package static func rbsp(_ nal: some Collection<UInt8>, limit: Int = .max) -> [UInt8] {
        // Most slice headers hold no emulation-prevention byte: then the bytes are copied as they are, at once.
        let plain = nal.withContiguousStorageIfAvailable { b -> [UInt8]? in
            let n = min(b.count, limit)
            guard let base = b.baseAddress else { return [] }
            // Each `03` found by `memchr`: one after two zero bytes may be an emulation-prevention byte.
            var at = 0
            while at < n, let found = memchr(base + at, 3, n - at) {
                let i = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if i >= 2 && b[i - 1] == 0 && b[i - 2] == 0 { return nil }
                at = i + 1
            }
            return Array(b[0..<n])
        }
        if let plain = plain ?? nil { return plain }
        var out: [UInt8] = []
        out.reserveCapacity(min(nal.count, limit))
        var zeros = 0
        for b in nal {
            if out.count >= limit { break }
            if zeros >= 2 && b == 3 {
                zeros = 0
                continue
            }
            zeros = b == 0 ? zeros + 1 : 0
            out.append(b)
        }
        return out
    }
}
