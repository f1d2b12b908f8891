// Keyframed zoom and pan: the window moves by fractions of a pixel per frame, without jitter
// (measured by Tests/tools/motion_jitter.py, Lucas–Kanade on the decoded frames), and each frame
// is the exact window resampled (Tests/tools/window_psnr.py: a float reference in numpy).

import Foundation
import Testing

@Suite("Animated zoom and pan")
struct AnimatedZoomTests {
    /// A still 640x360 testsrc2 picture held for `seconds` (lossless), and the picture as PNG.
    static func still(_ scratch: Scratch, seconds: Int) throws -> (video: String, png: String) {
        let png = try Clip.video(seconds: 0.04, size: "640x360").frames(1).codec("png")
            .write(in: scratch, name: "still.png")
        let video = scratch.file("still.mkv").path
        _ = try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-y", "-loop", "1", "-framerate", "30", "-t", "\(seconds)", "-i", png,
                "-c:v", "ffv1", "-pix_fmt", "yuv420p", video,
            ])
        return (video, png)
    }

    static func tool(_ name: String, _ args: [String]) throws -> [String: Any] {
        let root = try #require(Oracle.packageRoot)
        let out = try Oracle.runChecked(
            "python3", [root.appendingPathComponent("Tests/tools/\(name)").path] + args, timeout: 300
        ).stdout
        return try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any], "\(out)")
    }

    @Test("a slow pan (0.43 px/frame) moves steadily: jitter < 0.05 px/frame², no backward step, the true speed")
    func slowPan() throws {
        let scratch = try Scratch()
        let (video, _) = try Self.still(scratch, seconds: 4)
        let out = scratch.file("pan.mkv").path
        let run = try CLI.cropzoom([
            video, "-o", out, "--codec", "ffv1", "--zoom", "2", "--center", "0s:0.48,0.5, 4s:0.52,0.5", "--quiet",
        ])
        try #require(run.status == 0, "\(run)")
        let m = try Self.tool("motion_jitter.py", [out])
        // The window (320 px wide) moves 0.04 × 640 px in 4 s = 0.2133 px/frame; shown 2x: 0.4267.
        let v = try #require(m["velocity_mean"] as? [Double])
        #expect(abs(v[0] + 0.4267) < 0.01 && abs(v[1]) < 0.01, "velocity \(v)")
        #expect((m["jitter_max"] as? Double ?? 9) < 0.05 && m["backward_steps"] as? Int == 0, "\(m)")
        #expect(m["frames"] as? Int == 120)
    }

    /// A moving geometry on the still, the numpy tool that resamples the exact one in float, and
    /// the same check against a geometry slightly off (which must fail it).
    struct ReferenceCase: Sendable, CustomTestStringConvertible {
        var name: String, options: [String], tool: String, args: [String], off: [String]
        var testDescription: String { name }
        static let all = [
            ReferenceCase(
                name: "zoom ramp 1.2 → 1.8", options: ["--zoom", "0s:1.2, 2s:1.8"], tool: "window_psnr.py",
                args: ["1.2", "1.8", "2"], off: ["1.2", "1.8", "2", "0.501", "0.5"]),  // a centre 0.001 (0.64 px) off
            ReferenceCase(
                name: "rotation ramp 0° → 20°", options: ["--rotate", "0s:0, 2s:20"], tool: "warp_psnr.py",
                args: ["0", "20", "2"], off: ["0", "20.4", "2"]),  // an angle 2 % off
        ]
    }

    @Test(
        """
        every frame is the exact geometry: ≥ 40 dB against a float resample (a 2-D cubic for rotations), a geometry \
        slightly off fails; both engines
        """,
        arguments: ReferenceCase.all, ["1", "2"])
    func exactGeometry(_ c: ReferenceCase, threads: String) throws {
        let scratch = try Scratch()
        let (video, png) = try Self.still(scratch, seconds: 2)
        let out = scratch.file("out.mkv").path
        let run = try CLI.cropzoom([video, "-o", out, "--codec", "ffv1", "--threads", threads, "--quiet"] + c.options)
        try #require(run.status == 0, "\(run)")
        #expect(try Oracle.videoFramePTS(out) == Oracle.videoFramePTS(video), "timestamps")
        let p = try Self.tool(c.tool, [out, png] + c.args)
        #expect(p["frames"] as? Int == 60 && (p["psnr_min"] as? Double ?? 0) >= 40, "\(p)")
        if let compared = p["compared"] as? Int {
            #expect(compared > 150_000, "pixels compared per frame: \(compared)")
        }
        let off = try Self.tool(c.tool, [out, png] + c.off)
        #expect((off["psnr_min"] as? Double ?? 99) < 35, "the check cannot tell a misplaced geometry: \(off)")
    }

    @Test(
        """
        keyframes and easing reach the window; malformed keyframes, singular matrices and crops that change shape are \
        refused in one line
        """
    )
    func optionsAndRefusals() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let smooth = try CLI.cropzoom([
            input, "-o", scratch.file("s.mp4").path, "--zoom", "0s:1, 1s:1.5, 2s:1.2",
            "--center", "0s:0.5,0.5, 2s:0.6,0.4", "--ease", "smooth", "--preset", "ultrafast", "--quiet",
        ])
        #expect(smooth.status == 0, "\(smooth)")
        #expect(try Oracle.decodedFrameHashes(scratch.file("s.mp4").path).count == 60)
        for bad in [
            ["--zoom", "0s:1, 2s:0.05"], ["--zoom", "0s:1, 2s"], ["--zoom", "2s:1, 1s:2"],
            ["--center", "0s:0.5, 1s:0.6,0.4"],
            ["--center", "0s:0.5,0.5, 1s:1.5,0.5"], ["--zoom", "0s:1, 1s:2", "--kernel", "swscale"],
            ["--ease", "bouncy"], ["--rotate", "ten"], ["--rotate", "0s:0, 1s"],
            ["--transform", "1,0,0,0,0,0"], ["--transform", "1,0,0,1,0"],
            ["--transform", "0s:1,0,0,1,0,0, 2s:-1,0,0,1,640,0"],  // a mirror animated through zero
            ["--crop", "0s:640:360, 2s:320:240"], ["--crop", "0s:640:360:0:0, 2s:320:180"],
            ["--crop", "0s:640:360:0:0, 2s:320:180:400:200"], ["--crop", "2s:640:360, 1s:320:180"],
        ] {
            let r = try CLI.cropzoom([input, "-o", scratch.file("x.mp4").path] + bad)
            #expect(r.status == 2 && r.stderrLines.count == 1, "\(bad): \(r)")
            #expect(!Files.exists(scratch.file("x.mp4")))
        }
    }
}

@Suite("Rotation by any angle, matrices, crop keyframes")
struct WarpTests {
    @Test("an RGB picture (a screen grab, libx264rgb) rotated by any angle: made planar first, as the YUV one looks")
    func rgbPictures() throws {
        let scratch = try Scratch()
        let (rgb, yuv) = (scratch.file("rgb.mkv").path, scratch.file("yuv.mkv").path)
        for (out, options) in [(rgb, ["-pix_fmt", "rgb24", "-c:v", "libx264rgb"]), (yuv, ["-pix_fmt", "yuv444p"])] {
            _ = try Oracle.runChecked(
                "ffmpeg",
                ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "1", "-qp", "0"] + options
                    + [out])
        }
        let (a, b) = (scratch.file("a.mkv").path, scratch.file("b.mkv").path)
        for (input, out) in [(rgb, a), (yuv, b)] {
            let run = try CLI.cropzoom([input, "-o", out, "--codec", "ffv1", "--rotate", "10", "--quiet"])
            #expect(run.status == 0, "\(run)")
        }
        #expect(try Oracle.decodedFrameHashes(a).count == 25)
        let psnr = try RealTime.StabilizeTests.psnr(a, b)
        #expect(psnr > 35, "PSNR \(psnr) dB between the RGB and the YUV input's turn")
    }

    @Test(
        """
        --transform: a half turn in output pixels gives --rotate 180's luma exactly; a keyframed pan starts at the \
        picture and ends 64 px over
        """
    )
    func matrices() throws {
        let scratch = try Scratch()
        let (video, _) = try AnimatedZoomTests.still(scratch, seconds: 2)
        let turned = scratch.file("t.mkv").path
        let rotated = scratch.file("r.mkv").path
        #expect(
            try CLI.cropzoom([video, "-o", turned, "--codec", "ffv1", "--transform", "-1,0,0,-1,640,360", "--quiet"])
                .status == 0)
        #expect(try CLI.cropzoom([video, "-o", rotated, "--codec", "ffv1", "--rotate", "180", "--quiet"]).status == 0)
        let a = try ZoomOutTests.firstFrame(turned, 640, 360)
        let b = try ZoomOutTests.firstFrame(rotated, 640, 360)
        #expect(a[0] == b[0], "luma of the half turn")
        let source = try ZoomOutTests.firstFrame(video, 640, 360)
        #expect(a[0][0] == source[0][640 * 360 - 1] && a[0][640 * 360 - 1] == source[0][0])
        let pan = scratch.file("pan.mkv").path
        #expect(
            try CLI.cropzoom([
                video, "-o", pan, "--codec", "ffv1", "--transform", "0s:1,0,0,1,0,0, 2s:1,0,0,1,-64,0",
                "--background", "white", "--quiet",
            ]).status == 0)
        let frames = try Oracle.decodedFrameHashes(pan)
        #expect(frames.count == 60)
        let first = try ZoomOutTests.firstFrame(pan, 640, 360)
        #expect(first[0] == source[0], "frame 0 is the picture")
        // The last frame (t = 59/30 s): moved 64 × 59/60 = 62.93 px left; whole pixels 1/15 px apart from
        // the 63 px shift, so compare within a few levels, and white (235) on the right.
        let last = scratch.file("last.yuv").path
        _ = try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", pan, "-vf", "select=eq(n\\,59)", "-frames:v", "1", "-f", "rawvideo",
                "-pix_fmt", "yuv420p", last,
            ])
        let l = [UInt8](try Data(contentsOf: URL(fileURLWithPath: last)))
        try #require(l.count == 640 * 360 * 3 / 2)
        var err = 0.0
        var n = 0.0
        for y in stride(from: 10, to: 350, by: 3) {
            for x in stride(from: 10, to: 560, by: 3) {
                let d = Double(l[y * 640 + x]) - Double(source[0][y * 640 + x + 63])
                err += d * d
                n += 1
            }
        }
        #expect(10 * log10(255 * 255 / max(err / n, 1e-9)) > 30, "the last frame is the picture 63 px over")
        #expect(l[180 * 640 + 630] == 235, "white shows where the picture left")
        // A rotation's corners: black by default, the blurred picture with --background blur.
        let dark = scratch.file("dark.mkv").path
        let soft = scratch.file("soft.mkv").path
        #expect(try CLI.cropzoom([video, "-o", dark, "--codec", "ffv1", "--rotate", "12", "--quiet"]).status == 0)
        #expect(
            try CLI.cropzoom([
                video, "-o", soft, "--codec", "ffv1", "--rotate", "12", "--background", "blur", "--quiet",
            ]).status == 0)
        let d = try ZoomOutTests.firstFrame(dark, 640, 360)
        let f = try ZoomOutTests.firstFrame(soft, 640, 360)
        #expect(d[0][2 * 640 + 2] == 16 && d[0][357 * 640 + 637] == 16, "black corners")
        #expect(
            f[0][2 * 640 + 2] > 40 && f[0][2 * 640 + 2] != f[0][357 * 640 + 637],
            "blurred corners follow the picture: \(f[0][2 * 640 + 2]), \(f[0][357 * 640 + 637])")
        #expect(f[0][180 * 640 + 320] == d[0][180 * 640 + 320], "the middle is the picture either way")
        // --background cover: zoomed in until no corner shows; with nothing to rotate, refused.
        let covered = scratch.file("cover.mkv").path
        #expect(
            try CLI.cropzoom([
                video, "-o", covered, "--codec", "ffv1", "--rotate", "0s:-10, 2s:10", "--background", "cover",
                "--quiet",
            ]).status == 0)
        let k = try ZoomOutTests.firstFrame(covered, 640, 360)
        let cornerValues = [
            k[0][0], k[0][639], k[0][359 * 640], k[0][359 * 640 + 639], k[0][2 * 640 + 2], k[0][357 * 640 + 637],
        ]
        #expect(Set(cornerValues).count > 2 && !cornerValues.contains(16), "corners show the picture: \(cornerValues)")
        for bad in [["--background", "cover"], ["--zoom", "0.5", "--background", "cover"]] {
            let r = try CLI.cropzoom([video, "-o", scratch.file("x.mkv").path] + bad)
            #expect(r.status == 2 && r.stderrLines.count == 1 && r.stderr.contains("cover"), "\(bad): \(r)")
        }
    }

    @Test(
        """
        the transcode contract holds with a warp, a matrix, crop keyframes and a blurred zoom-out: every frame and \
        pts, audio copied packet for packet
        """,
        arguments: [
            ["--rotate", "0s:-5, 2s:5", "--background", "blur"],
            ["--transform", "0s:1,0,0,1,0,0, 2s:1.2,0,0,1.2,-64,-36"],
            ["--crop", "0s:640:360:0:0, 2s:320:180:160:90", "--ease", "smooth"],
            ["--zoom", "0s:1, 2s:0.5", "--background", "blur", "--threads", "1"],
        ])
    func contract(options: [String]) throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let output = scratch.file("out.mp4")
        let run = try CLI.cropzoom([input, "-o", output.path, "--preset", "ultrafast"] + options)
        try #require(run.status == 0, "\(run)")
        let frames = try Contract.checkFrames(input: input, output: output)
        #expect(frames.problems.isEmpty, "frames/pts: \(frames.problems)")
        let audio = try Contract.checkCopiedAudio(input: input, output: output, shift: frames.shift)
        #expect(audio.isEmpty, "audio: \(audio)")
    }

    @Test(
        """
        --crop keyframes: the first frame is the first crop, the last the last one; --crop with --zoom below 1 widens \
        around the crop
        """
    )
    func cropKeyframes() throws {
        let scratch = try Scratch()
        let (video, _) = try AnimatedZoomTests.still(scratch, seconds: 2)
        let moving = scratch.file("c.mkv").path
        let run = try CLI.cropzoom([
            video, "-o", moving, "--codec", "ffv1", "--crop", "0s:320:180:0:0, 1s:320:180:320:180", "--quiet",
        ])
        try #require(run.status == 0, "\(run)")
        #expect(try Oracle.decodedFrameHashes(moving).count == 60)
        for (name, crop, select) in [("first", "320:180:0:0", "eq(n\\,0)"), ("last", "320:180:320:180", "gte(n\\,31)")]
        {
            let fixed = scratch.file("\(name).mkv").path
            #expect(try CLI.cropzoom([video, "-o", fixed, "--codec", "ffv1", "--crop", crop, "--quiet"]).status == 0)
            let psnr = try Oracle.meanPSNR(
                reference: fixed, referenceFilter: "select=\(select)", output: moving, alignStarts: false,
                outputFilter: "select=\(select)")
            #expect(psnr >= 40, "\(name) frames against a static --crop \(crop): \(psnr) dB")
        }
        let wide = scratch.file("w.mkv").path
        #expect(
            try CLI.cropzoom([
                video, "-o", wide, "--codec", "ffv1", "--crop", "320:180:160:90", "--zoom", "0.5", "--quiet",
            ]).status == 0)
        let whole = try Oracle.meanPSNR(
            reference: video, referenceFilter: "scale=320:180:flags=bicubic", output: wide, alignStarts: true)
        #expect(whole >= 30, "a 320x180 crop at zoom 0.5 shows the whole 640x360 picture: \(whole) dB")
    }
}

@Suite("Zoom out")
struct ZoomOutTests {
    /// The first frame of `path` as yuv420p planes (Y, U, V), by ffmpeg.
    static func firstFrame(_ path: String, _ w: Int, _ h: Int) throws -> [[UInt8]] {
        let scratch = try Scratch()
        let raw = scratch.file("f.yuv").path
        _ = try Oracle.runChecked(
            "ffmpeg", ["-v", "error", "-y", "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", raw])
        let d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let ys = w * h
        let cs = (w / 2) * (h / 2)
        try #require(d.count == ys + 2 * cs, "\(d.count) bytes")
        return [Array(d[0..<ys]), Array(d[ys..<ys + cs]), Array(d[(ys + cs)...])]
    }

    @Test(
        "tiny frames: a blurred background shrunk beyond 16x, a 1080p-like picture into 16x16 — no refusal mid-run",
        arguments: [
            ["--size", "2x2", "--background", "blur", "--zoom", "0.5"],
            ["--zoom", "0.1", "--background", "blur", "--size", "16x16"],
            ["--size", "4x4", "--rotate", "7", "--background", "blur"],
        ])
    func tinyFrames(_ args: [String]) throws {
        let scratch = try Scratch()
        let (video, _) = try AnimatedZoomTests.still(scratch, seconds: 1)
        let out = scratch.file("tiny.mkv").path
        // Before: "resampling: the window … does not fit" (exit 1) — the kernel's taps ran out.
        let run = try CLI.cropzoom([video, "-o", out, "--codec", "ffv1", "--quiet"] + args)
        #expect(run.status == 0, "\(args): \(run)")
        #expect(try Oracle.decodedFrameHashes(out).count == 30, "\(args)")
    }

    @Test(
        """
        --zoom below 1: the picture shrunk in the middle (against ffmpeg's own downscale), black around, the frame \
        size kept
        """,
        arguments: [0.5, 0.25, 0.1])
    func shrunk(_ zoom: Double) throws {
        let scratch = try Scratch()
        let (video, _) = try AnimatedZoomTests.still(scratch, seconds: 1)
        let out = scratch.file("shrunk.mkv").path
        let run = try CLI.cropzoom([video, "-o", out, "--codec", "ffv1", "--zoom", "\(zoom)", "--quiet"])
        try #require(run.status == 0, "\(run)")
        let (w, h) = (Int(640 * zoom), Int(360 * zoom))
        let (x0, y0) = ((640 - w) / 2, (360 - h) / 2)
        let p = try Self.firstFrame(out, 640, 360)
        // Limited-range black (16, 128, 128) everywhere outside the picture (2 pixels of margin).
        for y in stride(from: 0, to: 360, by: 7) {
            for x in stride(from: 0, to: 640, by: 5)
            where x < x0 - 2 || x >= x0 + w + 2 || y < y0 - 2 || y >= y0 + h + 2 {
                #expect(p[0][y * 640 + x] == 16, "Y at (\(x), \(y))")
                #expect(
                    p[1][(y / 2) * 320 + x / 2] == 128 && p[2][(y / 2) * 320 + x / 2] == 128, "chroma at (\(x), \(y))")
            }
        }
        // Luma against ffmpeg's bicubic downscale (its chroma cannot be cropped at an odd offset).
        // The kernel widens with the shrink (an antialiasing filter): below 0.67 it used to keep
        // the taps of a 1:1 scale, aliased and slightly off.
        let inner = try Oracle.meanPSNR(
            reference: video, referenceFilter: "scale=\(w):\(h):flags=bicubic", output: out,
            pixelFormat: "gray", alignStarts: true, outputFilter: "format=gray,crop=\(w):\(h):\(x0):\(y0)")
        #expect(inner > 45, "the picture inside: \(inner) dB (luma) against ffmpeg's downscale")
    }

    @Test(
        """
        --background: a colour (BT.709, limited range), the picture's edge repeated, or the picture blurred; keyframed \
        zoom-out runs
        """
    )
    func backgrounds() throws {
        let scratch = try Scratch()
        let (video, _) = try AnimatedZoomTests.still(scratch, seconds: 2)
        let red = scratch.file("red.mkv").path
        #expect(
            try CLI.cropzoom([
                video, "-o", red, "--codec", "ffv1", "--zoom", "0.7", "--background", "#FF0000", "--quiet",
            ]).status == 0)
        let r = try Self.firstFrame(red, 640, 360)
        #expect(
            r[0][2 * 640 + 2] == 63 && r[1][1 * 320 + 1] == 102 && r[2][1 * 320 + 1] == 240,
            "red is Y 63, Cb 102, Cr 240: \(r[0][1282]) \(r[1][321]) \(r[2][321])")
        let edge = scratch.file("edge.mkv").path
        #expect(
            try CLI.cropzoom([video, "-o", edge, "--codec", "ffv1", "--zoom", "0.7", "--background", "edge", "--quiet"])
                .status == 0)
        let e = try Self.firstFrame(edge, 640, 360)
        // Left of the picture (its first column is x = 96), each row repeats that column's sample.
        for y in stride(from: 60, to: 300, by: 11) {
            let row = Array(e[0][(y * 640)..<(y * 640 + 90)])
            #expect(Set(row).count == 1 && row[0] == e[0][y * 640 + 96], "row \(y)")
        }
        let ramp = scratch.file("ramp.mkv").path
        #expect(
            try CLI.cropzoom([
                video, "-o", ramp, "--codec", "ffv1", "--zoom", "0s:1.5, 2s:0.5", "--ease", "smooth", "--quiet",
            ]).status == 0)
        #expect(try Oracle.decodedFrameHashes(ramp).count == 60)
        // blur: around the picture, the picture itself blurred (smooth, not flat); inside, the same
        // picture as with black.
        let blurred = scratch.file("blur.mkv").path
        let black = scratch.file("black.mkv").path
        #expect(
            try CLI.cropzoom([
                video, "-o", blurred, "--codec", "ffv1", "--zoom", "0.5", "--background", "blur", "--quiet",
            ]).status == 0)
        #expect(try CLI.cropzoom([video, "-o", black, "--codec", "ffv1", "--zoom", "0.5", "--quiet"]).status == 0)
        let b = try Self.firstFrame(blurred, 640, 360)
        let k = try Self.firstFrame(black, 640, 360)
        var outside: [Double] = []
        var steepest = 0
        var innerDiffer = 0
        for y in 0..<360 {
            for x in 0..<640 {
                let i = y * 640 + x
                if x < 156 || x >= 484 || y < 86 || y >= 274 {
                    outside.append(Double(b[0][i]))
                    if x + 1 < 156 { steepest = max(steepest, abs(Int(b[0][i + 1]) - Int(b[0][i]))) }
                } else if x >= 164 && x < 476 && y >= 94 && y < 266 && b[0][i] != k[0][i] {
                    innerDiffer += 1
                }
            }
        }
        let mean = outside.reduce(0, +) / Double(outside.count)
        let sd = (outside.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(outside.count)).squareRoot()
        #expect(sd > 10, "the blurred surround follows the picture's colours (sd \(sd))")
        #expect(steepest <= 8, "and is smooth: the steepest step between neighbours is \(steepest)")
        #expect(innerDiffer == 0, "the picture inside is the same as over black")
        let bad = try CLI.cropzoom([video, "-o", scratch.file("x.mkv").path, "--zoom", "0.5", "--background", "purple"])
        #expect(bad.status == 2 && bad.stderrLines.count == 1 && bad.stderr.contains("--background"), "\(bad)")
    }
}

@Suite("analyze-motion")
struct AnalyzeMotionTests {
    @Test(
        """
        agrees with the independent numpy tool on a sub-pixel pan and on ffmpeg's whole-pixel zoompan; bad input exits 3
        """
    )
    func agreesWithTheTool() throws {
        let scratch = try Scratch()
        let png = try Clip.video(seconds: 0.04, size: "320x180").frames(1).codec("png")
            .write(in: scratch, name: "s.png")
        let still = scratch.file("s.mkv").path
        _ = try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-y", "-loop", "1", "-framerate", "30", "-t", "1", "-i", png,
                "-c:v", "ffv1", "-pix_fmt", "yuv420p", still,
            ])
        let pan = scratch.file("pan.mkv").path
        let zp = scratch.file("zp.mkv").path
        #expect(
            try CLI.cropzoom([
                still, "-o", pan, "--codec", "ffv1", "--zoom", "2", "--center", "0s:0.46,0.5, 1s:0.54,0.5", "--quiet",
            ]).status == 0)
        _ = try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-y", "-i", still, "-vf",
                "zoompan=z=2:x='(0.46+0.08*in/30)*iw-iw/4':y=ih/4:d=1:s=320x180:fps=30", "-c:v", "ffv1", zp,
            ])
        for (file, smooth) in [(pan, true), (zp, false)] {
            let run = try CLI.cropzoom(["analyze-motion", file, "--json"])
            try #require(run.status == 0, "\(run)")
            let ours = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            let theirs = try AnimatedZoomTests.tool("motion_jitter.py", [file])
            let v = try #require(ours["velocity_mean"] as? [Double])
            let tv = try #require(theirs["velocity_mean"] as? [Double])
            #expect(abs(v[0] - tv[0]) < 0.01 && abs(v[1] - tv[1]) < 0.01, "\(file): \(v) vs \(tv)")
            let jitter = try #require(ours["jitter_mean"] as? Double)
            let toolJitter = try #require(theirs["jitter_mean"] as? Double)
            #expect(
                smooth ? (jitter < 0.05 && toolJitter < 0.05) : (jitter > 0.3 && toolJitter > 0.3),
                "\(file): \(jitter) vs \(toolJitter)")
            #expect(ours["frames"] as? Int == 30 && (ours["velocities"] as? [[Double]])?.count == 29)
        }
        let text = try CLI.cropzoom(["analyze-motion", pan])
        #expect(
            text.status == 0 && text.stdout.contains("30 frames, mean velocity")
                && text.stdout.contains("backward steps"), "\(text)")
        for bad in [try Files.sample("not-media.mp4").path, try Files.sample("one-frame.mp4").path, "/nonexistent.mkv"]
        {
            let r = try CLI.cropzoom(["analyze-motion", bad])
            #expect(r.status == 3 && r.stderrLines.count == 1, "\(bad): \(r)")
        }
    }
}
