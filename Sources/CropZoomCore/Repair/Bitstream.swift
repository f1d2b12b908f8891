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
