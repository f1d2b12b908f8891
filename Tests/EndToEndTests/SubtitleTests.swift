import Foundation
import Testing

/// Text subtitles converted where the output container needs another format (issue 16): SubRip in Matroska →
/// `mov_text` in MP4, `mov_text` → SubRip in Matroska and WebVTT in WebM — each cue's text and times kept, as
/// ffmpeg reads them back, and cut with the trim.
@Suite("Subtitles")
struct SubtitleTests {
    struct Cue: Equatable, CustomStringConvertible {
        var start: Double
        var end: Double
        var text: String
        var description: String { String(format: "%.3f–%.3f %@", start, end, text) }
    }

    static let srt = """
        1
        00:00:00,500 --> 00:00:01,000
        Before the cut

        2
        00:00:01,500 --> 00:00:02,000
        First line

        3
        00:00:02,500 --> 00:00:02,900
        Second, with <i>style</i>

        4
        00:00:03,500 --> 00:00:03,900
        After the cut

        """

    /// The cues of the first subtitle stream, as the ffmpeg CLI writes them out as SubRip.
    static func cues(_ path: String) throws -> [Cue] {
        let r = try Oracle.runChecked("ffmpeg", ["-v", "error", "-i", path, "-map", "0:s:0", "-f", "srt", "-"])
        func seconds(_ t: Substring) -> Double {
            let p = t.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ",", with: ".").split(
                separator: ":")
            return p.count == 3 ? Double(p[0])! * 3600 + Double(p[1])! * 60 + Double(p[2])! : .nan
        }
        return r.stdout.components(separatedBy: "\n\n").compactMap { block in
            let lines = block.split(separator: "\n", omittingEmptySubsequences: true)
            guard lines.count >= 3, let arrow = lines[1].range(of: "-->") else { return nil }
            return Cue(
                start: seconds(lines[1][..<arrow.lowerBound]), end: seconds(lines[1][arrow.upperBound...]),
                text: lines[2...].joined(separator: "\n"))
        }
    }

    /// A 4 s clip with `srt` as a subtitle stream in `codec`.
    static func clip(_ name: String, codec: String, in scratch: Scratch) throws -> String {
        let sub = scratch.file("s.srt")
        try srt.write(to: sub, atomically: true, encoding: .utf8)
        return try Clip.video(seconds: 4, size: "192x108", rate: 25).input(sub.path).map(["0", "1"])
            .subtitleCodec(codec).metadata("language", "eng", stream: "s:s:0")
            .write(in: scratch, name: name)
    }

    static func subtitleCodec(_ path: String) throws -> String? {
        try Media.streams(path).first { $0["codec_type"] as? String == "subtitle" }?["codec_name"] as? String
    }

    @Test(
        "SubRip → mov_text (MP4), mov_text → SubRip (MKV) and WebVTT (WebM): the same cues, a note each",
        arguments: [
            ("srt.mkv", "srt", "mp4", "mov_text"), ("tx3g.mp4", "mov_text", "mkv", "subrip"),
            ("tx3g.mp4", "mov_text", "webm", "webvtt"),
        ])
    func converted(_ input: String, _ codec: String, _ ext: String, _ expected: String) throws {
        let scratch = try Scratch()
        let source = try Self.clip(input, codec: codec, in: scratch)
        let before = try Self.cues(source)
        try #require(before.count == 4, "\(before)")
        let output = scratch.file("out.\(ext)").path
        let run = try CLI.cropzoom([source, "-o", output, "--zoom", "1.2"])
        try #require(run.status == 0, "\(run)")
        #expect(try Self.subtitleCodec(output) == expected)
        let after = try Self.cues(output)
        #expect(after.count == before.count, "\(before) → \(after)")
        for (a, b) in zip(before, after) {
            #expect(abs(a.start - b.start) < 0.002 && abs(a.end - b.end) < 0.002 && a.text == b.text, "\(a) → \(b)")
        }
        let from = codec == "srt" ? "subrip" : codec
        #expect(
            run.stderrLines.contains(
                "cropzoom: note: subtitle stream #1 (\(from)) converted to \(expected): "
                    + "\(ext == "mkv" ? "matroska" : ext) cannot hold it"), "\(run.stderrLines)")
        let language = try Media.streams(output).first { $0["codec_type"] as? String == "subtitle" }
        #expect(Media.tags(language ?? [:])["language"] == "eng")
    }

    @Test("converted cues are cut with the trim: --start 1 --end 3 keeps the two inside, moved 1 s earlier")
    func trimmed() throws {
        let scratch = try Scratch()
        let source = try Self.clip("srt.mkv", codec: "srt", in: scratch)
        let output = scratch.file("cut.mp4").path
        let run = try CLI.cropzoom([source, "-o", output, "--start", "1", "--end", "3"])
        try #require(run.status == 0, "\(run)")
        let after = try Self.cues(output)
        let expected = [
            Cue(start: 0.5, end: 1.0, text: "First line"), Cue(start: 1.5, end: 1.9, text: "Second, with <i>style</i>"),
        ]
        #expect(after.count == 2, "\(after)")
        for (a, b) in zip(expected, after) {
            #expect(abs(a.start - b.start) < 0.002 && abs(a.end - b.end) < 0.002 && a.text == b.text, "\(a) → \(b)")
        }
    }
}

extension SubtitleTests {
    /// Video, two audio streams (eng 44.1 kHz, fra 48 kHz) and two subtitle streams (eng, fra).
    static func twoOfEach(in scratch: Scratch) throws -> String {
        let sub = scratch.file("s.srt")
        try srt.write(to: sub, atomically: true, encoding: .utf8)
        return try Clip.video(seconds: 4, size: "192x108", rate: 25)
            .audio(.sine(sampleRate: 44100, seconds: 4)).audio(.sine(sampleRate: 48000, seconds: 4)).input(sub.path)
            .map(["0", "1", "2", "3", "3"]).audioCodec("aac").subtitleCodec("srt")
            .metadata("language", "eng", stream: "s:a:0").metadata("language", "fra", stream: "s:a:1")
            .metadata("language", "eng", stream: "s:s:0").metadata("language", "fra", stream: "s:s:1")
            .write(in: scratch, name: "many.mkv")
    }

    /// `type:language` of every stream after the video.
    static func kinds(_ path: String) throws -> [String] {
        try Media.streams(path).dropFirst().map {
            "\($0["codec_type"] as? String ?? "?"):\(Media.tags($0)["language"] ?? "und")"
        }
    }

    @Test("--streams keeps the kinds and languages it names, in the input's order; the rest dropped with a note")
    func streamSelection() throws {
        let scratch = try Scratch()
        let input = try Self.twoOfEach(in: scratch)
        try #require(try Self.kinds(input) == ["audio:eng", "audio:fra", "subtitle:eng", "subtitle:fra"])
        for (choice, expected, note) in [
            (
                "video,audio:eng,subtitles:fra", ["audio:eng", "subtitle:fra"],
                [
                    "audio stream #2 (aac) dropped: not chosen",
                    "subtitle stream #3 (subrip) dropped: --streams does not name it",
                ]
            ),
            ("video,subtitles", ["subtitle:eng", "subtitle:fra"], []),
            ("video", [], ["2 subtitle streams (#3–#4: subrip) dropped: --streams does not name them"]),
        ] {
            let output = scratch.file("out.mkv").path
            let run = try CLI.cropzoom([input, "-o", output, "-y", "--streams", choice])
            try #require(run.status == 0, "\(choice): \(run)")
            #expect(try Self.kinds(output) == expected, "\(choice)")
            let notes = run.stderrLines.filter { $0.hasPrefix("cropzoom: note:") }
            #expect(notes == note.map { "cropzoom: note: " + $0 }, "\(choice): \(notes)")
        }
        for (bad, message) in [
            ("audio", "--streams must name video"), ("video,pictures", "--streams takes video, audio, subtitles"),
            (
                "video,subtitles:spa",
                "--streams subtitles:spa names no subtitle stream (its subtitle streams: "
                    + "#3 eng, #4 fra)"
            ),
        ] {
            let run = try CLI.cropzoom([input, "-o", scratch.file("bad.mkv").path, "--streams", bad])
            #expect(run.status == 2 && run.stderrLines.count == 1 && run.stderr.contains(message), "\(bad): \(run)")
        }
    }
}
