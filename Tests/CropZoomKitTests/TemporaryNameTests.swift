// The temporary's name beside an output (`.NAME.cropzoom-tmp-PID`): every "%" of NAME made "_" (a muxer would expand
// a pattern in it), and NAME cut on a character boundary so that the name and a process id fit in 255 bytes.

import Testing

@testable import CropZoomKit

@Suite("Temporary names")
struct TemporaryNameTests {
    @Test("every % is made _ (also one a combining mark follows), the rest kept; a long name cut within 255 bytes")
    func temporaryPrefix() {
        #expect(AtomicOutput.temporaryPrefix(for: "clip%03d.mp4") == ".clip_03d.mp4.cropzoom-tmp-")
        // "%" then U+0301: one Character, two scalars; the "%" byte must not reach the muxer.
        let accented = AtomicOutput.temporaryPrefix(for: "a%\u{301}d.mp4")
        #expect(!accented.utf8.contains(UInt8(ascii: "%")) && accented == ".a_\u{301}d.mp4.cropzoom-tmp-")
        #expect(AtomicOutput.temporaryPrefix(for: "out.mov", recording: true) == ".out.mov.cropzoom-rec-")
        let long = String(repeating: "é", count: 300) + ".mp4"
        let prefix = AtomicOutput.temporaryPrefix(for: long)
        #expect(prefix.utf8.count + 21 <= AtomicOutput.nameLimit && prefix.hasSuffix("é.cropzoom-tmp-"))
        #expect(prefix.utf8.count + 21 > AtomicOutput.nameLimit - 2, "cut further than it needs: \(prefix.utf8.count)")
    }
}
