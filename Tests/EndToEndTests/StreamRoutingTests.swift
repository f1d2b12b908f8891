// Issue 13's container, stream and metadata defects: what each output container holds (chapter
// tracks, audio/subtitle/data routing, the default video codec), colour, tags, side data and the
// codec libraries' logs. Inputs are small clips made here (Clip: the ffmpeg CLI's generators).

import Foundation
import Testing

/// ffmpeg/ffprobe helpers for these tests (raw JSON, so any field can be read).
enum Media {
    /// Runs `ffmpeg -v error -y args…`; throws with its stderr on failure.
    static func make(_ args: [String]) throws {
        try Oracle.runChecked("ffmpeg", ["-v", "error", "-nostdin", "-y"] + args)
    }

    /// `ffprobe -v error <args> -of json <path>` as a dictionary.
    static func probe(_ path: String, _ args: [String] = ["-show_streams", "-show_chapters", "-show_format"])
        throws -> [String: Any]
    {
        let out = try Oracle.runChecked("ffprobe", ["-v", "error"] + args + ["-of", "json", path]).stdout
        let object = try JSONSerialization.jsonObject(with: Data(out.utf8))
        return object as? [String: Any] ?? [:]
    }

    /// The streams of `path` (ffprobe's dictionaries).
    static func streams(_ path: String) throws -> [[String: Any]] {
        try probe(path)["streams"] as? [[String: Any]] ?? []
    }

    /// A stream's tags with lowercased keys.
    static func tags(_ stream: [String: Any]) -> [String: String] {
        let raw = stream["tags"] as? [String: String] ?? [:]
        return Dictionary(raw.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    /// The side-data types of a stream or frame dictionary.
    static func sideDataTypes(_ object: [String: Any]) -> [String] {
        (object["side_data_list"] as? [[String: Any]] ?? []).compactMap { $0["side_data_type"] as? String }
    }

    /// Decoded frames of the first video stream as rgb24 bytes (`width`×`height` each).
    static func rgbFrames(_ path: String) throws -> [UInt8] {
        let scratch = try Scratch()
        let raw = scratch.file("frames.rgb")
        try make(["-i", path, "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", "rgb24", raw.path])
        return [UInt8](try Data(contentsOf: raw))
    }

    /// Count of decoded video frames (`ffprobe -count_frames`).
    static func frameCount(_ path: String) throws -> Int? {
        let s = try probe(path, ["-count_frames", "-select_streams", "v:0", "-show_streams"])
        let streams = s["streams"] as? [[String: Any]] ?? []
        return (streams.first?["nb_read_frames"] as? String).flatMap(Int.init)
    }
}

@Suite("Stream routing and metadata (issue 13)")
struct StreamRoutingTests {
    /// Item 16: a QuickTime chapter track (a text track the mov demuxer turns into a discarded
    /// data stream) is not copied as a stream; the chapters themselves are.
    @Test func quickTimeChapterTrackStaysChapters() throws {
        let scratch = try Scratch()
        let meta = scratch.file("chapters.txt")
        try """
        ;FFMETADATA1
        [CHAPTER]
        TIMEBASE=1/1000
        START=0
        END=500
        title=One
        [CHAPTER]
        TIMEBASE=1/1000
        START=500
        END=1000
        title=Two

        """.write(to: meta, atomically: true, encoding: .utf8)
        let input = scratch.file("chapters.mp4")
        try Clip.video(seconds: 1, size: "160x120", rate: 25).audio(.sine(seconds: 1)).input(meta.path).map(["0", "1"])
            .audioCodec("aac").shortest().extra(["-map_chapters", "2"]).write(to: input.path)
        let inputTypes = try Media.streams(input.path).compactMap { $0["codec_type"] as? String }
        try #require(inputTypes == ["video", "audio", "data"], "the sample has no chapter track: \(inputTypes)")
        for ext in ["mp4", "mov", "mkv"] {
            let output = scratch.file("out.\(ext)")
            let run = try CLI.cropzoom([input.path, "-o", output.path, "--zoom", "1.5"])
            #expect(run.status == 0, "\(ext): \(run)")
            guard run.status == 0 else { continue }
            #expect(!run.stderr.contains("bin_data"), "\(ext): a note about the chapter track: \(run.stderr)")
            let report = try Media.probe(output.path)
            let types = (report["streams"] as? [[String: Any]] ?? []).compactMap { $0["codec_type"] as? String }
            // MP4/MOV muxers write chapters as a chapter track of their own: the peer is
            // ffmpeg's remux of the video and audio alone.
            let peer = scratch.file("peer.\(ext)")
            try Media.make(["-i", input.path, "-map", "0:v", "-map", "0:a", "-c", "copy", peer.path])
            let peerTypes = try Media.streams(peer.path).compactMap { $0["codec_type"] as? String }
            #expect(types == peerTypes, "\(ext): the chapter track was copied as a stream: \(types)")
            let titles = (report["chapters"] as? [[String: Any]] ?? []).compactMap {
                ($0["tags"] as? [String: String])?["title"]
            }
            #expect(titles == ["One", "Two"], "\(ext): chapters \(titles)")
        }
    }
}

extension StreamRoutingTests {
    /// A 1 s clip with H.264 video, AAC audio and an SRT subtitle, in Matroska.
    static func clipWithAudioAndSubtitles(in scratch: Scratch) throws -> URL {
        let srt = scratch.file("s.srt")
        try "1\n00:00:00,000 --> 00:00:00,800\nHello\n\n".write(to: srt, atomically: true, encoding: .utf8)
        let input = scratch.file("av-sub.mkv")
        try Clip.video(seconds: 1, size: "160x120", rate: 25).audio(.sine(seconds: 1)).input(srt.path)
            .map(["0", "1", "2"]).audioCodec("aac").subtitleCodec("srt").shortest().write(to: input.path)
        return input
    }

    /// Item 17: `--audio auto` asks the muxer what it holds. MPEG-PS holds MPEG audio only (AAC
    /// becomes MP2); MPEG-TS holds AAC but not SRT (it used to become an unreadable `bin_data`
    /// stream); GIF holds no audio (dropped with a note); `--audio aac` into WebM is refused.
    @Test func audioSubtitlesAndDataFollowTheContainer() throws {
        let scratch = try Scratch()
        let input = try Self.clipWithAudioAndSubtitles(in: scratch)
        func types(_ url: URL) throws -> [String] {
            try Media.streams(url.path).map {
                "\($0["codec_type"] as? String ?? "?"):\($0["codec_name"] as? String ?? "?")"
            }
        }

        let mpg = scratch.file("out.mpg")
        let r1 = try CLI.cropzoom([input.path, "-o", mpg.path])
        #expect(r1.status == 0, "\(r1)")
        if r1.status == 0 {
            #expect(try types(mpg) == ["video:h264", "audio:mp2"])
            let note = "audio stream #1 (aac) cannot go in mpeg; re-encoding it to MP2"
            #expect(r1.stderr.contains(note), "\(r1.stderr)")
        }

        let ts = scratch.file("out.ts")
        let r2 = try CLI.cropzoom([input.path, "-o", ts.path])
        #expect(r2.status == 0, "\(r2)")
        if r2.status == 0 {
            #expect(try types(ts) == ["video:h264", "audio:aac"])
            #expect(r2.stderr.contains("subtitle stream #2 (subrip) dropped"), "\(r2.stderr)")
        }

        let gif = scratch.file("out.gif")
        let r3 = try CLI.cropzoom([input.path, "-o", gif.path])
        #expect(r3.status == 0, "\(r3)")
        if r3.status == 0 {
            #expect(try types(gif) == ["video:gif"])
            #expect(r3.stderr.contains("audio stream #1 (aac) dropped: gif holds no audio"), "\(r3.stderr)")
        }

        let webm = scratch.file("out.webm")
        let r4 = try CLI.cropzoom([input.path, "-o", webm.path, "--audio", "aac"])
        #expect(r4.status == 2 && r4.stderr.contains("--audio aac: webm cannot hold AAC"), "\(r4)")
        #expect(!Files.exists(webm) && Files.temporaryLeftovers(in: scratch.url).isEmpty)
    }
}

extension StreamRoutingTests {
    /// Item 18: where H.264 does not fit, the container's own video codec is used; each output is
    /// readable with every frame (it used to fail at the header with x264).
    @Test(arguments: [("gif", "gif"), ("mxf", "mpeg2video"), ("ogv", "theora"), ("y4m", "rawvideo"), ("apng", "apng")])
    func containerOwnVideoCodec(_ ext: String, _ codec: String) throws {
        let scratch = try Scratch()
        let input = scratch.file("in.mkv")
        try Clip.video(seconds: 1, size: "160x120", rate: 25).audio(.sine(seconds: 1)).audioCodec("flac")
            .write(to: input.path)
        let output = scratch.file("out.\(ext)")
        let run = try CLI.cropzoom([input.path, "-o", output.path, "--zoom", "1.5"])
        try #require(run.status == 0, "\(run)")
        let video = try #require(try Media.streams(output.path).first { $0["codec_type"] as? String == "video" })
        #expect(video["codec_name"] as? String == codec)
        #expect(try Media.frameCount(output.path) == 25)
    }
}

extension StreamRoutingTests {
    /// Item 7: RGB-tagged inputs (`color_space=gbr`) encoded as YUV are converted with a named
    /// matrix and labelled with it: pure red, green and blue come back (decoded by ffmpeg to
    /// rgb24) within a few levels.
    @Test(arguments: [("ffv1", "mkv", "gbrp"), ("libx264rgb", "mkv", "bgr0"), ("libvpx-vp9", "webm", "gbrp")])
    func rgbInputKeepsItsColours(_ codec: String, _ ext: String, _ pixFmt: String) throws {
        let scratch = try Scratch()
        let input = scratch.file("rgb.\(ext)")
        let bars =
            "color=c=red:s=64x64:r=25:d=0.4[r];color=c=lime:s=64x64:r=25:d=0.4[g];"
            + "color=c=blue:s=64x64:r=25:d=0.4[b];[r][g][b]hstack=3,format=\(pixFmt)"
        let lossless = codec == "libvpx-vp9" ? ["-lossless", "1"] : codec == "libx264rgb" ? ["-qp", "0"] : []
        try Clip.lavfi(bars).codec(codec, options: lossless).write(to: input.path)
        let inStream = try #require(try Media.streams(input.path).first)
        try #require(inStream["color_space"] as? String == "gbr", "the sample is not tagged RGB: \(inStream)")

        let output = scratch.file("out.mp4")
        let run = try CLI.cropzoom([input.path, "-o", output.path, "--size", "96x32"])
        try #require(run.status == 0, "\(run)")
        let outStream = try #require(try Media.streams(output.path).first)
        #expect(outStream["color_space"] as? String == "bt709", "output labelled \(outStream["color_space"] ?? "-")")
        let pixels = try Media.rgbFrames(output.path)
        try #require(pixels.count >= 96 * 32 * 3)
        let expected: [(x: Int, rgb: [Int])] = [(16, [255, 0, 0]), (48, [0, 255, 0]), (80, [0, 0, 255])]
        for (x, rgb) in expected {
            let i = (16 * 96 + x) * 3
            let got = (0..<3).map { Int(pixels[i + $0]) }
            #expect(
                zip(got, rgb).allSatisfy { abs($0 - $1) <= 4 },
                "\(codec): pixel at x=\(x) is \(got), expected \(rgb)")
        }
    }
}

extension StreamRoutingTests {
    /// Item 10: tags that describe the input's encoding (encoder, VP9 alpha mode, mkvmerge's
    /// statistics) are not copied to a re-encoded stream; other tags are; lost alpha is noted.
    @Test func encodingTagsAreNotCopied() throws {
        let scratch = try Scratch()
        let input = scratch.file("alpha.webm")
        try Clip.video(seconds: 0.4, size: "160x120", rate: 25, filter: "format=yuva420p").codec("libvpx-vp9")
            .metadata("BPS", "12345", stream: "s:v:0").metadata("NUMBER_OF_FRAMES", "999", stream: "s:v:0")
            .metadata("_STATISTICS_TAGS", "BPS NUMBER_OF_FRAMES", stream: "s:v:0")
            .metadata("title", "Kept", stream: "s:v:0").write(to: input.path)
        let inTags = Media.tags(try #require(try Media.streams(input.path).first))
        try #require(inTags["alpha_mode"] == "1" && inTags["encoder"] != nil && inTags["bps"] == "12345", "\(inTags)")
        for ext in ["mkv", "mp4", "webm"] {
            let output = scratch.file("out.\(ext)")
            let run = try CLI.cropzoom([input.path, "-o", output.path])
            try #require(run.status == 0, "\(run)")
            let tags = Media.tags(try #require(try Media.streams(output.path).first))
            for key in ["alpha_mode", "bps", "number_of_frames", "_statistics_tags"] {
                #expect(tags[key] == nil, "\(ext): \(key)=\(tags[key] ?? "") copied")
            }
            #expect(tags["encoder"] == nil, "\(ext): the input's encoder tag was copied: \(tags["encoder"] ?? "")")
            if ext != "mp4" { #expect(tags["title"] == "Kept", "\(ext): \(tags)") }
            #expect(run.stderr.contains("alpha channel (VP9 ALPHA_MODE) is dropped"), "\(ext): \(run.stderr)")
        }
    }
}

extension StreamRoutingTests {
    /// Item 9: the HTC rotation track name is applied, and not copied to the upright output (an
    /// HTC-aware player would turn it again); with `--orientation ignore` it stays.
    @Test func htcRotationNameIsNotCopiedOnceApplied() throws {
        let scratch = try Scratch()
        let input = scratch.file("htc.mkv")
        try Clip.video(seconds: 0.4, size: "160x96", rate: 25).metadata("title", "htc_video_rotA-090", stream: "s:v:0")
            .write(to: input.path)
        let upright = scratch.file("upright.mkv")
        let r1 = try CLI.cropzoom([input.path, "-o", upright.path])
        try #require(r1.status == 0, "\(r1)")
        let s1 = try #require(try Media.streams(upright.path).first)
        #expect((s1["width"] as? Int, s1["height"] as? Int) == (96, 160), "not turned: \(s1)")
        #expect(Media.tags(s1)["title"] == nil, "the HTC name was copied: \(Media.tags(s1))")

        let coded = scratch.file("coded.mkv")
        let r2 = try CLI.cropzoom([input.path, "-o", coded.path, "--orientation", "ignore"])
        try #require(r2.status == 0, "\(r2)")
        let s2 = try #require(try Media.streams(coded.path).first)
        #expect((s2["width"] as? Int, s2["height"] as? Int) == (160, 96))
        #expect(Media.tags(s2)["title"] == "htc_video_rotA-090")
    }
}

extension StreamRoutingTests {
    /// Item 11: `--orientation ignore` keeps the display matrix where the container stores one
    /// (MP4/MOV) and says in one line where it cannot (FFmpeg 5.1's Matroska/WebM muxer).
    @Test func ignoredOrientationIsKeptOrNoted() throws {
        let scratch = try Scratch()
        let input = try Files.sample("rotate90.mp4").path
        let inVideo = try #require(try Media.streams(input).first { $0["codec_type"] as? String == "video" })
        try #require(Media.sideDataTypes(inVideo).contains("Display Matrix"))
        for ext in ["mp4", "mkv", "webm"] {
            let output = scratch.file("out.\(ext)")
            let run = try CLI.cropzoom([input, "-o", output.path, "--orientation", "ignore", "--audio", "none"])
            try #require(run.status == 0, "\(run)")
            let video = try #require(try Media.streams(output.path).first { $0["codec_type"] as? String == "video" })
            let kept = Media.sideDataTypes(video).contains("Display Matrix")
            let notes = run.stderrLines.filter { $0.contains("cannot store its display matrix") }
            if ext == "mp4" {
                #expect(kept && notes.isEmpty, "mp4: matrix kept \(kept), notes \(notes)")
            } else {
                #expect(!kept && notes.count == 1, "\(ext): matrix kept \(kept), notes \(notes)")
            }
        }
    }
}

extension StreamRoutingTests {
    /// Per-channel RMS levels (dB) of the first audio stream (ffmpeg's astats).
    static func channelLevels(_ path: String) throws -> [Double] {
        let filter = "astats=measure_overall=none:measure_perchannel=RMS_level"
        let r = try Oracle.run(
            "ffmpeg",
            [
                "-nostdin", "-hide_banner", "-i", path, "-vn", "-af", filter,
                "-f", "null", "-",
            ])
        return r.stderr.split(separator: "\n").filter { $0.contains("RMS level dB:") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
    }

    /// Item 21: 5.1 audio re-encoded to Opus for WebM keeps its six channels (mapping family 1),
    /// each at its level (side channels become back channels; LFE is left out of the comparison:
    /// Opus low-passes it). From PCM without a named layout and from AAC in MP4.
    @Test(arguments: ["pcm_s16le:mkv", "aac:mp4"])
    func surroundOpusKeepsItsChannels(_ variant: String) throws {
        let parts = variant.split(separator: ":").map(String.init)
        let scratch = try Scratch()
        let input = scratch.file("surround.\(parts[1])")
        let pan = "pan=5.1(side)|FL=c0|FR=0.5*c0|FC=0.3*c0|LFE=0.1*c0|SL=0.7*c0|SR=0.2*c0"
        try Clip.video(seconds: 1, size: "160x96", rate: 25).audio(.sine(frequency: 440, seconds: 1), filter: pan)
            .audioCodec(parts[0]).shortest().write(to: input.path)
        let output = scratch.file("out.webm")
        let run = try CLI.cropzoom([input.path, "-o", output.path])
        try #require(run.status == 0, "\(run)")
        let audio = try #require(try Media.streams(output.path).first { $0["codec_type"] as? String == "audio" })
        #expect(audio["channels"] as? Int == 6, "\(audio)")
        let before = try Self.channelLevels(input.path)
        let after = try Self.channelLevels(output.path)
        try #require(before.count == 6 && after.count == 6, "levels \(before) → \(after)")
        for c in [0, 1, 2, 4, 5] {
            #expect(abs(before[c] - after[c]) < 1, "channel \(c): \(before[c]) dB → \(after[c]) dB")
        }
    }
}

extension StreamRoutingTests {
    /// Item 30 (in part): many streams dropped for one reason get one note, not one each.
    @Test func manyDroppedStreamsGetOneNote() throws {
        let scratch = try Scratch()
        let srt = scratch.file("s.srt")
        try "1\n00:00:00,000 --> 00:00:00,300\nHello\n\n".write(to: srt, atomically: true, encoding: .utf8)
        let input = scratch.file("subs.mkv")
        try Clip.video(seconds: 0.4, size: "160x96", rate: 25).input(srt.path)
            .map(["0"] + Array(repeating: "1", count: 100)).subtitleCodec("srt").write(to: input.path)
        try #require(try Media.streams(input.path).count == 101)
        let output = scratch.file("out.ts")
        let run = try CLI.cropzoom([input.path, "-o", output.path])
        try #require(run.status == 0, "\(run)")
        let notes = run.stderrLines.filter { $0.hasPrefix("cropzoom: note:") }
        #expect(
            notes == ["cropzoom: note: 100 subtitle streams (#1–#100: subrip) dropped: mpegts cannot hold them"],
            "\(notes.count) notes: \(notes.prefix(3))")
        // Converted for one reason: one note too.
        let mp4 = scratch.file("out.mp4")
        let converted = try CLI.cropzoom([input.path, "-o", mp4.path])
        try #require(converted.status == 0, "\(converted)")
        let mp4Notes = converted.stderrLines.filter { $0.hasPrefix("cropzoom: note:") }
        #expect(
            mp4Notes == [
                "cropzoom: note: 100 subtitle streams (#1–#100: subrip) converted to mov_text: mp4 cannot hold them"
            ], "\(mp4Notes.count) notes: \(mp4Notes.prefix(3))")
    }
}

extension StreamRoutingTests {
    /// The HDR10 values of a side-data list (mastering display fields as numbers, MaxCLL, MaxFALL).
    static func hdrValues(_ object: [String: Any]) -> [String: Double] {
        var values: [String: Double] = [:]
        for sd in object["side_data_list"] as? [[String: Any]] ?? [] {
            for (k, v) in sd where k != "side_data_type" {
                if let n = v as? Int { values[k] = Double(n) }
                if let s = v as? String {
                    let q = s.split(separator: "/").compactMap { Double($0) }
                    if q.count == 2 && q[1] != 0 { values[k] = q[0] / q[1] }
                }
            }
        }
        return values
    }

    /// Item 8: HDR10 static metadata (here only in the input's first frame, as the ffmpeg 5.1 CLI
    /// writes it) reaches the output container (Matroska colour elements, MP4 mdcv/clli, read
    /// back as stream side data) and, with x265, the bitstream (frame side data). H.264 keeps HDR when asked for 10
    /// bits (High 10); without, it is tone mapped (ToneMapTests).
    @Test(arguments: [("mkv", "libx265"), ("mp4", "libx265"), ("mkv", "libx264"), ("mp4", "libx264")])
    func hdr10MetadataIsCarried(_ ext: String, _ codec: String) throws {
        let scratch = try Scratch()
        let input = scratch.file("hdr.mkv")
        try Self.makeHDR10(input.path)
        func firstFrame(_ path: String) throws -> [String: Any] {
            let r = try Media.probe(path, ["-show_frames", "-read_intervals", "%+#1", "-select_streams", "v:0"])
            return (r["frames"] as? [[String: Any]])?.first ?? [:]
        }
        let expected = Self.hdrValues(try firstFrame(input.path))
        try #require(
            expected["max_luminance"] == 1000 && expected["max_content"] == 1000 && expected.count == 12,
            "the sample has no HDR10 metadata: \(expected)")
        let output = scratch.file("out.\(ext)")
        let tenBits = codec == "libx264" ? ["--pix-fmt", "yuv420p10le"] : []
        let run = try CLI.cropzoom([input.path, "-o", output.path, "--codec", codec, "--zoom", "1.5"] + tenBits)
        try #require(run.status == 0, "\(run)")
        let stream = Self.hdrValues(try #require(try Media.streams(output.path).first))
        #expect(stream.count == 12, "container: \(stream)")
        for (k, v) in expected {
            #expect(abs((stream[k] ?? -1) - v) <= 1e-4 * max(1, v), "container \(k): \(stream[k] ?? -1) != \(v)")
        }
        if codec == "libx265" {
            let frame = Self.hdrValues(try firstFrame(output.path))
            #expect(frame == expected, "bitstream: \(frame)")
        }
    }
}

extension StreamRoutingTests {
    /// Item 23: codec libraries that print their own log (SVT-AV1's banner, x265's) print nothing
    /// under `--quiet` and nothing but JSON lines with `--progress json`; `--verbose` lets them through.
    @Test(arguments: [("libsvtav1", "Svt[info]"), ("libx265", "x265 [info]")])
    func codecLibraryLogsFollowVerbosity(_ codec: String, _ banner: String) throws {
        let scratch = try Scratch()
        let input = scratch.file("in.mkv")
        try Clip.video(seconds: 0.4, size: "160x96", rate: 25).write(to: input.path)
        let output = scratch.file("out.mkv")
        let quiet = try CLI.cropzoom([input.path, "-o", output.path, "-y", "--codec", codec, "--quiet"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "--quiet printed: \(quiet.stderr.prefix(300))")
        let json = try CLI.cropzoom([input.path, "-o", output.path, "-y", "--codec", codec, "--progress", "json"])
        #expect(json.status == 0)
        let notJSON = json.stderrLines.filter { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] == nil
        }
        #expect(notJSON.isEmpty, "--progress json printed other lines: \(notJSON.prefix(3))")
        let verbose = try CLI.cropzoom([input.path, "-o", output.path, "-y", "--codec", codec, "--verbose"])
        #expect(verbose.status == 0 && verbose.stderr.contains(banner), "--verbose: \(verbose.stderr.prefix(300))")
    }
}

extension StreamRoutingTests {
    /// Item 12: interlaced input is noted in one line when transcoded, and `probe` shows the
    /// field order (text and JSON, as ffprobe names it).
    @Test func interlacedInputIsNotedAndProbed() throws {
        let scratch = try Scratch()
        let input = scratch.file("interlaced.mpg")
        try Clip.video(seconds: 0.4, size: "320x240", rate: 25)
            .codec("mpeg2video", options: ["-flags", "+ildct+ilme", "-top", "1"]).write(to: input.path)
        let peer = try #require(try Media.streams(input.path).first)["field_order"] as? String
        try #require(peer == "tt", "the sample is not interlaced: \(peer ?? "-")")
        let run = try CLI.cropzoom([input.path, "-o", scratch.file("out.mp4").path])
        try #require(run.status == 0, "\(run)")
        #expect(run.stderrLines.filter { $0.contains("is interlaced (top field first)") }.count == 1, "\(run.stderr)")
        let json = try CLI.cropzoom(["probe", "--json", input.path])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let streams = object?["streams"] as? [[String: Any]] ?? []
        #expect(streams.first?["field_order"] as? String == peer, "\(json.stdout)")
        let text = try CLI.cropzoom(["probe", input.path])
        #expect(text.stdout.contains("interlaced (tt)"), "\(text.stdout)")

        let progressive = scratch.file("progressive.mkv")
        try Clip.video(seconds: 0.2, size: "160x96", rate: 25).write(to: progressive.path)
        let r2 = try CLI.cropzoom([progressive.path, "-o", scratch.file("p.mp4").path])
        #expect(r2.status == 0 && !r2.stderr.contains("interlaced"), "\(r2)")
    }
}

extension StreamRoutingTests {
    /// Item 17 (continued): codecs the MP4/MOV muxer lists but refuses at the header (FLAC in
    /// MP4 is experimental in FFmpeg 5.1; Opus only in MP4) are re-encoded, not copied into a failure.
    @Test(arguments: [("flac", "mp4"), ("libopus", "mov")])
    func audioTheMuxerRefusesIsReencoded(_ codec: String, _ ext: String) throws {
        let scratch = try Scratch()
        let input = scratch.file("in.mkv")
        try Clip.video(seconds: 0.4, size: "160x96", rate: 25).audio(.sine(seconds: 0.4)).audioCodec(codec)
            .write(to: input.path)
        let output = scratch.file("out.\(ext)")
        let run = try CLI.cropzoom([input.path, "-o", output.path])
        try #require(run.status == 0, "\(run)")
        let audio = try Media.streams(output.path).filter { $0["codec_type"] as? String == "audio" }
        #expect(audio.map { $0["codec_name"] as? String } == ["aac"], "\(audio)")
        #expect(run.stderr.contains("re-encoding it to AAC"), "\(run.stderr)")
    }
}

extension StreamRoutingTests {
    /// Item 18 (continued): where the container's own codec cannot take the input (MPEG-2 for MXF
    /// needs an MPEG frame rate; vfr-h264.mp4 averages 675/44 fps) the job is refused with exit 2
    /// before anything is written.
    @Test func containerCodecThatCannotFitIsRefusedUpFront() throws {
        let scratch = try Scratch()
        let input = try Files.sample("vfr-h264.mp4").path
        let output = scratch.file("out.mxf")
        let run = try CLI.cropzoom([input, "-o", output.path])
        #expect(run.status == 2, "\(run)")
        #expect(run.errorLines.count == 1 && run.stderr.contains("MPEG frame rates"), "\(run.stderr)")
        #expect(Files.names(in: scratch.url).isEmpty, "left: \(Files.names(in: scratch.url))")
    }
}

extension StreamRoutingTests {
    /// A 0.4 s 10-bit HEVC clip with HDR10 static metadata (mastering display, content light
    /// level) written by x265 into its first frame, PQ/BT.2020-tagged, made with the ffmpeg CLI.
    static func makeHDR10(_ path: String) throws {
        let params =
            "log-level=error:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)"
            + "L(10000000,50):max-cll=1000,400:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc"
        try Clip.video(seconds: 0.4, size: "192x108", rate: 25)
            .codec("libx265", pixelFormat: "yuv420p10le", options: ["-x265-params", params])
            .colors(primaries: "bt2020", transfer: "smpte2084", space: "bt2020nc").write(to: path)
    }

    /// Item 8 (the container's copy as the source): HDR10 metadata held only in the input
    /// container (Matroska colour elements, read as stream side data; x264 writes no SEI)
    /// reaches the next output too.
    @Test func hdr10MetadataFromTheContainerIsCarried() throws {
        let scratch = try Scratch()
        let source = scratch.file("hdr.mkv")
        try Self.makeHDR10(source.path)
        let frame = try Media.probe(source.path, ["-show_frames", "-read_intervals", "%+#1", "-select_streams", "v:0"])
        let expected = Self.hdrValues((frame["frames"] as? [[String: Any]])?.first ?? [:])
        try #require(expected.count == 12, "\(expected)")
        // An H.264 (High 10: 8 bits would be tone mapped) Matroska file whose only HDR10 metadata is its colour elements.
        let input = scratch.file("container-only.mkv")
        let first = try CLI.cropzoom([
            source.path, "-o", input.path, "--codec", "libx264", "--pix-fmt", "yuv420p10le",
        ])
        try #require(first.status == 0, "\(first)")
        let inStream = try #require(try Media.streams(input.path).first)
        try #require(Self.hdrValues(inStream).count == 12, "the intermediate file has no colour elements")
        let output = scratch.file("out.mp4")
        let run = try CLI.cropzoom([input.path, "-o", output.path, "--zoom", "1.2"])
        try #require(run.status == 0, "\(run)")
        let stream = Self.hdrValues(try #require(try Media.streams(output.path).first))
        for (k, v) in expected {
            #expect(abs((stream[k] ?? -1) - v) <= 1e-4 * max(1, v), "\(k): \(stream[k] ?? -1) != \(v)")
        }
    }
}

extension StreamRoutingTests {
    /// Cover art (issue 16): a cover picture beside the video is copied, byte for byte, where the container keeps
    /// cover art (MP4's `covr`, a Matroska attachment), and dropped with a note where it cannot (FFmpeg 5.1's MOV
    /// muxer writes no cover; WebM).
    @Test(arguments: [("mp4", true), ("mkv", true), ("mov", false), ("webm", false)])
    func coverArtIsKept(_ ext: String, _ kept: Bool) throws {
        let scratch = try Scratch()
        let video = try Clip.video(seconds: 0.4, size: "192x108", rate: 25).write(in: scratch, name: "v.mp4")
        let cover = try Clip.video(.color("red"), size: "64x64").frames(1).codec("png")
            .write(in: scratch, name: "cover.png")
        let input = scratch.file("with-cover.mp4").path
        try Media.make([
            "-i", video, "-i", cover, "-map", "0", "-map", "1", "-c", "copy", "-disposition:v:1", "attached_pic",
            input,
        ])
        let picture = { (path: String) throws -> (index: Int, hash: String)? in
            guard
                let s = try Media.streams(path).first(where: {
                    ($0["disposition"] as? [String: Any])?["attached_pic"] as? Int == 1
                }), let index = s["index"] as? Int
            else { return nil }
            return (index, try Oracle.packets(path, streamIndex: index).first?.hash ?? "")
        }
        let given = try #require(try picture(input), "the sample has no cover picture")
        let output = scratch.file("out.\(ext)").path
        let run = try CLI.cropzoom([input, "-o", output, "--zoom", "1.2"])
        try #require(run.status == 0, "\(run)")
        let notes = run.stderrLines.filter { $0.hasPrefix("cropzoom: note:") }
        if kept {
            let out = try #require(try picture(output), "\(ext): no cover picture; \(notes)")
            #expect(out.hash == given.hash, "\(ext): the cover picture changed")
            #expect(notes.isEmpty, "\(notes)")
        } else {
            #expect(try picture(output) == nil)
            #expect(notes == ["cropzoom: note: cover picture #1 (png) dropped: \(ext) cannot hold it"], "\(notes)")
        }
        #expect(try Oracle.videoFramePTS(output).count == 10, "\(ext): the picture's frames")
    }
}
