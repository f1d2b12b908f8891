// A desktop recorded live, with real components the test starts: an X server (Xvfb) showing a clock that ticks
// (xclock), and a sound server (PulseAudio) with a null sink into which a 440 Hz tone is played; cropzoom records
// the screen (x11grab) with a zoom and the sink's monitor (`--audio-input pulse:…`). What was recorded is checked
// with ffprobe/ffmpeg.

import CropZoomKit
import Foundation
import Testing

/// An X server with a ticking clock and a sound server playing a tone into a null sink, started for one test and
/// stopped when it ends. A component that does not start fails the test, saying which and why.
final class Desktop {
    let display: String
    let pulseServer: String
    /// The sink's monitor, the source cropzoom records.
    let monitor = "cz.monitor"
    private var pids: [Int32] = []
    private let folder: URL

    init(in folder: URL) throws {
        self.folder = folder
        for tool in ["Xvfb", "xclock", "pulseaudio", "pactl", "pacat", "ffmpeg"] where ChildProcess.which(tool) == nil {
            throw Oracle.Failure("\(tool) is not installed: scripts/setup.sh installs xvfb, x11-apps, pulseaudio")
        }
        // A display number no X server uses: neither its socket nor its lock file (Xvfb refuses a display whose lock
        // exists). Servers killed without their clean-up (a CI run stopped) leave both behind; on a machine that had
        // collected a hundred of them, every number was taken and the test recorded a frozen screen.
        let number =
            (90..<190).first {
                !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
                    && !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock")
            } ?? 99
        display = ":\(number)"
        let runtime = folder.appendingPathComponent("pulse")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        pulseServer = "unix:\(runtime.path)/native"
        do {
            pids.append(
                try ChildProcess.spawn(
                    Foreground.prefix + ["Xvfb", display, "-screen", "0", "640x480x24", "-nolisten", "tcp"],
                    stdout: .null,
                    stderr: .file(folder.appendingPathComponent("xvfb.log").path)))
            try Self.waitFor("Xvfb on \(display)") {
                FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)")
            }
            pids.append(
                try ChildProcess.spawn(
                    Foreground.prefix + ["xclock", "-display", display, "-update", "1", "-geometry", "300x300+170+90"],
                    stdout: .null,
                    stderr: .file(folder.appendingPathComponent("xclock.log").path)))
            // PulseAudio as this user, its runtime files and socket in the test's folder, no session bus.
            let pulseEnv = Self.environment(["HOME": runtime.path, "PULSE_RUNTIME_PATH": runtime.path])
            pids.append(
                try ChildProcess.spawn(
                    Foreground.prefix + [
                        "pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit",
                        "-L", "module-null-sink sink_name=cz rate=48000",
                        "-L", "module-native-protocol-unix socket=\(runtime.path)/native auth-anonymous=1",
                    ], stdout: .null, stderr: .file(folder.appendingPathComponent("pulseaudio.log").path),
                    environment: pulseEnv))
            let clientEnv = environment
            try Self.waitFor("PulseAudio at \(pulseServer)") {
                let pid = try? ChildProcess.spawn(
                    ["pactl", "info"], stdout: .null, stderr: .null, environment: clientEnv)
                var status: Int32 = 0
                guard let pid, waitpid(pid, &status, 0) == pid else { return false }
                return status == 0
            }
            // The tone, played in real time with 20 ms of latency (the null sink then renders in 20 ms blocks).
            pids.append(
                try ChildProcess.spawn(
                    Foreground.prefix + [
                        "bash", "-c",
                        "ffmpeg -v error -re -f lavfi -i sine=frequency=440:sample_rate=48000 -f s16le -ac 2 - "
                            + "| pacat --latency-msec=20 --device=cz --format=s16le --rate=48000 --channels=2 --raw",
                    ], stdout: .null, stderr: .file(folder.appendingPathComponent("tone.log").path),
                    environment: clientEnv))
            // Until the sink's latency is short: idle, a null sink renders in 2 s blocks, and it takes up the tone's
            // 20 ms only after the block under way (`Latency: 1932269 usec, configured 5000 usec`); a recorder
            // opened meanwhile waits for that block.
            let sinks = folder.appendingPathComponent("sinks.txt").path
            try Self.waitFor("the tone on the null sink") {
                let pid = try? ChildProcess.spawn(
                    ["pactl", "list", "sinks"], stdout: .file(sinks), stderr: .null, environment: clientEnv)
                var status: Int32 = 0
                guard let pid, waitpid(pid, &status, 0) == pid, status == 0,
                    let text = try? String(contentsOfFile: sinks, encoding: .utf8),
                    let line = text.split(separator: "\n").first(where: { $0.contains("Latency:") }),
                    let usec = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
                else { return false }
                return text.contains("RUNNING") && usec <= 100_000
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// This process's environment with the desktop's display and sound server.
    var environment: [String] { Self.environment(["DISPLAY": display, "PULSE_SERVER": pulseServer]) }

    func stop() {
        for pid in pids.reversed() {
            // The tone's shell and its pipeline: the whole process group is not ours, so each by name too.
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        pids = []
        // Xvfb killed cannot remove its socket and lock: the display is ours, so they are removed here (left, they
        // pile up until no display number is free).
        let number = display.dropFirst()
        try? FileManager.default.removeItem(atPath: "/tmp/.X11-unix/X\(number)")
        try? FileManager.default.removeItem(atPath: "/tmp/.X\(number)-lock")
        _ = try? CLI.bash(
            "pkill -KILL -f 'pacat --latency-msec=20 --device=cz' || true; "
                + "pkill -KILL -f 'sine=frequency=440:sample_rate=48000 -f s16le' || true")
    }

    private static func environment(_ set: [String: String]) -> [String] {
        var env = ProcessInfo.processInfo.environment
        for (k, v) in set { env[k] = v }
        return env.map { "\($0.key)=\($0.value)" }
    }

    private static func waitFor(_ what: String, _ ready: () throws -> Bool) throws {
        let start = Date()
        while Date().timeIntervalSince(start) < 10 {
            if try ready() { return }
            usleep(50_000)
        }
        throw Oracle.Failure("\(what) did not start within 10 s")
    }

    /// A cropzoom recording of the screen and the tone, in the background.
    func record(_ out: String, _ more: [String], in folder: URL) throws -> BackgroundRun {
        try BackgroundRun.start(
            [
                display, "--input-format", "x11grab", "--input-option", "framerate=30", "--audio-input",
                "pulse:\(monitor)", "-o", out, "--zoom", "1.5", "--progress", "json",
            ] + more, in: folder, environment: environment, foreground: true)
    }
}

extension RealTime {
    @Suite("Desktop capture (Xvfb + PulseAudio)", .serialized)
    struct DesktopCaptureTests {
        /// Seconds of the first and last packet of a stream, its packets' total duration and its largest gap.
        struct Span {
            var first: Double, end: Double, covered: Double, largestGap: Double, count: Int
        }

        static func span(_ path: String, stream: Int) throws -> Span {
            let packets = try Oracle.packets(path, streamIndex: stream).compactMap { p -> (Double, Double)? in
                guard let t = p.ptsTime else { return nil }
                return (t, p.durationTime ?? 0)
            }.sorted { $0.0 < $1.0 }
            guard let first = packets.first, let last = packets.last else {
                throw Oracle.Failure("\(path): stream \(stream) has no packets")
            }
            var gap = 0.0
            for (a, b) in zip(packets, packets.dropFirst()) { gap = max(gap, b.0 - (a.0 + a.1)) }
            return Span(
                first: first.0, end: last.0 + last.1, covered: packets.reduce(0) { $0 + $1.1 }, largestGap: gap,
                count: packets.count)
        }

        /// The mean volume of the audio (dB, ffmpeg's volumedetect).
        static func meanVolume(_ path: String) throws -> Double {
            let run = try Oracle.run(
                "ffmpeg", ["-v", "info", "-i", path, "-map", "0:a", "-af", "volumedetect", "-f", "null", "-"])
            guard let line = run.stderr.split(separator: "\n").first(where: { $0.contains("mean_volume:") }),
                let value = line.split(separator: " ").dropLast().last.flatMap({ Double($0) })
            else { throw Oracle.Failure("no volume measured: \(run.stderr)") }
            return value
        }

        @Test(
            """
            8 s of the desktop with a zoom and the sound server's tone: 8 s of video at 30 fps showing the ticking \
            clock, 8 s of audio with no gap holding the tone, starting within 100 ms of each other
            """)
        func recordsScreenAndSound() throws {
            let scratch = try Scratch()
            let desktop = try Desktop(in: scratch.url)
            defer { desktop.stop() }
            let out = scratch.file("desk.mkv").path
            let run = try desktop.record(out, ["--duration", "8"], in: scratch.url)
            let ended = try run.wait(timeout: 40)
            #expect(ended.status == 0, "\(ended.stderr)")
            let streams = try Oracle.streams(out)
            #expect(streams.map(\.codecType) == ["video", "audio"], "\(streams)")
            let video = try Self.span(out, stream: 0)
            let audio = try Self.span(out, stream: 1)
            // Video: 8 s at the requested rate (a frame every 1/30 s, a few may be dropped under load and counted).
            #expect(abs(video.end - video.first - 8) < 0.15, "video from \(video.first) to \(video.end)")
            #expect((228...241).contains(video.count), "\(video.count) frames in 8 s at 30 fps")
            let pts = try Oracle.videoFramePTS(out)
            let steps = zip(pts, pts.dropFirst()).map { $1 - $0 }.sorted()
            #expect(abs(steps[steps.count / 2] - 1.0 / 30) < 0.002, "median frame interval \(steps[steps.count / 2])")
            // The clock ticks: the recording is of the screen, not a still.
            #expect(Set(try Oracle.decodedFrameHashes(out)).count >= 6, "fewer than 6 distinct pictures in 8 s")
            // Audio: 8 s without a gap, holding the tone (silence is about -91 dB), starting with the video.
            #expect(abs(audio.end - audio.first - 8) < 0.15, "audio from \(audio.first) to \(audio.end)")
            // (Matroska stores milliseconds: 21.333 ms packets round to 21 or 22.)
            #expect(audio.largestGap < 0.002, "a gap of \(audio.largestGap) s in the audio")
            #expect(try Self.meanVolume(out) > -30, "the tone is not in the recording")
            #expect(abs(audio.first - video.first) <= 0.1, "audio starts at \(audio.first), video at \(video.first)")
            let done = try #require(LiveTests.done(ended.stderr), "\(ended.stderr)")
            #expect(done.framesOut == video.count)
        }

        /// Each frame's mean colour (red, green, blue; ffmpeg averages it down to one pixel).
        static func meanColours(_ path: String, in folder: URL) throws -> [(r: Int, g: Int, b: Int)] {
            let raw = folder.appendingPathComponent("colours.rgb").path
            _ = try Oracle.runChecked(
                "ffmpeg",
                [
                    // Every frame as it is, none added or dropped by ffmpeg's rate conversion (rawvideo's default is
                    // constant rate, which fills a leading or middle gap with copies).
                    "-v", "error", "-y", "-i", path, "-fps_mode", "passthrough", "-vf", "scale=1:1:flags=area", "-f",
                    "rawvideo", "-pix_fmt", "rgb24", raw,
                ])
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
            return stride(from: 0, to: bytes.count - 2, by: 3).map {
                (Int(bytes[$0]), Int(bytes[$0 + 1]), Int(bytes[$0 + 2]))
            }
        }

        @Test(
            """
            the set-up is recorded (issue 27 item 6): restreaming over SRT to a receiver that comes up 1.3 s after \
            the sources opened, the screen turning red 0.3 s after they opened is red only after the first frames, \
            none dropped as late
            """)
        func setUpIsRecorded() throws {
            let scratch = try Scratch()
            let desktop = try Desktop(in: scratch.url)
            defer { desktop.stop() }
            let port = LiveTests.freePort()
            let got = scratch.file("got.ts").path
            // The output's SRT connection waits for its listener, which comes up a second after the sources opened.
            let run = try desktop.record(
                "srt://127.0.0.1:\(port)", ["--duration", "4", "--max-latency", "3"], in: scratch.url)
            // The sources are open (the screen is being read) when the sound's route is told: the notice comes after
            // both are opened, before the output is. Timed from there, not from the spawn: a loaded machine took 0.7 s
            // to start cropzoom and open its devices.
            while !run.stderr.contains("cannot go in mpegts") && Date().timeIntervalSince(run.started) < 20 {
                usleep(20_000)
            }
            let opening = Date().timeIntervalSince(run.started)
            #expect(run.stderr.contains("cannot go in mpegts"), "no notice of the sound's route: \(run.stderr)")
            usleep(300_000)
            // The whole screen turns red (a red clock over it), while cropzoom is still setting up.
            let red = try ChildProcess.spawn(
                Foreground.prefix + [
                    "xclock", "-display", desktop.display, "-geometry", "640x480+0+0", "-bg", "red", "-fg", "red",
                    "-hd", "red", "-hl", "red",
                ], stdout: .null, stderr: .null)
            defer { LiveTests.stop(red) }
            usleep(1_000_000)
            let receiver = try ChildProcess.spawn(
                Foreground.prefix + [
                    "ffmpeg", "-v", "error", "-y", "-i", "srt://127.0.0.1:\(port)?mode=listener", "-c", "copy", got,
                ],
                stdout: .null, stderr: .file(scratch.file("receiver.log").path))
            defer { LiveTests.stop(receiver) }
            let ended = try run.wait(timeout: 40)
            #expect(ended.status == 0, "\(ended.stderr)")
            var status: Int32 = 0
            let start = Date()
            while waitpid(receiver, &status, WNOHANG) == 0 && Date().timeIntervalSince(start) < 15 { usleep(100_000) }
            let done = try #require(LiveTests.done(ended.stderr), "\(ended.stderr)")
            // Frames captured during the set-up are recorded, not dropped as late: before issue 27 item 6 the 1.5 s the
            // output took to connect (about 45 frames) were lost. A capture device starved of CPU during the set-up (a
            // loaded 2-core machine: the other suites run beside this one) delivers a burst, which is thinned to its
            // rate and counted as input too: a few frames (8 of 120 in a CI run with the corpus suite beside it), never
            // the set-up's 45 — the bound is a third of them.
            let dropped = done.lateBy?["input"] ?? .max
            #expect(dropped <= 15, "frames dropped as late while the output connected: \(ended.stderr)")
            // The first frame recorded was captured as the device opened, not once the output had connected (at least
            // 1.3 s after the sources opened: a frame from then would be this much later than the opening).
            let first = try #require(done.firstFrameAfter)
            #expect(first < opening + 0.3, "the first frame recorded was captured \(first) s after the start")
            // What the receiver got: 4 s of picture at 30 fps, and the sound with it (a CI run once decoded 239
            // frames here at ffmpeg's constant rate, which fills a gap with copies: the spans tell which stream moved).
            let video = try Self.span(got, stream: 0)
            let audio = try Self.span(got, stream: 1)
            // Every frame recorded arrives; with those thinned from a burst (above), 4 s at 30 fps.
            #expect(video.count == done.framesOut, "\(video.count) frames received of \(done.framesOut): \(video)")
            #expect(video.count + dropped == 120, "\(video.count) frames received, \(dropped) thinned: \(video)")
            #expect(abs(video.end - video.first - 4) < 0.15, "video \(video), audio \(audio)")
            #expect(abs(audio.first - video.first) <= 0.1, "audio \(audio), video \(video)")
            let colours = try Self.meanColours(got, in: scratch.url)
            #expect(colours.count == video.count, "\(colours.count) frames decoded of \(video.count)")
            let isRed = colours.map { $0.r > 200 && $0.g < 60 && $0.b < 60 }
            let turned = isRed.firstIndex(of: true)
            // Red from 0.3 s after the sources opened: the first frames, captured a second before the receiver came
            // up, show the screen before it (without the set-up's frames the recording would start red).
            #expect(
                (3...45).contains(turned ?? -1), "red from frame \(String(describing: turned)): \(colours.prefix(3))")
            #expect(isRed.suffix(60).allSatisfy { $0 }, "the last 2 s are not all red")
        }

        @Test(
            """
            the sound server's packets under a millisecond (fragment_size=128) into Matroska's 1 ms clock: none \
            skipped, the sound as long as the recording with no sample missing
            """)
        func finePacketsIntoMatroska() throws {
            let scratch = try Scratch()
            let desktop = try Desktop(in: scratch.url)
            defer { desktop.stop() }
            let out = scratch.file("desk.mkv").path
            let run = try desktop.record(
                out, ["--duration", "4", "--audio-input-option", "fragment_size=128"], in: scratch.url)
            let ended = try run.wait(timeout: 40)
            #expect(ended.status == 0, "\(ended.stderr)")
            #expect(!ended.stderr.contains("damaged"), "\(ended.stderr)")
            let packets = try Oracle.packets(out, streamIndex: 1).compactMap(\.ptsTime)
            #expect(packets.count > 4 * 1000, "\(packets.count) sound packets in 4 s of 0.67 ms packets")
            #expect(zip(packets, packets.dropFirst()).allSatisfy { $0 <= $1 }, "sound times go back")
            // Every sample there: the decoded sound is as long as its packets' span (a skipped packet shortens it).
            let samples = try TimestampTests.sound(out).samples
            let span = try #require(packets.last) - packets[0]
            #expect(abs(Double(samples) / 48000 - span) < 0.01, "\(samples) samples over \(span) s")
            #expect(abs(span - 4) < 0.15, "the sound spans \(span) s")
        }

        @Test("Ctrl-C after 5 s keeps a playable recording: exit 0, sound and picture ending together")
        func interruptKeepsDesktopRecording() throws {
            let scratch = try Scratch()
            let desktop = try Desktop(in: scratch.url)
            defer { desktop.stop() }
            let out = scratch.file("desk.mkv").path
            let run = try desktop.record(out, [], in: scratch.url)
            usleep(5_000_000)
            kill(run.pid, SIGINT)
            let ended = try run.wait(timeout: 30)
            #expect(ended.status == 0, "\(ended.stderr)")
            #expect(LiveTests.done(ended.stderr)?.liveEnd == "stopped", "\(ended.stderr)")
            let frames = try Oracle.decodedFrameHashes(out).count
            #expect(frames >= 90, "\(frames) frames playable after 5 s")
            let video = try Self.span(out, stream: 0)
            let audio = try Self.span(out, stream: 1)
            #expect(audio.end - audio.first >= 3, "\(audio)")
            #expect(abs(audio.end - video.end) < 0.1, "audio ends at \(audio.end), video at \(video.end)")
            #expect(Files.names(in: scratch.url).filter { $0.contains("cropzoom-") }.isEmpty)
        }

        @Test("kill -9 after 5 s recorded leaves a playable recording of at least 4 s, sound and picture")
        func killedDesktopRecordingPlays() throws {
            let scratch = try Scratch()
            let desktop = try Desktop(in: scratch.url)
            defer { desktop.stop() }
            let out = scratch.file("desk.mp4").path
            let run = try desktop.record(out, [], in: scratch.url)
            // Killed once 5 s are recorded (the progress events say so), not after a guess of how long the start takes.
            let recorded = run.waitForFrames(150)
            kill(run.pid, SIGKILL)
            _ = try? run.wait(timeout: 10)
            let partial = scratch.file(".desk.mp4.cropzoom-rec-\(run.pid)").path
            #expect(FileManager.default.fileExists(atPath: partial), "\(Files.names(in: scratch.url))")
            let frames = try Oracle.decodedFrameHashes(partial).count
            let progress = run.stderr.split(separator: "\n").prefix(4).joined(separator: "\n")
            #expect(frames >= 120, "\(frames) frames playable (4 s at 30 fps) of \(recorded) recorded; \(progress)")
            // Fragmented MP4 whose header waits for the first fragment (delay_moov): each track where it starts,
            // the sound with no gap after its first (priming) packet, starting with the picture.
            let audio = try Self.span(partial, stream: 1)
            let video = try Self.span(partial, stream: 0)
            #expect(abs(audio.first - video.first) <= 0.1, "audio starts at \(audio.first), video at \(video.first)")
            #expect(audio.end - audio.first >= 4, "\(audio)")
            #expect(audio.largestGap < 0.001, "a gap of \(audio.largestGap) s in the audio")
            let times = try Oracle.videoFramePTS(partial)
            #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "frame times not increasing: \(times)")
            let decode = try Oracle.decodeComplaints(partial)
            #expect(decode.status == 0 && decode.complaints.isEmpty, "\(decode.complaints)")
        }
    }
}
