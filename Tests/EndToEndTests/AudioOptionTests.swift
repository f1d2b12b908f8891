import Foundation
import Testing

/// `--audio-codec`, `--audio-bitrate`, `--audio-channels` and `--audio-stream` (issue 16): what ffprobe reads back,
/// the notes, and refusals that name the setting.
@Suite("Audio options")
struct AudioOptionTests {
    /// The audio streams ffprobe lists.
    static func audioStreams(_ path: String) throws -> [[String: Any]] {
        try Media.streams(path).filter { $0["codec_type"] as? String == "audio" }
    }

    /// The first packet's time and the time the last one ends (seconds) of stream `index`, and its bytes.
    static func span(_ path: String, streamIndex: Int) throws -> (start: Double, end: Double, bytes: Int) {
        let packets = try Oracle.packets(path, streamIndex: streamIndex)
        let start = try #require(packets.compactMap(\.ptsTime).min())
        let end = try #require(packets.compactMap { p in p.ptsTime.map { $0 + (p.durationTime ?? 0) } }.max())
        return (start, end, packets.reduce(0) { $0 + $1.size })
    }

    /// The average bit rate of stream `index` from its packets' sizes and times.
    static func measuredBitRate(_ path: String, streamIndex: Int) throws -> Double {
        let s = try span(path, streamIndex: streamIndex)
        return Double(s.bytes * 8) / (s.end - s.start)
    }

    static func notes(_ run: CLIResult) -> [String] { run.stderrLines.filter { $0.hasPrefix("cropzoom: note:") } }

    @Test("--audio-codec opus --audio-channels 1 --audio-bitrate 48k: mono Opus at 48 kb/s, on the input's times")
    func codecChannelsAndBitRate() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let output = scratch.file("out.mkv").path
        let run = try CLI.cropzoom([
            input, "-o", output, "--zoom", "1.2", "--audio-codec", "opus", "--audio-channels", "1",
            "--audio-bitrate", "48k",
        ])
        try #require(run.status == 0, "\(run)")
        let audio = try #require(try Self.audioStreams(output).first)
        #expect(audio["codec_name"] as? String == "opus" && audio["channels"] as? Int == 1, "\(audio)")
        #expect(
            Self.notes(run) == ["cropzoom: note: audio stream #1: its channels are mixed from stereo to mono"],
            "\(run.stderrLines)")
        let rate = try Self.measuredBitRate(output, streamIndex: 1)
        #expect(abs(rate - 48_000) < 48_000 * 0.25, "measured \(rate) b/s")
        let before = try Self.span(input, streamIndex: 1)
        let after = try Self.span(output, streamIndex: 1)
        #expect(abs(after.start - before.start) < 0.03, "start \(before.start) → \(after.start)")
        #expect(abs(after.end - before.end) < 0.05, "end \(before.end) → \(after.end)")
    }

    @Test("--audio-bitrate sets AAC's rate: 64k and 192k of pink noise each measured within 10 %")
    func bitRates() throws {
        let scratch = try Scratch()
        // Noise fills any rate (a tone would leave the encoder below it).
        let input = try Clip.video(seconds: 3, size: "160x96", rate: 25)
            .audio(.noise(color: "pink", amplitude: 0.3, seconds: 3), filter: "aformat=channel_layouts=stereo")
            .audioCodec("pcm_s16le").shortest().write(in: scratch, name: "noise.mkv")
        for target in [64_000, 192_000] {
            let output = scratch.file("\(target).mp4").path
            let run = try CLI.cropzoom([input, "-o", output, "--audio-bitrate", "\(target / 1000)k"])
            try #require(run.status == 0, "\(run)")
            let audio = try #require(try Self.audioStreams(output).first)
            #expect(audio["codec_name"] as? String == "aac" && audio["channels"] as? Int == 2, "\(audio)")
            let rate = try Self.measuredBitRate(output, streamIndex: 1)
            #expect(abs(rate - Double(target)) < Double(target) * 0.1, "\(target): measured \(rate) b/s")
            #expect(Self.notes(run).isEmpty, "\(run.stderrLines)")
        }
    }

    @Test("--audio-codec mp3 into MP4; flac with a bit rate is noted; a codec the container cannot hold is refused")
    func codecsAndContainers() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let mp3 = scratch.file("mp3.mp4").path
        let run = try CLI.cropzoom([input, "-o", mp3, "--audio-codec", "mp3"])
        try #require(run.status == 0, "\(run)")
        #expect(try Self.audioStreams(mp3).first?["codec_name"] as? String == "mp3")
        let flac = scratch.file("flac.mkv").path
        let lossless = try CLI.cropzoom([input, "-o", flac, "--audio-codec", "flac", "--audio-bitrate", "96k"])
        try #require(lossless.status == 0, "\(lossless)")
        #expect(try Self.audioStreams(flac).first?["codec_name"] as? String == "flac")
        #expect(
            Self.notes(lossless) == ["cropzoom: note: --audio-bitrate does nothing for flac: it is lossless"],
            "\(lossless.stderrLines)")
        let flv = scratch.file("out.flv").path
        let refused = try CLI.cropzoom([input, "-o", flv, "--audio-codec", "opus"])
        #expect(refused.status == 2 && refused.stderrLines.count == 1, "\(refused)")
        #expect(refused.stderr.contains("flv cannot hold opus audio (--audio-codec opus)"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: flv))
    }

    @Test("5.1 → --audio-channels stereo: two channels, the note, the front left louder than the right")
    func mixDown() throws {
        let scratch = try Scratch()
        let input = scratch.file("surround.mkv")
        let pan = "pan=5.1(side)|FL=c0|FR=0.1*c0|FC=0.3*c0|LFE=0.1*c0|SL=0.7*c0|SR=0.05*c0"
        try Clip.video(seconds: 1, size: "160x96", rate: 25).audio(.sine(frequency: 440, seconds: 1), filter: pan)
            .audioCodec("pcm_s16le").shortest().write(to: input.path)
        let output = scratch.file("out.mp4").path
        let run = try CLI.cropzoom([input.path, "-o", output, "--audio-channels", "stereo"])
        try #require(run.status == 0, "\(run)")
        let audio = try #require(try Self.audioStreams(output).first)
        #expect(audio["codec_name"] as? String == "aac" && audio["channels"] as? Int == 2, "\(audio)")
        #expect(
            Self.notes(run) == ["cropzoom: note: audio stream #1: its channels are mixed from 5.1 to stereo"],
            "\(run.stderrLines)")
        let levels = try StreamRoutingTests.channelLevels(output)
        try #require(levels.count == 2, "\(levels)")
        #expect(levels[0] > levels[1] + 6, "left \(levels[0]) dB, right \(levels[1]) dB")
    }

    /// Three audio streams told apart by language, rate and channels.
    static func threeLanguages(in scratch: Scratch) throws -> String {
        try Clip.video(seconds: 1, size: "160x96", rate: 25)
            .audio(.sine(frequency: 440, sampleRate: 44100, seconds: 1))
            .audio(.sine(frequency: 660, sampleRate: 48000, seconds: 1))
            .audio(.sine(frequency: 880, sampleRate: 32000, seconds: 1))
            .map(["0", "1", "2", "3"]).audioCodec("pcm_s16le")
            .metadata("language", "eng", stream: "s:a:0").metadata("language", "fra", stream: "s:a:1")
            .metadata("language", "ger", stream: "s:a:2").shortest().write(in: scratch, name: "langs.mkv")
    }

    @Test("--audio-stream by language and by number keeps those streams, in order, and notes the rest")
    func streamSelection() throws {
        let scratch = try Scratch()
        let input = try Self.threeLanguages(in: scratch)
        let french = scratch.file("fra.mkv").path
        let run = try CLI.cropzoom([input, "-o", french, "--audio-stream", "fra"])
        try #require(run.status == 0, "\(run)")
        let kept = try Self.audioStreams(french)
        #expect(kept.count == 1 && kept.first?["sample_rate"] as? String == "48000", "\(kept)")
        #expect(Media.tags(try #require(kept.first))["language"] == "fra")
        #expect(
            Self.notes(run) == [
                "cropzoom: note: 2 audio streams (#1, #3: pcm_s16le) dropped: not chosen"
            ], "\(run.stderrLines)")
        let two = scratch.file("two.mkv").path
        let both = try CLI.cropzoom([input, "-o", two, "--audio-stream", "1", "--audio-stream", "3"])
        try #require(both.status == 0, "\(both)")
        #expect(try Self.audioStreams(two).map { $0["sample_rate"] as? String } == ["44100", "32000"])
    }

    @Test("refusals name the setting: no such stream, no such codec or layout, contradictions; nothing written")
    func refusals() throws {
        let scratch = try Scratch()
        let input = try Self.threeLanguages(in: scratch)
        let output = scratch.file("out.mkv").path
        let cases: [([String], String)] = [
            (
                ["--audio-stream", "spa"],
                "--audio-stream spa names no audio stream (its audio streams: #1 eng, #2 fra, #3 ger)"
            ),
            (["--audio-stream", "0"], "--audio-stream 0 names no audio stream"),
            (["--audio-codec", "nosuch"], "--audio-codec nosuch: no such audio codec or encoder"),
            (["--audio-channels", "9.9"], "--audio-channels 9.9: not a channel layout FFmpeg knows"),
            (["--audio", "none", "--audio-bitrate", "96k"], "--audio-bitrate contradicts --audio none"),
            (["--audio", "copy", "--audio-channels", "2"], "--audio-channels re-encodes audio, which --audio copy"),
            (["--audio", "aac", "--audio-codec", "opus"], "--audio-codec opus contradicts --audio aac"),
            (["--audio-bitrate", "12"], "--audio-bitrate takes bits per second from 1k to 10M"),
        ]
        for (args, message) in cases {
            let run = try CLI.cropzoom([input, "-o", output] + args)
            #expect(run.status == 2 && run.stderrLines.count == 1, "\(args): \(run)")
            #expect(run.stderr.contains(message), "\(args): \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output), "\(args) left \(output)")
        }
    }
}
