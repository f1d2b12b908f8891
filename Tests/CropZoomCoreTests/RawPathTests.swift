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

    @Test(
        """
        a path's folder, name and extension as Foundation's URL gave them (the folder absolute, the same folder once \
        standardised), addresses told from paths, and a name not yet made resolved through a linked folder
        """)
    func pathParts() throws {
        let cwd = FileManager.default.currentDirectoryPath
        let paths = [
            "out.mov", "./out.mov", "dir/out.mov", "/abs/out.mov", "dir/", "../x/out.mov", "dir//out.mov", "/out.mov",
            ".hidden", "a.b/c", "x.MOV", "/abs/./y/../out.mov", "out.mov/", "my clip.final.mp4", "/",
        ]
        for path in paths {
            let url = URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: cwd, isDirectory: true))
            let (folder, name) = RawPath.folderAndName(path)
            #expect(folder.hasPrefix("/"), "\(path): \(folder)")
            #expect(name == (path == "/" ? "" : url.lastPathComponent), "\(path)")
            let standard = { (p: String) in URL(fileURLWithPath: p).standardized.path }
            #expect(standard(folder) == standard(url.deletingLastPathComponent().path), "\(path): \(folder)")
            #expect(RawPath.pathExtension(name) == URL(fileURLWithPath: name).pathExtension, "\(path)")
            #expect(
                RawPath.joined(folder, name) == (name.isEmpty ? folder : (folder == "/" ? "/" : folder + "/") + name))
        }
        let bytes: [UInt8] = [0x64, 0xFE, 0x2F, 0x6F, 0xFF, 0x2E, 0x6D, 0x70, 0x34]  // d\xfe/o\xff.mp4
        let raw = RawPath.folderAndName(RawPath.string(fromBytes: bytes))
        #expect(
            RawPath.bytes(raw.name) == [0x6F, 0xFF, 0x2E, 0x6D, 0x70, 0x34] && raw.folder.hasSuffix("/d\u{10FFFE}"))
        for (target, address) in [
            ("srt://127.0.0.1:9000", true), ("rtmp://host/live", true), ("udp://@:1234", true), ("/a/b.mp4", false),
            ("a:/b", false), ("://", true), ("", false), ("c:\\x", false),
        ] {
            #expect(RawPath.isAddress(target) == address, "\(target)")
        }
        #expect(RawPath.scheme(of: "SRT://Host:9000?latency=20") == "srt" && RawPath.scheme(of: "/a/b.mp4") == nil)
        // Only the first colon opens a scheme: a file name with "://" later in it is a path.
        #expect(RawPath.scheme(of: "take 1: a://b.mp4") == nil && !RawPath.isAddress("take 1: a://b.mp4"))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cz-parts-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try RawPath.makeDirectories(dir + "/real")
        #expect(symlink(dir + "/real", dir + "/link") == 0)
        let real = try #require(RawPath.realPath(dir + "/real"))
        #expect(RawPath.resolved(dir + "/link/new.mp4") == real + "/new.mp4")
        #expect(RawPath.resolved(dir + "/link") == real && RawPath.realPath(dir + "/link/new.mp4") == nil)
        // (Foundation's `resolvingSymlinksInPath()` left `link/new.mp4` as it was, the file not being there: two
        // names of one file to come were not told the same.)
    }
}
