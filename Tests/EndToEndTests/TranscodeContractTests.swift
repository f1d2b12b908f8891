// Contract points 1-3 on the sample clips: every frame kept with its pts, copied audio
// byte-identical with its timestamps, and the picture equal (PSNR >= 35 dB at --crf 18) to a
// crop+scale of the upright input made with the ffmpeg CLI.

import Foundation
import Testing

/// One transcode of a sample clip and what must hold for it.
struct TranscodeCase: Sendable, CustomTestStringConvertible {
    enum Audio: Sendable, Equatable {
        /// Every audio stream copied: same packets (MD5), same pts, A/V offset kept.
        case copied
        /// Copied across containers that rewrite the payload (ADTS AAC from TS into MP4):
        /// same packet count and pts, A/V offset kept, bytes not compared.
        case copiedTimingOnly
        /// The input has none; the output must have none.
        case absent
        /// Re-encoded to this codec with a `cropzoom: note:` line; the audio start is kept.
        case reencoded(String)
    }

    var name: String
    var sample: String
    var outputExtension: String
    var geometry = GeometrySpec()
    var audio: Audio = .copied
    /// The output's pixel format must be this (when set).
    var pixelFormat: String? = nil
    /// The output must say it is full range (color_range pc or a yuvj format).
    var fullRange = false
    /// Extra cropzoom options.
    var extraArgs: [String] = []

    var testDescription: String {
        "\(name): \(sample) -> .\(outputExtension) \(geometry.arguments.joined(separator: " "))"
    }
}

extension TranscodeCase {
    static let all: [TranscodeCase] = [
        // Geometry on the main demo clip (640x360, B-frames, AAC).
        .init(
            name: "zoom 2", sample: "std-h264-aac.mp4", outputExtension: "mp4",
            geometry: .init(zoom: 2)),
        .init(
            name: "zoom 2 off-centre, window clamped", sample: "std-h264-aac.mp4", outputExtension: "mp4",
            geometry: .init(zoom: 2, center: (0.1, 0.9))),
        .init(
            name: "crop W:H:X:Y", sample: "std-h264-aac.mp4", outputExtension: "mp4",
            geometry: .init(crop: (300, 200, 40, 60))),
        .init(
            name: "crop W:H centred on --center", sample: "std-h264-aac.mp4", outputExtension: "mp4",
            geometry: .init(center: (0.3, 0.6), crop: (320, 180, nil, nil))),
        .init(
            name: "zoom 2 with --size 426x-2", sample: "std-h264-aac.mp4", outputExtension: "mp4",
            geometry: .init(zoom: 2, size: (426, -2))),
        .init(
            name: "zoom 2 --rotate 90", sample: "std-h264-aac.mp4", outputExtension: "mp4",
            geometry: .init(zoom: 2, rotate: 90)),
        .init(
            name: "zoom 2 --flip horizontal", sample: "std-h264-aac.mp4", outputExtension: "mp4",
            geometry: .init(zoom: 2, flip: "horizontal")),
        .init(
            name: "zoom 2 --rotate 270 --flip vertical", sample: "std-h264-aac.mp4", outputExtension: "mp4",
            geometry: .init(zoom: 2, rotate: 270, flip: "vertical")),
        .init(
            name: "zoom 2 --scaler lanczos", sample: "std-h264-aac.mp4", outputExtension: "mp4",
            geometry: .init(zoom: 2, scaler: "lanczos")),
        // Each sample end to end.
        .init(name: "VFR", sample: "vfr-h264.mp4", outputExtension: "mp4", geometry: .init(zoom: 2)),
        .init(
            name: "display matrix rotation 90", sample: "rotate90.mp4", outputExtension: "mp4",
            geometry: .init(zoom: 2)),
        .init(
            name: "odd size 4:4:4 kept with --pix-fmt yuv444p, whole picture", sample: "odd-444.mkv",
            outputExtension: "mp4", pixelFormat: "yuv444p", extraArgs: ["--pix-fmt", "yuv444p"]),
        .init(
            name: "odd size 4:4:4 kept with --pix-fmt yuv444p, odd crop", sample: "odd-444.mkv",
            outputExtension: "mp4", geometry: .init(crop: (201, 151, 33, 17)), pixelFormat: "yuv444p",
            extraArgs: ["--pix-fmt", "yuv444p"]),
        // H.264's default is what players take: 8-bit 4:2:0 (an even size).
        .init(
            name: "odd size 4:4:4 -> H.264's default 4:2:0", sample: "odd-444.mkv", outputExtension: "mp4",
            geometry: .init(zoom: 1.2), pixelFormat: "yuv420p"),
        .init(
            name: "MPEG-TS start 11.4 s -> TS", sample: "start-offset.ts", outputExtension: "ts",
            geometry: .init(zoom: 2)),
        .init(
            name: "MPEG-TS start 11.4 s -> MP4", sample: "start-offset.ts", outputExtension: "mp4",
            geometry: .init(zoom: 2), audio: .copiedTimingOnly),
        .init(
            name: "VP9+Opus WebM -> WebM", sample: "vp9-opus.webm", outputExtension: "webm",
            geometry: .init(zoom: 2)),
        .init(
            name: "HEVC 10-bit MKV -> MKV, H.264's default 8 bits", sample: "hevc10.mkv", outputExtension: "mkv",
            geometry: .init(zoom: 2), pixelFormat: "yuv420p"),
        .init(
            name: "HEVC 10-bit MKV -> MKV --codec hevc, 10 bits kept", sample: "hevc10.mkv", outputExtension: "mkv",
            geometry: .init(zoom: 2), pixelFormat: "yuv420p10le", extraArgs: ["--codec", "hevc"]),
        .init(
            name: "no audio", sample: "no-audio.mp4", outputExtension: "mp4",
            geometry: .init(zoom: 2), audio: .absent),
        .init(
            name: "two audio tracks", sample: "two-audio.mp4", outputExtension: "mp4",
            geometry: .init(zoom: 2)),
        .init(
            name: "PCM in MOV -> MOV (copied)", sample: "pcm.mov", outputExtension: "mov",
            geometry: .init(zoom: 2)),
        .init(
            name: "PCM in MOV -> MP4 (re-encoded to AAC)", sample: "pcm.mov", outputExtension: "mp4",
            geometry: .init(zoom: 2), audio: .reencoded("aac")),
        .init(name: "one frame", sample: "one-frame.mp4", outputExtension: "mp4", geometry: .init(zoom: 2)),
        .init(
            name: "MJPEG full range", sample: "mjpeg-full.mov", outputExtension: "mp4",
            geometry: .init(zoom: 2), fullRange: true),
        // The serial engine (--threads 1) keeps the same contract as the threaded one.
        .init(
            name: "--threads 1, B-frames", sample: "std-h264-aac.mp4", outputExtension: "mp4",
            geometry: .init(zoom: 2, rotate: 90), extraArgs: ["--threads", "1"]),
        .init(
            name: "--threads 1, VFR", sample: "vfr-h264.mp4", outputExtension: "mp4",
            geometry: .init(zoom: 1.5), extraArgs: ["--threads", "1"]),
        .init(
            name: "--threads 4, two audio tracks", sample: "two-audio.mp4", outputExtension: "mov",
            geometry: .init(zoom: 1.5), extraArgs: ["--threads", "4"]),
    ]
}

@Suite("Transcode contract on the samples")
struct TranscodeContractTests {

    @Test(arguments: TranscodeCase.all)
    func transcode(_ c: TranscodeCase) throws {
        let scratch = try Scratch()
        let input = try Files.sample(c.sample).path
        let output = scratch.file("out.\(c.outputExtension)")
        let run = try CLI.cropzoom([input, "-o", output.path, "--crf", "18"] + c.geometry.arguments + c.extraArgs)
        try #require(run.status == 0 && !run.killedBySignal, "cropzoom failed: \(run)")
        #expect(
            Files.names(in: scratch.url) == [output.lastPathComponent],
            "the folder should hold only OUTPUT after success: \(Files.names(in: scratch.url))")

        let inStreams = try Oracle.streams(input)
        let inVideo = try #require(inStreams.first { $0.codecType == "video" })
        let outStreams = try Oracle.streams(output.path)
        let outVideo = try #require(outStreams.first { $0.codecType == "video" }, "no video stream in the output")
        #expect(outStreams.filter { $0.codecType == "video" }.count == 1)

        // Geometry: size and no display matrix left.
        let upright = try #require(inVideo.uprightSize)
        let quarterTurn = Int(((inVideo.rotation ?? 0) / 90).rounded()) % 2 != 0
        let sar = inVideo.sampleAspectRatio.map { $0.num > 0 && $0.den > 0 ? $0.doubleValue : 1 } ?? 1
        let is444 = (inVideo.pixFmt ?? "").contains("444")
        let outIs444 = (outVideo.pixFmt ?? "").contains("444")
        let reference = ReferencePicture.make(
            c.geometry, upright: upright, sar: sar, sarAlongY: quarterTurn,
            align: is444 ? 1 : 2, outputAlign: outIs444 ? 1 : 2)
        #expect(
            outVideo.width == reference.width && outVideo.height == reference.height,
            Comment(
                rawValue: "output is \(outVideo.width ?? 0)x\(outVideo.height ?? 0), expected "
                    + "\(reference.width)x\(reference.height) (\(c.geometry.arguments) on upright "
                    + "\(upright.width)x\(upright.height))")
        )
        #expect(outVideo.rotation == nil, "the output still has a display matrix (rotation \(outVideo.rotation ?? 0))")
        if let pixelFormat = c.pixelFormat {
            #expect(
                outVideo.pixFmt == pixelFormat,
                "output pix_fmt \(outVideo.pixFmt ?? "?"), expected \(pixelFormat) like the input")
        }
        if c.fullRange {
            #expect(
                outVideo.colorRange == "pc" || (outVideo.pixFmt ?? "").hasPrefix("yuvj"),
                Comment(
                    rawValue: "full-range input (\(inVideo.pixFmt ?? "?"), range \(inVideo.colorRange ?? "?")) became "
                        + "pix_fmt \(outVideo.pixFmt ?? "?") range \(outVideo.colorRange ?? "unspecified")")
            )
        }

        // Point 1: frames and their pts.
        let frames = try Contract.checkFrames(input: input, output: output)
        #expect(frames.problems.isEmpty, "point 1 (frames/pts): \(frames.problems.joined(separator: "; "))")
        #expect(frames.outputFrames > 0)
        // VFR stays VFR: the set of frame durations is the same.
        let inDurations = try Self.distinctDurations(input)
        if inDurations.count > 1 {
            let outDurations = try Self.distinctDurations(output.path)
            #expect(
                outDurations == inDurations,
                "VFR: input frame durations \(inDurations.sorted()) ms, output \(outDurations.sorted()) ms")
        }

        // Point 2: audio.
        switch c.audio {
        case .copied, .copiedTimingOnly:
            let problems = try Contract.checkCopiedAudio(
                input: input, output: output,
                compareHashes: c.audio == .copied, shift: frames.shift)
            #expect(problems.isEmpty, "point 2 (audio): \(problems.joined(separator: "; "))")
            #expect(inStreams.contains { $0.codecType == "audio" }, "test set-up: \(c.sample) should have audio")
        case .absent:
            #expect(!outStreams.contains { $0.codecType == "audio" }, "the output has audio the input did not have")
        case .reencoded(let codec):
            let inAudio = try #require(inStreams.first { $0.codecType == "audio" })
            let outAudio = try #require(outStreams.first { $0.codecType == "audio" }, "the audio was dropped")
            #expect(
                outAudio.codecName == codec, "audio should be re-encoded to \(codec), is \(outAudio.codecName ?? "?")")
            #expect(
                run.stderrLines.contains { $0.hasPrefix("cropzoom: note: ") },
                "re-encoding the audio should be announced with a `cropzoom: note:` line; stderr:\n\(run.stderr)")
            let inStart = inAudio.startTime ?? 0
            let outStart = outAudio.startTime ?? 0
            #expect(abs(outStart - inStart) <= 1e-3, "audio start \(inStart) s became \(outStart) s")
            let inOffset = inStart - (inVideo.startTime ?? 0)
            let outOffset = outStart - (outVideo.startTime ?? 0)
            #expect(abs(outOffset - inOffset) <= 1e-3, "audio - video start offset \(inOffset) s became \(outOffset) s")
        }

        // Point 3: the picture.
        let pixelFormat = Contract.comparisonPixelFormat(inVideo.pixFmt, output: outVideo.pixFmt)
        let psnr = try Oracle.meanPSNR(
            reference: input, referenceFilter: reference.filter,
            output: output.path, pixelFormat: pixelFormat, alignStarts: true)
        #expect(psnr >= 35, "point 3: mean PSNR \(psnr) dB < 35 against ffmpeg `\(reference.filter)` (\(pixelFormat))")

        if ["mp4", "mov"].contains(c.outputExtension) {
            let layout = try Contract.checkFaststart(output)
            #expect(layout.isEmpty, "faststart: \(layout.joined(separator: "; "))")
        }
    }

    /// Distinct frame durations (ms, rounded to 0.1 ms) of the first video stream, the last
    /// frame excluded.
    static func distinctDurations(_ path: String) throws -> Set<Double> {
        let pts = try Oracle.videoFramePTS(path).sorted()
        return Set(zip(pts, pts.dropFirst()).map { (($1 - $0) * 10000).rounded() / 10 })
    }

    @Test("--orientation ignore keeps the coded pixels and the display matrix")
    func orientationIgnore() throws {
        let scratch = try Scratch()
        let input = try Files.sample("rotate90.mp4").path
        let output = scratch.file("out.mp4")
        let run = try CLI.cropzoom([input, "-o", output.path, "--crf", "18", "--orientation", "ignore"])
        try #require(run.status == 0, "cropzoom failed: \(run)")
        let inVideo = try #require(try Oracle.streams(input).first { $0.codecType == "video" })
        let outVideo = try #require(try Oracle.streams(output.path).first { $0.codecType == "video" })
        #expect(
            outVideo.width == inVideo.width && outVideo.height == inVideo.height,
            Comment(
                rawValue: "coded size \(inVideo.width ?? 0)x\(inVideo.height ?? 0) became "
                    + "\(outVideo.width ?? 0)x\(outVideo.height ?? 0)")
        )
        #expect(
            outVideo.rotation == inVideo.rotation,
            "display matrix rotation \(inVideo.rotation ?? 0) became \(outVideo.rotation.map { "\($0)" } ?? "none")")
        let frames = try Contract.checkFrames(input: input, output: output)
        #expect(frames.problems.isEmpty, "point 1: \(frames.problems.joined(separator: "; "))")
        // Both files are autorotated by the CLI, so the pictures compare upright.
        let upright = try #require(inVideo.uprightSize)
        let psnr = try Oracle.meanPSNR(
            reference: input, referenceFilter: "scale=\(upright.width):\(upright.height)",
            output: output.path, alignStarts: true)
        #expect(psnr >= 35, "mean PSNR \(psnr) dB")
    }

    @Test("--progress json: NDJSON on stderr ending with done; frames_out = frames in the file")
    func progressJSON() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let output = scratch.file("out.mp4")
        let run = try CLI.cropzoom([input, "-o", output.path, "--zoom", "2", "--progress", "json"])
        try #require(run.status == 0, "cropzoom failed: \(run)")
        let lines = run.stderrLines
        try #require(!lines.isEmpty, "no events on stderr")
        var events: [[String: Any]] = []
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "stderr line is not a JSON object: \(line)")
            if let object {
                #expect(object["event"] is String, "event without an \"event\" name: \(line)")
                events.append(object)
            }
        }
        let last = try #require(events.last)
        #expect(last["event"] as? String == "done", "the last event is \(last["event"] ?? "none"), not done")
        let framesOut = (last["frames_out"] as? NSNumber)?.intValue
        let probed = try Oracle.videoFramePTS(output.path).count
        let inputFrames = try Oracle.videoFramePTS(input).count
        #expect(
            framesOut == probed,
            Comment(
                rawValue: "done says frames_out \(framesOut.map(String.init) ?? "missing"), ffprobe decodes "
                    + "\(probed) frames in the output")
        )
        #expect(probed == inputFrames, "the output has \(probed) frames, the input \(inputFrames)")
        #expect(!stdoutHasText(run), "stdout should stay empty: \(run.stdout)")
    }

    @Test("--progress json on a failure: an error event with the exit code")
    func progressJSONError() throws {
        let scratch = try Scratch()
        let input = try Files.sample("not-media.mp4").path
        let output = scratch.file("out.mp4")
        let run = try CLI.cropzoom([input, "-o", output.path, "--progress", "json"])
        #expect(run.status == 3, "\(run)")
        let events = run.stderrLines.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let error = events.last { $0["event"] as? String == "error" }
        #expect(error != nil, "no {\"event\":\"error\"} line on stderr: \(run.stderr)")
        #expect(
            (error?["exit_code"] as? NSNumber)?.intValue == Int(run.status),
            "the error event's exit_code should be the exit status \(run.status): \(run.stderr)")
        #expect(!events.contains { $0["event"] as? String == "done" }, "a failed run reported done: \(run.stderr)")
        #expect(Files.names(in: scratch.url).isEmpty, "left behind: \(Files.names(in: scratch.url))")
    }

    @Test("--quiet prints nothing on success")
    func quiet() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let run = try CLI.cropzoom([input, "-o", scratch.file("out.mp4").path, "--quiet"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.isEmpty && run.stdout.isEmpty, "expected no output with --quiet: \(run)")
    }

    private func stdoutHasText(_ run: CLIResult) -> Bool {
        !run.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
    }
}
