import ArgumentParser
import CropZoomKit
import Foundation
import Testing

@testable import cropzoom

/// `cropzoom bench`'s parsing and arithmetic, without running anything.
@Suite("Bench options and figures")
struct BenchOptionTests {
    @Test("every engine wait counter is attributed to the stage that waited (bench's wait_ms_per_frame)")
    func waitsByStage() {
        let expected: [EngineWait: String] = [
            .demuxQueueFull: "demux", .decodeWaitingForPackets: "decode", .workQueueFull: "decode",
            .workersWaitingForFrames: "transform", .encodeWaitingForFrames: "encode", .muxWaitingForPackets: "mux",
        ]
        #expect(Set(expected.keys) == Set(EngineWait.allCases))
        for (wait, stage) in expected { #expect(benchWaitingStage(wait.rawValue) == stage, "\(wait)") }
        #expect(benchWaitingStage("something else") == "other")
    }

    @Test func threadLists() throws {
        #expect(try Bench.parseThreads("1,2,4", cores: 8) == [1, 2, 4])
        #expect(try Bench.parseThreads("4,1,4", cores: 8) == [1, 4])
        #expect(try Bench.parseThreads("1..N", cores: 3) == [1, 2, 3])
        #expect(try Bench.parseThreads("2..4,8", cores: 2) == [2, 3, 4, 8])
        #expect(try Bench.parseThreads("N", cores: 6) == [6])
        for bad in ["0", "a", "3..1", "1..", "", "257", "1,,2"] {
            #expect(throws: ValidationError.self, "\(bad)") { try Bench.parseThreads(bad, cores: 4) }
        }
        #expect(Bench.defaultThreads(cores: 1) == [1])
        #expect(Bench.defaultThreads(cores: 2) == [1, 2])
        #expect(Bench.defaultThreads(cores: 6) == [1, 2, 4, 6])
        #expect(Bench.defaultThreads(cores: 8) == [1, 2, 4, 8])
    }

    @Test func compareFFmpegWithOptionalPath() throws {
        #expect(
            Bench.normalize(["bench", "--compare-ffmpeg=/opt/ff"]) == [
                "bench", "--compare-ffmpeg", "--ffmpeg", "/opt/ff",
            ])
        // An executable named like ffmpeg after the flag is the binary; an executable clip is still the INPUT.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cz-normalize-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let ff = dir.appendingPathComponent("ffmpeg-9").path
        let clip = dir.appendingPathComponent("clip.mp4").path
        for path in [ff, clip] {
            _ = FileManager.default.createFile(
                atPath: path, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
        }
        #expect(
            Bench.normalize(["bench", "--compare-ffmpeg", ff, "in.mp4"]) == [
                "bench", "--compare-ffmpeg", "--ffmpeg", ff, "in.mp4",
            ])
        #expect(Bench.normalize(["bench", "--compare-ffmpeg", clip]) == ["bench", "--compare-ffmpeg", clip])
        // A clip after the flag is the INPUT, not the binary.
        #expect(Bench.normalize(["bench", "--compare-ffmpeg", "in.mp4"]) == ["bench", "--compare-ffmpeg", "in.mp4"])
        #expect(Bench.normalize(["in.mp4", "-o", "x.mp4"]) == ["in.mp4", "-o", "x.mp4"])
    }

    @Test("the options a run gets back are the ones given: parse → arguments → parse")
    func argumentsRoundTrip() throws {
        let given = [
            "in.mov", "-o", "o.mkv", "--zoom", "1.65", "--center", "0.62,0.4", "--crop", "1280:720:10:20",
            "--size", "1920x-2", "--rotate", "270", "--flip", "vertical", "--scaler", "lanczos",
            "--kernel", "zimg", "--orientation", "ignore", "--codec", "libx265", "--crf", "20",
            "--preset", "fast", "--bitrate", "2.5M", "--pix-fmt", "yuv420p10le", "--audio", "aac",
        ]
        let t = try Transcode.parse(given)
        let again = try Transcode.parse(["in.mov", "-o", "o.mkv"] + t.settings.arguments())
        let (a, b) = (try t.configuration(), try again.configuration())
        #expect(a.geometry == b.geometry && a.scaler == b.scaler && a.kernel == b.kernel && a.codec == b.codec)
        #expect(
            a.crf == b.crf && a.preset == b.preset && a.bitrate == b.bitrate && a.pixelFormat == b.pixelFormat
                && a.audio == b.audio)
        let plain = try Transcode.parse(["in.mov", "-o", "o.mkv"])
        #expect(plain.settings.arguments().isEmpty)
    }

    /// A value other than the default for every option `batch`, `run` and `bench` pass on to
    /// their `transcode` runs.
    static let samples: [String: String] = [
        "zoom": "1.65", "center": "0.62,0.4", "ease": "smooth", "background": "blur", "crop": "0s:1280:720, 2s:640:360",
        "size": "1920x-2", "fit": "cover", "rotate": "7.5", "transform": "1,0,0,1,-10,0", "flip": "vertical",
        "scaler": "lanczos",
        "kernel": "zimg", "orientation": "ignore", "start": "1.5", "end": "4", "duration": "2", "codec": "libx265",
        "crf": "20", "preset": "fast", "bitrate": "2.5M", "pix-fmt": "yuv420p10le", "audio": "aac",
        "tone-map": "hable",
        "keep-start-time": "",  // a flag: no value
        "deinterlace": "off", "profile": "high", "level": "4.1", "tune": "film", "gop": "48", "tag": "avc3",
        "encoder-option": "aq-mode=2", "audio-codec": "opus", "audio-bitrate": "96k", "audio-channels": "stereo",
        "audio-stream": "eng", "streams": "video,audio:eng", "aspect": "9:16", "follow": "faces",
        "preview": "/clips/sheet.png",
    ]

    @Test(
        """
        every option of the groups passed on (Geometry, Trim, Encoding, Streams) survives arguments() and is a \
        job-file setting
        """
    )
    func everySharedOptionIsPassedOn() throws {
        // The options as ArgumentParser knows them: a new one fails here until it has a sample,
        // round-trips through arguments() and has a job-file name.
        let dump = Transcode.fullMessage(
            for: try #require(
                #expect(throws: (any Error).self) {
                    try Transcode.parse(["--experimental-dump-help"])
                }))
        let tool = try #require(try JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: Any])
        let arguments = try #require((tool["command"] as? [String: Any])?["arguments"] as? [[String: Any]])
        let shared = arguments.filter {
            ["Geometry", "Trim", "Encoding", "Streams"].contains($0["sectionTitle"] as? String ?? "")
        }
        .compactMap { (($0["names"] as? [[String: Any]])?.first?["name"]) as? String }
        #expect(shared.count >= 20, "\(shared)")
        for name in shared {
            let value = try #require(
                Self.samples[name], "--\(name) has no sample value here: add one, and check arguments()")
            let t = try Transcode.parse(["in.mov", "-o", "o.mkv", "--\(name)"] + (value.isEmpty ? [] : [value]))
            let passed = t.settings.arguments()
            #expect(
                passed.contains { $0 == "--\(name)" || $0.hasPrefix("--\(name)=") },
                "arguments() drops --\(name): \(passed)")
            let again = try Transcode.parse(["in.mov", "-o", "o.mkv"] + passed)
            #expect(
                "\(try t.configuration())" == "\(try again.configuration())", "--\(name) \(value) changes on the way")
            #expect(
                Setting.allCases.contains { $0.flag == "--\(name)" && $0.inJobFiles },
                "--\(name) cannot be given in a job file")
        }
    }

    static func run(_ wall: Double, frames: Int = 100, cpu: Double? = nil) -> BenchRun {
        BenchRun(
            wallSeconds: wall, cpuSeconds: cpu ?? wall, peakRSSBytes: 100 << 20, frames: frames,
            busySeconds: ["decode": 0.5, "transform": 0.2], waitSeconds: ["decode": 0.1], poolHighWater: 5)
    }

    @Test("medians, per-core figures and efficiency, with a row beyond the cores")
    func figures() throws {
        let points = [
            BenchPoint(threads: 1, runs: [Self.run(2.0), Self.run(1.0), Self.run(4.0)]),  // fps 50, 100, 25
            BenchPoint(threads: 2, runs: [Self.run(0.8), Self.run(0.5)]),  // fps 125, 200
            BenchPoint(threads: 4, runs: [Self.run(0.5, cpu: 1.0)]),
        ]  // fps 200 on 2 cores
        let r = BenchResults(
            cores: 2, cpuName: "cpu", system: "sys", input: "in.mp4", bundledSample: false, command: ["cz"],
            codec: "libx264", outputSize: "1920x1080", window: "1164x654+378+212", sinkIsFile: false,
            repeats: 3, ffmpegVersion: nil, points: points)
        let rows = r.rows()
        #expect(rows.map(\.fps.median) == [50, 162.5, 200])
        #expect(rows[0].fps.min == 25 && rows[0].fps.max == 100)
        #expect(rows.map(\.coresUsed) == [1, 2, 2] && rows.map(\.oversubscribed) == [false, false, true])
        #expect(rows.map(\.fpsPerCore) == [50, 81.25, 100])
        #expect(rows.map(\.efficiency) == [1, 1.625, 2])
        #expect(rows[2].cpuCores == 2 && rows[2].cpuUtilisation == 1)
        #expect(rows[0].stageMsPerFrame == ["decode": 5, "transform": 2] && rows[0].waitMsPerFrame == ["decode": 1])
        #expect(rows[0].peakRssMib == 100 && rows[0].poolHighWater == 5)
        // CSV: a header and one line per row, every line as wide as the header.
        let csv = r.csv().split(separator: "\n")
        #expect(
            csv.count == 4
                && csv.allSatisfy {
                    $0.split(separator: ",", omittingEmptySubsequences: false).count == BenchResults.csvHeader.count
                })
        // The table marks the oversubscribed row and says why.
        #expect(r.table().contains("4*") && r.table().contains("more threads than the machine's 2 cores"))
        // JSON: snake_case keys, the version.
        let json = try r.document().json()
        #expect(
            json.contains("\"fps_per_core\"") && json.contains("\"version\" : 1")
                && json.contains("\"stage_ms_per_frame\""))
    }

    @Test("warnings: runs more than 10 % apart, runs too short to measure; none for steady, long runs")
    func sanity() {
        func results(_ walls: [[Double]], frames: Int = 300) -> BenchResults {
            BenchResults(
                cores: 2, cpuName: "c", system: "s", input: "in.mp4", bundledSample: false, command: [], codec: "none",
                outputSize: "", window: "", sinkIsFile: false, repeats: walls[0].count, ffmpegVersion: nil,
                points: walls.enumerated().map {
                    BenchPoint(threads: $0.offset + 1, runs: $0.element.map { Self.run($0, frames: frames) })
                })
        }
        #expect(results([[2.0, 2.05, 2.1], [1.1, 1.12, 1.15]]).sanityWarnings().isEmpty)
        let noisy = results([[2.0, 2.05, 2.1], [1.0, 1.12, 1.3]]).sanityWarnings()
        #expect(noisy.count == 1 && noisy[0].hasPrefix("runs at 2 threads varied by 26 %"), "\(noisy)")
        let short = results([[0.3, 0.3], [0.2, 0.2]]).sanityWarnings()
        #expect(short.count == 1 && short[0].contains("too short") && short[0].contains("at 2 threads"), "\(short)")
        #expect(results([[2.0], [1.5]], frames: 20).sanityWarnings().contains { $0.contains("20 frames") })
    }

    @Test func svgEscapesAndCountsPoints() {
        let r = BenchResults(
            cores: 2, cpuName: "c", system: "s", input: "a<b>&\"c\".mp4", bundledSample: false, command: [],
            codec: "none", outputSize: "", window: "", sinkIsFile: false, repeats: 1, ffmpegVersion: nil,
            points: [BenchPoint(threads: 1, runs: [Self.run(1)]), BenchPoint(threads: 2, runs: [Self.run(0.6)])])
        let svg = r.svg()
        #expect(svg.contains("a&lt;b&gt;&amp;&quot;c&quot;.mp4") && !svg.contains("a<b>"))
        #expect(svg.components(separatedBy: "class=\"fps-point\"").count - 1 == 2)
        #expect(svg.components(separatedBy: "class=\"efficiency-point\"").count - 1 == 2)
        #expect(
            ChildProcess.shellQuoted(["ffmpeg", "-vf", "crop=1:2:3:4,scale=5:6", "a b", "it's"])
                == "ffmpeg -vf crop=1:2:3:4,scale=5:6 'a b' 'it'\\''s'")
    }
}
