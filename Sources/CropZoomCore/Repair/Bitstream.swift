#if canImport(Glibc)
    import Glibc
#endif

/// The bits ran out before a syntax element ended.
package struct BitstreamEnd: Error {}

/// Reads a NAL unit's payload (H.264 / HEVC syntax: fixed-width numbers, Exp-Golomb codes) 64 bits at a time, from
/// the payload packed into big-endian words. Give it the raw byte sequence payload (``rbsp(_:limit:)``, or
/// ``init(rbspOf:limit:)``), not the NAL as stored. Up to ``inlineBytes`` bytes (a slice header's first) are held in
/// the reader itself: a walk reads one or two slice headers at every offset it asks, and an array for each was two
/// allocations a picture.
package struct BitReader {
    /// The most bytes held without an array.
    package static let inlineBytes = 64
    /// The payload's bytes, eight to a word, the first in the most significant byte, zeros after the last: 64
    /// bytes and two words of zeros (a read at the very end looks at the word after its own).
    private var words = InlineArray<10, UInt64>(repeating: 0)
    /// Longer payloads (parameter sets), packed alike; empty when ``words`` holds the bytes.
    private var more: [UInt64] = []
    private let count: Int
    /// Bits read so far.
    package private(set) var position = 0

    package init(_ bytes: [UInt8]) {
        count = bytes.count
        if bytes.count > Self.inlineBytes { more = [UInt64](repeating: 0, count: bytes.count / 8 + 2) }
        for (i, b) in bytes.enumerated() {
            let shifted = UInt64(b) &<< UInt64(56 - 8 * (i & 7))
            if more.isEmpty { words[i >> 3] |= shifted } else { more[i >> 3] |= shifted }
        }
    }

    /// A reader of `nal`'s payload without its emulation-prevention bytes (``rbsp(_:limit:)``), at most `limit`
    /// bytes of it; held inline when `limit` is at most ``inlineBytes``.
    package init(rbspOf nal: some Collection<UInt8>, limit: Int) {
        guard limit <= Self.inlineBytes else {
            self.init(Self.rbsp(nal, limit: limit))
            return
        }
        // Most slice headers hold no emulation-prevention byte: then their bytes are packed eight at a time.
        let plain = nal.withContiguousStorageIfAvailable { b -> (InlineArray<10, UInt64>, Int)? in
            var words = InlineArray<10, UInt64>(repeating: 0)
            let n = min(b.count, limit)
            guard let base = b.baseAddress else { return (words, 0) }
            var at = 0
            while at < n, let found = memchr(base + at, 3, n - at) {
                let i = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if i >= 2 && b[i - 1] == 0 && b[i - 2] == 0 { return nil }
                at = i + 1
            }
            var i = 0
            while i + 8 <= n {
                var word: UInt64 = 0
                for k in 0..<8 { word = word << 8 | UInt64(b[i + k]) }
                words[i >> 3] = word
                i += 8
            }
            while i < n {
                words[i >> 3] |= UInt64(b[i]) &<< UInt64(56 - 8 * (i & 7))
                i += 1
            }
            return (words, n)
        }
        if let (words, n) = plain ?? nil {
            self.init(words: words, count: n)
            return
        }
        var words = InlineArray<10, UInt64>(repeating: 0)
        var n = 0
        var zeros = 0
        for b in nal {
            if n >= limit { break }
            if zeros >= 2 && b == 3 {
                zeros = 0
                continue
            }
            zeros = b == 0 ? zeros + 1 : 0
            words[n >> 3] |= UInt64(b) &<< UInt64(56 - 8 * (n & 7))
            n += 1
        }
        self.init(words: words, count: n)
    }

    private init(words: InlineArray<10, UInt64>, count: Int) {
        self.words = words
        self.count = count
    }

    package var bitsLeft: Int { count * 8 - position }

    /// The 64 bits from ``position`` on, the first most significant (0 past the end).
    @inline(__always)
    private func peek() -> UInt64 {
        let w = position >> 6
        let shift = UInt64(position & 63)
        let (high, low) = more.isEmpty ? (words[w], words[w + 1]) : (more[w], more[w + 1])
        return shift == 0 ? high : high &<< shift | low &>> (64 - shift)
    }

    /// One bit.
    package mutating func flag() throws(BitstreamEnd) -> Bool { try bits(1) == 1 }

    /// `count` bits (0…32) as an unsigned number, most significant first (`u(n)`).
    package mutating func bits(_ count: Int) throws(BitstreamEnd) -> UInt32 {
        guard count <= bitsLeft else { throw BitstreamEnd() }
        guard count > 0 else { return 0 }
        let value = UInt32(truncatingIfNeeded: peek() &>> UInt64(64 - count))
        position += count
        return value
    }

    /// An unsigned Exp-Golomb code (`ue(v)`); at most 31 leading zeros (the code's 2 × 31 + 1 bits within one peek).
    package mutating func ue() throws(BitstreamEnd) -> UInt32 {
        let word = peek()
        let zeros = word.leadingZeroBitCount
        guard zeros <= 31 else { throw BitstreamEnd() }
        let length = 2 * zeros + 1
        guard length <= bitsLeft else { throw BitstreamEnd() }
        position += length
        return UInt32(truncatingIfNeeded: (word &>> UInt64(64 - length)) - 1)
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
