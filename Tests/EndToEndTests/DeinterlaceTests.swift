// Interlaced input (issue 13, item 12): frames the decoder flags interlaced are deinterlaced
// before scaling (one field kept, the other rebuilt from it); ffmpeg's `idet` filter, which
// finds combing, is the oracle.

import Foundation
import Testing

@Suite("Deinterlacing")
struct DeinterlaceTests {
    /// ffmpeg `idet`'s single-frame verdicts for `path`: (TFF, BFF, progressive).
    static func combing(_ path: String) throws -> (tff: Int, bff: Int, progressive: Int) {
        let stderr = try Oracle.runChecked(
            "ffmpeg",
            [
                "-hide_banner", "-nostats", "-nostdin", "-i", path, "-vf", "idet",
                "-f", "null", "-",
            ]
        ).stderr
        let line = try #require(stderr.split(separator: "\n").first { $0.contains("Single frame detection") })
        func count(_ label: String) -> Int {
            guard let r = line.range(of: label + ":") else { return -1 }
            return Int(line[r.upperBound...].split(separator: " ").first ?? "") ?? -1
        }
        return (count("TFF"), count("BFF"), count("Progressive"))
    }

    @Test("an interlaced H.264 (25i from moving 50p): deinterlaced by default, combed with --deinterlace off")
    func interlacedInput() throws {
        let scratch = try Scratch()
        let source = try Clip.video(seconds: 1, size: "320x240", rate: 50).codec("ffv1")
            .write(in: scratch, name: "src.mkv")
        // Two 50p frames woven into one 25i frame, top field first, coded as interlaced.
        let interlaced = scratch.file("interlaced.mkv").path
        try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-y", "-i", source, "-vf", "interlace=scan=tff",
                "-c:v", "libx264", "-qp", "0", "-flags", "+ilme+ildct", interlaced,
            ])
        let input = try Self.combing(interlaced)
        try #require(input.tff >= 20, "test set-up: the input should look interlaced to idet: \(input)")

        let on = scratch.file("on.mkv").path
        let run = try CLI.cropzoom([interlaced, "-o", on, "--codec", "ffv1"])
        #expect(run.status == 0, "\(run)")
        let off = scratch.file("off.mkv").path
        #expect(try CLI.cropzoom([interlaced, "-o", off, "--codec", "ffv1", "--deinterlace", "off"]).status == 0)

        let deinterlaced = try Self.combing(on)
        let combed = try Self.combing(off)
        #expect(deinterlaced.progressive >= 22 && deinterlaced.tff + deinterlaced.bff <= 2, "\(deinterlaced)")
        #expect(combed.tff >= 20, "with --deinterlace off the fields stay woven: \(combed)")

        // Against the source frame of each first field (the even 50p frames).
        let first = "select=not(mod(n\\,2)),settb=1,setpts=N"
        let psnrOn = try Oracle.meanPSNR(reference: source, referenceFilter: first, output: on, alignStarts: true)
        let psnrOff = try Oracle.meanPSNR(reference: source, referenceFilter: first, output: off, alignStarts: true)
        #expect(psnrOn > psnrOff + 0.5 && psnrOn > 29, "PSNR deinterlaced \(psnrOn) dB, not \(psnrOff) dB")
    }
}
