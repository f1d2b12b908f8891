// `--codec NAME` with encoders other than the defaults: every frame keeps its timestamp even
// where the codec restricts the time base, and the picture is right.

import Foundation
import Testing

struct EncoderCase: Sendable, CustomTestStringConvertible {
    var codec: String
    var outputExtension: String
    var sample: String
    /// Codec name ffprobe must report for the output video.
    var probedName: String
    /// Minimum mean PSNR (lossless FFV1 must be near-perfect; MPEG-4 part 2 at its default
    /// quality is a weaker codec).
    var minPSNR: Double
    var testDescription: String { "\(codec) -> .\(outputExtension) from \(sample)" }

    static let all: [EncoderCase] = [
        .init(codec: "ffv1", outputExtension: "mkv", sample: "std-h264-aac.mp4", probedName: "ffv1", minPSNR: 45),
        .init(codec: "libx265", outputExtension: "mp4", sample: "std-h264-aac.mp4", probedName: "hevc", minPSNR: 30),
        // MPEG-TS time base 1/90000 is beyond MPEG-4 part 2's 65535 limit.
        .init(codec: "mpeg4", outputExtension: "mp4", sample: "start-offset.ts", probedName: "mpeg4", minPSNR: 25),
        // MJPEG takes full-range formats: limited-range input is converted.
        .init(codec: "mjpeg", outputExtension: "mov", sample: "std-h264-aac.mp4", probedName: "mjpeg", minPSNR: 30),
        .init(codec: "libvpx-vp9", outputExtension: "mkv", sample: "vfr-h264.mp4", probedName: "vp9", minPSNR: 30),
    ]
}

@Suite("Encoder choice")
struct EncoderChoiceTests {
    @Test(arguments: EncoderCase.all)
    func encoder(_ c: EncoderCase) throws {
        let scratch = try Scratch()
        let input = try Files.sample(c.sample).path
        let output = scratch.file("out.\(c.outputExtension)")
        let run = try CLI.cropzoom([input, "-o", output.path, "--zoom", "2", "--codec", c.codec])
        try #require(run.status == 0 && !run.killedBySignal, "cropzoom failed: \(run)")
        let outVideo = try #require(try Oracle.streams(output.path).first { $0.codecType == "video" })
        #expect(
            outVideo.codecName == c.probedName, "video codec \(outVideo.codecName ?? "?"), expected \(c.probedName)")

        let frames = try Contract.checkFrames(input: input, output: output)
        #expect(frames.problems.isEmpty, "point 1 (frames/pts): \(frames.problems.joined(separator: "; "))")

        let inVideo = try #require(try Oracle.streams(input).first { $0.codecType == "video" })
        let upright = try #require(inVideo.uprightSize)
        let reference = ReferencePicture.make(GeometrySpec(zoom: 2), upright: upright)
        let psnr = try Oracle.meanPSNR(
            reference: input, referenceFilter: reference.filter,
            output: output.path, pixelFormat: "yuv420p", alignStarts: true)
        #expect(psnr >= c.minPSNR, "mean PSNR \(psnr) dB < \(c.minPSNR) against `\(reference.filter)`")
    }
}
