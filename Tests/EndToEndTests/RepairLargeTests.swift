// `cropzoom repair` of a recording over 4 GiB (issue 31): media past the 32-bit offsets, the mdat's 64-bit size (or
// the 0 a crashed writer leaves behind a `free` box), and an output whose index needs 64-bit chunk offsets (`co64`).
// The recording is real: FFmpeg's mov muxer writes 78 s of lossless 720p noise (≈ 4.6 GB) with AAC sound.

import Foundation
import Testing

@Suite("Repair, over 4 GiB", .serialized)
struct RepairLargeTests {
    /// Whether `file`'s `moov` holds a `co64` box (64-bit chunk offsets), read from the top-level box list.
    static func hasLargeChunkOffsets(_ file: URL) throws -> Bool {
        let moov = try #require(try Contract.topLevelBoxes(file).first { $0.type == "moov" })
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        try handle.seek(toOffset: moov.offset)
        let bytes = try #require(try handle.read(upToCount: Int(moov.size)))
        return bytes.range(of: Data("co64".utf8)) != nil
    }

    @Test(
        """
        a 4.6 GB H.264 + AAC MP4 cut before its index — the mdat's 64-bit size as written, then a crashed writer's \
        `free` box and 0 size — comes back whole: every packet with identical bytes at its time (those past 4 GiB \
        too), a clean decode, co64 in the repaired index, the two repairs byte for byte the same
        """)
    func overFourGiB() throws {
        let scratch = try Scratch()
        let original = scratch.file("original.mp4")
        let reference = scratch.file("reference.mp4")
        let noise = "testsrc2=size=1280x720:rate=30,noise=alls=100:allf=t"
        let settings = [
            "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-g", "30", "-c:a", "aac", "-b:a", "128k",
        ]
        for (file, seconds, tone) in [(original, 78, 440), (reference, 2, 880)] {
            _ = try Oracle.runChecked(
                "ffmpeg",
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", noise, "-f", "lavfi", "-i",
                    "sine=frequency=\(tone):sample_rate=48000", "-t", "\(seconds)",
                ] + settings + [file.path], timeout: 600)
        }
        let boxes = try Contract.topLevelBoxes(original)
        let mdat = try #require(boxes.first { $0.type == "mdat" })
        #expect(boxes.map(\.type) == ["ftyp", "mdat", "moov"], "\(boxes)")
        #expect(mdat.offset + mdat.size > 1 << 32 + 100_000_000, "the recording is not over 4 GiB: \(mdat)")
        #expect(try !Self.hasLargeChunkOffsets(reference), "the reference should have 32-bit offsets")

        // The broken file: the original up to the end of its mdat (its index is gone), copied as the file system can.
        let broken = scratch.file("broken.mp4")
        _ = try Oracle.runChecked("cp", ["--reflink=auto", original.path, broken.path], timeout: 300)
        _ = try Oracle.runChecked("truncate", ["-s", "\(mdat.offset + mdat.size)", broken.path])
        let header = try FileHandle(forUpdating: broken)
        try header.seek(toOffset: mdat.offset)
        let written = try #require(try header.read(upToCount: 8))
        #expect(Array(written) == [0, 0, 0, 1] + Array("mdat".utf8), "not a 64-bit mdat header: \(Array(written))")

        let fixed = scratch.file("fixed.mp4")
        let run = try CLI.cropzoom(
            ["repair", broken.path, "--reference", reference.path, "-o", fixed.path, "--json"], timeout: 900)
        #expect(run.status == 0, "\(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["recovered_bytes"] as? Int ?? 0 > 1 << 32, "\(report)")
        #expect((report["gaps"] as? [Any])?.isEmpty == true, "\(report)")
        #expect(try Self.hasLargeChunkOffsets(fixed))
        let counts = try (0..<2).map { try Oracle.packets(original.path, streamIndex: $0).count }
        #expect(counts[0] == 78 * 30)
        let (streams, decode) = try RepairTests.score(original: original, broken: broken, repaired: fixed)
        for s in streams {
            #expect(s["foreign"] as? Int == 0, "\(s)")
            #expect(s["pts_error"] as? Double == 0, "\(s)")
        }
        #expect(streams.map { $0["recovered"] as? Int } == counts, "\(streams)")
        #expect(decode.isEmpty, "\(decode)")
        try FileManager.default.removeItem(at: original)

        // As a crashed FFmpeg leaves it: an 8-byte `free` box, then the mdat with a 32-bit size of 0 (FFmpeg turns
        // the two into one 64-bit header when it finishes).
        try header.seek(toOffset: mdat.offset)
        header.write(Data([0, 0, 0, 8] + Array("free".utf8) + [0, 0, 0, 0] + Array("mdat".utf8)))
        try header.close()
        let again = scratch.file("again.mp4")
        let second = try CLI.cropzoom(["repair", broken.path, "--reference", reference.path, "-o", again.path])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try Oracle.run("cmp", [fixed.path, again.path], timeout: 300).status == 0, "the repairs differ")
        #expect(Files.temporaryLeftovers(in: scratch.url).isEmpty, "\(Files.names(in: scratch.url))")
    }
}
