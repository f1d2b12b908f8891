/// Random access to a file's bytes: what `cropzoom repair` reads a broken recording through, since no demuxer opens
/// a file without its index. `CropZoomSystem.FileBytes` reads a file (`pread`); tests read an array.
package protocol ByteSource: AnyObject {
    /// The file's length in bytes.
    var size: Int64 { get }
    /// Up to `count` bytes from `offset` (fewer only at the end of the file).
    func read(at offset: Int64, count: Int) throws(CropZoomError) -> [UInt8]
    /// The same into the start of `buffer`, grown when it is shorter (never shrunk: its storage is reused, read
    /// after read); returns how many bytes were read.
    func read(at offset: Int64, count: Int, into buffer: inout [UInt8]) throws(CropZoomError) -> Int
}

extension ByteSource {
    package func read(at offset: Int64, count: Int, into buffer: inout [UInt8]) throws(CropZoomError) -> Int {
        let bytes = try read(at: offset, count: count)
        if buffer.count < bytes.count { buffer += [UInt8](repeating: 0, count: bytes.count - buffer.count) }
        buffer.replaceSubrange(0..<bytes.count, with: bytes)
        return bytes.count
    }
}

/// Bytes held in memory as a ``ByteSource`` (a reference's `moov`, the tests' made-up files).
package final class MemoryBytes: ByteSource {
    package let bytes: [UInt8]
    package init(_ bytes: [UInt8]) { self.bytes = bytes }
    package var size: Int64 { Int64(bytes.count) }
    package func read(at offset: Int64, count: Int) throws(CropZoomError) -> [UInt8] {
        guard offset < size, count > 0 else { return [] }
        let start = Int(offset)
        return Array(bytes[start..<min(bytes.count, start + count)])
    }
}

/// A sliding window over a ``ByteSource``: the walk through a broken file reads small pieces (NAL lengths, slice
/// headers, a few kilobytes for an audio frame) at increasing offsets, served from one buffer refilled as it moves on,
/// so memory is bounded by the window whatever the file's size.
///
/// Where the walk is (``anchor``) the window stays: bytes asked for within its reach are refilled from the anchor on,
/// and bytes beyond it (a probe that follows a false NAL length megabytes on, inside uncompressed sound) are read
/// into a small buffer aside, so such a probe does not move the window off the walk and back, a megabyte each way
/// (on five minutes of small pictures and 8 kHz PCM that was 11,000 refills, and most of the repair's time).
package final class ByteWindow {
    package let source: ByteSource
    /// Bytes read at a time.
    package let capacity: Int
    private var base: Int64 = 0
    private var buffer: [UInt8] = []
    /// How many bytes of `buffer` the last read filled.
    private var valid = 0
    /// Where the walk is, when it says (nil: every read the window does not hold refills it from there).
    package var anchor: Int64?
    /// Bytes beyond the anchor's reach, read apart (at least ``asideBytes`` at a time).
    private var aside: [UInt8] = []
    private var asideBase: Int64 = 0
    private var asideValid = 0
    static let asideBytes = 16 << 10

    package init(_ source: ByteSource, capacity: Int = 16 << 20) {
        self.source = source
        self.capacity = capacity
    }

    package var size: Int64 { source.size }

    /// Up to `count` bytes at `offset` (fewer at the end of the file), copied out of the window.
    package func bytes(at offset: Int64, count: Int) throws(CropZoomError) -> [UInt8] {
        try withBytes(at: offset, count: count) { Array($0) }
    }

    /// `body` given up to `count` bytes at `offset` (fewer at the end of the file, none past it), a slice of the
    /// window's own storage, not copied: the walk's look at each NAL unit's first bytes.
    package func withBytes<Result>(
        at offset: Int64, count: Int, _ body: (ArraySlice<UInt8>) -> Result
    ) throws(CropZoomError) -> Result {
        guard let (apart, start, held) = try hold(at: offset, count: count) else { return body([]) }
        return body(apart ? aside[start..<start + held] : buffer[start..<start + held])
    }

    /// Makes the window hold up to `count` bytes at `offset`: whether they are in the buffer aside, where they start
    /// in it (or in `buffer`) and how many it holds (fewer only at the end of the file); nil past the end. The window
    /// is refilled from the ``anchor`` when they lie within its reach, from `offset` when there is no anchor or they
    /// lie before it or beyond; those beyond are read aside.
    private func hold(at offset: Int64, count: Int) throws(CropZoomError) -> (aside: Bool, start: Int, held: Int)? {
        guard offset >= 0, offset < size, count > 0 else { return nil }
        let wanted = min(Int64(count), size - offset)
        if offset >= base && offset + wanted <= base + Int64(valid) {
            return (false, Int(offset - base), Int(wanted))
        }
        if let anchor, offset >= anchor {
            if offset + wanted <= anchor + Int64(capacity) {
                base = anchor
                valid = try source.read(at: anchor, count: capacity, into: &buffer)
                let start = Int(offset - base)
                return (false, start, Int(min(wanted, Int64(valid - start))))
            }
            if offset < asideBase || offset + wanted > asideBase + Int64(asideValid) {
                asideBase = offset
                asideValid = try source.read(at: offset, count: max(Self.asideBytes, count), into: &aside)
            }
            let start = Int(offset - asideBase)
            return (true, start, Int(min(wanted, Int64(asideValid - start))))
        }
        base = offset
        valid = try source.read(at: offset, count: max(capacity, count), into: &buffer)
        return (false, 0, Int(min(wanted, Int64(valid))))
    }

    /// The `count` bytes at `offset` when the window holds them all now, without reading or copying (a slice of
    /// the window's storage: let it go before the next read, or that read copies the whole window); nil when it does
    /// not (the caller reads them from the source).
    package func heldBytes(at offset: Int64, count: Int) -> ArraySlice<UInt8>? {
        guard offset >= base, offset + Int64(count) <= base + Int64(valid) else { return nil }
        let start = Int(offset - base)
        return buffer[start..<start + count]
    }

    /// The big-endian unsigned number of `width` bytes (1…8) at `offset`; nil past the end of the file. Read in the
    /// window, without copying (a walk asks for one at every NAL unit).
    package func number(at offset: Int64, width: Int) throws(CropZoomError) -> UInt64? {
        guard let (apart, start, held) = try hold(at: offset, count: width), held == width else { return nil }
        var value: UInt64 = 0
        if apart {
            for i in start..<start + width { value = value << 8 | UInt64(aside[i]) }
        } else {
            for i in start..<start + width { value = value << 8 | UInt64(buffer[i]) }
        }
        return value
    }
}
