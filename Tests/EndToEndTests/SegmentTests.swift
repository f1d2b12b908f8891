// `--segment T`: a new file every T seconds, each starting with a forced keyframe and its times at 0, with every
// packet in exactly one file. Checked with ffprobe/ffmpeg against the input and the unsegmented output.

import CropZoomKit
import Foundation
import Testing

extension RealTime {
    @Suite("Segments")
    struct SegmentTests {
        /// The segment files of `pattern` (`rec-%03d.mp4`) in `folder`, in order.
        static func segments(_ folder: URL, stem: String) -> [String] {
            Files.names(in: folder).filter { $0.hasPrefix(stem + "-") }.sorted().map {
                folder.appendingPathComponent($0).path
            }
        }

        @Test(
            """
            a 5 s clip in 1 s segments: 5 files, each opening on a keyframe and decodable alone, its times from 0; \
            every frame and every copied audio packet in exactly one, in order
            """)
        func fileInSegments() throws {
            let scratch = try Scratch()
            let input = try Files.sample("bench-720p.mp4").path
            let whole = scratch.file("whole.mp4").path
            let one = try CLI.cropzoom([input, "-o", whole, "--zoom", "1.5"])
            #expect(one.status == 0, "\(one)")
            let run = try CLI.cropzoom([input, "-o", scratch.file("rec.mp4").path, "--zoom", "1.5", "--segment", "1"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr.contains("writing a file every 1 s: \(scratch.file("rec-%03d.mp4").path)"), "\(run)")
            let files = Self.segments(scratch.url, stem: "rec")
            #expect(files.map { URL(fileURLWithPath: $0).lastPathComponent } == (0..<5).map { "rec-00\($0).mp4" })
            #expect(!FileManager.default.fileExists(atPath: scratch.file("rec.mp4").path))
            var frames: [Double] = []
            var audio: [String] = []
            for (k, file) in files.enumerated() {
                let video = try Oracle.packets(file, streamIndex: 0)
                #expect(video.first?.flags.hasPrefix("K") == true, "\(file) does not open on a keyframe")
                // Decodable alone, without a warning.
                let decode = try Oracle.decodeComplaints(file)
                #expect(decode.status == 0 && decode.complaints.isEmpty, "\(file): \(decode.complaints)")
                let pts = try Oracle.videoFramePTS(file)
                #expect(pts.first == 0, "\(file) starts at \(pts.first ?? -1)")
                frames += pts.map { $0 + Double(k) }
                audio += try Oracle.packets(file, streamIndex: 1).map(\.hash)
            }
            // Every frame once, at its time in the whole output; every audio packet once, in order.
            let expected = try Oracle.videoFramePTS(whole)
            #expect(frames.count == expected.count)
            for (a, b) in zip(frames, expected) { #expect(abs(a - b) < 0.0005, "frame at \(a), in the whole at \(b)") }
            #expect(audio == (try Oracle.packets(input, streamIndex: 1).map(\.hash)))
        }

        @Test(
            """
            a live recording in 1 s segments: the files are written as they are recorded (no temporary), each \
            independently playable, the audio continuous across them; an existing segment is not overwritten
            """)
        func liveInSegments() throws {
            let scratch = try Scratch()
            let source =
                "testsrc2=size=320x240:rate=25,realtime[out0];sine=frequency=440:sample_rate=48000,arealtime[out1]"
            let out = scratch.file("live.mkv").path
            let run = try BackgroundRun.start(
                [
                    source, "--input-format", "lavfi", "-o", out, "--segment", "1", "--duration", "3", "--progress",
                    "json",
                ],
                in: scratch.url)
            // The first file is there, under its own name, while the recording goes on.
            var early: [String] = []
            while Date().timeIntervalSince(run.started) < 20 && early.count < 2 {
                usleep(100_000)
                early = Self.segments(scratch.url, stem: "live")
            }
            #expect(early.count >= 2, "\(Files.names(in: scratch.url))")
            let ended = try run.wait(timeout: 30)
            #expect(ended.status == 0, "\(ended.stderr)")
            #expect(LiveTests.done(ended.stderr)?.framesOut == 75, "\(ended.stderr)")
            let files = Self.segments(scratch.url, stem: "live")
            #expect(files.count == 3, "\(files)")
            var frames = 0
            var audio: [String] = []
            for file in files {
                let decode = try Oracle.decodeComplaints(file)
                #expect(decode.status == 0 && decode.complaints.isEmpty, "\(file): \(decode.complaints)")
                frames += try Oracle.decodedFrameHashes(file).count
                audio += try Oracle.packets(file, streamIndex: 1).map(\.hash)
            }
            // The sound, copied (PCM into Matroska), is the generator's from its first packet: none lost or repeated
            // at a boundary.
            let reference = try Clip.audio(.sine(frequency: 440, sampleRate: 48000)).duration(4).audioCodec("copy")
                .write(in: scratch, name: "sine.mkv")
            let sent = try Oracle.packets(reference, streamIndex: 0).map(\.hash)
            #expect(audio.count > 130 && Array(sent.prefix(audio.count)) == audio, "\(audio.count) audio packets")
            #expect(frames == 75)
            #expect(Files.names(in: scratch.url).filter { $0.contains("cropzoom-") }.isEmpty)
            // Run again: the segments are there, and are not replaced without -y.
            let again = try CLI.cropzoom(
                [source, "--input-format", "lavfi", "-o", out, "--segment", "1", "--duration", "1"], timeout: 30)
            #expect(again.status == 2 && again.stderr.contains("live-000.mkv already exists"), "\(again)")
        }
    }
}
