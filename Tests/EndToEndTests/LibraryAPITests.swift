// CropZoomKit from Swift: TranscodeJob runs, reports progress as an AsyncSequence, cancels (by
// cancel() and by task cancellation) leaving nothing behind; the Examples/ZoomFromCSV program.

import CropZoomKit
import Foundation
import SystemPackage
import Testing

@Suite("Library API")
struct LibraryAPITests {
    @Test("run: a summary that matches the file, progress events on the way, notices too; a job runs once")
    func runWithEvents() async throws {
        let scratch = try Scratch()
        var config = TranscodeConfiguration(input: try Files.sample("pcm.mov").path, output: scratch.file("o.mp4").path)
        config.geometry.zoom = 1.5
        config.preset = "ultrafast"
        let job = TranscodeJob(configuration: config)
        let collector = Task { () -> (progress: [ProgressEvent], notices: [String], last: TranscodeEvent?) in
            var p: [ProgressEvent] = []
            var n: [String] = []
            var last: TranscodeEvent? = nil
            for await event in job.events {
                last = event
                switch event {
                case .progress(let e): p.append(e)
                case .notice(let text): n.append(text)
                case .warning(let text): n.append(text)
                case .done, .failed: break
                }
            }
            return (p, n, last)
        }
        let summary = try await job.run()
        let (progress, notices, last) = await collector.value  // the stream ends with the job
        // The last event is the outcome: the summary run() returned.
        guard case .done(let reported) = last else {
            Issue.record("the last event is not .done: \(String(describing: last))")
            return
        }
        #expect(reported.framesOut == summary.framesOut && reported.output == summary.output)
        let frames = try Oracle.decodedFrameHashes(scratch.file("o.mp4").path).count
        #expect(summary.framesOut == frames && frames > 0 && summary.videoCodec == "libx264")
        #expect(
            !progress.isEmpty && progress.map(\.frames) == progress.map(\.frames).sorted()
                && progress.last!.frames <= frames)
        #expect(
            notices.contains { $0.contains("pcm_s16le") && $0.contains("AAC") },
            "the PCM → AAC notice: \(notices)")
        await #expect(throws: CropZoomError.self) { try await job.run() }
    }

    @Test("progress comes at a steady rate, four times a second, from the start, on both engines")
    func steadyProgress() async throws {
        let scratch = try Scratch()
        for threads in [nil, 1] as [Int?] {
            var config = TranscodeConfiguration(
                input: try Files.sample("bench-720p.mp4").path, output: scratch.file("p\(threads ?? 0).mp4").path)
            config.geometry.zoom = 1.3
            config.preset = "medium"
            config.threads = threads
            let job = TranscodeJob(configuration: config)
            let collector = Task { () -> [Double] in
                var times: [Double] = []
                for await case .progress(let p) in job.events { times.append(p.elapsed) }
                return times
            }
            let summary = try await job.run()
            let times = await collector.value
            // Measured on the job's clock (`elapsed`), not on arrival: the test runner's pool may deliver late.
            let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.sorted()
            let label = "threads \(threads.map(String.init) ?? "auto"): \(summary.seconds) s, events at \(times)"
            try #require(summary.seconds > 1.5 && gaps.count >= 4, "the job was too short to judge: \(label)")
            #expect(times[0] < 0.5, "the first report came late: \(label)")
            #expect(gaps[gaps.count / 2] >= 0.24 && gaps[gaps.count / 2] < 0.4, "median gap: \(label)")
            #expect(gaps.last! < 1.5, "a long silence: \(label)")
            #expect(summary.seconds - times.last! < 0.75, "silent at the end (the encoder's drain): \(label)")
            #expect(Double(times.count) >= (summary.seconds - 1) * 2, "too few reports: \(label)")
        }
    }

    @Test(
        """
        jobs of one process never share a temporary: two at once on one output both finish (the later rename \
        wins), and a job right after a cancelled one on the same output finishes
        """)
    func jobsOfOneProcessOnOneOutput() async throws {
        let scratch = try Scratch()
        let output = scratch.file("same.mp4").path
        func job(_ input: String) throws -> TranscodeJob {
            var config = TranscodeConfiguration(input: input, output: output)
            config.preset = "ultrafast"
            config.overwrite = true
            return TranscodeJob(configuration: config)
        }
        let sample = try Files.sample("std-h264-aac.mp4").path
        let a = try job(sample)
        let b = try job(sample)
        async let first = a.run()
        async let second = b.run()
        let (x, y) = try await (first, second)
        #expect(x.framesOut == 60 && y.framesOut == 60)
        #expect(try Oracle.videoFramePTS(output).count == 60)
        for round in 0..<3 {
            let cancelled = try job(try Files.sample("bench-720p.mp4").path)
            let canceller = Thread {
                usleep(150_000)
                cancelled.cancel()
            }
            canceller.start()
            _ = try? await cancelled.run()
            let next = try await job(sample).run()
            #expect(next.framesOut == 60, "round \(round)")
        }
        #expect(Files.names(in: scratch.url) == ["same.mp4"], "\(Files.names(in: scratch.url))")
    }

    @Test(
        """
        a finished job lets go of everything: no descriptor of this process still opens its input or its output \
        (done, cancelled, on both engines) — an engine kept alive by a cycle held both open
        """)
    func jobsLetGo() async throws {
        let scratch = try Scratch()
        let input = scratch.file("held-input.mp4")
        try FileManager.default.copyItem(at: try Files.sample("bench-720p.mp4"), to: input)
        for (n, kind) in ["threaded", "serial", "cancelled", "threaded"].enumerated() {
            var config = TranscodeConfiguration(input: input.path, output: scratch.file("held-\(n).mp4").path)
            config.geometry.zoom = 1.3
            config.preset = "ultrafast"
            if kind == "serial" { config.threads = 1 }
            let job = TranscodeJob(configuration: config)
            if kind == "cancelled" {
                let canceller = Thread {
                    usleep(200_000)
                    job.cancel()
                }
                canceller.start()
            }
            _ = try? await job.run()
        }
        // Every descriptor of this process that names a file in the scratch folder (other tests' files are
        // elsewhere). run() returns as its thread hands over the result, a moment before that thread lets the job
        // go: a few seconds are allowed (a leak holds them for good).
        func held() throws -> [String] { Files.openDescriptors().filter { $0.hasPrefix(scratch.url.path) } }
        for _ in 0..<50 where try !held().isEmpty { try await Task.sleep(nanoseconds: 100_000_000) }
        let left = try held()
        #expect(left.isEmpty, "still open after the jobs ended: \(left)")
    }

    @Test("cancel() and task cancellation stop the job: .cancelled (the last event too), no output, no temporary file")
    func cancellation() async throws {
        let scratch = try Scratch()
        for viaTask in [false, true] {
            var config = TranscodeConfiguration(
                input: try Files.sample("bench-720p.mp4").path, output: scratch.file("c\(viaTask).mp4").path)
            config.geometry.zoom = 1.3
            config.preset = "slow"
            let job = TranscodeJob(configuration: config)
            let last = Task { () -> TranscodeEvent? in
                var last: TranscodeEvent? = nil
                for await event in job.events { last = event }
                return last
            }
            let running = Task { try await job.run() }
            // Cancel from a plain thread 0.3 s in (the job takes seconds): not from a task, which
            // the test runner's busy pool may start late. Cancelled before `run` starts or during
            // it, the job must end `.cancelled` either way.
            let canceller = Thread {
                usleep(300_000)
                if viaTask { running.cancel() } else { job.cancel() }
            }
            canceller.start()
            let result = await running.result
            switch result {
            case .success: Issue.record("a cancelled job finished (viaTask \(viaTask))")
            case .failure(let error):
                #expect((error as? CropZoomError)?.kind == .cancelled, "\(error)")
                #expect((error as? CropZoomError)?.exitCode == 130)
            }
            // The event stream ends with the outcome too.
            if case .failed(let e) = await last.value {
                #expect(e.kind == .cancelled, "\(e)")
            } else {
                Issue.record("the last event is not .failed(cancelled)")
            }
            #expect(Files.names(in: scratch.url).isEmpty, "left behind: \(Files.names(in: scratch.url))")
        }
    }

    @Test(
        """
        Examples/ZoomFromCSV: every clip of the CSV (fields quoted as RFC 4180 quotes them), zoomed around its \
        centre; a bad CSV exits 2
        """)
    func example() throws {
        let scratch = try Scratch()
        try FileManager.default.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: scratch.file("a.mp4"))
        // A quoted name holding a comma and a quote, and a quoted number.
        let csv = """
            input,output,center_x,center_y,zoom
            a.mp4,face.mp4,0.6,0.4,2
            # skipped
            "a.mp4","wide, ""take 2"".mkv",0.5,"0.5",1.2

            """
        try csv.write(to: scratch.file("clips.csv"), atomically: true, encoding: .utf8)
        let exe = try #require(Oracle.packageRoot).appendingPathComponent(".build/debug/ZoomFromCSV").path
        let run = try CLI.run(exe, [scratch.file("clips.csv").path])
        #expect(run.status == 0 && run.stdout.contains("[2/2] done"), "\(run)")
        // face.mp4 is the 320x180 window at (224, 54) scaled to 640x360: compare with ffmpeg's crop+scale.
        let psnr = try Oracle.meanPSNR(
            reference: scratch.file("a.mp4").path, referenceFilter: "crop=320:180:224:54,scale=640:360:flags=bicubic",
            output: scratch.file("face.mp4").path, alignStarts: true)
        #expect(psnr > 35, "face.mp4 against the reference window: \(psnr) dB")
        #expect(try Oracle.decodedFrameHashes(scratch.file("wide, \"take 2\".mkv").path).count == 60)
        try "input,output\na.mp4,x.mp4\n".write(to: scratch.file("bad.csv"), atomically: true, encoding: .utf8)
        let bad = try CLI.run(exe, [scratch.file("bad.csv").path])
        #expect(bad.status == 2 && bad.stderr.contains("first line"), "\(bad)")
        try "input,output,center_x,center_y,zoom\na.mp4,\"x.mp4,0.5,0.5,1\n"
            .write(to: scratch.file("open.csv"), atomically: true, encoding: .utf8)
        let open = try CLI.run(exe, [scratch.file("open.csv").path])
        #expect(open.status == 2 && open.stderr.contains("never closed"), "\(open)")
    }
}

extension LibraryAPITests {
    /// An HTTP server on loopback that answers with the headers of a large file and then sends nothing; it writes
    /// the time (seconds since 1970) it accepted the connection to `accepted`, and the time the client closed it
    /// to `closed`.
    static let stalledServer = """
        import socket, sys, time
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", int(sys.argv[1])))
        s.listen(4)
        open(sys.argv[4], "w").write("listening")
        c, _ = s.accept()
        open(sys.argv[2], "w").write(repr(time.time()))
        c.recv(65536)
        c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: video/mp4\\r\\nContent-Length: 100000000\\r\\n\\r\\n")
        while c.recv(65536):
            pass
        open(sys.argv[3], "w").write(repr(time.time()))
        time.sleep(3600)
        """

    @Test(
        """
        cancel() ends a read waiting on a stalled network input at once, without a signal: the connection \
        closed within a second, .cancelled; URL inputs and outputs
        """)
    func cancelEndsAWaitingRead() async throws {
        let scratch = try Scratch()
        let script = scratch.file("stall.py")
        try Self.stalledServer.write(to: script, atomically: true, encoding: .utf8)
        let (accepted, closed) = (scratch.file("accepted").path, scratch.file("closed").path)
        let listening = scratch.file("listening").path
        let port = RealTime.LiveTests.freePort()
        let server = try ChildProcess.spawn(
            ["python3", script.path, "\(port)", accepted, closed, listening], stdout: .null, stderr: .null)
        defer { RealTime.LiveTests.stop(server) }
        for _ in 0..<600 where !FileManager.default.fileExists(atPath: listening) {
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        let config = TranscodeConfiguration(
            input: URL(string: "http://127.0.0.1:\(port)/clip.mp4")!, output: scratch.file("o.mp4"))
        #expect(config.input == "http://127.0.0.1:\(port)/clip.mp4" && config.output == scratch.file("o.mp4").path)
        let job = TranscodeJob(configuration: config)
        let run = Task { () -> CropZoomError? in
            do throws(CropZoomError) {
                _ = try await job.run()
                return nil
            } catch {
                return error
            }
        }
        // Timed outside Swift concurrency (the test runner's other tests may hold its threads): the server notes
        // when the job connected and when it let go. The waits sleep with `await`, so the job's task gets a thread.
        // A wait starved past its deadline (CI once resumed it minutes late) still reads the file a last time.
        func time(_ path: String, within seconds: Double) async throws -> Double? {
            func read() -> Double? {
                (try? String(contentsOfFile: path, encoding: .utf8)).flatMap { Double($0) }
            }
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if let t = read() { return t }
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            return read()
        }
        try #require(try await time(accepted, within: 120) != nil, "the job never connected")
        try await Task.sleep(nanoseconds: 500_000_000)  // the job now waits on its read
        let cancelledAt = Date().timeIntervalSince1970
        job.cancel()
        let closedAt = try await time(closed, within: 30)
        try #require(closedAt != nil, "the job still holds the connection 30 s after cancel()")
        #expect(closedAt! - cancelledAt < 1, "the read ended \(closedAt! - cancelledAt) s after cancel()")
        let outcome = await run.value
        #expect(outcome?.kind == .cancelled, "\(String(describing: outcome))")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("o.mp4").path))
    }

    @Test(
        """
        FilePath and URL beside strings: a transcode, a probe and a job file named by bytes that are not UTF-8, \
        every byte kept
        """)
    func filePaths() async throws {
        let scratch = try Scratch()
        let folder = FilePath(scratch.url.path)
        // in\xff.mp4, out\xfe.mp4 and job\xfd.json: FilePath.string would turn these bytes into U+FFFD.
        func named(_ stem: String, _ byte: UInt8, _ ext: String) -> FilePath {
            let bytes = Array(stem.utf8) + [byte] + Array(ext.utf8)
            return folder.appending(FilePath(platformString: bytes.map { CChar(bitPattern: $0) } + [0]).lastComponent!)
        }
        func write(_ data: Data, to path: FilePath) throws {
            let fd = try FileDescriptor.open(path, .writeOnly, options: [.create], permissions: .ownerReadWrite)
            _ = try fd.closeAfter { try fd.writeAll(data) }
        }
        let (input, output, jobFile) = (
            named("in", 0xFF, ".mp4"), named("out", 0xFE, ".mp4"), named("job", 0xFD, ".json")
        )
        try write(try Data(contentsOf: try Files.sample("std-h264-aac.mp4")), to: input)

        var config = TranscodeConfiguration(input: input, output: output)
        config.geometry.zoom = 1.5
        config.preset = "ultrafast"
        let summary = try await TranscodeJob(configuration: config).run()
        let counted = try CLI.bash(
            "cd \(ChildProcess.shellQuoted([scratch.url.path])) && ffprobe -v error -count_frames -select_streams v:0 "
                + "-show_entries stream=nb_read_frames -of csv=p=0 $'out\\xfe.mp4'")
        #expect(counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "60", "\(counted)")
        #expect(summary.framesOut == 60 && RawPath.filePath(summary.output) == output)

        let info = try MediaProbe.probe(output)
        #expect(info.streams.count == 2 && RawPath.filePath(info.path) == output)
        #expect(try MediaProbe.probe(try Files.sample("std-h264-aac.mp4")).streams.count == 2)  // a file URL

        try write(Data(#"{"clips": [{"input": "a.mp4", "output": "o.mp4", "zoom": 2}]}"#.utf8), to: jobFile)
        let job = try JobFile.load(jobFile)
        #expect(RawPath.filePath(job.path) == jobFile && job.clips.map(\.configuration.geometry.zoom) == [2])
        do {
            _ = try MediaProbe.probe(named("gone", 0xFF, ".mp4"))
            Issue.record("probed a file that is not there")
        } catch {
            #expect(error.kind == .inputUnreadable && error.description.contains("No such file"), "\(error)")
        }
    }
}

@Suite("Library API: stabilisation")
struct LibraryStabilizeTests {
    @Test(
        """
        cameraPath() returns the path without writing the output, with progress in the analysing phase; a job with \
        that path renders what --path-in renders; one frame gives nil and a notice
        """)
    func cameraPathThenRender() async throws {
        let scratch = try Scratch()
        let input = try RealTime.StabilizeTests.shaky(
            scratch, "in.mp4", ["--path", "static", "--seconds", "1", "--no-audio"])
        var config = TranscodeConfiguration(input: input, output: scratch.file("lib.mkv").path)
        config.codec = "ffv1"
        config.stabilize = Stabilization()
        let analysis = TranscodeJob(configuration: config)
        let phases = Task { () -> [ProgressEvent.Phase?] in
            var seen: [ProgressEvent.Phase?] = []
            for await case .progress(let p) in analysis.events { seen.append(p.phase) }
            return seen
        }
        let path = try #require(try await analysis.cameraPath())
        let seen = await phases.value
        #expect(!seen.isEmpty && seen.allSatisfy { $0 == .analysing }, "\(seen)")
        #expect(!Files.exists(scratch.file("lib.mkv")), "the analysis writes no output")
        #expect(path.samples.count == 30 && path.width == 640 && path.height == 360)
        let report = CameraPathReport(path)
        #expect(report.pathJitterPx < report.cameraJitterPx / 10, "\(report)")
        await #expect(throws: CropZoomError.self) { _ = try await analysis.run() }  // a job runs once
        // Rendered from the value, as from the same path written and read back.
        config.stabilize?.path = path
        _ = try await TranscodeJob(configuration: config).run()
        let csv = scratch.file("p.csv").path
        try path.csv().write(toFile: csv, atomically: true, encoding: .utf8)
        let viaFile = scratch.file("file.mkv").path
        let run = try CLI.cropzoom([input, "-o", viaFile, "--codec", "ffv1", "--path-in", csv, "--quiet"])
        try #require(run.status == 0, "\(run)")
        #expect(try RealTime.StabilizeTests.psnr(config.output, viaFile) >= 60)
        // No path: nil, and the notice says why.
        var one = TranscodeConfiguration(input: try Files.sample("one-frame.mp4").path, output: "unused.mp4")
        one.stabilize = Stabilization()
        let job = TranscodeJob(configuration: one)
        let notices = Task { () -> [String] in
            var n: [String] = []
            for await case .notice(let text) in job.events { n.append(text) }
            return n
        }
        #expect(try await job.cameraPath() == nil)
        #expect(await notices.value.contains { $0.contains("1 frame") && $0.contains("not stabilised") })
    }
}

@Suite("Library API: reframing")
struct LibraryReframeTests {
    @Test(
        """
        reframePath() returns the window path without writing the output, with progress in the analysing phase; a job \
        with that path, edited, renders what --path-in renders; a portrait input gives nil and a notice
        """)
    func reframePathThenRender() async throws {
        let scratch = try Scratch()
        let input = try RealTime.ReframeTests.clip(scratch, "in.mp4", ["--seconds", "1", "--no-audio"])
        var config = TranscodeConfiguration(input: input, output: scratch.file("lib.mkv").path)
        config.codec = "ffv1"
        config.geometry.aspect = GeometryRequest.Aspect(width: 9, height: 16)
        config.reframe = Reframing(follow: .faces)
        let analysis = TranscodeJob(configuration: config)
        let phases = Task { () -> [ProgressEvent.Phase?] in
            var seen: [ProgressEvent.Phase?] = []
            for await case .progress(let p) in analysis.events { seen.append(p.phase) }
            return seen
        }
        var path = try #require(try await analysis.reframePath())
        let seen = await phases.value
        #expect(!seen.isEmpty && seen.allSatisfy { $0 == .analysing }, "\(seen)")
        #expect(!Files.exists(scratch.file("lib.mkv")), "the analysis writes no output")
        #expect(path.samples.count == 30 && path.width == 1280 && path.height == 720)
        #expect(
            path.samples.allSatisfy { $0.width == 404 && $0.height == 720 && ["face", "track"].contains($0.signal) },
            "\(path)")
        await #expect(throws: CropZoomError.self) { _ = try await analysis.run() }  // a job runs once
        // Edited (the first half second at the left edge), rendered from the value and from the same path as a file.
        for i in path.samples.indices where path.samples[i].time < 0.5 { path.samples[i].x = 0 }
        config.reframe?.path = path
        _ = try await TranscodeJob(configuration: config).run()
        let csv = scratch.file("p.csv").path
        try path.csv().write(toFile: csv, atomically: true, encoding: .utf8)
        let viaFile = scratch.file("file.mkv").path
        let run = try CLI.cropzoom([
            input, "-o", viaFile, "--codec", "ffv1", "--aspect", "9:16", "--follow", "faces", "--path-in", csv,
            "--quiet",
        ])
        try #require(run.status == 0, "\(run)")
        #expect(try Oracle.decodedFrameHashes(config.output) == Oracle.decodedFrameHashes(viaFile))
        // The edit shows: the first frame is the left edge of the input (its crop at x = 0).
        let left = scratch.file("left.mkv").path
        let crop = try CLI.cropzoom([input, "-o", left, "--codec", "ffv1", "--crop", "404:720:0:0", "--quiet"])
        try #require(crop.status == 0, "\(crop)")
        #expect(try Oracle.decodedFrameHashes(left).first == Oracle.decodedFrameHashes(viaFile).first)
        // Nothing to follow: nil, and the notice says why.
        let tall = try Clip.lavfi("testsrc2=s=360x640:r=30:d=1").codec("libx264").write(in: scratch, name: "tall.mp4")
        var portrait = TranscodeConfiguration(input: tall, output: "unused.mp4")
        portrait.geometry.aspect = GeometryRequest.Aspect(width: 9, height: 16)
        portrait.reframe = Reframing()
        let job = TranscodeJob(configuration: portrait)
        let notices = Task { () -> [String] in
            var n: [String] = []
            for await case .notice(let text) in job.events { n.append(text) }
            return n
        }
        #expect(try await job.reframePath() == nil)
        #expect(await notices.value.contains { $0.contains("nothing to follow") }, "notice")
    }
}
