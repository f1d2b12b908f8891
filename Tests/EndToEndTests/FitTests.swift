import CropZoomKit
import Foundation
import Testing

/// `--fit contain|cover|stretch` with `--size` (issue 16): a portrait clip into 640x360, compared with ffmpeg's own
/// scale/pad/crop of the same picture.
@Suite("Fit")
struct FitTests {
    /// ffmpeg's average PSNR of `output` (through `outputFilter`) against `reference` (through `referenceFilter`).
    static func psnr(_ output: String, _ outputFilter: String, _ reference: String, _ referenceFilter: String) throws
        -> Double
    {
        let run = try Oracle.run(
            "ffmpeg",
            [
                "-i", output, "-i", reference, "-lavfi",
                "[0:v]\(outputFilter)[a];[1:v]\(referenceFilter)[r];[a][r]psnr",
                "-f", "null", "-",
            ])
        let line = try #require(run.stderr.split(separator: "\n").last { $0.contains("PSNR y:") }, "\(run.stderr)")
        let average = try #require(line.split(separator: " ").first { $0.hasPrefix("average:") })
        let value = average.dropFirst("average:".count)
        return value == "inf" ? .infinity : try #require(Double(value))
    }

    static func portrait(in scratch: Scratch) throws -> String {
        try Clip.video(size: "360x640", rate: 30).duration(1).codec("libx264", options: ["-crf", "10"])
            .write(in: scratch, name: "portrait.mp4")
    }

    @Test("contain: the whole picture at its shape, centred, the background (black) beside it")
    func contain() throws {
        let scratch = try Scratch()
        let input = try Self.portrait(in: scratch)
        let out = scratch.file("contain.mp4").path
        let run = try CLI.cropzoom([input, "-o", out, "--size", "640x360", "--fit", "contain"])
        #expect(run.status == 0, "\(run)")
        let picture = try Self.psnr(
            out, "crop=200:360:220:0", input, "scale=202:360:flags=bicubic,crop=200:360:1:0")
        #expect(picture > 22, "the picture: \(picture) dB")
        let bar = try Self.psnr(out, "crop=200:360:0:0,format=yuv420p", input, "crop=200:360,drawbox=c=black:t=fill")
        #expect(bar > 40, "the left bar is not black: \(bar) dB")
        // stretch (the default) fills the frame with the squeezed picture instead.
        let stretched = scratch.file("stretch.mp4").path
        #expect(try CLI.cropzoom([input, "-o", stretched, "--size", "640x360"]).status == 0)
        let stretchBar = try Self.psnr(stretched, "crop=200:360:0:0", input, "crop=200:360,drawbox=c=black:t=fill")
        #expect(stretchBar < 20, "stretch left black bars: \(stretchBar) dB")
    }

    @Test("contain with --background blur: the bars are the picture blurred, not black")
    func containBlur() throws {
        let scratch = try Scratch()
        let input = try Self.portrait(in: scratch)
        let out = scratch.file("blur.mp4").path
        let run = try CLI.cropzoom([input, "-o", out, "--size", "640x360", "--fit", "contain", "--background", "blur"])
        #expect(run.status == 0, "\(run)")
        let bar = try Self.psnr(out, "crop=200:360:0:0", input, "crop=200:360,drawbox=c=black:t=fill")
        #expect(bar < 20, "the bars are black: \(bar) dB")
    }

    @Test("cover: the frame filled with the middle of the picture, about --center")
    func cover() throws {
        let scratch = try Scratch()
        let input = try Self.portrait(in: scratch)
        let out = scratch.file("cover.mp4").path
        let run = try CLI.cropzoom([input, "-o", out, "--size", "640x360", "--fit", "cover"])
        #expect(run.status == 0, "\(run)")
        let db = try Self.psnr(out, "null", input, "crop=360:202:0:219,scale=640:360:flags=bicubic")
        #expect(db > 28, "against ffmpeg's centre crop: \(db) dB")
        let refused = try CLI.cropzoom([
            input, "-o", out, "-y", "--size", "640x360", "--fit", "cover", "--crop", "200:200",
        ])
        #expect(refused.status == 2 && refused.stderr.contains("--fit cover cuts the picture itself"), "\(refused)")
    }
}
