// Issue 27 item 8: HDR (PQ, HLG) to SDR BT.709 (`--tone-map`). The output's tags and format as ffprobe reads them;
// its picture against FFmpeg's own mapping (zscale + tonemap, Tests/tools/tonemap_compare.py): PSNR, mean luminance
// and colourfulness; the rules of `auto`; the corpus's HDR phone clips (Dolby Vision's base layer among them).

import Foundation
import Testing

@Suite("Tone mapping (HDR to SDR)")
struct ToneMapTests {
    /// The output's video: codec, profile, pixel format, and its primaries, transfer and matrix.
    static func video(_ path: String) throws -> [String: Any] {
        try #require(try Media.streams(path).first { $0["codec_type"] as? String == "video" })
    }

    static func tags(_ v: [String: Any]) -> String {
        ["color_primaries", "color_transfer", "color_space"].map { v[$0] as? String ?? "unknown" }
            .joined(separator: ",")
    }

    static func compare(_ output: String, _ input: String, curve: String = "hable") throws -> [String: Any] {
        try AnimatedZoomTests.tool("tonemap_compare.py", [output, input, curve])
    }

    static func number(_ r: [String: Any], _ key: String) -> Double { (r[key] as? NSNumber)?.doubleValue ?? -1 }

    @Test(
        """
        PQ (HDR10, metadata only in the SEI) and HLG to H.264: 8-bit High, tagged BT.709, no HDR side data; \
        hable against zscale+tonemap=hable: PQ ≥ 30 dB, luminance and colourfulness within 5 % (HLG: see hlgGreys); \
        BT.2390 (auto) no darker
        """, arguments: ["hdr-pq.mkv", "hdr-hlg.mp4"])
    func toH264(_ sample: String) throws {
        let scratch = try Scratch()
        let input = try Files.sample(sample).path
        let auto = scratch.file("auto.mp4").path
        let run = try CLI.cropzoom([input, "-o", auto, "--codec", "h264"])
        try #require(run.status == 0, "\(run)")
        let transfer = sample.contains("pq") ? "PQ" : "HLG"
        #expect(
            run.stderrLines.contains {
                $0.hasPrefix("cropzoom: note: video stream #0 is HDR (\(transfer)): tone mapped to SDR BT.709 (bt2390")
            }, "\(run.stderrLines)")
        let v = try Self.video(auto)
        #expect(v["profile"] as? String == "High" && v["pix_fmt"] as? String == "yuv420p", "\(v)")
        #expect(Self.tags(v) == "bt709,bt709,bt709")
        #expect(Media.sideDataTypes(v).isEmpty, "\(Media.sideDataTypes(v))")
        #expect(try Media.frameCount(auto) == 30)
        let hable = scratch.file("hable.mkv").path
        let mapped = try CLI.cropzoom([input, "-o", hable, "--codec", "h264", "--crf", "10", "--tone-map", "hable"])
        try #require(mapped.status == 0, "\(mapped)")
        let r = try Self.compare(hable, input)
        print("tonemap \(sample) hable: \(r)")
        if transfer == "PQ" {
            #expect(Self.number(r, "psnr") >= 30, "\(r)")
            #expect(abs(Self.number(r, "luma_ratio") - 1) <= 0.05, "\(r)")
            #expect(abs(Self.number(r, "colourfulness_ratio") - 1) <= 0.05, "\(r)")
        } else {
            // zimg (the reference's HLG) applies HLG's OOTF to each of R, G, B; BT.2100 (cropzoom) to the luminance,
            // which keeps the hue and saturates less: far apart on this picture of saturated bars, equal on greys.
            #expect(abs(Self.number(r, "luma_ratio") - 1) <= 0.2, "\(r)")
            #expect(Self.number(r, "colourfulness_ratio") > 0.65 && Self.number(r, "colourfulness_ratio") <= 1, "\(r)")
        }
        // BT.2390 keeps what is below its knee as it is: no darker than Hable's curve, which darkens the mid-tones.
        let b = try Self.compare(auto, input)
        print("tonemap \(sample) bt2390 (auto): \(b)")
        #expect(Self.number(b, "luma_ratio") >= Self.number(r, "luma_ratio"), "\(b) against hable's \(r)")
    }

    @Test(
        """
        HLG greys (a ramp from black to the HLG peak), where BT.2100's OOTF and zimg's per-component one agree: \
        hable against zscale+tonemap=hable ≥ 38 dB and luminance within 2 %; reinhard the same
        """)
    func hlgGreys() throws {
        let scratch = try Scratch()
        let toHLG =
            "zscale=t=arib-std-b67:p=bt2020:m=bt2020nc:r=tv:tin=bt709:pin=bt709:min=bt709:rin=pc,format=yuv420p10le"
        let greys = "format=gray,geq=lum='X':a=255,format=yuv444p"
        let ramp = try Clip.video(.nullsrc, seconds: 0.5, size: "256x64", rate: 10, filter: greys)
            .codec("libx265", options: ["-x265-params", "log-level=error:lossless=1"])
            .colors(primaries: "bt2020", transfer: "arib-std-b67", space: "bt2020nc")
            .extra(["-vf", toHLG, "-tag:v", "hvc1"]).write(in: scratch, name: "ramp.mp4")
        for curve in ["hable", "reinhard"] {
            let out = scratch.file("\(curve).mkv").path
            let run = try CLI.cropzoom([ramp, "-o", out, "--codec", "h264", "--crf", "0", "--tone-map", curve])
            try #require(run.status == 0, "\(run)")
            let r = try Self.compare(out, ramp, curve: curve)
            print("tonemap HLG ramp \(curve): \(r)")
            #expect(Self.number(r, "psnr") >= 38, "\(r)")
            #expect(abs(Self.number(r, "luma_ratio") - 1) <= 0.02, "\(r)")
        }
    }

    @Test(
        """
        auto's rules: HEVC 10-bit keeps HDR; an 8-bit --pix-fmt maps; a 10-bit --pix-fmt keeps H.264 HDR; off keeps \
        HDR with a warning note; a curve on SDR input notes that there is nothing to map
        """)
    func autoRules() throws {
        let scratch = try Scratch()
        let pq = try Files.sample("hdr-pq.mkv").path
        func encode(_ input: String, _ name: String, _ extra: [String]) throws -> (CLIResult, [String: Any]) {
            let out = scratch.file(name).path
            let run = try CLI.cropzoom([input, "-o", out] + extra)
            try #require(run.status == 0, "\(run)")
            return (run, try Self.video(out))
        }
        let (_, hevc) = try encode(pq, "hevc.mkv", [])
        #expect(hevc["pix_fmt"] as? String == "yuv420p10le" && Self.tags(hevc) == "bt2020,smpte2084,bt2020nc")
        let (eight, hevc8) = try encode(pq, "hevc8.mkv", ["--codec", "hevc", "--pix-fmt", "yuv420p"])
        #expect(hevc8["pix_fmt"] as? String == "yuv420p" && Self.tags(hevc8) == "bt709,bt709,bt709")
        #expect(eight.stderrLines.contains { $0.contains("tone mapped to SDR BT.709 (bt2390: the output is yuv420p") })
        let (_, high10) = try encode(pq, "high10.mp4", ["--codec", "h264", "--pix-fmt", "yuv420p10le"])
        #expect(Self.tags(high10) == "bt2020,smpte2084,bt2020nc")
        let (off, kept) = try encode(pq, "off.mp4", ["--codec", "h264", "--pix-fmt", "yuv420p", "--tone-map", "off"])
        #expect(Self.tags(kept) == "bt2020,smpte2084,bt2020nc")
        #expect(
            off.stderrLines.contains {
                $0.contains("is HDR (PQ) and stays so (--tone-map off), although the output is yuv420p, 8 bits")
            }, "\(off.stderrLines)")
        let sdr = try Files.sample("std-h264-aac.mp4").path
        let (nothing, plain) = try encode(sdr, "sdr.mp4", ["--tone-map", "hable"])
        #expect(plain["pix_fmt"] as? String == "yuv420p")
        #expect(
            nothing.stderrLines.contains {
                $0.hasSuffix("--tone-map hable: video stream #0 is not HDR (PQ or HLG): nothing to map")
            },
            "\(nothing.stderrLines)")
        // An unknown curve is a usage error naming the choices, nothing written.
        let bad = try CLI.cropzoom([pq, "-o", scratch.file("bad.mp4").path, "--tone-map", "aces"])
        #expect(bad.status == 2 && bad.stderr.contains("--tone-map"), "\(bad)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("bad.mp4").path))
    }

    @Test(
        "a mapped recording in every container with sound: tagged BT.709 where the container says, every audio packet",
        arguments: ["mp4", "mov", "mkv", "ts", "flv", "webm"])
    func containers(_ ext: String) throws {
        let scratch = try Scratch()
        let input = try Files.sample("hdr-pq.mkv").path
        let out = scratch.file("out.\(ext)").path
        let codec = ext == "webm" ? ["--codec", "vp9", "--pix-fmt", "yuv420p"] : ["--codec", "h264"]
        let run = try CLI.cropzoom([input, "-o", out, "--zoom", "1.5"] + codec)
        try #require(run.status == 0, "\(run)")
        #expect(run.stderrLines.contains { $0.contains("tone mapped to SDR BT.709") }, "\(run.stderrLines)")
        let v = try Self.video(out)
        #expect(Self.tags(v) == "bt709,bt709,bt709", "\(v)")
        #expect(try Media.frameCount(out) == 30)
        let sent = try Oracle.packets(input, streamIndex: 1)
        let got = try Oracle.packets(out, streamIndex: 1)
        // Copied (AAC into every container but WebM, whose Opus covers the same second).
        if ext == "webm" {
            #expect(abs((got.last?.ptsTime ?? 0) - (sent.last?.ptsTime ?? 0)) < 0.05, "\(got.count) packets")
        } else {
            // MPEG-TS carries AAC with a 7-byte ADTS header on each packet.
            let header = ext == "ts" ? 7 : 0
            #expect(got.map { $0.size - header } == sent.map(\.size), "\(got.count) of \(sent.count) audio packets")
        }
    }

    @Test(
        """
        the corpus's HDR clips (HDR10 AV1, HLG HEVC, iPhone HLG with Dolby Vision 8.4 and a turn) to H.264: tagged \
        BT.709, 8 bits, no Dolby Vision record or HDR side data; PSNR against zscale+tonemap=hable recorded
        """, arguments: ["axm-hdr10-av1.mp4", "axm-hlg10-color-test.mp4", "axm-dolbyVision-hdr.MOV"])
    func corpusClips(_ name: String) throws {
        guard let folder = Oracle.corpusDirectory else {
            print("corpus absent: ../shared/corpus not found — \(name) not checked")
            return
        }
        let input = folder.appendingPathComponent(name).path
        let scratch = try Scratch()
        let out = scratch.file("out.mkv").path
        let run = try CLI.cropzoom([input, "-o", out, "--codec", "h264", "--crf", "12", "--tone-map", "hable"])
        try #require(run.status == 0, "\(run)")
        let v = try Self.video(out)
        #expect(v["pix_fmt"] as? String == "yuv420p" && Self.tags(v) == "bt709,bt709,bt709", "\(v)")
        #expect(Media.sideDataTypes(v).isEmpty, "\(Media.sideDataTypes(v))")
        if name.hasSuffix(".MOV") {
            #expect(
                run.stderrLines.contains(
                    "cropzoom: note: video stream #0: its Dolby Vision (profile 8) is not kept; the output is its HLG "
                        + "picture, tone mapped to SDR"), "\(run.stderrLines)")
        }
        // The Dolby Vision clip is turned on display: compare the coded picture (ffmpeg turns the reference too).
        let r = try Self.compare(out, input)
        print("tonemap corpus \(name): \(r)")
        #expect(Self.number(r, "psnr") >= 28, "\(r)")
        #expect(abs(Self.number(r, "luma_ratio") - 1) <= 0.1, "\(r)")
    }
}
