import Foundation
import Testing

/// The default H.264/HEVC output is what players take (issue 16): 8-bit 4:2:0 High for H.264 whatever the input,
/// HEVC Main 10 for an HDR input, and more only when `--pix-fmt` or `--profile` asks; each change a note.
@Suite("Playable defaults")
struct PlayableDefaultTests {
    /// ffprobe's `codec_name,profile,pix_fmt,color_transfer` of the video stream ("unknown" for one not given).
    static func video(_ path: String) throws -> String {
        let v = try #require(try Media.streams(path).first { $0["codec_type"] as? String == "video" })
        return ["codec_name", "profile", "pix_fmt", "color_transfer"].map { v[$0] as? String ?? "unknown" }
            .joined(separator: ",")
    }

    static func notes(_ run: CLIResult) -> [String] { run.stderrLines.filter { $0.hasPrefix("cropzoom: note:") } }

    /// A 0.4 s clip in `pixFmt` encoded by `codec` (lossless, so the format is what the decoder gives).
    static func clip(_ pixFmt: String, codec: String = "libx264", in scratch: Scratch) throws -> String {
        try Clip.video(seconds: 0.4, size: "192x108", rate: 25)
            .codec(codec, pixelFormat: pixFmt, options: ["-qp", "0"]).write(in: scratch, name: "\(pixFmt).mkv")
    }

    @Test("10-bit 4:2:2 in: H.264 High 8-bit 4:2:0 with a note; --pix-fmt and --profile keep more")
    func deepInputToH264() throws {
        let scratch = try Scratch()
        let input = try Self.clip("yuv422p10le", in: scratch)
        let out = scratch.file("default.mp4").path
        let run = try CLI.cropzoom([input, "-o", out, "--zoom", "1.2"])
        try #require(run.status == 0, "\(run)")
        #expect(try Self.video(out) == "h264,High,yuv420p,unknown")
        #expect(
            Self.notes(run) == [
                "cropzoom: note: video stream #0 (yuv422p10le) is encoded as yuv420p, the H.264 players take "
                    + "(--pix-fmt yuv422p10le keeps it)"
            ], "\(run.stderrLines)")
        let kept = scratch.file("kept.mp4").path
        let asked = try CLI.cropzoom([input, "-o", kept, "--zoom", "1.2", "--pix-fmt", "yuv422p10le"])
        try #require(asked.status == 0, "\(asked)")
        #expect(try Self.video(kept) == "h264,High 4:2:2,yuv422p10le,unknown")
        #expect(Self.notes(asked).isEmpty, "\(asked.stderrLines)")
        let high10 = scratch.file("high10.mp4").path
        let profile = try CLI.cropzoom([input, "-o", high10, "--zoom", "1.2", "--profile", "high10"])
        try #require(profile.status == 0, "\(profile)")
        #expect(try Self.video(high10) == "h264,High 10,yuv420p10le,unknown")
        let high444 = scratch.file("high444.mp4").path
        let chroma = try CLI.cropzoom([input, "-o", high444, "--zoom", "1.2", "--profile", "high444"])
        try #require(chroma.status == 0, "\(chroma)")
        #expect(try Self.video(high444) == "h264,High 4:4:4 Predictive,yuv444p10le,unknown")
    }

    @Test("HEVC keeps 10 bits (Main 10) and takes 4:2:0 from 4:4:4 (Main); an RGB input to H.264 is 4:2:0")
    func hevcAndRGB() throws {
        let scratch = try Scratch()
        let deep = try Self.clip("yuv420p10le", in: scratch)
        let main10 = scratch.file("main10.mp4").path
        let run = try CLI.cropzoom([deep, "-o", main10, "--codec", "hevc"])
        try #require(run.status == 0, "\(run)")
        #expect(try Self.video(main10) == "hevc,Main 10,yuv420p10le,unknown")
        #expect(Self.notes(run).isEmpty, "\(run.stderrLines)")
        let full = try Self.clip("yuv444p", in: scratch)
        let main = scratch.file("main.mp4").path
        let sub = try CLI.cropzoom([full, "-o", main, "--codec", "hevc"])
        try #require(sub.status == 0, "\(sub)")
        #expect(try Self.video(main) == "hevc,Main,yuv420p,unknown")
        #expect(Self.notes(sub).count == 1 && Self.notes(sub)[0].contains("the HEVC players take"), "\(sub)")
        let rgb = try Self.clip("bgr0", codec: "ffv1", in: scratch)
        let fromRGB = scratch.file("rgb.mp4").path
        let r = try CLI.cropzoom([rgb, "-o", fromRGB])
        try #require(r.status == 0, "\(r)")
        #expect(try Self.video(fromRGB) == "h264,High,yuv420p,unknown")
        let range = try #require(try Media.streams(fromRGB).first)["color_range"] as? String
        #expect(range == "tv", "RGB became \(range ?? "no") range")
    }

    @Test(
        """
        HDR (PQ) without --codec: HEVC Main 10, PQ kept, with a note; --codec h264: tone mapped to 8-bit SDR BT.709 \
        (High), with a note; a 10-bit --pix-fmt keeps HDR in High 10
        """)
    func hdrInput() throws {
        let scratch = try Scratch()
        let input = scratch.file("hdr.mkv")
        try StreamRoutingTests.makeHDR10(input.path)
        let out = scratch.file("hdr.mp4").path
        let run = try CLI.cropzoom([input.path, "-o", out, "--zoom", "1.2"])
        try #require(run.status == 0, "\(run)")
        #expect(try Self.video(out) == "hevc,Main 10,yuv420p10le,smpte2084")
        #expect(
            Self.notes(run) == [
                "cropzoom: note: video stream #0 is HDR (PQ): encoding HEVC Main 10 (libx265), which players show "
                    + "as HDR (--codec h264 for H.264)"
            ], "\(run.stderrLines)")
        /// The output's video and the run's notes, for `extra` options.
        func encode(_ name: String, _ extra: [String]) throws -> (video: String, notes: [String]) {
            let out = scratch.file(name).path
            let run = try CLI.cropzoom([input.path, "-o", out, "--zoom", "1.2", "--codec", "h264"] + extra)
            try #require(run.status == 0, "\(run)")
            return (try Self.video(out), Self.notes(run))
        }
        let mapped = try encode("h264.mp4", [])
        #expect(mapped.video == "h264,High,yuv420p,bt709")
        #expect(
            mapped.notes == [
                "cropzoom: note: video stream #0 is HDR (PQ): tone mapped to SDR BT.709 (bt2390: H.264 players take 8 "
                    + "bits (a 10-bit --pix-fmt keeps HDR in High 10); --tone-map off keeps it HDR)"
            ])
        let high10 = try encode("high10.mp4", ["--pix-fmt", "yuv420p10le"])
        #expect(high10.video == "h264,High 10,yuv420p10le,smpte2084" && high10.notes.isEmpty, "\(high10)")
    }
}
