// `cropzoom probe`: its JSON against ffprobe's facts on the samples and on every readable clip
// of ../shared/corpus (one line per corpus file: `probe PASS|FAIL name`), the derived facts
// (displayed size, rotation, variable rate) on clips made for them, and bad input.

import CropZoomKit
import Foundation
import Testing

@Suite("Probe")
struct ProbeTests {
    static func cropzoomProbe(_ path: String) throws -> (CLIResult, [String: Any]?) {
        let run = try CLI.cropzoom(["probe", path, "--json"])
        guard run.status == 0 else { return (run, nil) }
        return (run, try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    static func ffprobe(_ path: String) throws -> [String: Any]? {
        let r = try CLI.run(
            "/usr/bin/env",
            ["ffprobe", "-v", "error", "-of", "json", "-show_format", "-show_streams", "-show_chapters", path])
        guard r.status == 0 else { return nil }
        return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
    }

    /// Differences between cropzoom's probe and ffprobe's facts (empty: they agree).
    static func compare(_ cz: [String: Any], _ ff: [String: Any]) -> [String] {
        var diffs: [String] = []
        func close(_ a: Double?, _ b: Double?, _ what: String, tolerance: Double = 0.0011) {
            if let a, let b, abs(a - b) > tolerance {
                diffs.append("\(what): \(a) vs ffprobe \(b)")
            } else if (a == nil) != (b == nil) {
                diffs.append("\(what): \(a.map { "\($0)" } ?? "absent") vs ffprobe \(b.map { "\($0)" } ?? "absent")")
            }
        }
        func number(_ v: Any?) -> Double? {
            (v as? Double) ?? (v as? String).flatMap(Double.init) ?? (v as? Int).map(Double.init)
        }
        let format = ff["format"] as? [String: Any] ?? [:]
        if cz["format"] as? String != format["format_name"] as? String {
            diffs.append("format \(cz["format"] ?? "-") vs \(format["format_name"] ?? "-")")
        }
        close(number(cz["duration"]), number(format["duration"]), "duration")
        close(number(cz["start_time"]), number(format["start_time"]), "start_time")
        if (cz["tags"] as? [String: String] ?? [:]) != (format["tags"] as? [String: String] ?? [:]) {
            diffs.append("tags \(cz["tags"] ?? "-") vs \(format["tags"] ?? "-")")
        }
        let czChapters = cz["chapters"] as? [[String: Any]] ?? []
        let ffChapters = ff["chapters"] as? [[String: Any]] ?? []
        if czChapters.count != ffChapters.count {
            diffs.append("\(czChapters.count) chapters vs \(ffChapters.count)")
        } else {
            for (n, (c, f)) in zip(czChapters, ffChapters).enumerated() {
                close(number(c["start"]), number(f["start_time"]), "chapter \(n) start", tolerance: 1e-5)
                close(number(c["end"]), number(f["end_time"]), "chapter \(n) end", tolerance: 1e-5)
                let title = (f["tags"] as? [String: String])?["title"]
                if c["title"] as? String != title {
                    diffs.append("chapter \(n) title \(c["title"] ?? "-") vs \(title ?? "-")")
                }
            }
        }
        let czStreams = cz["streams"] as? [[String: Any]] ?? []
        let ffStreams = ff["streams"] as? [[String: Any]] ?? []
        if czStreams.count != ffStreams.count {
            diffs.append("\(czStreams.count) streams vs \(ffStreams.count)")
            return diffs
        }
        for (c, f) in zip(czStreams, ffStreams) {
            let i = c["index"] as? Int ?? -1
            let type = f["codec_type"] as? String ?? "unknown"
            if c["type"] as? String != type { diffs.append("#\(i) type \(c["type"] ?? "-") vs \(type)") }
            let codec = f["codec_name"] as? String ?? "unknown"
            if c["codec"] as? String != codec { diffs.append("#\(i) codec \(c["codec"] ?? "-") vs \(codec)") }
            if let p = f["profile"] as? String, p != "unknown", c["profile"] as? String != p {
                diffs.append("#\(i) profile \(c["profile"] ?? "-") vs \(p)")
            }
            close(number(c["start_time"]), number(f["start_time"]), "#\(i) start_time")
            if (c["tags"] as? [String: String] ?? [:]) != (f["tags"] as? [String: String] ?? [:]) {
                diffs.append("#\(i) tags \(c["tags"] ?? "-") vs \(f["tags"] ?? "-")")
            }
            if type == "video" {
                for k in ["color_range", "color_space", "color_primaries", "color_transfer", "chroma_location"] {
                    let given = (f[k] as? String).flatMap { $0 == "unknown" || $0 == "unspecified" ? nil : $0 }
                    if c[k] as? String != given { diffs.append("#\(i) \(k) \(c[k] ?? "-") vs \(given ?? "-")") }
                }
                diffs += Self.compareSideData(c, f, stream: i)
                for (k, fk) in [("width", "width"), ("height", "height")] where c[k] as? Int != f[fk] as? Int {
                    diffs.append("#\(i) \(k) \(c[k] ?? "-") vs \(f[fk] ?? "-")")
                }
                if let pf = f["pix_fmt"] as? String, c["pixel_format"] as? String != pf {
                    diffs.append("#\(i) pix_fmt \(c["pixel_format"] ?? "-") vs \(pf)")
                }
                for k in ["r_frame_rate", "avg_frame_rate"] where c[k] as? String != f[k] as? String {
                    diffs.append("#\(i) \(k) \(c[k] ?? "-") vs \(f[k] ?? "-")")
                }
                if let sar = f["sample_aspect_ratio"] as? String, sar != "0:1",
                    c["sample_aspect_ratio"] as? String != sar
                {
                    diffs.append("#\(i) SAR \(c["sample_aspect_ratio"] ?? "-") vs \(sar)")
                }
                // ffprobe's rotation is counter-clockwise in degrees; cropzoom's is clockwise.
                let side = (f["side_data_list"] as? [[String: Any]] ?? []).first { $0["rotation"] != nil }
                if let r = side.flatMap({ number($0["rotation"]) }) {
                    let clockwise = ((-Int(r)) % 360 + 360) % 360
                    if c["rotation"] as? Int != clockwise {
                        diffs.append("#\(i) rotation \(c["rotation"] ?? "-") vs ffprobe \(Int(r)) (ccw)")
                    }
                }
            } else if type == "audio" {
                if let sr = number(f["sample_rate"]), number(c["sample_rate"]) != sr {
                    diffs.append("#\(i) sample_rate \(c["sample_rate"] ?? "-") vs \(sr)")
                }
                if c["channels"] as? Int != f["channels"] as? Int {
                    diffs.append("#\(i) channels \(c["channels"] ?? "-") vs \(f["channels"] ?? "-")")
                }
                if let l = f["channel_layout"] as? String, c["channel_layout"] as? String != l {
                    diffs.append("#\(i) layout \(c["channel_layout"] ?? "-") vs \(l)")
                }
                if let sf = f["sample_fmt"] as? String, c["sample_format"] as? String != sf {
                    diffs.append("#\(i) sample_fmt \(c["sample_format"] ?? "-") vs \(sf)")
                }
            }
        }
        return diffs
    }

    /// HDR10 metadata and Dolby Vision configuration against ffprobe's stream side data (where ffprobe has it:
    /// cropzoom also reads a PQ stream's first frame, as a transcode does).
    static func compareSideData(_ c: [String: Any], _ f: [String: Any], stream i: Int) -> [String] {
        var diffs: [String] = []
        func ratio(_ v: Any?) -> Double? {
            guard let t = v as? String else { return (v as? Int).map(Double.init) }
            let parts = t.split(separator: "/").compactMap { Double($0) }
            return parts.count == 2 && parts[1] != 0 ? parts[0] / parts[1] : Double(t)
        }
        let side = f["side_data_list"] as? [[String: Any]] ?? []
        if let m = side.first(where: { $0["side_data_type"] as? String == "Mastering display metadata" }) {
            let d = c["mastering_display"] as? [String: Any] ?? [:]
            let pairs: [(String, String, Int)] = [
                ("red_x", "red", 0), ("red_y", "red", 1), ("green_x", "green", 0), ("green_y", "green", 1),
                ("blue_x", "blue", 0), ("blue_y", "blue", 1), ("white_point_x", "white_point", 0),
                ("white_point_y", "white_point", 1),
            ]
            for (ffKey, key, n) in pairs {
                let mine = (d[key] as? [Double]).flatMap { $0.count > n ? $0[n] : nil }
                if let want = ratio(m[ffKey]), abs((mine ?? -1) - want) > 1e-6 {
                    diffs.append("#\(i) mastering \(ffKey) \(mine ?? -1) vs \(want)")
                }
            }
            for k in ["min_luminance", "max_luminance"] {
                if let want = ratio(m[k]), abs(((d[k] as? Double) ?? -1) - want) > 1e-6 {
                    diffs.append("#\(i) mastering \(k) \(d[k] ?? "-") vs \(want)")
                }
            }
        }
        if let l = side.first(where: { $0["side_data_type"] as? String == "Content light level metadata" }) {
            let d = c["content_light_level"] as? [String: Any] ?? [:]
            if d["max_content"] as? Int != l["max_content"] as? Int
                || d["max_average"] as? Int != l["max_average"] as? Int
            {
                diffs.append("#\(i) content light \(d) vs \(l)")
            }
        }
        let dovi = side.first { $0["side_data_type"] as? String == "DOVI configuration record" }
        let d = c["dolby_vision"] as? [String: Any]
        if (dovi == nil) != (d == nil)
            || (dovi.map {
                d?["profile"] as? Int != $0["dv_profile"] as? Int
                    || d?["level"] as? Int != $0["dv_level"] as? Int
            } ?? false)
        {
            diffs.append("#\(i) dolby vision \(d ?? [:]) vs \(dovi ?? [:])")
        }
        return diffs
    }

    static let mediaSamples = [
        "std-h264-aac.mp4", "vfr-h264.mp4", "rotate90.mp4", "odd-444.mkv", "start-offset.ts",
        "vp9-opus.webm", "hevc10.mkv", "no-audio.mp4", "two-audio.mp4", "pcm.mov",
        "one-frame.mp4", "mjpeg-full.mov", "bench-720p.mp4",
    ]

    @Test("probe --json agrees with ffprobe on every sample", arguments: mediaSamples)
    func agreesWithFFprobe(_ sample: String) throws {
        let path = try Files.sample(sample).path
        let (run, cz) = try Self.cropzoomProbe(path)
        let czJSON = try #require(cz, "\(run)")
        let ff = try #require(try Self.ffprobe(path), "ffprobe cannot read \(sample)")
        let diffs = Self.compare(czJSON, ff)
        #expect(diffs.isEmpty, "\(sample): \(diffs.joined(separator: "; "))")
        #expect(czJSON["size_bytes"] as? Int == (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
    }

    @Test(
        """
        probe and analyze-motion read standard input ("-"): the same streams as the file
        """)
    func standardInput() throws {
        let path = try Files.sample("start-offset.ts").path
        let binary = ChildProcess.shellQuoted([try CLI.binary()])
        let piped = try Oracle.run("sh", ["-c", "\(binary) probe - --json < \(ChildProcess.shellQuoted([path]))"])
        #expect(piped.status == 0, "\(piped.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(piped.stdout.utf8)) as? [String: Any])
        let (_, file) = try Self.cropzoomProbe(path)
        let streams = { (j: [String: Any]?) in (j?["streams"] as? [[String: Any]])?.map { $0["codec"] as? String } }
        #expect(streams(json) != nil && streams(json)! == streams(file)!, "\(json)")
        let motion = try Oracle.run("sh", ["-c", "\(binary) analyze-motion - < \(ChildProcess.shellQuoted([path]))"])
        #expect(motion.status == 0, "\(motion.stderr)")
    }

    @Test("what cropzoom adds: shown size and rotation, variable rate, 10-bit depth; text output")
    func derivedFacts() throws {
        func video(_ sample: String) throws -> [String: Any] {
            let (run, cz) = try Self.cropzoomProbe(try Files.sample(sample).path)
            let streams = try #require(cz?["streams"] as? [[String: Any]], "\(run)")
            return try #require(streams.first { $0["type"] as? String == "video" })
        }
        let rotated = try video("rotate90.mp4")
        #expect(
            rotated["width"] as? Int == 320 && rotated["display_width"] as? Int == 240
                && rotated["display_height"] as? Int == 320)
        #expect(rotated["rotation"] as? Int == 90 && rotated["mirrored"] as? Bool == false)
        let vfr = try video("vfr-h264.mp4")
        #expect(vfr["variable_frame_rate"] as? Bool == true && (vfr["frame_rate_checked_frames"] as? Int ?? 0) >= 30)
        let cfr = try video("std-h264-aac.mp4")
        #expect(cfr["variable_frame_rate"] as? Bool == false && cfr["fps"] as? Double == 30)
        #expect(try video("hevc10.mkv")["bit_depth"] as? Int == 10)

        let text = try CLI.cropzoom(["probe", try Files.sample("rotate90.mp4").path])
        #expect(text.status == 0 && text.stdout.contains("320x240 shown as 240x320, rotated 90° clockwise"), "\(text)")
        let vfrText = try CLI.cropzoom(["probe", try Files.sample("vfr-h264.mp4").path])
        #expect(
            vfrText.stdout.contains("variable rate") && vfrText.stdout.contains("#1 audio: aac (LC), 48000 Hz, stereo"),
            "\(vfrText)")
    }

    @Test("MediaProbe.probe(frameRate: false) (batch's check): the same streams, without the frame-rate scan")
    func streamsOnly() throws {
        let path = try Files.sample("vfr-h264.mp4").path
        let full = try MediaProbe.probe(path)
        var quick = try MediaProbe.probe(path, frameRate: false)
        #expect(full.streams.contains { $0.variableFrameRate == true })
        #expect(quick.streams.allSatisfy { $0.variableFrameRate == nil && $0.frameRateCheckedFrames == nil })
        for i in quick.streams.indices {
            quick.streams[i].variableFrameRate = full.streams[i].variableFrameRate
            quick.streams[i].frameRateCheckedFrames = full.streams[i].frameRateCheckedFrames
        }
        #expect(quick == full)
    }

    @Test("bad input: one line naming the file, exit 3; a missing argument is usage (2)")
    func badInput() throws {
        for sample in ["not-media.mp4", "empty.mp4", "truncated.mp4", "unknown-codec.mkv"] {
            let path = try Files.sample(sample).path
            let ff = try Self.ffprobe(path)
            let run = try CLI.cropzoom(["probe", path, "--json"])
            if ff == nil {
                #expect(
                    run.status == 3 && run.stderrLines.count == 1 && run.stderr.contains(sample) && run.stdout.isEmpty,
                    "\(sample): \(run)")
            } else {
                // Readable headers (truncated.mp4, unknown-codec.mkv): described like ffprobe does.
                let cz = try #require(
                    try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(sample): \(run)"
                )
                #expect(Self.compare(cz, ff!).isEmpty, "\(sample): \(Self.compare(cz, ff!))")
            }
        }
        let missing = try CLI.cropzoom(["probe", "/nonexistent/x.mp4"])
        #expect(
            missing.status == 3 && missing.stderr.contains("/nonexistent/x.mp4") && missing.stderrLines.count == 1,
            "\(missing)")
        let usage = try CLI.cropzoom(["probe"])
        #expect(usage.status == 2 && usage.stderrLines.count == 1, "\(usage)")
    }

    @Test(
        "the corpus: every clip ffprobe reads, cropzoom probe reads the same; the rest exit 3",
        arguments: CorpusFile.all)
    func corpus(_ file: CorpusFile) throws {
        let folder = try #require(Oracle.corpusDirectory)
        let path = folder.appendingPathComponent(file.name).path
        let ff = try Self.ffprobe(path)
        let (run, cz) = try Self.cropzoomProbe(path)
        if let ff {
            let czJSON = try #require(cz, "\(file.name): ffprobe reads it, cropzoom probe does not: \(run)")
            let diffs = Self.compare(czJSON, ff)
            print(
                "probe \(diffs.isEmpty ? "PASS" : "FAIL") "
                    + "\(file.name)\(diffs.isEmpty ? "" : ": " + diffs.joined(separator: "; "))"
            )
            #expect(diffs.isEmpty, "\(file.name): \(diffs.joined(separator: "; "))")
        } else {
            print(
                "probe PASS \(file.name) (refused like ffprobe: "
                    + "\(run.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))"
            )
            #expect(run.status == 3 && run.stderrLines.count == 1, "\(file.name): \(run)")
        }
    }
}

extension ProbeTests {
    @Test("tags, chapters, colour and HDR10 metadata: as ffprobe reads them (HDR10 from the first frame too)")
    func tagsChaptersAndHDR() throws {
        let scratch = try Scratch()
        let hdr = scratch.file("hdr.mkv").path
        try StreamRoutingTests.makeHDR10(hdr)
        let chaptered = scratch.file("chapters.mkv").path
        let meta = scratch.file("meta.txt")
        try """
        ;FFMETADATA1
        title=A walk
        [CHAPTER]
        TIMEBASE=1/1000
        START=0
        END=200
        title=Intro
        [CHAPTER]
        TIMEBASE=1/1000
        START=200
        END=400
        title=Park
        """.write(to: meta, atomically: true, encoding: .utf8)
        try Media.make([
            "-i", hdr, "-i", meta.path, "-map_metadata", "1", "-map_chapters", "1", "-c", "copy", chaptered,
        ])
        let (run, cz) = try Self.cropzoomProbe(chaptered)
        let json = try #require(cz, "\(run)")
        let ff = try #require(try Self.ffprobe(chaptered))
        let diffs = Self.compare(json, ff)
        #expect(diffs.isEmpty, "\(diffs.joined(separator: "; "))")
        #expect((json["tags"] as? [String: String])?["title"] == "A walk")
        #expect((json["chapters"] as? [[String: Any]])?.compactMap { $0["title"] as? String } == ["Intro", "Park"])
        let video = try #require((json["streams"] as? [[String: Any]])?.first)
        #expect(video["hdr"] as? String == "PQ" && video["color_transfer"] as? String == "smpte2084", "\(video)")
        let mastering = video["mastering_display"] as? [String: Any]
        #expect(mastering?["max_luminance"] as? Double == 1000 && mastering?["min_luminance"] as? Double == 0.005)
        #expect((mastering?["red"] as? [Double]) == [0.68, 0.32], "\(mastering ?? [:])")
        let light = video["content_light_level"] as? [String: Any]
        #expect(light?["max_content"] as? Int == 1000 && light?["max_average"] as? Int == 400, "\(light ?? [:])")
        let text = try CLI.cropzoom(["probe", chaptered])
        #expect(text.status == 0, "\(text)")
        for line in [
            "  tags: ", "title=A walk", "  chapter 1: 0.000–0.200 s Intro", "  chapter 2: 0.200–0.400 s Park",
            "(tv, bt2020nc, bt2020, smpte2084), HDR PQ mastered at 1000 cd/m², MaxCLL 1000, MaxFALL 400",
        ] {
            #expect(text.stdout.contains(line), "no '\(line)' in \(text.stdout)")
        }
    }

    @Test("several files: each described in turn (JSON: an array); an unreadable one reported, the rest kept, exit 3")
    func severalFiles() throws {
        let a = try Files.sample("rotate90.mp4").path
        let b = try Files.sample("vp9-opus.webm").path
        let text = try CLI.cropzoom(["probe", a, "/nonexistent/x.mp4", b])
        #expect(text.status == 3, "\(text)")
        #expect(text.stdout.hasPrefix("\(a): ") && text.stdout.contains("\n\(b): matroska,webm"), "\(text.stdout)")
        #expect(text.stderrLines == ["cropzoom: error: /nonexistent/x.mp4: No such file or directory"], "\(text)")
        let json = try CLI.cropzoom(["probe", "--json", a, b])
        #expect(json.status == 0, "\(json)")
        let list = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(list?.compactMap { $0["path"] as? String } == [a, b], "\(json.stdout.prefix(300))")
    }
}
