import Foundation
import Testing

/// Encoders that take odd 4:2:0 sizes (VP9, AV1, FFV1) keep an odd picture odd (issue 16): 161x121 stays
/// 161x121, at 8 and 10 bits (swscale, as zimg takes even sides only); H.264 needs even sides.
@Suite("Odd sizes")
struct OddSizeTests {
    /// A 1 s 161x121 VP9 clip in `pixFmt`, lossless.
    static func clip(_ pixFmt: String, in scratch: Scratch) throws -> String {
        // (format=rgb24 first: the ffmpeg CLI would round the size of a 4:2:0 testsrc2 to even)
        try Clip.video(seconds: 1, size: "161x121", rate: 25, filter: "format=rgb24")
            .codec("libvpx-vp9", pixelFormat: pixFmt, options: ["-lossless", "1"])
            .write(in: scratch, name: "odd-\(pixFmt).webm")
    }

    static func size(_ path: String) throws -> String {
        let v = try #require(try Media.streams(path).first { $0["codec_type"] as? String == "video" })
        return "\(v["width"] as? Int ?? 0)x\(v["height"] as? Int ?? 0) \(v["pix_fmt"] as? String ?? "-")"
    }

    @Test("VP9 keeps 161x121 at 8 and 10 bits, whole (PSNR ≥ 40 dB) and zoomed; FFV1 too; HEVC rounds to even")
    func oddSizesKept() throws {
        let scratch = try Scratch()
        for format in ["yuv420p", "yuv420p10le"] {
            let input = try Self.clip(format, in: scratch)
            try #require(try Self.size(input) == "161x121 \(format)")
            let whole = scratch.file("whole-\(format).webm").path
            let run = try CLI.cropzoom([input, "-o", whole, "--crf", "4"])
            try #require(run.status == 0, "\(run)")
            #expect(try Self.size(whole) == "161x121 \(format)")
            let psnr = try Oracle.meanPSNR(
                reference: input, referenceFilter: "null", output: whole, pixelFormat: format)
            #expect(psnr >= 40, "\(format): \(psnr) dB")
            let zoomed = scratch.file("zoom-\(format).webm").path
            let zoom = try CLI.cropzoom([input, "-o", zoomed, "--zoom", "1.5"])
            try #require(zoom.status == 0, "\(zoom)")
            #expect(try Self.size(zoomed) == "161x121 \(format)")
        }
        let input = try Self.clip("yuv420p", in: scratch)
        let ffv1 = scratch.file("odd.mkv").path
        #expect(try CLI.cropzoom([input, "-o", ffv1, "--codec", "ffv1"]).status == 0)
        #expect(try Self.size(ffv1) == "161x121 yuv420p")
        for format in ["yuv420p", "yuv420p10le"] {
            // Odd in, even out: zimg (auto's choice above 8 bits) cannot read the odd picture; swscale does.
            let h264 = scratch.file("even-\(format).mp4").path
            let run = try CLI.cropzoom([try Self.clip(format, in: scratch), "-o", h264, "--codec", "hevc"])
            #expect(run.status == 0, "\(run)")
            let even = try Self.size(h264)
            #expect(even == "160x120 \(format)" || even == "162x122 \(format)", "\(even)")
        }
    }

    @Test("--kernel zimg for an odd 4:2:0 output is refused before anything is written (exit 2)")
    func zimgRefusesOddSizes() throws {
        let scratch = try Scratch()
        let input = try Self.clip("yuv420p10le", in: scratch)
        let output = scratch.file("out.webm").path
        let run = try CLI.cropzoom([input, "-o", output, "--kernel", "zimg"])
        #expect(run.status == 2 && run.stderrLines.count == 1, "\(run)")
        #expect(run.stderr.contains("zimg takes yuv420p10le pictures of even sides only (161x121)"), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
