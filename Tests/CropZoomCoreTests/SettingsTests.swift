import Foundation
import Testing

@testable import CropZoomCore

/// The settings table, its parsers and job files: every setting reaches the configuration, a job file gives the
/// same configuration as the settings it names, errors name their setting in each front end's words.
@Suite("Settings")
struct SettingsTests {
    /// A value other than the default for every setting: a new setting fails here until it has one.
    static let samples: [Setting: String] = [
        .zoom: "1.65", .center: "0.62,0.4", .ease: "smooth", .background: "#102030",
        .crop: "0s:1280:720, 2s:640:360", .size: "1920x-2", .fit: "contain", .rotate: "7.5",
        .transform: "1,0,0,1,-10,0",
        .flip: "vertical", .scaler: "lanczos", .kernel: "zimg", .deinterlace: "off", .orientation: "ignore",
        .start: "1.5", .end: "0:04", .duration: "2", .keepStartTime: "true", .codec: "libx265", .crf: "20",
        .preset: "fast", .bitrate: "2.5M", .pixFmt: "yuv420p10le", .toneMap: "reinhard",
        .audio: "aac", .strict: "true", .force: "true",
        .threads: "4", .decoderThreads: "2", .encoderThreads: "3", .workers: "2", .live: "true",
        .inputFormat: "lavfi", .inputOption: "framerate=30\nvideo_size=1280x720", .maxLatency: "0.5",
        .liveTimeout: "3", .audioInput: "pulse:default", .audioInputOption: "sample_rate=48000\nchannels=1",
        .segment: "10", .profile: "high", .level: "4.1", .tune: "film", .gop: "48", .tag: "hev1",
        .encoderOption: "aq-mode=2\nx264-params=bframes=0", .audioCodec: "opus", .audioBitrate: "96k",
        .audioChannels: "5.1", .audioStream: "eng\n2", .framerate: "30000/1001",
        .streams: "video,audio,subtitles:fra", .stabilize: "true", .stabilizeSmoothing: "2",
        .stabilizeMode: "tripod", .stabilizeCrop: "1.05", .stabilizeBorder: "fill", .pathIn: "/paths/path.csv",
        .pathOut: "/paths/chosen.csv", .aspect: "9:16", .follow: "faces", .preview: "/paths/sheet.png",
        .reference: "/paths/good.mp4",
    ]

    static let plain = TranscodeConfiguration(input: "in.mov", output: "out.mkv")

    @Test("every setting has a sample, reaches the configuration, and is written back by arguments()")
    func everySettingReachesTheConfiguration() throws {
        #expect(try Settings().configuration(input: "in.mov", output: "out.mkv") == Self.plain)
        for setting in Setting.allCases {
            let value = try #require(Self.samples[setting], "\(setting) has no sample value here: add one")
            let settings = Settings([setting: value])
            // The easing shows on keyframes only.
            let base = setting == .ease ? Settings([.zoom: "0s:1, 1s:2"]) : Settings()
            let c = try base.merging(settings).configuration(input: "in.mov", output: "out.mkv")
            #expect(
                c != (try base.configuration(input: "in.mov", output: "out.mkv")),
                "\(setting.key) \(value) changes nothing")
            let expected =
                setting.isSwitch
                ? [setting.flag] : value.split(separator: "\n").flatMap { [setting.flag, String($0)] }
            #expect(settings.arguments() == expected, "\(setting.key)")
            #expect(!setting.help(naming: \.flag).contains("\u{E000}"), "\(setting.key)'s help")
        }
    }

    @Test("a CropZoomError is a LocalizedError: localizedDescription is its one line, settings named by key")
    func localizedDescription() {
        let e = CropZoomError(
            .usage, path: "/a b.mp4", setting: .crf, reason: "\(setting: .crf) must be between 0 and 63")
        #expect((e as any Error).localizedDescription == "/a b.mp4: crf must be between 0 and 63")
    }

    @Test("specific values land where they belong: quarter turns vs any angle, a duration as an end, force")
    func values() throws {
        let c = try Settings([
            .zoom: "0s:1, 4s:2", .center: "0.6,0.4", .rotate: "-90", .start: "1:02.5", .duration: "10", .crf: "18",
            .bitrate: "800k", .background: "blur", .force: "true", .ease: "smooth",
        ]).configuration(input: "i", output: "o")
        #expect(c.geometry.zoom == 1 && c.geometry.zoomTrack?.keys.count == 2 && c.geometry.zoomTrack?.ease == .smooth)
        #expect(c.geometry.center == UnitPoint(x: 0.6, y: 0.4) && c.geometry.rotate == 270 && c.geometry.angle == nil)
        #expect(c.start == 62.5 && c.end == 72.5 && c.crf == 18 && c.bitrate == 800_000)
        #expect(c.background == .blur && c.force && c.overwrite)
        let tilted = try Settings([.rotate: "7.5"]).configuration(input: "i", output: "o")
        #expect(tilted.geometry.rotate == 0 && tilted.geometry.angle == Track(constant: [7.5]))
        let crop = try Settings([.crop: "640:360"]).configuration(input: "i", output: "o")
        #expect(crop.geometry.crop == .init(width: 640, height: 360) && crop.geometry.cropTrack == nil)
        #expect(
            Settings.bitrate("4M") == 4_000_000 && Settings.bitrate("-1M") == nil && Settings.bitrate("1e300") == nil)
        #expect(Settings.seconds("01:02:03.250") == 3723.25 && Settings.seconds("1:60") == nil)
    }

    @Test("arguments(): only what differs from the defaults, in the table's order, a negative value kept whole")
    func arguments() {
        let s = Settings([.rotate: "-3", .zoom: "1", .audio: "auto", .keepStartTime: "true", .size: "-2x720"])
        #expect(s.arguments() == ["--size=-2x720", "--rotate=-3", "--keep-start-time"])
        #expect(
            Settings([.crop: "640:360", .center: "0.5,0.4"]).arguments() == [
                "--center", "0.5,0.4", "--crop", "640:360",
            ])
        var off = s
        off[.keepStartTime] = "false"
        #expect(off[.keepStartTime] == nil && !off.arguments().contains("--keep-start-time"))
        #expect(
            Settings([.zoom: "2"]).merging(Settings([.zoom: "3", .crf: "20"])).arguments() == [
                "--zoom", "3", "--crf", "20",
            ])
    }

    static let refused: [(Setting, String)] = [
        (.zoom, "0.05"), (.zoom, "nan"), (.center, "2,2"), (.center, "0.5"), (.crop, "10:abc"), (.crop, "0:10"),
        (.crop, "10:10:-1:0"), (.crop, "0s:640:360, 1s:640:480"), (.crop, "1e20:720"), (.size, "0x0"),
        (.size, "640"), (.rotate, "45deg"), (.rotate, "1e300"), (.transform, "2,0,0,2,0"),
        (.transform, "0,0,0,0,0,0"), (.flip, "diagonal"), (.ease, "bouncy"), (.background, "pink"),
        (.scaler, "sinc"), (.kernel, "libyuv"), (.deinterlace, "maybe"), (.orientation, "up"), (.start, "-1"),
        (.end, "soon"), (.duration, "0"), (.crf, "99"), (.crf, "high"), (.bitrate, "fast"), (.audio, "mp3"),
        (.threads, "0"), (.decoderThreads, "257"), (.encoderThreads, "two"), (.workers, "-1"),
    ]

    @Test("a refused value: a usage error naming its setting, by key in the library and by flag on demand")
    func refusalsNameTheirSetting() {
        for (setting, value) in Self.refused {
            do {
                _ = try Settings([setting: value]).configuration(input: "i", output: "o")
                Issue.record("\(setting.key) \(value) was accepted")
            } catch {
                #expect(error.kind == .usage && error.setting == setting, "\(setting.key) \(value): \(error)")
                #expect(
                    error.description.hasPrefix(setting.key + " ") || error.description.hasPrefix(setting.key + ":"),
                    "\(error.description)")
                let flags = error.description(naming: \.flag)
                #expect(flags.hasPrefix(setting.flag + " ") || flags.hasPrefix(setting.flag + ":"), "\(flags)")
                #expect(!flags.contains("\u{E000}") && !error.description.contains("\u{E001}"))
            }
        }
        // Settings that refuse each other name the one to change.
        let pairs: [([Setting: String], Setting, String)] = [
            ([.end: "4", .duration: "2"], .duration, "end and duration both say where to stop"),
            ([.start: "5", .end: "4"], .end, "end 4 is not after start 5"),
            ([.threads: "1", .workers: "2"], .workers, "workers needs more than one thread: threads 1 runs"),
            ([.follow: "center", .pathOut: "p.csv"], .pathOut, "follow center keeps the window still: there is no"),
        ]
        for (values, setting, text) in pairs {
            #expect(throws: CropZoomError.self) { try Settings(values).configuration(input: "i", output: "o") }
            do { _ = try Settings(values).configuration(input: "i", output: "o") } catch {
                #expect(error.setting == setting && error.description.hasPrefix(text), "\(error.description)")
            }
        }
    }

    @Test("references render in what and reason; text without one is unchanged")
    func rendering() {
        let e = CropZoomError(
            .usage, what: "checking \(setting: .pixFmt)", path: "/a b.mp4", setting: .pixFmt,
            reason: "\(setting: .pixFmt) x: use \(setting: .codec) or \(setting: .keepStartTime)")
        #expect(e.description == "/a b.mp4: checking pix_fmt: pix_fmt x: use codec or keep_start_time")
        #expect(
            e.description(naming: \.flag)
                == "/a b.mp4: checking --pix-fmt: --pix-fmt x: use --codec or --keep-start-time")
        #expect(e.reason(naming: { "<\($0.key)>" }) == "<pix_fmt> x: use <codec> or <keep_start_time>")
        #expect(CropZoomError(.usage, reason: "plain: 100% s:1").description == "plain: 100% s:1")
    }

    // MARK: Job files

    static func job(_ text: String, _ name: String = "job.yaml") throws(CropZoomError) -> JobFile {
        try JobFile(text: text, path: "/jobs/\(name)")
    }

    @Test("a job file's camera path files, like its clips' files, are relative to its folder; absolute ones stay")
    func jobFilePathFiles() throws {
        let file = try Self.job(
            "defaults: {path_out: out/p.csv}\nclips:\n  - {input: a.mp4, output: o.mkv, path_in: ../in/p.csv}\n"
                + "  - {input: b.mp4, output: p.mkv, path_out: /abs/q.csv}\n")
        #expect(file.clips[0].configuration.stabilize?.pathIn == "/in/p.csv")
        #expect(file.clips[0].configuration.stabilize?.pathOut == "/jobs/out/p.csv")
        #expect(file.clips[1].configuration.stabilize?.pathOut == "/abs/q.csv")
        // --follow's files and its contact sheet alike (a sheet of the still window with follow center).
        let reframed = try Self.job(
            "clips:\n  - {input: a.mp4, output: o.mkv, aspect: '9:16', path_out: w.csv, preview: sheets/a.png}\n"
                + "  - {input: b.mp4, output: p.mkv, aspect: '9:16', follow: center, preview: b.png}\n")
        #expect(reframed.clips[0].configuration.reframe?.pathOut == "/jobs/w.csv")
        #expect(reframed.clips[0].configuration.reframe?.preview == "/jobs/sheets/a.png")
        #expect(
            reframed.clips[1].configuration.reframe
                == {
                    var r = Reframing(follow: .center)
                    r.preview = "/jobs/b.png"
                    return r
                }())
    }

    @Test(
        "a job file gives each clip the configuration its settings give, in YAML and JSON alike",
        arguments: [true, false])
    func jobFileMatchesSettings(yaml: Bool) throws {
        for setting in Setting.allCases where setting.inJobFiles {
            let value = try #require(Self.samples[setting])
            let quote = yaml ? "'" : "\""
            let written =
                setting.isSwitch
                ? "true"
                : setting.isRepeatable
                    ? "[" + value.split(separator: "\n").map { quote + $0 + quote }.joined(separator: ", ") + "]"
                    : quote + value + quote
            let text =
                yaml
                ? "clips:\n  - {input: a.mp4, output: out/o.mkv, \(setting.key): \(written)}\n"
                : "{\"clips\": [{\"input\": \"a.mp4\", \"output\": \"out/o.mkv\", \"\(setting.key)\": \(written)}]}"
            let file = try Self.job(text, yaml ? "job.yaml" : "job.json")
            let clip = try #require(file.clips.first)
            #expect(clip.input == "/jobs/a.mp4" && clip.output == "/jobs/out/o.mkv")
            #expect(clip.settings == Settings([setting: value]), "\(setting.key)")
            let expected = try Settings([setting: value]).configuration(input: "/jobs/a.mp4", output: "/jobs/out/o.mkv")
            #expect(clip.configuration == expected, "\(setting.key)")
        }
    }

    @Test("numbers and lists are written as the command line writes them; a clip's setting wins over defaults")
    func numbersListsAndDefaults() throws {
        let file = try Self.job(
            """
            defaults: {zoom: 2, preset: ultrafast, size: 320x-2}
            clips:
              - {input: a.mp4, output: o1.mp4, center: [0.6, 0.4], transform: [-1, 0, 0, -1, 640, 360]}
              - {input: b.mp4, output: o2.mp4, zoom: 1.5, start: 0:01.5, overwrite: true}
            """)
        #expect(file.clips.count == 2)
        let (a, b) = (file.clips[0], file.clips[1])
        #expect(a.settings[.center] == "0.6,0.4" && a.settings[.transform] == "-1,0,0,-1,640,360")
        #expect(a.settings[.zoom] == "2" && b.settings[.zoom] == "1.5" && b.settings[.preset] == "ultrafast")
        #expect(b.configuration.start == 1.5 && b.overwrite && !a.overwrite)
        #expect(b.label == "clips[1] (b.mp4)")
        let json = try Self.job(
            "{\"clips\": [{\"input\": \"a.mp4\", \"output\": \"o.mp4\", \"zoom\": 2, \"center\": [0.6, 0.4]}]}",
            "job.json")
        #expect(json.clips[0].settings[.zoom] == "2" && json.clips[0].settings[.center] == "0.6,0.4")
    }

    @Test("invalid job files: one line naming the file, the clip and the field")
    func jobFileErrors() {
        let cases: [(String, String, String)] = [
            (
                "job.yaml", "clips:\n  - {input: a.mp4, output: o.mp4, zoom: 0.05}\n",
                "/jobs/job.yaml: clips[0] (a.mp4): zoom must be a number ≥ 0.1 (got 0.05)"
            ),
            (
                "job.yaml", "clips:\n  - {input: a.mp4, output: o.mp4, zooom: 2}\n",
                "/jobs/job.yaml: clips[0] (a.mp4): zooom: unknown field"
            ),
            (
                "job.yaml", "clips:\n  - {input: a.mp4, output: o.mp4, threads: 2}\n",
                "/jobs/job.yaml: clips[0] (a.mp4): threads: unknown field"
            ),
            (
                "job.yaml", "clips:\n  - {input: a.mp4, output: o.mp4, crop: true}\n",
                "/jobs/job.yaml: clips[0] (a.mp4): crop: must be a number or text, not true"
            ),
            (
                "job.yaml", "clips:\n  - {input: a.mp4, output: o.mp4, strict: 1}\n",
                "/jobs/job.yaml: clips[0] (a.mp4): strict: must be true or false"
            ),
            ("job.yaml", "clips:\n  - {input: a.mp4}\n", "/jobs/job.yaml: clips[0] (a.mp4): output: missing (a path)"),
            (
                "job.yaml", "defaults: {output: x.mp4}\nclips:\n  - {input: a.mp4, output: o.mp4}\n",
                "/jobs/job.yaml: defaults: unknown field 'output' (only a clip can give it)"
            ),
            ("job.yaml", "clips: []\n", "/jobs/job.yaml: clips: must be a non-empty list"),
            ("job.yaml", "jobs: []\n", "/jobs/job.yaml: unknown top-level field 'jobs' (expected defaults, clips)"),
            ("job.txt", "clips: []\n", "/jobs/job.txt: a job file is .json, .yaml or .yml"),
        ]
        for (name, text, message) in cases {
            do {
                _ = try Self.job(text, name)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error.kind == .usage && error.description == message, "\(error.description)")
            }
        }
        #expect(throws: CropZoomError.self) { try Self.job("{\"clips\": ", "job.json") }
    }
}
