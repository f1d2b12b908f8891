// Clip's own checks: what it writes is what it was asked for, measured with ffprobe, and its command is the one the
// tests' expectations were made with.

import Foundation
import Testing

@Suite("Clip")
struct ClipTests {
    /// The one video stream of `path`.
    static func video(_ path: String) throws -> Oracle.StreamInfo {
        let video = try Oracle.streams(path).filter { $0.codecType == "video" }
        try #require(video.count == 1, "\(video)")
        return video[0]
    }

    /// The audio streams of `path`.
    static func audio(_ path: String) throws -> [Oracle.StreamInfo] {
        try Oracle.streams(path).filter { $0.codecType == "audio" }
    }

    @Test("testsrc2 by default, into H.264 4:2:0: its size, rate, frames and seconds; no sound unless asked")
    func pictureDefaults() throws {
        let scratch = try Scratch()
        let path = try Clip.video(seconds: 1, size: "320x240", rate: 30).write(in: scratch, name: "in.mp4")
        #expect(try Oracle.streams(path).map(\.codecType) == ["video"])
        let video = try Self.video(path)
        #expect(video.codecName == "h264" && video.pixFmt == "yuv420p", "\(video)")
        #expect(video.width == 320 && video.height == 240, "\(video)")
        #expect(video.avgFrameRate == Oracle.Rational(num: 30, den: 1), "\(video)")
        #expect(try Oracle.videoFramePTS(path).count == 30)
        let seconds = try #require(try Oracle.format(path).duration)
        #expect(abs(seconds - 1) < 0.05, "\(seconds) s")
    }

    @Test("frames(_:) ends a generator that runs for ever; the codec and pixel format asked for")
    func frameCountAndFormat() throws {
        let scratch = try Scratch()
        let path = try Clip.video(.smptebars, size: "160x120", rate: 25).frames(12)
            .codec("ffv1", pixelFormat: "yuv444p").write(in: scratch, name: "bars.mkv")
        let video = try Self.video(path)
        #expect(video.codecName == "ffv1" && video.pixFmt == "yuv444p", "\(video)")
        #expect(video.width == 160 && video.height == 120, "\(video)")
        #expect(try Oracle.videoFramePTS(path).count == 12)
    }

    @Test("duration(_:) ends a generator without a duration of its own (mandelbrot): its frames and seconds")
    func outputDuration() throws {
        let scratch = try Scratch()
        let path = try Clip.video(.mandelbrot, size: "128x96", rate: 10).duration(2).codec("ffv1")
            .write(in: scratch, name: "m.mkv")
        let times = try Oracle.videoFramePTS(path)
        #expect(times.count == 20)
        #expect(abs((times.last ?? 0) - 1.9) < 0.002, "\(times)")
        #expect(try Self.video(path).width == 128)
    }

    @Test("a plain colour, one frame, as PNG; a filter after the generator (format=gray)")
    func colourAndFilter() throws {
        let scratch = try Scratch()
        let png = try Clip.video(.color("red"), size: "64x48").frames(1).codec("png").write(in: scratch, name: "c.png")
        let picture = try Self.video(png)
        #expect(picture.codecName == "png" && picture.width == 64 && picture.height == 48, "\(picture)")
        let rgb = try Media.rgbFrames(png)
        // (the colour source draws in YUV: red comes back as 253, 0, 0)
        #expect(rgb.count == 64 * 48 * 3 && rgb[0] >= 250 && rgb[1] <= 4 && rgb[2] <= 4, "\(rgb.prefix(3))")
        let gray = try Clip.video(seconds: 0.2, size: "64x48", rate: 10, filter: "format=gray").codec("ffv1")
            .write(in: scratch, name: "g.mkv")
        #expect(try Self.video(gray).pixFmt == "gray")
    }

    @Test("sound: a sine at its rate (mono), silence in quad, a 5.1 pan; each in the codec asked for")
    func sound() throws {
        let scratch = try Scratch()
        let sine = try Clip.video(seconds: 1, size: "160x96", rate: 25)
            .audio(.sine(frequency: 440, sampleRate: 48000, seconds: 1)).audioCodec("aac")
            .write(in: scratch, name: "sine.mp4")
        #expect(try Oracle.streams(sine).map(\.codecType) == ["video", "audio"])
        let a = try #require(try Self.audio(sine).first)
        #expect(a.codecName == "aac" && a.sampleRate == 48000 && a.channels == 1, "\(a)")

        let silence = try Clip.video(seconds: 1, size: "160x96", rate: 25)
            .audio(.silence(layout: "quad", sampleRate: 32000, seconds: 1)).audioCodec("pcm_s16le")
            .write(in: scratch, name: "silence.mkv")
        let s = try #require(try Self.audio(silence).first)
        #expect(s.codecName == "pcm_s16le" && s.sampleRate == 32000 && s.channels == 4, "\(s)")

        let surround = try Clip.video(seconds: 1, size: "160x96", rate: 25)
            .audio(.sine(seconds: 1), filter: "pan=5.1|FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0").audioCodec("flac")
            .write(in: scratch, name: "surround.mkv")
        let f = try #require(try Self.audio(surround).first)
        #expect(f.codecName == "flac" && f.sampleRate == 44100 && f.channels == 6, "\(f)")
    }

    @Test("sound alone: no video stream, the length -t gives")
    func soundAlone() throws {
        let scratch = try Scratch()
        let path = try Clip.audio(.sine(sampleRate: 22050)).duration(2).audioCodec("flac")
            .write(in: scratch, name: "tone.flac")
        let streams = try Oracle.streams(path)
        #expect(streams.map(\.codecType) == ["audio"], "\(streams)")
        #expect(streams.first?.sampleRate == 22050 && streams.first?.channels == 1)
        let seconds = try #require(try Oracle.format(path).duration)
        #expect(abs(seconds - 2) < 0.01, "\(seconds) s")
    }

    @Test("an offset input starts later; metadata of the file and of a stream; -shortest ends with the shortest")
    func offsetMetadataShortest() throws {
        let scratch = try Scratch()
        let path = try Clip.video(seconds: 2, size: "160x96", rate: 25).audio(.sine(seconds: 5), offset: 0.5)
            .audioCodec("aac").metadata("title", "A clip").metadata("language", "fra", stream: "s:a:0").shortest()
            .write(in: scratch, name: "offset.mkv")
        let a = try #require(try Self.audio(path).first)
        #expect(abs((a.startTime ?? 0) - 0.5) < 0.03, "audio starts at \(a.startTime ?? -1)")
        let report = try Media.probe(path)
        let streams = report["streams"] as? [[String: Any]] ?? []
        #expect(streams.count == 2 && Media.tags(streams[1])["language"] == "fra", "\(streams)")
        let format = report["format"] as? [String: Any] ?? [:]
        #expect(Media.tags(format)["title"] == "A clip", "\(format)")
        let seconds = try #require(try Oracle.format(path).duration)
        #expect(seconds < 2.3, "-shortest: \(seconds) s (the sound alone runs to 5.5 s)")
    }

    @Test("a file input mapped first: the streams in the order of map(_:), the subtitle codec asked for")
    func fileInputAndMap() throws {
        let scratch = try Scratch()
        let srt = scratch.file("s.srt")
        try "1\n00:00:00,000 --> 00:00:00,500\nHello\n\n".write(to: srt, atomically: true, encoding: .utf8)
        let path = try Clip.video(seconds: 1, size: "160x96", rate: 25).input(srt.path).map(["1", "0"])
            .subtitleCodec("ass").write(in: scratch, name: "sub.mkv")
        let streams = try Oracle.streams(path)
        #expect(streams.map(\.codecType) == ["subtitle", "video"], "\(streams)")
        #expect(streams.first?.codecName == "ass", "\(streams)")
    }

    @Test("gop(_:): a keyframe every n frames; colour tags")
    func keyframesAndColours() throws {
        let scratch = try Scratch()
        let path = try Clip.video(seconds: 2, size: "160x96", rate: 25)
            .codec("libx264", options: ["-sc_threshold", "0"]).gop(10)
            .colors(primaries: "bt2020", transfer: "smpte2084", space: "bt2020nc")
            .write(in: scratch, name: "gop.mkv")
        let keyframes = try Oracle.packets(path, streamIndex: 0).filter(\.isKeyframe).compactMap(\.ptsTime)
        #expect(keyframes == [0, 0.4, 0.8, 1.2, 1.6], "\(keyframes)")
        let video = try #require(try Media.streams(path).first)
        let tags = ["color_primaries", "color_transfer", "color_space"].map { video[$0] as? String ?? "-" }
        #expect(tags == ["bt2020", "smpte2084", "bt2020nc"], "\(tags)")
    }

    @Test("the command: global options, inputs in order, then the output options in their fixed order, then the path")
    func command() {
        let args = Clip.video(size: "320x240", rate: 30).audio(.sine(frequency: 440, sampleRate: 48000), offset: 1)
            .input("s.srt").map(["0", "1", "2"]).frames(45).duration(1.5)
            .codec("libx264", pixelFormat: "yuv420p", preset: "ultrafast", options: ["-bf", "3"]).gop(15)
            .audioCodec("aac").subtitleCodec("srt").colors(primaries: "bt709", transfer: "bt709", space: "bt709")
            .metadata("language", "eng", stream: "s:a:0").shortest().extra(["-movflags", "0"])
            .arguments(for: "out.mp4")
        #expect(
            args == [
                "-v", "error", "-nostdin", "-y",
                "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
                "-itsoffset", "1", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                "-i", "s.srt",
                "-map", "0", "-map", "1", "-map", "2", "-frames:v", "45", "-t", "1.5",
                "-c:v", "libx264", "-pix_fmt", "yuv420p", "-preset", "ultrafast", "-bf", "3", "-g", "15",
                "-c:a", "aac", "-c:s", "srt",
                "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709",
                "-metadata:s:a:0", "language=eng", "-shortest", "-movflags", "0", "out.mp4",
            ], "\(args)")
        // The generators' own options, and numbers as ffmpeg reads them.
        let sources = [
            Clip.video(.testsrc, seconds: 0.04, size: "64x48"), Clip.video(.color("red"), seconds: 2),
            Clip.video(.nullsrc, rate: 10, filter: "format=gray"), Clip.audio(.noise(color: "pink", amplitude: 0.3)),
            Clip.audio(.sine(seconds: 5, samplesPerFrame: 24)), Clip.audio(.silence()), Clip.lavfi("a[x];[x]b"),
        ].map { $0.arguments(for: "o")[7] }
        #expect(
            sources == [
                "testsrc=size=64x48:duration=0.04", "color=color=red:duration=2", "nullsrc=rate=10,format=gray",
                "anoisesrc=color=pink:amplitude=0.3", "sine=samples_per_frame=24:duration=5", "anullsrc", "a[x];[x]b",
            ], "\(sources)")
    }

    @Test("a clip ffmpeg cannot make throws with the command and ffmpeg's own words")
    func failureSaysWhy() throws {
        let scratch = try Scratch()
        let error = #expect(throws: Oracle.Failure.self) {
            try Clip.video(.mandelbrot, seconds: 1).write(in: scratch, name: "m.mkv")
        }
        let text = error?.description ?? ""
        #expect(text.contains("mandelbrot=duration=1") && text.contains("Option 'duration' not found"), "\(text)")
    }
}
