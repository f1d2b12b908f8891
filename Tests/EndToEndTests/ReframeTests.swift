// `--aspect 9:16 --follow auto` (issue 30), measured from the output's pixels: ground-truth clips made from a real face
// photo (python3-skimage's astronaut) composited over a real background frame and moved along a known path with
// holds, a drift, a fast move and a cut (Tests/tools/reframe.py: alone, with a distracting moving cup, with a second
// smaller face, and with no face and the cup as the subject); each output frame is located in its input frame
// (Tests/tools/reframe_measure.py: subject inside, IoU with the ideal window, jitter outside cuts, reversals); and
// frames, times and audio exactly those of a plain transcode. One of the real-time suites: its measuring is heavy.

import CropZoomKit
import Foundation
import Testing

extension RealTime {
    @Suite("Reframing", .serialized)
    struct ReframeTests {
        /// reframe.py's options for the background: the corpus frame reframe.py uses by default; without the corpus
        /// none, and reframe.py composites over python3-skimage's photographs stacked (and says so; so does the test).
        static func background() -> [String] {
            if let corpus = Oracle.corpusDirectory {
                let clip = corpus.appendingPathComponent("axm-sample_edit_list.mp4").path
                if FileManager.default.fileExists(atPath: clip) { return ["--background", clip] }
            }
            print("corpus absent: the reframing clips are composited over python3-skimage's photographs")
            return []
        }

        static func tool(_ name: String) throws -> String {
            try #require(Oracle.packageRoot).appendingPathComponent("Tests/tools/\(name)").path
        }

        /// A ground-truth clip (`reframe.py OUT --scene scene options`): its path (the truth is `OUT.json`).
        static func clip(_ scratch: Scratch, _ name: String, scene: String = "main", _ options: [String] = [])
            throws -> String
        {
            let out = scratch.file(name).path
            _ = try Oracle.runChecked(
                "python3",
                [try tool("reframe.py"), out, "--scene", scene] + background() + options,
                timeout: 300)
            return out
        }

        /// reframe_measure.py's figures for `output` against `input` and its truth.
        static func measure(_ output: String, _ input: String, aspect: String = "9:16") throws -> [String: Any] {
            let r = try Oracle.runChecked(
                "python3",
                [try tool("reframe_measure.py"), output, input, "--truth", input + ".json", "--aspect", aspect],
                timeout: 600)
            return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        }

        /// The truth's subject centre as a window path (the largest `aspect` window centred on it, kept inside),
        /// averaged over the last `frames` frames (1: the ideal window itself): the moving-average baseline.
        static func truthPath(_ input: String, width ww: Double, average frames: Int) throws -> String {
            let data = try Data(contentsOf: URL(fileURLWithPath: input + ".json"))
            let truth = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let clip = try #require(truth["clip"] as? [String: Any])
            let (w, h) = (try #require(clip["width"] as? Int), try #require(clip["height"] as? Int))
            let rows = try #require(truth["frames"] as? [[String: Any]])
            var xs: [Double] = []
            var lines = ["# cropzoom reframe path \(w)x\(h)", "time,x,y,width,height"]
            for (i, row) in rows.enumerated() {
                let face = try #require(row["face"] as? [Double])
                xs.append(min(max(face[0] + face[2] / 2 - ww / 2, 0), Double(w) - ww))
                let window = xs[max(0, i - frames + 1)...i]
                let x = window.reduce(0, +) / Double(window.count)
                lines.append("\(try #require(row["t"] as? Double)),\(x),0,\(ww),\(h)")
            }
            return lines.joined(separator: "\n") + "\n"
        }

        /// A contact sheet's width and height, from ffprobe (which reads it as a PNG).
        static func sheetSize(_ file: String) throws -> [Int] {
            let v = try #require(try Oracle.streams(file).first, "\(file) is a picture")
            #expect(v.codecName == "png", "\(file)")
            return [v.width ?? 0, v.height ?? 0]
        }

        static func value(_ m: [String: Any], _ key: String) throws -> Double {
            try #require(m[key] as? Double, "\(key) in \(m)")
        }

        @Test(
            "the subject inside in ≥ 95 % of frames, mean IoU ≥ 0.90, jitter < 0.3 px/frame²; frames, times, audio kept",
            arguments: ["main", "distractor", "two", "motion"])
        func meetsTheBar(_ scene: String) throws {
            let scratch = try Scratch()
            let input = try Self.clip(scratch, "in.mp4", scene: scene)
            let out = scratch.file("out.mkv").path
            let run = try CLI.cropzoom(
                [input, "-o", out, "--codec", "ffv1", "--aspect", "9:16", "--follow", "auto", "--quiet"], timeout: 600)
            try #require(run.status == 0, "\(run)")
            #expect(try Oracle.videoFramePTS(out).count == 300)
            try StabilizeTests.sameTimes(out, input)
            #expect(
                try Oracle.packets(out, streamIndex: 1).map(\.hash)
                    == Oracle.packets(input, streamIndex: 1).map(\.hash),
                "audio packets")
            let v = try #require(try Oracle.streams(out).first { $0.codecType == "video" })
            #expect(v.width == 404 && v.height == 720, "\(v)")
            let m = try Self.measure(out, input)
            let (inside, iou, jitter) = (
                try Self.value(m, "inside"), try Self.value(m, "iou"), try Self.value(m, "jitter_px")
            )
            print("reframe \(scene): inside \(inside), IoU \(iou), jitter \(jitter) px/f², \(m)")
            #expect(inside >= 0.95, "\(m)")
            #expect(iou >= 0.90, "\(m)")
            #expect(jitter < 0.3, "\(m)")
        }

        @Test("a phone clip coded sideways with a display matrix: faces found upright, the upright window follows them")
        func displayMatrix() throws {
            let scratch = try Scratch()
            let input = try Self.clip(scratch, "rot.mp4", ["--display-rotation", "-90"])
            #expect(try Oracle.streams(input).first { $0.codecType == "video" }?.width == 720, "coded sideways")
            let out = scratch.file("out.mkv").path
            let run = try CLI.cropzoom(
                [input, "-o", out, "--codec", "ffv1", "--aspect", "9:16", "--follow", "faces"], timeout: 600)
            try #require(run.status == 0, "\(run)")
            #expect(run.stderr.contains("followed faces"), "\(run.stderr)")
            let v = try #require(try Oracle.streams(out).first { $0.codecType == "video" })
            #expect(v.width == 404 && v.height == 720, "\(v)")
            let m = try Self.measure(out, input)
            print("reframe display matrix: \(m)")
            #expect(try Self.value(m, "inside") >= 0.95 && Self.value(m, "iou") >= 0.90, "\(m)")
            #expect(try Self.value(m, "jitter_px") < 0.3, "\(m)")
        }

        @Test("a variable frame rate: every frame at its own time, the path a row per frame time, the window moving")
        func variableFrameRate() throws {
            let scratch = try Scratch()
            let cfr = try Self.clip(scratch, "cfr.mp4", ["--seconds", "8"])
            // Every fifth frame dropped, the others keeping their times: 1/30 s and 2/30 s between frames.
            let input = scratch.file("vfr.mp4").path
            _ = try Oracle.runChecked(
                "ffmpeg",
                [
                    "-v", "error", "-i", cfr, "-vf", "select='not(eq(mod(n\\,5)\\,2))'", "-fps_mode", "passthrough",
                    "-c:v", "libx264", "-preset", "veryfast", "-crf", "16", "-c:a", "copy", input,
                ])
            let times = try Oracle.videoFramePTS(input)
            let steps = Set(zip(times, times.dropFirst()).map { (($1 - $0) * 30).rounded() })
            #expect(times.count == 192 && steps == [1, 2], "a VFR input: \(times.count) frames, steps \(steps)")
            let out = scratch.file("out.mkv").path
            let csv = scratch.file("path.csv").path
            let run = try CLI.cropzoom([
                input, "-o", out, "--codec", "ffv1", "--aspect", "9:16", "--follow", "faces", "--path-out", csv,
            ])
            try #require(run.status == 0, "\(run)")
            let got = try Oracle.videoFramePTS(out)
            #expect(got.count == times.count, "\(got.count) frames of \(times.count)")
            for (g, t) in zip(got, times) { #expect(abs(g - t) <= 0.0005, "frame at \(g) s, input's at \(t) s") }
            let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n").dropFirst(2).map {
                $0.split(separator: ",", omittingEmptySubsequences: false)
            }
            #expect(rows.count == times.count)
            for (row, t) in zip(rows, times) {
                #expect(abs((Double(row[1]) ?? -1) - (t - times[0])) < 1e-6, "path row at \(row[1]), frame at \(t)")
            }
            // The face drifts (1.5–3.5 s) and moves fast (4.5–5.1 s) to the right: the window follows it.
            let x = rows.map { Double($0[2]) ?? 0 }
            #expect(x.max()! - x.first! > 400, "the window moved from \(x.first!) to at most \(x.max()!)")
        }

        @Test(
            "twice as smooth as the moving-average crop of the true subject, with a higher IoU; 1:1 meets the bar too")
        func smootherThanAMovingAverage() throws {
            let scratch = try Scratch()
            let input = try Self.clip(scratch, "in.mp4")
            let csv = scratch.file("average.csv").path
            try Self.truthPath(input, width: 404, average: 15).write(toFile: csv, atomically: true, encoding: .utf8)
            let average = scratch.file("average.mkv").path
            var run = try CLI.cropzoom([
                input, "-o", average, "--codec", "ffv1", "--aspect", "9:16", "--follow", "faces", "--path-in", csv,
                "--quiet",
            ])
            try #require(run.status == 0, "\(run)")
            let ours = scratch.file("ours.mkv").path
            run = try CLI.cropzoom([
                input, "-o", ours, "--codec", "ffv1", "--aspect", "9:16", "--follow", "auto", "--quiet",
            ])
            try #require(run.status == 0, "\(run)")
            let (a, o) = (try Self.measure(average, input), try Self.measure(ours, input))
            print("moving average: \(a); cropzoom: \(o)")
            #expect(try Self.value(o, "jitter_px") <= Self.value(a, "jitter_px") / 2, "\(o) vs \(a)")
            #expect(try Self.value(o, "iou") > Self.value(a, "iou"), "\(o) vs \(a)")
            let square = scratch.file("square.mkv").path
            run = try CLI.cropzoom([
                input, "-o", square, "--codec", "ffv1", "--aspect", "1:1", "--follow", "faces", "--quiet",
            ])
            try #require(run.status == 0, "\(run)")
            let s = try Self.measure(square, input, aspect: "1:1")
            #expect(
                try Self.value(s, "inside") >= 0.95 && Self.value(s, "iou") >= 0.90 && Self.value(s, "jitter_px") < 0.3,
                "1:1: \(s)")
        }

        @Test("--path-out, --path-in renders it again, rows deleted move straight; bad paths: exit 2, nothing written")
        func pathOutAndIn() throws {
            let scratch = try Scratch()
            let input = try Self.clip(scratch, "in.mp4", ["--seconds", "3", "--no-audio"])
            let csv = scratch.file("path.csv").path
            let (a, b) = (scratch.file("a.mkv").path, scratch.file("b.mkv").path)
            let options = ["--codec", "ffv1", "--aspect", "9:16", "--follow", "faces", "--quiet"]
            var run = try CLI.cropzoom([input, "-o", a, "--path-out", csv] + options)
            try #require(run.status == 0, "\(run)")
            let text = try String(contentsOfFile: csv, encoding: .utf8)
            let lines = text.split(separator: "\n").map(String.init)
            #expect(lines.first == "# cropzoom reframe path 1280x720", "\(lines.prefix(2))")
            #expect(lines.count == 2 + 90 && lines[1].hasPrefix("frame,time,x,y,width,height,cut,signal"))
            run = try CLI.cropzoom([input, "-o", b, "--path-in", csv] + options)
            try #require(run.status == 0, "\(run)")
            #expect(try Oracle.decodedFrameHashes(a) == Oracle.decodedFrameHashes(b), "the same path renders the same")
            // The path file is not replaced without -y.
            run = try CLI.cropzoom([input, "-o", scratch.file("c.mkv").path, "--path-out", csv] + options)
            #expect(run.status == 2 && run.stderr.contains(csv) && run.stderr.contains("exists"), "\(run)")
            #expect(try String(contentsOfFile: csv, encoding: .utf8) == text)
            // Two rows left, x 0 at 0 s and 876 at 2 s: the window moves in a straight line, 438 px a second.
            let keys = scratch.file("keys.csv").path
            try "# cropzoom reframe path 1280x720\ntime,x,y,width,height\n0,0,0,404,720\n2,876,0,404,720\n".write(
                toFile: keys, atomically: true, encoding: .utf8)
            let k = scratch.file("k.mkv").path
            run = try CLI.cropzoom([input, "-o", k, "--path-in", keys] + options)
            try #require(run.status == 0, "\(run)")
            let r = try Oracle.runChecked(
                "python3", [try Self.tool("reframe_measure.py"), k, input, "--aspect", "9:16", "--per-frame"],
                timeout: 600)
            let m = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let windows = try #require(m["windows"] as? [[Double]])
            for (i, expected) in [(0, 0.0), (30, 438.0), (45, 657.0), (60, 876.0), (89, 876.0)] {
                #expect(abs(windows[i][0] - expected) <= 1.5, "frame \(i): x \(windows[i][0]), expected \(expected)")
            }
            // Bad paths: one line naming the file and the reason, exit 2, no output.
            let bad: [(String, String)] = [
                ("time,x,y,width,height\n0,0,0,404,720\n", "no '# cropzoom reframe path WxH' line"),
                ("# cropzoom reframe path 1280x720\ntime,x,y,width\n0,0,0,404\n", "no column 'height'"),
                (
                    "# cropzoom reframe path 1280x720\ntime,x,y,width,height\n1,0,0,404,720\n0.5,0,0,404,720\n",
                    "does not follow"
                ),
                ("# cropzoom reframe path 1280x720\ntime,x,y,width,height\n0,900,0,404,720\n", "reaches outside"),
                (
                    "# cropzoom reframe path 1280x720\ntime,x,y,width,height\n0,0,0,404,720\n1,0,0,,720\n",
                    "no value for 'width'"
                ),
                ("# cropzoom reframe path 1920x1080\ntime,x,y,width,height\n0,0,0,606,1080\n", "1920x1080 picture"),
                ("# cropzoom reframe path 1280x720\ntime,x,y,width,height\n0,0,0,720,720\n", "not of --aspect"),
                ("# cropzoom reframe path 1280x720\ntime,x,y,width,height\n", "no frames"),
            ]
            for (content, reason) in bad {
                let file = scratch.file("bad.csv").path
                try content.write(toFile: file, atomically: true, encoding: .utf8)
                let out = scratch.file("bad.mkv").path
                run = try CLI.cropzoom([input, "-o", out, "--path-in", file] + options)
                let errors = run.stderr.split(separator: "\n").filter { $0.contains("error") }
                #expect(run.status == 2 && errors.count == 1, "\(reason): \(run)")
                #expect(run.stderr.contains(file) && run.stderr.contains(reason), "\(reason): \(run.stderr)")
                #expect(!FileManager.default.fileExists(atPath: out), "\(reason): an output was left")
            }
        }

        @Test("nothing to follow (portrait in 9:16, a still picture, --fit contain): a note, centred, every frame")
        func nothingToFollow() throws {
            let scratch = try Scratch()
            let portrait = try Clip.lavfi("testsrc2=s=360x640:r=30:d=1").codec("libx264").write(
                in: scratch, name: "portrait.mp4")
            var out = scratch.file("p.mp4").path
            // The contact sheet is written all the same: the whole picture is the window, and the output's view.
            let sheet = scratch.file("p.png").path
            var run = try CLI.cropzoom([
                portrait, "-o", out, "--aspect", "9:16", "--follow", "auto", "--preview", sheet,
            ])
            #expect(run.status == 0 && run.stderr.contains("nothing to follow"), "\(run)")
            var v = try #require(try Oracle.streams(out).first { $0.codecType == "video" })
            #expect(v.width == 360 && v.height == 640, "\(v)")
            #expect(try Self.sheetSize(sheet) == [3 * 8 + 480 + 480, 8 + 6 * (853 + 8)])
            #expect(try Oracle.videoFramePTS(out) == Oracle.videoFramePTS(portrait))
            // A still picture: no face, nothing moves: the window rests in the middle.
            let still = try Clip.lavfi("testsrc2=s=640x360:r=30:d=1,trim=end_frame=1,loop=29:1").codec("libx264")
                .write(in: scratch, name: "still.mp4")
            out = scratch.file("s.mkv").path
            let csv = scratch.file("s.csv").path
            run = try CLI.cropzoom([
                still, "-o", out, "--codec", "ffv1", "--aspect", "9:16", "--follow", "auto", "--path-out", csv,
            ])
            #expect(run.status == 0 && run.stderr.contains("no face and nothing moving"), "\(run)")
            let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n").dropFirst(2)
            let xs = try rows.map { try #require(Double($0.split(separator: ",")[2])) }
            #expect(xs.count == 30 && xs.allSatisfy { abs($0 - (640 - 202) / 2) < 0.5 }, "\(xs)")
            #expect(try Oracle.videoFramePTS(out).count == 30)
            // --fit contain: the whole picture in a 9:16 frame.
            out = scratch.file("c.mp4").path
            let contained = scratch.file("c.png").path
            run = try CLI.cropzoom([
                still, "-o", out, "--aspect", "9:16", "--fit", "contain", "--follow", "auto", "--preview", contained,
            ])
            #expect(run.status == 0 && run.stderr.contains("nothing to follow"), "\(run)")
            v = try #require(try Oracle.streams(out).first { $0.codecType == "video" })
            #expect(v.width == 640 && v.height == 1138, "\(v)")
            #expect(try Self.sheetSize(contained) == [3 * 8 + 480 + 480, 8 + 6 * (270 + 8)])
            // --follow center: the still window (a 9:16 slice in the middle) drawn on six frames.
            let centred = scratch.file("m.png").path
            out = scratch.file("m.mp4").path
            run = try CLI.cropzoom([still, "-o", out, "--aspect", "9:16", "--follow", "center", "--preview", centred])
            #expect(run.status == 0 && run.stderr.contains("preview written to"), "\(run)")
            #expect(try Self.sheetSize(centred) == [3 * 8 + 480 + 152, 8 + 6 * (270 + 8)])
        }

        @Test(
            "audio, frame count and times as a plain --aspect transcode's in every container reframing can write",
            arguments: ["mp4", "mov", "mkv", "webm", "ts", "flv"])
        func containers(_ ext: String) throws {
            let scratch = try Scratch()
            let input = try Self.clip(scratch, "in.mkv", ["--seconds", "2", "--codec", "ffv1"])
            let plain = scratch.file("plain.\(ext)").path
            let followed = scratch.file("followed.\(ext)").path
            var run = try CLI.cropzoom([input, "-o", plain, "--aspect", "9:16", "--quiet"])
            try #require(run.status == 0, "\(run)")
            run = try CLI.cropzoom([input, "-o", followed, "--aspect", "9:16", "--follow", "auto", "--quiet"])
            try #require(run.status == 0, "\(run)")
            #expect(try Oracle.videoFramePTS(followed) == Oracle.videoFramePTS(plain), "frame times")
            #expect(try Oracle.videoFramePTS(followed).count == 60)
            let audio = try #require(try Oracle.streams(plain).first { $0.codecType == "audio" }).index
            #expect(
                try Oracle.packets(followed, streamIndex: audio).map(\.hash)
                    == Oracle.packets(plain, streamIndex: audio).map(\.hash), "audio packets")
            #expect(try Oracle.decodedFrameHashes(followed) != Oracle.decodedFrameHashes(plain), "the window moved")
        }

        @Test(
            """
            OpenCV is a plugin: cropzoom does not link it, libCropZoomFaces.so does; without the plugin a plain job \
            runs and a reframing one stops at once (exit 1, one line naming the input and why, nothing written)
            """)
        func facePlugin() throws {
            let binary = try CLI.binary()
            let plugin = URL(fileURLWithPath: binary).deletingLastPathComponent()
                .appendingPathComponent("libCropZoomFaces.so").path
            let linked = try Oracle.runChecked("ldd", [binary]).stdout
            #expect(!linked.contains("opencv") && linked.contains("libavcodec"), "cropzoom links: \(linked)")
            #expect(try Oracle.runChecked("ldd", [plugin]).stdout.contains("libopencv_objdetect"))
            let scratch = try Scratch()
            let input = try Files.sample("std-h264-aac.mp4").path
            let missing = ChildProcess.environment(setting: "CROPZOOM_FACES_LIBRARY", to: "/nonexistent/faces.so")
            let plain = try CLI.run(
                binary, [input, "-o", scratch.file("plain.mp4").path, "--aspect", "9:16"], environment: missing)
            #expect(plain.status == 0, "\(plain)")
            let out = scratch.file("followed.mp4")
            let run = try CLI.run(
                binary, [input, "-o", out.path, "--aspect", "9:16", "--follow", "auto"], environment: missing)
            #expect(run.status == 1 && run.errorLines.count == 1, "\(run)")
            #expect(
                run.stderr.contains("std-h264-aac.mp4") && run.stderr.contains("face plugin cannot be opened")
                    && run.stderr.contains("/nonexistent/faces.so"), "\(run.stderr)")
            #expect(!Files.exists(out) && Files.names(in: scratch.url) == ["plain.mp4"])
        }

        @Test("analyze-motion --follow: the window path without rendering, JSON per frame, --path-out")
        func analyzeMotionFollow() throws {
            let scratch = try Scratch()
            let input = try Self.clip(scratch, "in.mp4", ["--seconds", "2", "--no-audio"])
            let csv = scratch.file("p.csv").path
            let run = try CLI.cropzoom([
                "analyze-motion", input, "--aspect", "9:16", "--follow", "faces", "--json", "--path-out", csv,
            ])
            try #require(run.status == 0, "\(run)")
            let o = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            let report = try #require(o["report"] as? [String: Any])
            let frames = try #require(o["frames"] as? [[String: Any]])
            #expect(frames.count == 60 && report["frames"] as? Int == 60 && report["subject_frames"] as? Int == 60)
            let window = try #require(frames[0]["window"] as? [Double])
            #expect(window[2] == 404 && window[3] == 720, "\(window)")
            // The face is at 30 % of the width for the first second: the window is centred on it.
            let face = try #require(frames[0]["subject"] as? [Double])
            #expect(abs(window[0] + 202 - (face[0] + face[2] / 2)) < 12, "\(window) \(face)")
            #expect(FileManager.default.fileExists(atPath: csv))
            let text = try CLI.cropzoom(["analyze-motion", input, "--aspect", "9:16", "--follow", "faces"])
            #expect(text.status == 0 && text.stdout.contains("60 frames; window 404x720 of the 1280x720"), "\(text)")
            let bad = try CLI.cropzoom(["analyze-motion", input, "--aspect", "9:16"])
            #expect(bad.status == 2 && bad.stderr.contains("--follow"), "\(bad)")
        }

        @Test("a batch: every clip reframed, a contact sheet per clip in the --preview folder, a path per clip")
        func batch() throws {
            let scratch = try Scratch()
            let folder = scratch.file("in").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let one = try Self.clip(scratch, "in/one.mp4", ["--seconds", "1"])
            _ = try Self.clip(scratch, "in/two.mp4", scene: "two", ["--seconds", "1"])
            let (out, sheets, paths) = (
                scratch.file("out").path, scratch.file("sheets").path, scratch.file("paths").path
            )
            let run = try CLI.cropzoom([
                "batch", folder, "--out-dir", out, "--aspect", "9:16", "--follow", "auto", "--preview", sheets + "/",
                "--path-out", paths + "/",
            ])
            #expect(run.status == 0, "\(run)")
            for name in ["one", "two"] {
                let sheet = try Data(contentsOf: URL(fileURLWithPath: "\(sheets)/\(name).png"))
                #expect(sheet.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(name).png is a PNG")
                let probe = try Oracle.streams("\(sheets)/\(name).png")
                #expect(probe.first?.width == 3 * 8 + 480 + 152 && probe.first?.height == 8 + 6 * (270 + 8), "\(probe)")
                let rows = try String(contentsOfFile: "\(paths)/\(name).csv", encoding: .utf8).split(separator: "\n")
                #expect(rows.count == 2 + 30, "\(name).csv")
            }
            let outputs = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
            #expect(outputs.count == 2, "\(outputs)")
            for file in outputs {
                let v = try #require(try Oracle.streams("\(out)/\(file)").first { $0.codecType == "video" })
                #expect(v.width == 404 && v.height == 720, "\(file): \(v)")
                #expect(try Oracle.videoFramePTS("\(out)/\(file)") == Oracle.videoFramePTS(one), "\(file)")
            }
        }

        @Test(
            """
            while recording (issue 30 item 4): a face streamed in real time is followed with a look-ahead of half \
            --max-latency, to the file's bar; every frame at its sent time, every audio byte; files refused
            """)
        func whileRecording() throws {
            let scratch = try Scratch()
            let input = try Self.clip(scratch, "in.mp4")
            let (ended, sent, out) = try StabilizeTests.recordLive(
                input, ["--codec", "ffv1", "--aspect", "9:16", "--follow", "faces", "--max-latency", "2"],
                scratch: scratch)
            #expect(ended.status == 0, "\(ended)")
            #expect(ended.stderr.contains("following the subject as it records"), "\(ended.stderr)")
            #expect(ended.stderr.contains("a look-ahead of 1 s"), "\(ended.stderr)")
            let done = try #require(LiveTests.done(ended.stderr), "\(ended.stderr)")
            #expect(done.framesDropped == 0, "\(done)")
            let sentTimes = try Oracle.videoFramePTS(sent)
            let got = try Oracle.videoFramePTS(out)
            #expect(got.count == sentTimes.count && got.count == 300, "\(got.count) of \(sentTimes.count) frames")
            for (g, s) in zip(got, sentTimes) {
                #expect(abs((g - got[0]) - (s - sentTimes[0])) <= 0.0015, "\(g - got[0]) vs \(s - sentTimes[0])")
            }
            #expect(try LiveTests.adts(out) == (try LiveTests.adts(sent)), "audio")
            let m = try Self.measure(out, input)
            print("reframe live: \(m)")
            #expect(try Self.value(m, "inside") >= 0.95, "\(m)")
            #expect(try Self.value(m, "iou") >= 0.90, "\(m)")
            #expect(try Self.value(m, "jitter_px") < 0.3, "\(m)")
            // What a live path cannot do: refused before anything is recorded.
            for (options, named) in [
                (["--follow", "faces", "--path-out", scratch.file("p.csv").path], "--path-out"),
                (["--follow", "faces", "--stabilize"], "--stabilize"),
            ] {
                let run = try CLI.cropzoom(
                    ["udp://127.0.0.1:9", "-o", scratch.file("x.mkv").path, "--aspect", "9:16"] + options)
                #expect(run.status == 2 && run.stderr.contains(named), "\(options): \(run)")
                #expect(!FileManager.default.fileExists(atPath: scratch.file("x.mkv").path))
            }
        }

        @Test(
            "while recording: frames at their sent times and the audio whole in every container it can write",
            arguments: ["mp4", "mov", "mkv", "webm", "ts", "flv"])
        func whileRecordingContainers(_ ext: String) throws {
            let scratch = try Scratch()
            let input = try Self.clip(scratch, "in.mp4", ["--seconds", "1.5"])
            let (ended, sent, out) = try StabilizeTests.recordLive(
                input, ["--aspect", "9:16", "--follow", "auto"], scratch: scratch, name: "rec.\(ext)")
            #expect(ended.status == 0, "\(ended)")
            let done = try #require(LiveTests.done(ended.stderr), "\(ended.stderr)")
            #expect(done.framesDropped == 0, "\(done)")
            let sentTimes = try Oracle.videoFramePTS(sent)
            let got = try Oracle.videoFramePTS(out)
            #expect(got.count == sentTimes.count && got.count == 45, "\(got.count) of \(sentTimes.count) frames")
            for (g, s) in zip(got, sentTimes) {
                #expect(abs((g - got[0]) - (s - sentTimes[0])) <= 0.0015, "\(g - got[0]) vs \(s - sentTimes[0])")
            }
            let v = try #require(try Oracle.streams(out).first { $0.codecType == "video" })
            #expect(v.width == 404 && v.height == 720, "\(v)")
            let audio = try #require(try Oracle.streams(out).first { $0.codecType == "audio" }, "no audio")
            if ext == "webm" {
                // WebM holds no AAC: re-encoded (Opus), the sound spans what was sent, without a gap.
                let a = try DesktopCaptureTests.span(out, stream: audio.index)
                let b = try DesktopCaptureTests.span(sent, stream: 1)
                #expect(abs((a.end - a.first) - (b.end - b.first)) < 0.05 && a.largestGap < 0.002, "\(a) vs \(b)")
            } else {
                #expect(try LiveTests.adts(out) == (try LiveTests.adts(sent)), "audio")
            }
        }

        @Test("with --stabilize, --zoom, --size, a trim and 10-bit: the frames and times of the same job without it")
        func withTheRest() throws {
            let scratch = try Scratch()
            let input = try Self.clip(scratch, "in.mp4", ["--seconds", "3"])
            let options = [
                "--aspect", "9:16", "--zoom", "1.25", "--size", "270x480", "--start", "0.5", "--end", "2.5",
                "--codec", "ffv1", "--pix-fmt", "yuv420p10le", "--stabilize", "--quiet",
            ]
            let plain = scratch.file("plain.mkv").path
            let followed = scratch.file("followed.mkv").path
            var run = try CLI.cropzoom([input, "-o", plain] + options)
            try #require(run.status == 0, "\(run)")
            run = try CLI.cropzoom([input, "-o", followed, "--follow", "faces"] + options)
            try #require(run.status == 0, "\(run)")
            #expect(
                try Oracle.videoFramePTS(followed) == Oracle.videoFramePTS(plain)
                    && Oracle.videoFramePTS(plain).count == 60)
            let v = try #require(try Oracle.streams(followed).first { $0.codecType == "video" })
            #expect(v.width == 270 && v.height == 480 && v.pixFmt == "yuv420p10le", "\(v)")
            #expect(
                try Oracle.packets(followed, streamIndex: 1).map(\.hash)
                    == Oracle.packets(plain, streamIndex: 1).map(\.hash), "audio packets")
            #expect(try Oracle.decodedFrameHashes(followed) != Oracle.decodedFrameHashes(plain), "the window moved")
        }
    }
}
