// Live outputs: a zoomed live source restreamed over UDP and SRT (MPEG-TS), RTMP (FLV) and HLS, each received by
// a real peer the test starts — the ffmpeg CLI listening on loopback — or read back from the playlist.

import CropZoomKit
import Foundation
import Testing

extension RealTime {
    @Suite("Live outputs", .serialized)
    struct LiveOutputTests {
        static let source =
            "testsrc2=size=320x240:rate=25,realtime[out0];sine=frequency=440:sample_rate=48000,arealtime[out1]"

        /// Frames and audio packets ffprobe counts in `path`, and ffmpeg's complaints on decoding it.
        static func received(_ path: String) throws -> (frames: Int, audio: Int, errors: String) {
            let frames = try Oracle.decodedFrameHashes(path).count
            let audio = try Oracle.packets(path, streamIndex: 1).count
            return (frames, audio, try Oracle.decodeComplaints(path).complaints)
        }

        @Test(
            "a live source restreamed: every frame reaches an ffmpeg receiver over UDP, SRT and RTMP",
            arguments: ["udp", "srt", "rtmp"])
        func restream(scheme: String) throws {
            let scratch = try Scratch()
            let port = LiveTests.freePort()
            let got = scratch.file(scheme == "rtmp" ? "got.flv" : "got.ts").path
            let (listen, send): ([String], String) =
                switch scheme {
                case "udp":
                    (["-timeout", "3000000", "-i", "udp://127.0.0.1:\(port)"], "udp://127.0.0.1:\(port)?pkt_size=1316")
                case "srt": (["-i", "srt://127.0.0.1:\(port)?mode=listener"], "srt://127.0.0.1:\(port)")
                default: (["-listen", "1", "-i", "rtmp://127.0.0.1:\(port)/live/x"], "rtmp://127.0.0.1:\(port)/live/x")
                }
            let receiver = try ChildProcess.spawn(
                ["ffmpeg", "-v", "error", "-y"] + listen + ["-c", "copy", got], stdout: .null,
                stderr: .file(scratch.file("receiver.log").path))
            defer { LiveTests.stop(receiver) }
            try Listening.wait(for: port, scheme == "rtmp" ? .tcp : .udp, what: "the receiving ffmpeg")
            let run = try CLI.cropzoom(
                [
                    Self.source, "--input-format", "lavfi", "-o", send, "--duration", "3", "--zoom", "1.5",
                    "--progress",
                    "json",
                ],
                timeout: 60)
            #expect(run.status == 0, "\(run)")
            #expect(LiveTests.done(run.stderr)?.framesOut == 75, "\(run.stderr)")
            // The receiver ends when the sender hangs up (SRT, RTMP) or after 3 s without data (UDP).
            var status: Int32 = 0
            let start = Date()
            while waitpid(receiver, &status, WNOHANG) == 0 && Date().timeIntervalSince(start) < 15 { usleep(100_000) }
            let r = try Self.received(got)
            #expect(r.frames == 75, "\(r.frames) frames received of 75")
            #expect(r.audio >= 140, "\(r.audio) audio packets received (3 s of AAC: 141)")
            #expect(r.errors.isEmpty, "\(r.errors)")
        }

        @Test("HLS: the playlist and its first files are there while the recording goes on, cut every 2 s at keyframes")
        func hls() throws {
            let scratch = try Scratch()
            let out = scratch.file("live/stream.m3u8").path
            try FileManager.default.createDirectory(at: scratch.file("live"), withIntermediateDirectories: true)
            let run = try BackgroundRun.start(
                [Self.source, "--input-format", "lavfi", "-o", out, "--duration", "5", "--zoom", "1.5"], in: scratch.url
            )
            var during: [String] = []
            while Date().timeIntervalSince(run.started) < 4.5 {
                usleep(100_000)
                during = Files.names(in: scratch.file("live"))
            }
            #expect(during.contains("stream.m3u8") && during.contains("stream0.ts"), "\(during)")
            let ended = try run.wait(timeout: 30)
            #expect(ended.status == 0, "\(ended.stderr)")
            let playlist = try String(contentsOfFile: out, encoding: .utf8)
            #expect(
                playlist.contains("#EXT-X-PLAYLIST-TYPE:EVENT") && playlist.contains("#EXT-X-ENDLIST"), "\(playlist)")
            #expect(playlist.components(separatedBy: "#EXTINF:2.000000,").count - 1 == 2, "\(playlist)")
            for name in ["stream0.ts", "stream1.ts", "stream2.ts"] {
                let first = try Oracle.packets(scratch.file("live/\(name)").path, streamIndex: 0).first
                #expect(first?.flags.hasPrefix("K") == true, "\(name) does not start with a keyframe")
            }
            let r = try Self.received(out)
            #expect(r.frames == 125 && r.errors.isEmpty, "\(r)")
        }
    }
}
