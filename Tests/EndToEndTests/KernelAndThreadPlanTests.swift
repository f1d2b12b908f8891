// The scaling kernel (zimg by default, swscale on request or where zimg cannot) and the thread
// plan as it reaches the codecs.

import Foundation
import Testing

@Suite("Kernel and thread plan")
struct KernelAndThreadPlanTests {
    /// Per-plane PSNR (y, u, v) of `a` against `b`, from the ffmpeg psnr filter.
    static func planePSNR(_ a: String, _ b: String) throws -> (y: Double, u: Double, v: Double) {
        let (_, stderr) = try Oracle.runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-nostats", "-i", a, "-i", b,
                "-lavfi", "psnr", "-f", "null", "-",
            ])
        let line = try #require(
            stderr.split(separator: "\n").last { $0.contains("PSNR y:") }, "no PSNR line: \(stderr)")
        func value(_ key: String) throws -> Double {
            let field = try #require(line.split(separator: " ").first { $0.hasPrefix("\(key):") })
            let text = field.dropFirst(key.count + 1)
            return text == "inf" ? .infinity : try #require(Double(text), "\(field)")
        }
        return (try value("y"), try value("u"), try value("v"))
    }

    /// The x264 settings string an output's SEI carries ("options: cabac=1 ... threads=3 ...").
    static func x264Options(_ path: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let text = String(decoding: data.prefix(200_000), as: UTF8.self)
        let start = try #require(text.range(of: "options: "), "no x264 SEI in \(path)")
        return String(text[start.upperBound...].prefix { $0 != "\0" })
    }

    @Test(
        """
        both kernels honour left-sited chroma: within 1 dB of each other against a 4:4:4 truth, ~4 dB above \
        centre-sited scaling
        """
    )
    func chromaSiting() throws {
        let scratch = try Scratch()
        let truthSource = try Clip.video(seconds: 0.5, size: "640x360", rate: 30).codec("ffv1", pixelFormat: "yuv444p")
            .write(in: scratch, name: "src444.mkv")
        let left = scratch.file("src420left.mkv").path
        // The 4:2:0 clip a camera would make of it: chroma sited left (H.264's default), tagged.
        _ = try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", truthSource,
                "-vf", "zscale=chromal=left:filter=spline36,format=yuv420p",
                "-chroma_sample_location", "left", "-c:v", "ffv1", left,
            ])
        // Truth: the 4:4:4 picture cropped to cropzoom's window for --zoom 1.65 and scaled back.
        let truth = scratch.file("truth.mkv").path
        _ = try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", truthSource,
                "-vf", "crop=388:218:126:70,zscale=w=640:h=360:filter=spline36", "-c:v", "ffv1", truth,
            ])
        // What scaling with centre-sited chroma (swscale's default, ffmpeg 5.1's scale filter) gives.
        let centred = scratch.file("centred.mkv").path
        _ = try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", left,
                "-vf", "crop=388:218:126:70,scale=640:360:flags=bicubic,format=yuv444p", "-c:v", "ffv1", centred,
            ])
        let c = try Self.planePSNR(centred, truth)
        var psnr: [String: (y: Double, u: Double, v: Double)] = [:]
        for kernel in ["zimg", "swscale"] {
            let out = scratch.file("\(kernel).mkv").path
            let run = try CLI.cropzoom([
                left, "-o", out, "--zoom", "1.65", "--codec", "ffv1", "--pix-fmt", "yuv444p",
                "--kernel", kernel, "--quiet",
            ])
            try #require(run.status == 0, "\(run)")
            psnr[kernel] = try Self.planePSNR(out, truth)
        }
        let z = try #require(psnr["zimg"])
        let s = try #require(psnr["swscale"])
        for (name, k) in [("zimg", z), ("swscale", s)] {
            #expect(
                k.u > c.u + 2 && k.v > c.v + 2, "\(name)'s chroma \(k) should beat centre-sited scaling's \(c) by 2 dB")
        }
        #expect(abs(z.u - s.u) < 1 && abs(z.v - s.v) < 1, "the kernels' chroma should agree: zimg \(z), swscale \(s)")
        #expect(abs(z.y - s.y) < 1.5 && z.y > 45, "luma should match: zimg \(z.y) dB, swscale \(s.y) dB")
    }

    @Test(
        """
        a flip, half or quarter turn keeps chroma on the declared (left) siting: static at zoom 1 and 1.3, keyframed, \
        and the warp
        """,
        arguments: [
            ["--rotate", "180"], ["--flip", "horizontal"], ["--rotate", "180", "--zoom", "1.3"],
            ["--flip", "vertical", "--zoom", "0s:1.3, 1s:1.3001"], ["--transform", "-1,0,0,-1,640,360"],
            ["--rotate", "90"], ["--rotate", "270", "--flip", "horizontal", "--zoom", "1.3"],
        ])
    func mirroredSiting(options: [String]) throws {
        let scratch = try Scratch()
        let truthSource = try Clip.video(seconds: 0.2, size: "640x360", rate: 30).codec("ffv1", pixelFormat: "yuv444p")
            .write(in: scratch, name: "src444.mkv")
        let left = scratch.file("left.mkv").path
        let toLeft = "scale=out_h_chr_pos=0:out_v_chr_pos=128,format=yuv420p"
        _ = try Oracle.runChecked(
            "ffmpeg", ["-v", "error", "-y", "-i", truthSource, "-vf", toLeft, "-c:v", "ffv1", left])
        // Truth: the 4:4:4 picture given the same geometry exactly, then made 4:2:0 with left siting.
        let zoom = options.contains("--zoom") ? "crop=492:276:74:42,scale=640:360:flags=bicubic," : ""
        let flip =
            options.contains("90")
            ? "transpose=clock"
            : options.contains("270")
                ? "transpose=cclock,hflip"
                : options.contains("horizontal") ? "hflip" : options.contains("vertical") ? "vflip" : "hflip,vflip"
        let truth = scratch.file("truth.mkv").path
        _ = try Oracle.runChecked(
            "ffmpeg",
            ["-v", "error", "-y", "-i", truthSource, "-vf", "\(zoom)\(flip),\(toLeft)", "-c:v", "ffv1", truth])
        let out = scratch.file("out.mkv").path
        let run = try CLI.cropzoom([left, "-o", out, "--codec", "ffv1", "--quiet"] + options)
        try #require(run.status == 0, "\(run)")
        let p = try Self.planePSNR(out, truth)
        // Flipping the chroma samples as they are (ffmpeg's hflip on 4:2:0) moves them a luma pixel: ~33/30 dB here.
        #expect(p.u > 37 && p.v > 34 && p.y > 40, "\(options): \(p)")
    }

    @Test("--kernel: auto is swscale on 8-bit and zimg on 10-bit pictures; zimg refuses what it cannot do in one line")
    func kernelOption() throws {
        let scratch = try Scratch()
        for (sample, autoIs, other) in [("std-h264-aac.mp4", "swscale", "zimg"), ("hevc10.mkv", "zimg", "swscale")] {
            let input = try Files.sample(sample).path
            var outputs: [String: String] = [:]
            for kernel in ["auto", "zimg", "swscale"] {
                let out = scratch.file("\(sample)-\(kernel).mkv").path
                let run = try CLI.cropzoom([
                    input, "-o", out, "--zoom", "1.4", "--codec", "ffv1", "--kernel", kernel, "--quiet",
                ])
                try #require(run.status == 0, "\(run)")
                outputs[kernel] = out
            }
            #expect(
                try Oracle.decodedFrameHashes(outputs["auto"]!) == Oracle.decodedFrameHashes(outputs[autoIs]!),
                "\(sample): auto should be \(autoIs)")
            let differ = try Self.planePSNR(outputs["auto"]!, outputs[other]!)
            #expect(
                differ.y.isFinite || differ.u.isFinite,
                "\(sample): \(autoIs) and \(other) gave the same picture: was \(other) used? \(differ)")
            #expect(differ.y > 45 && differ.u > 40, "\(sample): the two kernels should agree closely: \(differ)")
        }

        let input = try Files.sample("std-h264-aac.mp4").path
        let refused = try CLI.cropzoom([
            input, "-o", scratch.file("area.mkv").path, "--zoom", "1.4", "--codec", "ffv1",
            "--kernel", "zimg", "--scaler", "area",
        ])
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.stderrLines.count == 1 && refused.stderr.contains("zimg"), "\(refused.stderr)")
        #expect(!Files.exists(scratch.file("area.mkv")), "a refused run left its output")
        // swscale takes the area filter under auto, on 10-bit pictures too.
        let area = try CLI.cropzoom([
            try Files.sample("hevc10.mkv").path, "-o", scratch.file("area2.mkv").path, "--zoom", "1.4",
            "--codec", "ffv1", "--scaler", "area", "--quiet",
        ])
        #expect(area.status == 0, "\(area)")
    }

    @Test(
        """
        the thread plan reaches x264: 3 threads with 3 lookahead threads (2 at 256 rows, x264's own at 240); 1 thread \
        at ultrafast; 1 with --threads 1
        """
    )
    func x264Threads() throws {
        let scratch = try Scratch()
        let input = try EngineTests.clip(frames: 30, in: scratch.url)
        let cases: [(args: [String], expect: [String])] = [
            (["--threads", "2", "--preset", "veryfast", "--size", "640x480"], ["threads=3", "lookahead_threads=3"]),
            (["--threads", "2", "--preset", "veryfast", "--size", "320x256"], ["threads=3", "lookahead_threads=2"]),
            (["--threads", "2", "--preset", "veryfast"], ["threads=3", "lookahead_threads=1"]),
            (["--threads", "2", "--preset", "ultrafast"], ["threads=1 "]),
            (["--threads", "1", "--preset", "veryfast"], ["threads=1 ", "lookahead_threads=1"]),
            (["--threads", "2", "--encoder-threads", "6", "--preset", "veryfast"], ["threads=6"]),
        ]
        for (i, c) in cases.enumerated() {
            let out = scratch.file("o\(i).mp4").path
            let run = try CLI.cropzoom([input, "-o", out, "--zoom", "1.2", "--quiet"] + c.args)
            try #require(run.status == 0, "\(c.args): \(run)")
            let options = try Self.x264Options(out)
            for e in c.expect { #expect(options.contains(e), "\(c.args): x264 options lack \(e): \(options)") }
        }
    }

    @Test("--decoder-threads/--encoder-threads/--workers: shown by --stats, refused with --threads 1 or out of range")
    func threadOverrides() throws {
        let scratch = try Scratch()
        let input = try EngineTests.clip(frames: 20, in: scratch.url)
        let run = try CLI.cropzoom([
            input, "-o", scratch.file("o.mp4").path, "--threads", "2", "--decoder-threads", "2",
            "--encoder-threads", "4", "--workers", "2", "--stats",
        ])
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains("threads 2 (decoder 2, encoder 4, transform workers 2)"), "\(run.stderr)")
        for bad in [["--threads", "1", "--workers", "2"], ["--decoder-threads", "0"], ["--encoder-threads", "300"]] {
            let r = try CLI.cropzoom([input, "-o", scratch.file("x.mp4").path] + bad)
            #expect(r.status == 2 && r.stderrLines.count == 1, "\(bad): \(r)")
        }
        #expect(!Files.exists(scratch.file("x.mp4")))
    }
}
