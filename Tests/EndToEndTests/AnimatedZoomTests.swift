// Keyframed zoom and pan: the window moves by fractions of a pixel per frame, without jitter
// (measured by Tests/tools/motion_jitter.py, Lucas–Kanade on the decoded frames), and each frame
// is the exact window resampled (Tests/tools/window_psnr.py: a float reference in numpy).

import Foundation
import Testing

@Suite("Animated zoom and pan")
struct AnimatedZoomTests {
    /// A still 640x360 testsrc2 picture held for `seconds` (lossless), and the picture as PNG.
    static func still(_ scratch: Scratch, seconds: Int) throws -> (video: String, png: String) {
        let png = scratch.file("still.png").path, video = scratch.file("still.mkv").path
        _ = try Oracle.runChecked("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x360:d=0.04", "-frames:v", "1", png])
        _ = try Oracle.runChecked("ffmpeg", ["-v", "error", "-y", "-loop", "1", "-framerate", "30", "-t", "\(seconds)", "-i", png,
                                             "-c:v", "ffv1", "-pix_fmt", "yuv420p", video])
        return (video, png)
    }

    static func tool(_ name: String, _ args: [String]) throws -> [String: Any] {
        let root = try #require(Oracle.packageRoot)
        let out = try Oracle.runChecked("python3", [root.appendingPathComponent("Tests/tools/\(name)").path] + args, timeout: 300).stdout
        return try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any], "\(out)")
    }

    @Test("a slow pan (0.43 px/frame) moves steadily: jitter < 0.05 px/frame², no backward step, the true speed")
    func slowPan() throws {
        let scratch = try Scratch()
        let (video, _) = try Self.still(scratch, seconds: 4)
        let out = scratch.file("pan.mkv").path
        let run = try CLI.cropzoom([video, "-o", out, "--codec", "ffv1", "--zoom", "2", "--center", "0s:0.48,0.5, 4s:0.52,0.5", "--quiet"])
        try #require(run.status == 0, "\(run)")
        let m = try Self.tool("motion_jitter.py", [out])
        // The window (320 px wide) moves 0.04 × 640 px in 4 s = 0.2133 px/frame; shown 2x: 0.4267.
        let v = try #require(m["velocity_mean"] as? [Double])
        #expect(abs(v[0] + 0.4267) < 0.01 && abs(v[1]) < 0.01, "velocity \(v)")
        #expect((m["jitter_max"] as? Double ?? 9) < 0.05 && m["backward_steps"] as? Int == 0, "\(m)")
        #expect(m["frames"] as? Int == 120)
    }

    @Test("a zoom ramp: every frame is the exact window, ≥ 40 dB against a float resample; both engines", arguments: ["1", "2"])
    func zoomRamp(threads: String) throws {
        let scratch = try Scratch()
        let (video, png) = try Self.still(scratch, seconds: 2)
        let out = scratch.file("ramp.mkv").path
        let run = try CLI.cropzoom([video, "-o", out, "--codec", "ffv1", "--zoom", "0s:1.2, 2s:1.8", "--threads", threads, "--quiet"])
        try #require(run.status == 0, "\(run)")
        let p = try Self.tool("window_psnr.py", [out, png, "1.2", "1.8", "2"])
        #expect(p["frames"] as? Int == 60 && (p["psnr_min"] as? Double ?? 0) >= 40, "\(p)")
        // A window half a pixel off would not pass: the same frames against a centre 0.001 off.
        let off = try Self.tool("window_psnr.py", [out, png, "1.2", "1.8", "2", "0.501", "0.5"])
        #expect((off["psnr_min"] as? Double ?? 99) < 35, "the check cannot tell a misplaced window: \(off)")
    }

    @Test("keyframes and easing reach the window; what is not supported yet is refused in one line")
    func optionsAndRefusals() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let smooth = try CLI.cropzoom([input, "-o", scratch.file("s.mp4").path, "--zoom", "0s:1, 1s:1.5, 2s:1.2",
                                       "--center", "0s:0.5,0.5, 2s:0.6,0.4", "--ease", "smooth", "--preset", "ultrafast", "--quiet"])
        #expect(smooth.status == 0, "\(smooth)")
        #expect(try Oracle.decodedFrameHashes(scratch.file("s.mp4").path).count == 60)
        for bad in [["--zoom", "0s:1, 2s:0.5"], ["--zoom", "0s:1, 2s"], ["--zoom", "2s:1, 1s:2"], ["--center", "0s:0.5, 1s:0.6,0.4"],
                    ["--center", "0s:0.5,0.5, 1s:1.5,0.5"], ["--zoom", "0s:1, 1s:2", "--kernel", "swscale"],
                    ["--zoom", "0s:1, 1s:2", "--crop", "320:180"], ["--ease", "bouncy"]] {
            let r = try CLI.cropzoom([input, "-o", scratch.file("x.mp4").path] + bad)
            #expect(r.status == 2 && r.stderrLines.count == 1, "\(bad): \(r)")
            #expect(!Files.exists(scratch.file("x.mp4")))
        }
    }
}
