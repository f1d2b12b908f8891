import Foundation
import Testing

/// MP4/MOV outputs keep a phone's tags (issue 16): Apple's QuickTime keys (make, model, software, creation date,
/// ISO 6709 location) and Android's (version, the slow-motion capture rate, the location), as Matroska does.
@Suite("Phone metadata")
struct MetadataTests {
    /// The format's tags as ffprobe reads them, keys in capitals with `_` for `.` (as Matroska writes them).
    static func tags(_ path: String) throws -> [String: String] {
        let format = try Media.probe(path, ["-show_format"])["format"] as? [String: Any]
        let tags = (format?["tags"] as? [String: String]) ?? [:]
        return Dictionary(tags.map { (Self.key($0.key), $0.value) }) { a, _ in a }
    }

    static func key(_ k: String) -> String { k.uppercased().replacingOccurrences(of: ".", with: "_") }

    static let apple = [
        "com.apple.quicktime.make": "Apple", "com.apple.quicktime.model": "iPhone 15 Pro",
        "com.apple.quicktime.software": "18.1", "com.apple.quicktime.creationdate": "2025-06-01T10:00:00+0200",
        "com.apple.quicktime.location.ISO6709": "+48.8584+002.2945+035.000/",
    ]
    static let android = [
        "com.android.version": "14", "com.android.capture.fps": "240.000000", "location": "+51.5335-000.1261/",
    ]

    /// A 0.4 s clip with `tags` written as QuickTime metadata keys, and a creation time.
    static func phoneClip(_ name: String, tags: [String: String], in scratch: Scratch) throws -> String {
        var clip = Clip.video(seconds: 0.4, size: "192x108", rate: 25).audio(.sine(seconds: 0.4)).audioCodec("aac")
            .shortest().metadata("creation_time", "2025-06-01T08:00:00Z").extra(["-movflags", "use_metadata_tags"])
        for (key, value) in tags.sorted(by: { $0.key < $1.key }) { clip = clip.metadata(key, value) }
        return try clip.write(in: scratch, name: name)
    }

    @Test(arguments: ["mov", "mp4", "mkv"])
    func phoneTagsAreKept(_ ext: String) throws {
        let scratch = try Scratch()
        for (name, tags) in [("iphone.mov", Self.apple), ("android.mp4", Self.android)] {
            let input = try Self.phoneClip(name, tags: tags, in: scratch)
            let given = try Self.tags(input)
            try #require(tags.allSatisfy { given[Self.key($0.key)] == $0.value }, "the sample lacks its tags: \(given)")
            let output = scratch.file("\(name)-out.\(ext)").path
            let run = try CLI.cropzoom([input, "-o", output, "--zoom", "1.2"])
            try #require(run.status == 0, "\(run)")
            let kept = try Self.tags(output)
            for (key, value) in tags {
                #expect(kept[Self.key(key)] == value, "\(name) → .\(ext): \(key) = \(kept[Self.key(key)] ?? "missing")")
            }
            let created = kept["CREATION_TIME"]?.replacingOccurrences(of: ".000000", with: "")
            #expect(created == "2025-06-01T08:00:00Z", "\(name) → .\(ext): creation_time \(created ?? "missing")")
            // The output's own brands, not the input's written back as tags.
            #expect(kept["MAJOR_BRAND"] == (ext == "mp4" ? "isom" : ext == "mov" ? "qt  " : nil), "\(name): \(kept)")
            #expect(kept["COMPATIBLE_BRANDS"] != "isommp42", "\(name) → .\(ext): the input's brands: \(kept)")
        }
    }
}
