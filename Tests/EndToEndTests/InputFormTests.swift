import CropZoomCore
import CropZoomSystem
import Foundation
import Testing

/// Inputs beyond a file name (issue 16): image sequences (a printf pattern or a glob) at `--framerate`, `file:`
/// and `http://` URLs (a real HTTP server on loopback), and a job file on standard input.
@Suite("Input forms")
struct InputFormTests {
    /// Ten 192x108 PNG frames `f_000.png` … `f_009.png` in a folder of `scratch`.
    static func frames(in scratch: Scratch) throws -> String {
        let folder = scratch.file("frames").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Clip.video(size: "192x108", rate: 25).frames(10).codec("png").write(to: folder + "/f_%03d.png")
        return folder
    }

    /// The video's frame times (seconds) and `avg_frame_rate`.
    static func timing(_ path: String) throws -> (times: [Double], rate: String?) {
        let video = try Media.streams(path).first { $0["codec_type"] as? String == "video" }
        return (try Oracle.videoFramePTS(path), video?["avg_frame_rate"] as? String)
    }

    @Test(
        """
        a lavfi graph without realtime is generated as a file is read: every frame kept, none dropped as late; \
        with realtime it is a live source
        """)
    func lavfiWithoutRealtimeIsNotLive() throws {
        let scratch = try Scratch()
        let out = scratch.file("gen.mp4").path
        let run = try CLI.cropzoom([
            "testsrc2=size=320x240:rate=30:duration=3", "--input-format", "lavfi", "-o", out, "--progress", "json",
        ])
        #expect(run.status == 0, "\(run)")
        let done = try #require(RealTime.LiveTests.done(run.stderr), "\(run.stderr)")
        #expect(done.framesOut == 90 && done.framesDropped == nil && done.liveEnd == nil, "\(run.stderr)")
        var live = TranscodeConfiguration(input: "testsrc2=size=320x240:rate=30,realtime", output: out)
        live.inputFormat = "lavfi"
        #expect(live.isLive)
        live.input = "sine=frequency=440,arealtime"
        #expect(live.isLive)
        live.input = "testsrc2=size=320x240:rate=30:duration=3"
        #expect(!live.isLive)
    }

    @Test("HLS with --segment: the summary names the playlist written, not a segment pattern")
    func hlsSummaryNamesThePlaylist() throws {
        let scratch = try Scratch()
        let folder = try scratch.folder("hls")
        let playlist = folder.appendingPathComponent("live.m3u8").path
        let run = try CLI.cropzoom([try Files.sample("std-h264-aac.mp4").path, "-o", playlist, "--segment", "1"])
        #expect(run.status == 0 && run.stderr.contains("wrote \(playlist):"), "\(run)")
        #expect(!run.stderr.contains("%03d"), "\(run)")
        #expect(Files.exists(URL(fileURLWithPath: playlist)))
    }

    @Test("an image sequence by printf pattern and by glob: every frame, at --framerate (10, 30000/1001)")
    func imageSequence() throws {
        let scratch = try Scratch()
        let folder = try Self.frames(in: scratch)
        for (pattern, rate, expected) in [
            ("f_%03d.png", "10", "10/1"), ("f_*.png", "10", "10/1"), ("f_%03d.png", "30000/1001", "30000/1001"),
        ] {
            let output = scratch.file("seq.mp4").path
            let run = try CLI.cropzoom([
                folder + "/" + pattern, "-o", output, "-y", "--framerate", rate, "--zoom", "1.2",
            ])
            try #require(run.status == 0, "\(pattern) at \(rate): \(run)")
            let (times, avg) = try Self.timing(output)
            #expect(times.count == 10 && avg == expected, "\(pattern) at \(rate): \(times.count) frames, \(avg ?? "-")")
            let step = 1 / (rate == "10" ? 10 : 30000.0 / 1001)
            for (k, t) in times.enumerated() {
                #expect(abs(t - Double(k) * step) < 0.001, "\(pattern): frame \(k) at \(t) s")
            }
        }
    }

    @Test("refusals: no file matches the pattern (exit 3); --framerate for a file that has its own rate (exit 2)")
    func refusals() throws {
        let scratch = try Scratch()
        let folder = try Self.frames(in: scratch)
        let missing = try CLI.cropzoom([folder + "/g_%03d.png", "-o", scratch.file("a.mp4").path])
        #expect(missing.status == 3 && missing.stderrLines.count == 1, "\(missing)")
        #expect(missing.stderr.contains("g_%03d.png"), "\(missing)")
        let clip = try Files.sample("std-h264-aac.mp4").path
        let rate = try CLI.cropzoom([clip, "-o", scratch.file("b.mp4").path, "--framerate", "30"])
        #expect(rate.status == 2 && rate.stderrLines.count == 1, "\(rate)")
        #expect(rate.stderr.contains("--framerate is for image sequences and raw streams"), "\(rate)")
        let bad = try CLI.cropzoom([clip, "-o", scratch.file("c.mp4").path, "--framerate", "fast"])
        #expect(bad.status == 2 && bad.stderr.contains("--framerate takes frames per second"), "\(bad)")
        #expect(Files.names(in: scratch.url) == ["frames"], "left: \(Files.names(in: scratch.url))")
    }

    @Test("file: and http:// inputs (a Python HTTP server with byte ranges on loopback): as from the file")
    func urls() throws {
        let scratch = try Scratch()
        let clip = try Files.sample("std-h264-aac.mp4")
        let reference = scratch.file("ref.mp4").path
        let direct = try CLI.cropzoom([clip.path, "-o", reference, "--zoom", "1.2"])
        try #require(direct.status == 0, "\(direct)")
        let expected = try Oracle.packets(reference, streamIndex: 1).map(\.hash)
        let fromFile = scratch.file("file.mp4").path
        let run = try CLI.cropzoom(["file:" + clip.path, "-o", fromFile, "--zoom", "1.2"])
        try #require(run.status == 0, "\(run)")
        #expect(try Oracle.packets(fromFile, streamIndex: 1).map(\.hash) == expected)
        #expect(try Oracle.videoFramePTS(fromFile) == (try Oracle.videoFramePTS(reference)))

        let port = RealTime.LiveTests.freePort()
        let folder = clip.deletingLastPathComponent().path
        // Python's http.server with byte ranges (as every web server has; the sample's index is at its end).
        let script = scratch.file("serve.py")
        try Self.rangeServer.write(to: script, atomically: true, encoding: .utf8)
        let server = try ChildProcess.spawn(
            ["python3", script.path, folder, "\(port)"], stdout: .null, stderr: .null)
        defer { RealTime.LiveTests.stop(server) }
        let url = "http://127.0.0.1:\(port)/\(clip.lastPathComponent)"
        var up = false
        for _ in 0..<100 where !up {
            up = (try? Oracle.run("ffprobe", ["-v", "quiet", url]))?.status == 0
            if !up { usleep(50_000) }
        }
        try #require(up, "the HTTP server did not start on port \(port)")
        let fromHTTP = scratch.file("http.mp4").path
        let web = try CLI.cropzoom([url, "-o", fromHTTP, "--zoom", "1.2"])
        try #require(web.status == 0, "\(web)")
        #expect(try Oracle.packets(fromHTTP, streamIndex: 1).map(\.hash) == expected)
        #expect(try Oracle.videoFramePTS(fromHTTP) == (try Oracle.videoFramePTS(reference)))
        #expect(!web.stderr.contains("live"), "an http file is not live: \(web.stderr)")
    }

    static let rangeServer = """
        import http.server, os, re, sys
        class Handler(http.server.SimpleHTTPRequestHandler):
            def send_head(self):
                m = re.match(r"bytes=(\\d+)-(\\d*)$", self.headers.get("Range", ""))
                path = self.translate_path(self.path)
                if not m or not os.path.isfile(path):
                    return super().send_head()
                size = os.path.getsize(path)
                start, end = int(m.group(1)), int(m.group(2) or size - 1)
                f = open(path, "rb")
                f.seek(start)
                self.send_response(206)
                self.send_header("Content-Type", "video/mp4")
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
                self.send_header("Content-Length", str(end - start + 1))
                self.end_headers()
                self.remaining = end - start + 1
                return f
            def copyfile(self, source, outputfile):
                n = getattr(self, "remaining", None)
                if n is None:
                    return super().copyfile(source, outputfile)
                while n > 0:
                    chunk = source.read(min(n, 65536))
                    if not chunk:
                        break
                    outputfile.write(chunk)
                    n -= len(chunk)
        os.chdir(sys.argv[1])
        http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()
        """

    @Test("run - reads the job file from standard input (YAML, and JSON), relative paths from the current folder")
    func jobFileOnStandardInput() throws {
        let scratch = try Scratch()
        let clip = try Files.sample("std-h264-aac.mp4").path
        let binary = ChildProcess.shellQuoted([try CLI.binary()])
        let yaml = "clips:\n  - input: \(clip)\n    output: a.mp4\n    zoom: 1.5\n"
        let json = #"{"clips": [{"input": "\#(clip)", "output": "b.mp4", "zoom": 1.5}]}"#
        for (text, name) in [(yaml, "a.mp4"), (json, "b.mp4")] {
            let job = scratch.file("job.txt")
            try text.write(to: job, atomically: true, encoding: .utf8)
            let r = try Oracle.run(
                "sh", ["-c", "cd \(ChildProcess.shellQuoted([scratch.url.path])) && \(binary) run - < job.txt"])
            #expect(r.status == 0, "\(name): \(r.stderr)")
            let out = scratch.file(name).path
            #expect(try Oracle.videoFramePTS(out).count == 60, "\(name)")
        }
        let broken = try Oracle.run("sh", ["-c", "echo 'clips: [' | \(binary) run -"])
        #expect(broken.status == 2 && broken.stderr.hasPrefix("cropzoom: error: stdin: not valid YAML"), "\(broken)")
    }
}
