// `cropzoom bench`: the JSON, CSV and SVG it writes, its arithmetic against the runs it reports,
// thread counts beyond the machine, the ffmpeg comparison and the frame limit its runs use.

import CropZoomKit
import Foundation
import Testing

@Suite("Bench")
struct BenchTests {
    static var cores: Int { UsableCPUs.count }

    static func json(_ run: CLIResult) throws -> [String: Any] {
        try #require(run.status == 0, "\(run)")
        return try #require(
            try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any],
            "stdout is not a JSON object: \(run.stdout)")
    }

    static func median(_ v: [Double]) -> Double {
        let s = v.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    @Test(
        """
        --format json: the documented schema; fps is frames / wall of each run, medians and efficiency agree with the \
        runs
        """
    )
    func jsonSchemaAndArithmetic() throws {
        let input = try Files.sample("std-h264-aac.mp4").path
        let run = try CLI.cropzoom([
            "bench", input, "--zoom", "1.5", "--codec", "none", "--threads", "1,2",
            "--repeat", "3", "--format", "json", "--progress", "lines",
        ])
        let doc = try Self.json(run)
        #expect(doc["schema"] as? String == "cropzoom-bench" && doc["version"] as? Int == 1)
        for key in ["cropzoom_version", "date", "machine", "input", "job", "baseline_threads", "warnings", "results"] {
            #expect(doc[key] != nil, "missing \(key)")
        }
        let machine = try #require(doc["machine"] as? [String: Any])
        #expect(machine["cores"] as? Int == Self.cores)
        let inputInfo = try #require(doc["input"] as? [String: Any])
        #expect(inputInfo["path"] as? String == input && inputInfo["bundled_sample"] as? Bool == false)
        let job = try #require(doc["job"] as? [String: Any])
        #expect(
            job["codec"] as? String == "none" && job["sink"] as? String == "null" && job["frames_per_run"] as? Int == 60
        )
        #expect(job["output_size"] as? String == "640x360" && (job["window"] as? String)?.hasPrefix("426x240") == true)
        let command = try #require(job["command"] as? [String])
        #expect(command.contains("--null") && command.contains("--zoom") && !command.contains("--threads"))

        let rows = try #require(doc["results"] as? [[String: Any]])
        #expect(rows.map { $0["threads"] as? Int } == [1, 2])
        var baselinePerCore = 0.0
        for row in rows {
            let runs = try #require(row["runs"] as? [[String: Any]])
            #expect(runs.count == 3)
            var fpsValues: [Double] = []
            for r in runs {
                let frames = try #require(r["frames"] as? Int)
                let wall = try #require(r["wall_seconds"] as? Double)
                let fps = try #require(r["fps"] as? Double)
                #expect(frames == 60, "every run decodes the whole 60-frame clip")
                #expect(
                    abs(fps - Double(frames) / wall) < 0.01 * fps,
                    "fps \(fps) is not frames / wall (\(frames) / \(wall))")
                #expect((r["cpu_seconds"] as? Double ?? 0) > 0 && (r["peak_rss_mib"] as? Double ?? 0) > 5)
                fpsValues.append(Double(frames) / wall)
            }
            let fps = try #require(row["fps"] as? [String: Double])
            #expect(
                abs(fps["median"]! - Self.median(fpsValues)) < 0.01 * fps["median"]!,
                "median \(fps) vs runs \(fpsValues)")
            #expect(abs(fps["min"]! - fpsValues.min()!) < 0.05 && abs(fps["max"]! - fpsValues.max()!) < 0.05)
            let threads = try #require(row["threads"] as? Int)
            let used = min(threads, Self.cores)
            #expect(row["cores_used"] as? Int == used && row["oversubscribed"] as? Bool == (threads > Self.cores))
            let perCore = try #require(row["fps_per_core"] as? Double)
            #expect(abs(perCore - fps["median"]! / Double(used)) < 0.01)
            if threads == 1 {
                baselinePerCore = perCore
                #expect(row["efficiency"] as? Double == 1)
            } else {
                #expect(abs((row["efficiency"] as? Double ?? 0) - perCore / baselinePerCore) < 0.01)
            }
            let stages = try #require(row["stage_ms_per_frame"] as? [String: Double])
            #expect(
                (stages["decode"] ?? 0) > 0 && (stages["transform"] ?? 0) > 0 && stages["encode"] == nil,
                "per-stage times: \(stages)")
            #expect((row["pool_high_water"] as? Int ?? 0) >= 1 && (row["cpu_cores"] as? Double ?? 0) > 0)
            #expect(row["ffmpeg"] == nil || row["ffmpeg"] is NSNull)
        }
        #expect(doc["warnings"] is [String])
        #expect(run.stderrLines.contains { $0.hasPrefix("bench: run 3/3") }, "no progress lines: \(run.stderr)")
        // 20 frames a run are too few to measure: the sanity check says so (on stderr and in the JSON).
        let short = try CLI.cropzoom([
            "bench", input, "--codec", "none", "--threads", "1", "--repeat", "1", "--frames", "20", "--format", "json",
        ])
        let shortDoc = try Self.json(short)
        #expect(
            (shortDoc["warnings"] as? [String])?.contains { $0.contains("too short") && $0.contains("20 frames") }
                == true, "\(shortDoc)")
        #expect(
            short.stderrLines.contains { $0.hasPrefix("cropzoom: warning: the input is too short") }, "\(short.stderr)")
    }

    @Test("--format csv: the documented header, one line per thread count, the same numbers as JSON's shape")
    func csv() throws {
        let input = try Files.sample("std-h264-aac.mp4").path
        let run = try CLI.cropzoom([
            "bench", input, "--codec", "none", "--threads", "1..2", "--repeat", "1", "--format", "csv",
        ])
        try #require(run.status == 0, "\(run)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 3, "\(run.stdout)")
        let header = lines[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        #expect(
            header.prefix(7) == ["version", "threads", "cores_used", "oversubscribed", "frames", "runs", "fps_median"])
        #expect(
            header.contains("decode_ms_per_frame") && header.contains("peak_rss_mib")
                && header.contains("speed_ratio_vs_ffmpeg"))
        for (i, line) in lines.dropFirst().enumerated() {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            #expect(cells.count == header.count, "\(line)")
            let value = { (name: String) in cells[header.firstIndex(of: name)!] }
            #expect(value("version") == "1" && value("threads") == "\(i + 1)" && value("frames") == "60")
            let fps = try #require(Double(value("fps_median")))
            let wall = try #require(Double(value("wall_median_s")))
            #expect(abs(fps - 60 / wall) < 0.02 * fps, "one run: fps \(fps) vs 60 / \(wall)")
        }
    }

    @Test(
        """
        --chart: well-formed SVG with one fps point and one efficiency point per thread count; an existing chart needs \
        -y
        """
    )
    func chart() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let svg = scratch.file("bench <1>.svg").path
        let run = try CLI.cropzoom([
            "bench", input, "--codec", "none", "--threads", "1,2", "--repeat", "1", "--chart", svg,
        ])
        try #require(run.status == 0, "\(run)")
        // Parsed by Python's XML parser (not ours): well-formed, and the points counted.
        let count = try Oracle.runChecked(
            "python3",
            [
                "-c",
                """
                import sys, xml.etree.ElementTree as E
                ns = '{http://www.w3.org/2000/svg}'
                root = E.parse(sys.argv[1]).getroot()
                assert root.tag == ns + 'svg', root.tag
                c = [e.get('class') for e in root.iter(ns + 'circle')]
                print(c.count('fps-point'), c.count('efficiency-point'), len(list(root.iter(ns + 'polyline'))))
                """, svg,
            ]
        ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(count == "2 2 2", "fps points, efficiency points, lines: \(count)")
        #expect(
            run.stdout.contains("threads") && run.stdout.contains("fps"),
            "the table still goes to stdout: \(run.stdout)")

        let before = try Data(contentsOf: URL(fileURLWithPath: svg))
        let again = try CLI.cropzoom([
            "bench", input, "--codec", "none", "--threads", "1", "--repeat", "1", "--chart", svg,
        ])
        #expect(again.status == 2 && again.stderrLines.count == 1 && again.stderr.contains("exists"), "\(again)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: svg)) == before, "a refused run touched the chart")
        // With -y it is replaced, whole.
        let replaced = try CLI.cropzoom([
            "bench", input, "--codec", "none", "--threads", "1", "--repeat", "1", "--chart", svg, "-y",
        ])
        #expect(replaced.status == 0, "\(replaced)")
        let svgText = try String(contentsOfFile: svg, encoding: .utf8)
        #expect(svgText.hasSuffix("</svg>\n") && svgText.components(separatedBy: "class=\"fps-point\"").count - 1 == 1)
        #expect(Files.temporaryLeftovers(in: scratch.url).isEmpty, "\(Files.names(in: scratch.url))")
    }

    @Test(
        """
        thread counts beyond the cores run, marked oversubscribed, with a warning; per-core figures divide by the cores
        """
    )
    func oversubscribed() throws {
        let input = try Files.sample("std-h264-aac.mp4").path
        let many = Self.cores * 2
        let run = try CLI.cropzoom([
            "bench", input, "--codec", "none", "--threads", "1,\(many)", "--repeat", "1", "--format", "json",
        ])
        let doc = try Self.json(run)
        #expect(
            run.stderrLines.contains { $0.hasPrefix("cropzoom: warning:") && $0.contains("oversubscribed") },
            "\(run.stderr)")
        let rows = try #require(doc["results"] as? [[String: Any]])
        let last = try #require(rows.last)
        #expect(
            last["threads"] as? Int == many && last["oversubscribed"] as? Bool == true
                && last["cores_used"] as? Int == Self.cores)
        let fps = try #require((last["fps"] as? [String: Double])?["median"])
        #expect(abs((last["fps_per_core"] as? Double ?? 0) - fps / Double(Self.cores)) < 0.01)
        #expect((doc["warnings"] as? [String])?.contains { $0.contains("oversubscribed") } == true)

        for bad in ["0", "1..x", "4..2", "300", ""] {
            let refused = try CLI.cropzoom(["bench", input, "--threads", bad])
            #expect(
                refused.status == 2 && refused.stderrLines.count == 1 && refused.stderr.contains("--threads"),
                "--threads '\(bad)': \(refused)")
        }
    }

    @Test("--frames: every run stops after N frames, on the threaded and the one-thread engine")
    func frameLimit() throws {
        let scratch = try Scratch()
        let input = try EngineTests.clip(frames: 90, in: scratch.url)
        let run = try CLI.cropzoom([
            "bench", input, "--codec", "none", "--threads", "1,2", "--repeat", "1", "--frames", "25", "--format",
            "json",
        ])
        let rows = try #require(try Self.json(run)["results"] as? [[String: Any]])
        for row in rows {
            let runs = try #require(row["runs"] as? [[String: Any]])
            #expect(runs.map { $0["frames"] as? Int } == [25], "threads \(row["threads"] ?? "?"): \(runs)")
        }
        // The option underneath, on real output: the first 25 frames, in presentation order.
        for threads in ["1", "2"] {
            let out = scratch.file("limit\(threads).mkv").path
            let t = try CLI.cropzoom([
                input, "-o", out, "--codec", "ffv1", "--threads", threads, "--bench-frames", "25", "--quiet",
            ])
            try #require(t.status == 0, "\(t)")
            let hashes = try Oracle.decodedFrameHashes(out)
            #expect(hashes.count == 25, "--threads \(threads): \(hashes.count) frames")
            let full = scratch.file("full\(threads).mkv").path
            _ = try CLI.cropzoom([input, "-o", full, "--codec", "ffv1", "--threads", threads, "--quiet"])
            #expect(Array(try Oracle.decodedFrameHashes(full).prefix(25)) == hashes, "not the first 25 frames")
        }
    }

    @Test("--write: every run writes a real file in TMPDIR, removed after the run; the report says so")
    func write() throws {
        let scratch = try Scratch()
        let tmp = try scratch.folder("tmp")
        let input = try Files.sample("std-h264-aac.mp4").path
        let run = try CLI.bash(
            "TMPDIR=\(tmp.path) \(try CLI.binary()) bench \(input) --preset ultrafast --threads 1,2 --repeat 1 "
                + "--write --format json"
        )
        let doc = try Self.json(run)
        let job = try #require(doc["job"] as? [String: Any])
        #expect(job["sink"] as? String == "file" && job["codec"] as? String == "libx264")
        let command = try #require(job["command"] as? [String])
        let output = try #require(command.firstIndex(of: "-o").map { command[$0 + 1] })
        #expect(output.hasPrefix(tmp.path) && !command.contains("--null"), "\(command)")
        #expect(Files.names(in: tmp).isEmpty, "left behind: \(Files.names(in: tmp))")
        for row in try #require(doc["results"] as? [[String: Any]]) {
            #expect((row["stage_ms_per_frame"] as? [String: Double])?["encode"] ?? 0 > 0, "x264 ran: \(row)")
        }
    }

    @Test("--compare-ffmpeg: ffmpeg runs the same job (printed), its fps and the ratio are reported")
    func compareFFmpeg() throws {
        let input = try Files.sample("std-h264-aac.mp4").path
        let ffmpeg = try #require(CLI.which("ffmpeg"), "ffmpeg is needed (scripts/setup.sh installs it)")
        let run = try CLI.cropzoom([
            "bench", input, "--zoom", "1.4", "--preset", "ultrafast", "--threads", "1,2",
            "--repeat", "2", "--format", "json", "--compare-ffmpeg=\(ffmpeg)",
        ])
        let doc = try Self.json(run)
        #expect((doc["ffmpeg_version"] as? String)?.hasPrefix("ffmpeg version") == true)
        // The job's coded window "WxH+X+Y" is what ffmpeg crops.
        let window = try #require((doc["job"] as? [String: Any])?["window"] as? String)
        let parts = window.split(whereSeparator: { "x+".contains($0) }).map(String.init)
        try #require(parts.count == 4, "\(window)")
        for row in try #require(doc["results"] as? [[String: Any]]) {
            let threads = try #require(row["threads"] as? Int)
            let ff = try #require(row["ffmpeg"] as? [String: Any], "no ffmpeg result at \(threads) threads")
            let command = try #require(ff["command"] as? [String])
            #expect(
                command.first == ffmpeg && command.contains("-noautorotate") && command.contains("libx264")
                    && command.contains("ultrafast") && command.contains("\(threads)"), "\(command)")
            let vf = try #require(command.firstIndex(of: "-vf").map { command[$0 + 1] })
            #expect(
                vf.hasPrefix("crop=\(parts[0]):\(parts[1]):\(parts[2]):\(parts[3]),scale=640:360:flags=bicubic"),
                "\(vf) for \(window)")
            let ffFPS = try #require((ff["fps"] as? [String: Double])?["median"])
            let czFPS = try #require((row["fps"] as? [String: Double])?["median"])
            #expect(ffFPS > 0 && abs((ff["speed_ratio"] as? Double ?? 0) - czFPS / ffFPS) < 0.01 * czFPS / ffFPS)
        }
        // The table prints a command anyone can rerun.
        let table = try CLI.cropzoom([
            "bench", input, "--zoom", "1.4", "--codec", "none", "--threads", "1", "--repeat", "1",
            "--compare-ffmpeg",
        ])
        #expect(
            table.status == 0 && table.stdout.contains("vs ffmpeg") && table.stdout.contains("-vf crop="), "\(table)")
    }

    @Test(
        """
        the ffmpeg filter chain a run reports does what cropzoom did (rotation, zoom, flip: the same luma; chroma \
        apart by ffmpeg's unsited flips)
        """
    )
    func ffmpegFilterIsEquivalent() throws {
        let scratch = try Scratch()
        for (sample, extra) in [
            ("rotate90.mp4", ["--zoom", "1.5", "--flip", "horizontal"]),
            ("std-h264-aac.mp4", ["--zoom", "1.65", "--center", "0.3,0.6", "--rotate", "270"]),
        ] {
            let input = try Files.sample(sample).path
            let out = scratch.file("\(sample).mkv").path
            let run = try CLI.cropzoom([input, "-o", out, "--codec", "ffv1", "--progress", "json"] + extra)
            try #require(run.status == 0, "\(run)")
            let filter = try #require(try EngineTests.doneEvent(run)["ffmpeg_filter"] as? String)
            let psnr = try Oracle.meanPSNR(
                reference: input, referenceFilter: filter, output: out, referenceAutorotate: false,
                alignStarts: true)
            // Chroma differs by design: ffmpeg's transpose/hflip move 4:2:0 chroma samples as they
            // are (off the declared siting by a luma pixel), cropzoom keeps the siting
            // (KernelAndThreadPlanTests.mirroredSiting checks it against a 4:4:4 truth).
            #expect(psnr > 33, "\(sample) \(extra): cropzoom vs ffmpeg -vf \(filter): \(psnr) dB")
            // Luma alone: the same swscale filter on the same window gives the same pixels.
            let luma = try Oracle.meanPSNR(
                reference: input, referenceFilter: filter, output: out,
                pixelFormat: "gray", referenceAutorotate: false, alignStarts: true)
            #expect(luma > 55, "\(sample) \(extra): luma \(luma) dB")
        }
    }

    @Test("bad input and bad usage: one line, exit 3 / 2, no runs; without INPUT the bundled sample is used and named")
    func errorsAndDefaultInput() throws {
        let missing = try CLI.cropzoom(["bench", "/nonexistent/clip.mp4", "--threads", "1", "--repeat", "1"])
        #expect(
            missing.status == 3 && missing.stderrLines.count == 1 && missing.stderr.contains("/nonexistent/clip.mp4"),
            "\(missing)")
        let notMedia = try CLI.cropzoom([
            "bench", try Files.sample("not-media.mp4").path, "--threads", "1", "--repeat", "1",
        ])
        #expect(
            notMedia.status == 3 && notMedia.stderrLines.count == 1 && notMedia.stderr.contains("not-media.mp4"),
            "\(notMedia)")
        for bad in [
            ["-"], ["--repeat", "0"], ["--frames", "0"], ["--write", "--codec", "none"], ["--ffmpeg", "/bin/true"],
            ["--compare-ffmpeg", "--ffmpeg", "/nonexistent/ffmpeg"],
        ] {
            let r = try CLI.cropzoom(["bench"] + bad)
            #expect(r.status == 2 && r.stderrLines.count == 1, "\(bad): \(r)")
        }

        let run = try CLI.cropzoom([
            "bench", "--codec", "none", "--threads", "1", "--repeat", "1", "--frames", "30", "--format", "json",
        ])
        let doc = try Self.json(run)
        let input = try #require(doc["input"] as? [String: Any])
        #expect(
            input["bundled_sample"] as? Bool == true
                && (input["path"] as? String)?.hasSuffix("samples/bench-720p.mp4") == true, "\(input)")
        let table = try CLI.cropzoom(["bench", "--codec", "none", "--threads", "1", "--repeat", "1", "--frames", "10"])
        #expect(table.status == 0 && table.stdout.contains("bench-720p.mp4 (bundled sample)"), "\(table)")
    }
}

@Suite("Bench and transcode under signals and closed pipes")
struct BenchSignalTests {
    @Test("SIGTERM to bench --write: passed on to the running transcode, exit 143, no scratch file or process left")
    func benchInterrupted() throws {
        let scratch = try Scratch()
        let input = try Files.sample("bench-720p.mp4").path
        let run = try CLI.run(
            "/usr/bin/env",
            [
                "TMPDIR=\(scratch.url.path)", try CLI.binary(), "bench", input, "--threads", "1",
                "--repeat", "3", "--write", "--progress", "none",
            ],
            signal: (SIGTERM, 3), timeout: 120)
        #expect(run.status == 143 && run.stderr.contains("interrupted"), "\(run)")
        #expect(Files.names(in: scratch.url).isEmpty, "left behind: \(Files.names(in: scratch.url))")
        let orphans = try CLI.bash("pgrep -f '\(scratch.url.path)/cropzoom-ben[c]h' || true")
        #expect(orphans.stdout.isEmpty, "a transcode still runs: \(orphans.stdout)")
    }

    @Test("a transcode whose stderr reader goes away finishes its output and exits 0 (no crash, no temporary file)")
    func closedStderr() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let out = scratch.file("out.mp4").path
        // stderr is a pipe nobody reads: the reader closes at once.
        let command = ChildProcess.shellQuoted([
            try CLI.binary(), input, "-o", out, "--progress", "json", "--preset", "ultrafast",
        ])
        let run = try CLI.bash(command + " 2> >(exec 0<&-; true); echo \"status $?\"")
        #expect(run.stdout.contains("status 0"), "\(run)")
        #expect(Files.names(in: scratch.url) == ["out.mp4"])
        #expect(try Oracle.decodedFrameHashes(out).count == 60)
    }
}
