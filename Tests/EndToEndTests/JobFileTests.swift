// `cropzoom run JOB.yaml|JOB.json`: defaults and per-clip settings reach each clip; validation
// errors name the clip and the field, and nothing starts; a failing clip does not stop the rest.

import Foundation
import Testing

@Suite("Job files")
struct JobFileTests {
    static func size(_ path: String) throws -> String {
        try Oracle.runChecked(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                "-of", "csv=p=0", path,
            ]
        ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        "YAML and JSON: defaults, overridden per clip; zoom, centre, trim, rotation and size as asked",
        arguments: ["yaml", "json"])
    func runsEachClipWithItsSettings(format: String) throws {
        let scratch = try Scratch()
        let fm = FileManager.default
        try fm.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: scratch.file("a.mp4"))
        try fm.copyItem(at: try Files.sample("rotate90.mp4"), to: scratch.file("b.mp4"))
        let job = scratch.file("job.\(format)")
        if format == "yaml" {
            try """
            # two clips over shared defaults
            defaults:
              preset: ultrafast
              size: 320x-2
            clips:
              - input: a.mp4
                output: out/a-face.mp4
                zoom: 2
                center: [0.6, 0.4]
                start: 0.5
                end: "0:01.5"
              - input: b.mp4
                output: out/b.mkv
                zoom: 1.5
                rotate: 90
                size: 480x640
            """.write(to: job, atomically: true, encoding: .utf8)
        } else {
            try """
            {"defaults": {"preset": "ultrafast", "size": "320x-2"},
             "clips": [
               {"input": "a.mp4", "output": "out/a-face.mp4", "zoom": 2, "center": "0.6,0.4", \
            "start": 0.5, "end": "0:01.5"},
               {"input": "b.mp4", "output": "out/b.mkv", "zoom": 1.5, "rotate": 90, "size": "480x640"}]}
            """.write(to: job, atomically: true, encoding: .utf8)
        }
        try fm.createDirectory(at: scratch.file("out"), withIntermediateDirectories: true)
        // Zoom 2 around (0.6, 0.4) of 640x360: the window 320x180 at (224, 54).
        let plan = try CLI.cropzoom(["run", job.path, "--dry-run"])
        #expect(plan.status == 0 && plan.stdout.contains("a.mp4: window 320x180 at (224, 54) → 320x180"), "\(plan)")
        #expect(plan.stdout.contains("b.mp4: window 214x160 at (54, 40) → 480x640"), "\(plan)")
        #expect(Files.names(in: scratch.file("out")).isEmpty)
        let report = scratch.file("report.json")
        let run = try CLI.cropzoom(["run", job.path, "--report", report.path])
        #expect(run.status == 0, "\(run)")
        let a = scratch.file("out/a-face.mp4").path
        let b = scratch.file("out/b.mkv").path
        #expect(
            try Self.size(a) == "320,180" && Oracle.decodedFrameHashes(a).count == 30, "defaults' size, the clip's trim"
        )
        // b: upright 240x320, turned 90° more → landscape, the clip's own size wins over the default.
        #expect(try Self.size(b) == "480,640" && Oracle.decodedFrameHashes(b).count == 60)
        let files = try #require(
            (try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any])?["files"]
                as? [[String: Any]])
        #expect(files.map { $0["result"] as? String } == ["ok", "ok"])
        let dry = try CLI.cropzoom(["run", job.path, "--dry-run"])
        #expect(dry.status == 2 && dry.stderr.contains("already exists"), "outputs exist now: \(dry)")
    }

    @Test("keyframes, rotation by any angle and a matrix (a YAML list, negative numbers) from a job file")
    func keyframesAndMatrices() throws {
        let scratch = try Scratch()
        try FileManager.default.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: scratch.file("a.mp4"))
        let job = scratch.file("job.yaml")
        try """
        defaults: {preset: ultrafast, ease: smooth, background: blur}
        clips:
          - {input: a.mp4, output: turned.mp4, transform: [-1, 0, 0, -1, 640, 360]}
          - {input: a.mp4, output: tilt.mp4, rotate: "0s:-3, 2s:3", crop: "0s:640:360:0:0, 2s:320:180:320:180"}
        """.write(to: job, atomically: true, encoding: .utf8)
        let dry = try CLI.cropzoom(["run", job.path, "--dry-run"])
        #expect(dry.stdout.contains("moving: matrix (window of the first frame)"), "\(dry)")
        #expect(dry.stdout.contains("moving: crop keyframes, rotation keyframes"), "\(dry)")
        let run = try CLI.cropzoom(["run", job.path])
        #expect(run.status == 0, "\(run)")
        for name in ["turned.mp4", "tilt.mp4"] {
            #expect(
                try Self.size(scratch.file(name).path) == "640,360"
                    && Oracle.decodedFrameHashes(scratch.file(name).path).count == 60, "\(name)")
        }
    }

    @Test("invalid job files: one line naming the clip and the field, exit 2, nothing started")
    func validation() throws {
        let scratch = try Scratch()
        try FileManager.default.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: scratch.file("a.mp4"))
        let cases: [(String, String, [String])] = [
            (
                "zoom.yaml",
                "clips:\n  - {input: a.mp4, output: o1.mp4}\n  - {input: a.mp4, output: o2.mp4, zoom: 0.05}\n",
                ["clips[1] (a.mp4)", "zoom"]
            ),
            (
                "typo.yaml", "clips:\n  - {input: a.mp4, output: o.mp4, zooom: 2}\n",
                ["clips[0] (a.mp4)", "zooom", "unknown field"]
            ),
            ("nooutput.json", "{\"clips\": [{\"input\": \"a.mp4\"}]}", ["clips[0] (a.mp4)", "output", "missing"]),
            ("type.yaml", "clips:\n  - {input: a.mp4, output: o.mp4, crop: true}\n", ["clips[0] (a.mp4)", "crop"]),
            ("crop.yaml", "clips:\n  - {input: a.mp4, output: o.mp4, crop: '10:abc'}\n", ["clips[0] (a.mp4)", "crop"]),
            (
                "trim.yaml", "clips:\n  - {input: a.mp4, output: o.mp4, start: 2, end: 1}\n",
                ["clips[0] (a.mp4): end 1 is not after start 2"]
            ),
            (
                "defaults.yaml", "defaults: {output: x.mp4}\nclips:\n  - {input: a.mp4, output: o.mp4}\n",
                ["defaults", "output"]
            ),
            ("empty.yaml", "clips: []\n", ["clips", "non-empty"]),
            ("broken.yaml", "clips: [\n", ["not valid YAML"]),
            ("broken.json", "{\"clips\": ", ["not valid JSON"]),
            (
                "same.yaml", "clips:\n  - {input: a.mp4, output: o.mp4}\n  - {input: a.mp4, output: o.mp4, zoom: 2}\n",
                ["would both be written to"]
            ),
            ("job.txt", "clips: []", [".json, .yaml or .yml"]),
            (
                "matrix.yaml", "clips:\n  - {input: a.mp4, output: o.mp4, transform: [1, 0, 0, 0, 0, 0]}\n",
                ["clips[0] (a.mp4)", "transform", "invertible"]
            ),
            (
                "keys.yaml", "clips:\n  - {input: a.mp4, output: o.mp4, crop: '0s:640:360, 1s:320:240'}\n",
                ["clips[0] (a.mp4)", "crop", "aspect"]
            ),
            // A negative value is the value (it read as "Missing value for '--duration'" before).
            (
                "negative.yaml", "clips:\n  - {input: a.mp4, output: o.mp4, duration: -1}\n",
                ["clips[0] (a.mp4): duration -1: not a time"]
            ),
        ]
        for (name, text, needles) in cases {
            let job = scratch.file(name)
            try text.write(to: job, atomically: true, encoding: .utf8)
            let run = try CLI.cropzoom(["run", job.path])
            #expect(run.status == 2 && run.stderrLines.count == 1, "\(name): \(run)")
            for n in needles { #expect(run.stderr.contains(n), "\(name): '\(n)' not in \(run.stderr)") }
            #expect(!Files.names(in: scratch.url).contains { $0.hasPrefix("o") }, "\(name): something was written")
        }
    }

    @Test("a clip that fails (missing input, unreadable file) is reported; the others are done; exit 1")
    func failingClip() throws {
        let scratch = try Scratch()
        try FileManager.default.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: scratch.file("a.mp4"))
        try FileManager.default.copyItem(at: try Files.sample("not-media.mp4"), to: scratch.file("n.mp4"))
        let job = scratch.file("job.yaml")
        try
            ("clips:\n  - {input: missing.mp4, output: m.mp4}\n  - {input: n.mp4, output: n2.mp4}\n"
            + "  - {input: a.mp4, output: a2.mp4, preset: ultrafast}\n")
            .write(to: job, atomically: true, encoding: .utf8)
        let run = try CLI.cropzoom(["run", job.path])
        #expect(run.status == 1, "\(run)")
        #expect(
            run.stdout.contains("1 ok, 2 failed") && run.stdout.contains("missing.mp4")
                && run.stdout.contains("not a media file"), "\(run.stdout)")
        #expect(
            Files.exists(scratch.file("a2.mp4")) && !Files.exists(scratch.file("m.mp4"))
                && !Files.exists(scratch.file("n2.mp4")))
    }

    @Test("keep_start_time: true keeps an MPEG-TS clock; a non-boolean value is refused naming the field")
    func keepStartTimeSetting() throws {
        let scratch = try Scratch()
        try FileManager.default.copyItem(at: try Files.sample("start-offset.ts"), to: scratch.file("in.ts"))
        let job = scratch.file("job.yaml")
        try """
        clips:
          - input: in.ts
            output: kept.mkv
            keep_start_time: true
          - input: in.ts
            output: zero.mkv
        """.write(to: job, atomically: true, encoding: .utf8)
        let run = try CLI.cropzoom(["run", job.path, "--progress", "none"])
        try #require(run.status == 0, "\(run)")
        let kept = try #require(
            try Oracle.streams(scratch.file("kept.mkv").path).first { $0.codecType == "video" }?.startTime)
        let zero = try #require(
            try Oracle.streams(scratch.file("zero.mkv").path).first { $0.codecType == "video" }?.startTime)
        #expect(abs(kept - 11.4) < 0.01 && zero < 0.1, "kept \(kept), zero \(zero)")

        try "clips:\n  - {input: in.ts, output: x.mkv, keep_start_time: 1}\n".write(
            to: job, atomically: true, encoding: .utf8)
        let bad = try CLI.cropzoom(["run", job.path])
        #expect(
            bad.status == 2 && bad.errorLines.first?.contains("keep_start_time: must be true or false") == true,
            "\(bad)")
    }

    @Test("the job-file document's job.yaml runs as written: output folders are created")
    func readmeExample() throws {
        let scratch = try Scratch()
        let root = try #require(Oracle.packageRoot)
        let readme = try String(contentsOf: root.appendingPathComponent("docs/job-files.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "```yaml\n# job.yaml"))
        let end = try #require(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
        let yaml = String(readme[readme.index(start.lowerBound, offsetBy: 8)..<end.lowerBound])
        try yaml.write(to: scratch.file("job.yaml"), atomically: true, encoding: .utf8)
        _ = try scratch.folder("raw")
        // Inputs the example fits: an interview longer than its end (01:05.250), a phone clip the crop fits.
        for (size, seconds, name) in [("320x180", 66.0, "interview.mov"), ("1920x1080", 1, "phone.mp4")] {
            try Clip.video(size: size, rate: 2).duration(seconds).codec("libx264", preset: "ultrafast")
                .write(in: scratch, name: "raw/\(name)")
        }
        let run = try CLI.cropzoom(["run", scratch.file("job.yaml").path, "--progress", "none"])
        #expect(run.status == 0, "\(run)")
        #expect(try Self.size(scratch.file("out/interview-face.mp4").path) == "1280,720")
        #expect(try Self.size(scratch.file("out/phone-wide.mkv").path) == "1280,2276")
    }

    @Test("aspect, follow, preview and path_out in a job file: the clip reframed as the same flags do it")
    func reframedClip() throws {
        let scratch = try Scratch()
        let input = try RealTime.ReframeTests.clip(scratch, "one.mp4", ["--seconds", "1"])
        let job = scratch.file("job.yaml")
        try """
        clips:
          - input: one.mp4
            output: out/one.mkv
            codec: ffv1
            aspect: "9:16"
            follow: faces
            preview: out/one.png
            path_out: out/one.csv
        """.write(to: job, atomically: true, encoding: .utf8)
        let run = try CLI.cropzoom(["run", job.path, "--progress", "none"])
        #expect(run.status == 0, "\(run)")
        let flags = scratch.file("flags.mkv").path
        let same = try CLI.cropzoom([
            input, "-o", flags, "--codec", "ffv1", "--aspect", "9:16", "--follow", "faces", "--quiet",
        ])
        try #require(same.status == 0, "\(same)")
        let output = scratch.file("out/one.mkv").path
        #expect(try Self.size(output) == "404,720")
        #expect(try Oracle.decodedFrameHashes(output) == Oracle.decodedFrameHashes(flags), "as the flags render it")
        #expect(try RealTime.ReframeTests.sheetSize(scratch.file("out/one.png").path).count == 2)
        let rows = try String(contentsOf: scratch.file("out/one.csv"), encoding: .utf8).split(separator: "\n")
        #expect(rows.first == "# cropzoom reframe path 1280x720" && rows.count == 2 + 30, "\(rows)")
        // A value follow does not know: one line naming the clip and the field, nothing started.
        try """
        clips:
          - input: one.mp4
            output: out/two.mkv
            aspect: "9:16"
            follow: everything
        """.write(to: job, atomically: true, encoding: .utf8)
        let bad = try CLI.cropzoom(["run", job.path])
        #expect(bad.status == 2 && bad.errorLines.count == 1 && bad.stderr.contains("follow"), "\(bad)")
        #expect(!Files.exists(scratch.file("out/two.mkv")))
    }

    @Test("values transcode refuses stop the job before any clip runs (exit 2, clip and field named), and --dry-run")
    func refusedBeforeTheFirstClip() throws {
        let scratch = try Scratch()
        try FileManager.default.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: scratch.file("a.mp4"))
        let cases: [(String, String)] = [
            ("preset: superslow", "clips[1] (a.mp4): preset superslow: libx264 presets are"),
            ("crop: '5000:100'", "clips[1] (a.mp4): crop 5000:100 does not fit the 640x360 picture"),
            ("start: 100", "clips[1] (a.mp4): start 100 s is past the end"),
        ]
        for (setting, needle) in cases {
            let job = scratch.file("job.yaml")
            try "clips:\n  - {input: a.mp4, output: out/o1.mp4}\n  - {input: a.mp4, output: out/o2.mp4, \(setting)}\n"
                .write(to: job, atomically: true, encoding: .utf8)
            let run = try CLI.cropzoom(["run", job.path, "--progress", "none"])
            #expect(run.status == 2 && run.stderrLines.count == 1 && run.stderr.contains(needle), "\(setting): \(run)")
            #expect(!Files.exists(scratch.file("out")), "\(setting): a clip ran")
            let dry = try CLI.cropzoom(["run", job.path, "--dry-run"])
            #expect(
                dry.status == 2 && dry.stdout.contains("would fail: ") && dry.stdout.contains(needle),
                "\(setting): \(dry)")
            #expect(dry.stderr.contains("1 of 2 clips would fail"), "\(setting): \(dry)")
        }
        do {
            let job = scratch.file("missing.yaml")
            try "clips:\n  - {input: missing.mp4, output: out/o.mp4}\n"
                .write(to: job, atomically: true, encoding: .utf8)
            let dry = try CLI.cropzoom(["run", job.path, "--dry-run"])
            #expect(dry.status == 2 && dry.stdout.contains("missing.mp4: would fail"), "\(dry)")
        }
    }

    @Test("-y replaces every clip's output, --skip-existing leaves them; together they are refused")
    func overwriteAndSkipExisting() throws {
        let scratch = try Scratch()
        try FileManager.default.copyItem(at: try Files.sample("one-frame.mp4"), to: scratch.file("a.mp4"))
        let job = scratch.file("job.yaml")
        let text =
            "defaults: {preset: ultrafast}\nclips:\n"
            + "  - {input: a.mp4, output: o/a1.mp4}\n  - {input: a.mp4, output: o/a2.mkv}\n"
        try text.write(to: job, atomically: true, encoding: .utf8)
        let first = try CLI.cropzoom(["run", job.path, "--progress", "none"])
        #expect(first.status == 0 && first.stdout.contains("2 ok"), "\(first)")
        let again = try CLI.cropzoom(["run", job.path])
        #expect(again.status == 2 && again.stderr.contains("already exists"), "\(again)")
        let skip = try CLI.cropzoom(["run", job.path, "--skip-existing", "--progress", "none"])
        #expect(skip.status == 0 && skip.stdout.contains("0 ok, 0 failed, 2 skipped"), "\(skip)")
        let marker = Data("x".utf8)
        try marker.write(to: scratch.file("o/a1.mp4"))
        let replace = try CLI.cropzoom(["run", job.path, "-y", "--progress", "none"])
        #expect(replace.status == 0 && replace.stdout.contains("2 ok"), "\(replace)")
        #expect(try Data(contentsOf: scratch.file("o/a1.mp4")) != marker)
        #expect(try Oracle.decodedFrameHashes(scratch.file("o/a1.mp4").path).count == 1)
        let both = try CLI.cropzoom(["run", job.path, "-y", "--skip-existing"])
        #expect(both.status == 2 && both.stderrLines.count == 1 && both.stderr.contains("contradict"), "\(both)")
    }
}
