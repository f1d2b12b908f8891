import CropZoomSystem
import Foundation
import Testing

@testable import CropZoomCore

@Suite("Raw paths")
struct RawPathTests {
    @Test("bytes → string → bytes is the identity, for any bytes")
    func roundTrip() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<200 {
            let bytes = (0..<length % 24).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(RawPath.bytes(RawPath.string(fromBytes: bytes)) == bytes, "\(bytes)")
        }
        // A valid name that happens to hold one of the private-use scalars the mapping uses.
        let literal = Array("a\u{10FFFF}b".utf8)
        #expect(RawPath.bytes(RawPath.string(fromBytes: literal)) == literal)
    }

    @Test("valid UTF-8 is left as it is; an invalid byte becomes U+10FF00 + byte")
    func mapping() {
        #expect(RawPath.string(fromBytes: Array("clip é 📹.mp4".utf8)) == "clip é 📹.mp4")
        #expect(RawPath.string(fromBytes: [0x62, 0xFF, 0x63]) == "b\u{10FFFF}c")
        #expect(RawPath.string(fromBytes: [0xC3]) == "\u{10FFC3}", "a truncated sequence")
        #expect(RawPath.bytes("b\u{10FFFF}c") == [0x62, 0xFF, 0x63])
    }

    @Test("system calls see the bytes: a file with a name that is not UTF-8 is found, listed and created")
    func systemCalls() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cz-raw-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = dir + "/sub" + RawPath.string(fromBytes: [0xFE])
        try RawPath.makeDirectories(folder)
        let name = RawPath.string(fromBytes: [0x62, 0xFF, 0x2E, 0x6D, 0x70, 0x34])
        let fd = RawPath.withCString(folder + "/" + name) { open($0, O_WRONLY | O_CREAT, 0o644) }
        #expect(fd >= 0)
        close(fd)
        #expect(RawPath.exists(folder + "/" + name) && RawPath.isDirectory(folder))
        #expect(RawPath.contents(ofDirectory: folder) == [name])
        #expect(RawPath.contents(ofDirectory: dir).map { $0.map(RawPath.bytes) } == [[0x73, 0x75, 0x62, 0xFE]])
    }
}
