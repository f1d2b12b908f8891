// `--null -o NAME`: nothing is written, but the codecs are the ones NAME's container would get,
// so a measurement (and `batch --dry-run`, `bench`) describes the real job.

import Foundation
import Testing

@Suite("Null output")
struct NullOutputTests {
    @Test("--null -o x.webm encodes VP9 and re-encodes AAC to Opus, as a real .webm would; nothing is written")
    func containerDecidesCodecs() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        for (name, video, copied, reencoded) in [
            ("x.webm", "libvpx-vp9", 0, 1), ("x.mp4", "libx264", 1, 0), ("x.mkv", "libx264", 1, 0),
        ] {
            let target = scratch.file(name)
            let run = try CLI.cropzoom([input, "--null", "-o", target.path, "--progress", "json"])
            try #require(run.status == 0, "\(run)")
            let done = try EngineTests.doneEvent(run)
            #expect(done["codec"] as? String == video, "\(name): \(done)")
            #expect(
                done["audio_streams_copied"] as? Int == copied && done["audio_streams_reencoded"] as? Int == reencoded,
                "\(name): \(done)")
            #expect(!Files.exists(target) && Files.names(in: scratch.url).isEmpty, "\(name): something was written")
        }
    }
}
