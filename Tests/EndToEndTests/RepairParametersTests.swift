// Issue 31, "faster than untrunc": the repaired file's header is written from the container's codec parameters at once
// and the ones FFmpeg learns by decoding (pixel format, profile, aspect ratio, field order, a sound frame's length...)
// are given before the index, from the picture check's decoder and the sound's configuration, instead of probing the
// reference first (docs/design/repair.md, "Session 15"). The file must be the one the probe gave, byte for byte.

import CropZoomCore
import CropZoomKit
import Foundation
import Testing

@Suite("Repair: the parameters decoding finds, without the reference's probe", .timeLimit(.minutes(5)))
struct RepairParametersTests {
    /// A recording's encoders, container and how the repair should use the probe.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var more: [String]
        var ext = "mov"
        var channels = 2
        /// `h264_metadata` cropping: the pictures narrower than the sample entry says.
        var cropRight: Int? = nil
        var rotate: Int? = nil
        var probe = RepairJob.ProbeUse.none
        var testDescription: String { name }

        static let all = [
            Case(name: "H.264 with B-frames, stereo AAC, MP4", more: ["-bf", "3"], ext: "mp4"),
            Case(
                name: "H.264, stereo AAC, MOV with one-second chunks", more: ["-bf", "3", "-chunk_duration", "1000000"]),
            Case(name: "H.264, mono AAC, MOV", more: ["-bf", "0"], channels: 1),
            Case(
                name: "HEVC, stereo AAC, MP4",
                more: ["-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error:bframes=4"], ext: "mp4"),
            Case(name: "H.264, PCM (sowt), MOV", more: ["-bf", "3", "-c:a", "pcm_s16le"]),
            Case(name: "H.264, mono PCM (twos), MOV", more: ["-bf", "0", "-c:a", "pcm_s16be"], channels: 1),
            Case(
                name: "HEVC, 24-bit PCM, MOV",
                more: ["-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error", "-c:a", "pcm_s24le"]),
            Case(name: "a portrait clip turned by its display matrix, MOV", more: ["-bf", "3"], rotate: 90),
            // The SPS crops 16 columns the sample entry still counts (640 wide, pictures of 624): only decoding
            // tells, after the header was written, so the file is written again from the probed reference.
            Case(
                name: "H.264 whose SPS crops the picture (written again)", more: ["-bf", "3"], cropRight: 16,
                probe: .beforeHeader),
        ]
    }

    /// An original of 4 s and a reference of 2 s (other pictures, another tone) as `c` says, the original cut before
    /// its index.
    static func files(_ c: Case, in scratch: Scratch) throws -> (original: URL, reference: URL, broken: URL) {
        let original = scratch.file("original.\(c.ext)")
        let reference = scratch.file("reference.\(c.ext)")
        for (url, content, tone, seconds) in [(original, "testsrc2", 440, 4.0), (reference, "testsrc", 880, 2.0)] {
            try RepairTests.recording(
                url, content: content, tone: tone, seconds: seconds, more: c.more, channels: c.channels,
                rotate: c.rotate)
            if let crop = c.cropRight {
                try RepairTests.copyStreams(url, adding: ["-bsf:v", "h264_metadata=crop_right=\(crop)"])
            }
        }
        let broken = scratch.file("broken.\(c.ext)")
        try RepairTests.cutBeforeIndex(original, to: broken)
        return (original, reference, broken)
    }

    /// `broken` repaired with `reference` into `output` by the library; `probesFirst`: the header from the probed
    /// reference, as before. The report and how the probe was used.
    static func repair(_ broken: URL, _ reference: URL, into output: URL, probesFirst: Bool) async throws -> (
        report: RepairReport, probe: RepairJob.ProbeUse
    ) {
        let job = RepairJob(
            configuration: RepairConfiguration(input: broken.path, reference: reference.path, output: output.path))
        job.probesFirst = probesFirst
        let report = try await job.run()
        return (report, job.probeUse)
    }

    @Test(
        """
        H.264 and HEVC with AAC (stereo, mono) and PCM (16 and 24 bits, both byte orders), MP4 and MOV, a turned \
        portrait clip: the file repaired without the reference's probe is the one repaired with it, byte for byte \
        (pasp, fiel, colr, a MOV sound description's samples per packet as the probe gives them), and the probe was \
        not used; a picture narrower than its sample entry says is found after the header and the file written again \
        from the probed reference
        """, arguments: Case.all)
    func sameFileWithoutTheProbe(_ c: Case) async throws {
        let scratch = try Scratch()
        let (original, reference, broken) = try Self.files(c, in: scratch)
        let probed = scratch.file("probed.\(c.ext)")
        let fast = scratch.file("fast.\(c.ext)")
        let before = try await Self.repair(broken, reference, into: probed, probesFirst: true)
        #expect(before.probe == .beforeHeader)
        let now = try await Self.repair(broken, reference, into: fast, probesFirst: false)
        #expect(now.probe == c.probe)
        let (a, b) = (try Data(contentsOf: probed), try Data(contentsOf: fast))
        let firstDifference = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(
            a == b, "\(a.count) and \(b.count) bytes, first difference at \(firstDifference ?? min(a.count, b.count))")
        #expect(now.report.tracks.map(\.samples) == before.report.tracks.map(\.samples))
        // The repaired file still plays as the original: every packet back (the scoring of RepairTests).
        let (streams, decode) = try RepairTests.score(original: original, broken: broken, repaired: fast)
        for s in streams { #expect(s["whole"] as? Int == s["recovered"] as? Int, "\(s)") }
        #expect(decode.isEmpty, "\(decode)")
        #expect(Files.temporaryLeftovers(in: scratch.url).isEmpty, "\(Files.names(in: scratch.url))")
    }

    @Test(
        """
        no picture recovered (a sound-only recording, a reference with pictures): the video stream's decoded \
        parameters come from a probe at the end, and the file is the one the probe first gave
        """)
    func noPictureRecovered() async throws {
        let scratch = try Scratch()
        let original = scratch.file("sound.mp4")
        let reference = scratch.file("reference.mp4")
        try RepairTests.recording(original, content: "testsrc2", tone: 440, seconds: 3, more: ["-vn"])
        try RepairTests.recording(reference, content: "testsrc", tone: 880, seconds: 2)
        let broken = scratch.file("broken.mp4")
        try RepairTests.cutBeforeIndex(original, to: broken)
        let probed = scratch.file("probed.mp4")
        let fast = scratch.file("fast.mp4")
        _ = try await Self.repair(broken, reference, into: probed, probesFirst: true)
        let now = try await Self.repair(broken, reference, into: fast, probesFirst: false)
        #expect(now.probe == .atTheEnd)
        #expect(now.report.tracks.map(\.samples) == [0, try Oracle.packets(original.path, streamIndex: 0).count])
        #expect(try Data(contentsOf: probed) == Data(contentsOf: fast))
    }

    @Test(
        """
        two video tracks (one picture check): the header is written from the probed reference, and the file is the \
        one the probe first gave
        """)
    func twoVideoTracks() async throws {
        let scratch = try Scratch()
        let (original, broken) = try RepairVideoTracksTests.twoTracks(scratch, ["-bf", "0"])
        let probed = scratch.file("probed.mp4")
        let fast = scratch.file("fast.mp4")
        _ = try await Self.repair(broken, original, into: probed, probesFirst: true)
        let now = try await Self.repair(broken, original, into: fast, probesFirst: false)
        #expect(now.probe == .beforeHeader)
        #expect(try Data(contentsOf: probed) == Data(contentsOf: fast))
    }

    @Test(
        """
        the corpus's phone and camera recordings (their index removed, repaired with the whole file): the file \
        repaired without the probe is the one repaired with it (two 5.1 AAC tracks: probed first, as only the \
        decoder knows their channel layout); said when ../shared/corpus is absent
        """,
        arguments: [
            ("axm-dolbyVision-hdr.MOV", RepairJob.ProbeUse.none), ("axm-pixel7_videoOnly_cleaned.mp4", .none),
            ("mbn-sar_2x1.mp4", .none), ("mbn-edts.mp4", .none), ("axm-hlg10-color-test.mp4", .none),
            ("mbn-multiple-aac-tracks.mp4", .beforeHeader),
        ])
    func corpus(_ name: String, _ probe: RepairJob.ProbeUse) async throws {
        guard let folder = Oracle.corpusDirectory else {
            print("corpus absent: ../shared/corpus not found — \(name) not compared")
            return
        }
        let scratch = try Scratch()
        let original = folder.appendingPathComponent(name)
        let bytes = [UInt8](try Data(contentsOf: original))
        let boxes = try Contract.topLevelBoxes(original)
        let kept = boxes.filter { $0.type != "moov" }.flatMap { bytes[Int($0.offset)..<Int($0.offset + $0.size)] }
        let ext = original.pathExtension.lowercased()
        let broken = scratch.file("broken.\(ext)")
        try Data(kept).write(to: broken)
        let probed = scratch.file("probed.\(ext)")
        let fast = scratch.file("fast.\(ext)")
        _ = try await Self.repair(broken, original, into: probed, probesFirst: true)
        let now = try await Self.repair(broken, original, into: fast, probesFirst: false)
        #expect(now.probe == probe)
        #expect(try Data(contentsOf: probed) == Data(contentsOf: fast))
    }
}
