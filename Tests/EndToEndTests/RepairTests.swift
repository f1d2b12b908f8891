// `cropzoom repair` (issue 31, first slice: H.264 + AAC MP4 without B-frames): a recording cut before its index is
// brought back from a reference made by the same command with other content; scored against the complete original
// by Tests/tools/repair_score.py (packets with identical bytes, in order, at their original times; a clean decode).

import CropZoomFFmpeg
import CropZoomKit
import Foundation
import Testing

@Suite("Repair")
struct RepairTests {
    /// An H.264 + AAC MP4 as a camera set to `-bf 0` writes it: `content` (a lavfi video source), `tone` Hz, `seconds`
    /// long, `more` options for the encoders.
    /// `channels`: the sound's (0: none).
    static func recording(
        _ path: URL, content: String, tone: Int, seconds: Double, more: [String] = ["-bf", "0"], channels: Int = 2,
        size: String = "640x360", pixelFormat: String = "yuv420p", sound source: String? = nil, rate: Int = 30,
        rotate: Int? = nil
    ) throws {
        let sound =
            channels == 0
            ? ["-an"]
            : more.contains("-c:a")
                ? ["-ac", "\(channels)"]
                : ["-c:a", "aac", "-b:a", "\(64 * channels)k", "-ac", "\(channels)"]
        _ = try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "\(content)=size=\(size):rate=\(rate)", "-f", "lavfi", "-i",
                source ?? "sine=frequency=\(tone):sample_rate=48000", "-t", "\(seconds)", "-c:v", "libx264", "-preset",
                "veryfast", "-pix_fmt", pixelFormat,
            ] + more + sound + [path.path])
        if let rotate {
            // A phone's portrait clip: the pictures stored as shot, a display matrix turning them (FFmpeg 5.1 writes
            // one from the `rotate` tag on a stream copy).
            try copyStreams(path, adding: ["-metadata:s:v:0", "rotate=\(rotate)"])
        }
    }

    /// `path` replaced by a stream copy of itself with `options` (a tag, a bitstream filter).
    static func copyStreams(_ path: URL, adding options: [String]) throws {
        let copy = path.deletingLastPathComponent().appendingPathComponent("copy-" + path.lastPathComponent)
        _ = try Oracle.runChecked(
            "ffmpeg", ["-v", "error", "-y", "-i", path.path, "-map", "0", "-c", "copy"] + options + [copy.path])
        try FileManager.default.removeItem(at: path)
        try FileManager.default.moveItem(at: copy, to: path)
    }

    /// The original's bytes up to the end of its `mdat` (its index, after it, is gone), and further cut to `keep`
    /// bytes when given; `zeroSize`: the mdat's size field set to 0, as a writer leaves it until it finishes.
    static func cutBeforeIndex(_ original: URL, to broken: URL, keep: Int? = nil, zeroSize: Bool = false) throws {
        var bytes = [UInt8](try Data(contentsOf: original))
        let boxes = try Contract.topLevelBoxes(original)
        let mdat = try #require(boxes.first { $0.type == "mdat" })
        #expect(boxes.last?.type == "moov", "the index is not last: \(boxes.map(\.type))")
        bytes = Array(bytes.prefix(Int(mdat.offset + mdat.size)))
        if let keep { bytes = Array(bytes.prefix(keep)) }
        if zeroSize { bytes.replaceSubrange(Int(mdat.offset)..<Int(mdat.offset) + 4, with: [0, 0, 0, 0]) }
        try Data(bytes).write(to: broken)
    }

    /// An original of `seconds`, a 2 s reference (other pictures, another tone) and the original cut before its
    /// index.
    static func brokenRecording(in scratch: Scratch, seconds: Double = 2) throws -> (
        original: URL, reference: URL, broken: URL
    ) {
        let original = scratch.file("original.mp4")
        let reference = scratch.file("reference.mp4")
        try Self.recording(original, content: "testsrc2", tone: 440, seconds: seconds)
        try Self.recording(reference, content: "testsrc", tone: 880, seconds: 2)
        let broken = scratch.file("broken.mp4")
        try Self.cutBeforeIndex(original, to: broken)
        return (original, reference, broken)
    }

    /// `original` cut before its index into `broken.EXT` and repaired with `reference` into `fixed.EXT` (`--json`):
    /// the run, and both files.
    static func repairCut(_ original: URL, reference: URL, in scratch: Scratch) throws -> (
        run: CLIResult, broken: URL, fixed: URL
    ) {
        let ext = original.pathExtension
        let broken = scratch.file("broken.\(ext)")
        try cutBeforeIndex(original, to: broken)
        let fixed = scratch.file("fixed.\(ext)")
        let run = try CLI.cropzoom(["repair", broken.path, "--reference", reference.path, "-o", fixed.path, "--json"])
        return (run, broken, fixed)
    }

    /// A corpus file with its index box removed (the crash: what a writer that puts the index first leaves when it
    /// never comes back to it), repaired with the complete file as its reference and scored: it exits 0, and its first
    /// two streams come back whole with nothing foreign among them. The streams' figures and the decode's
    /// complaints; nil, said, without the corpus.
    static func repairWithoutIndex(corpus name: String) throws -> (streams: [[String: Any]], decode: String)? {
        guard let folder = Oracle.corpusDirectory else {
            print("corpus absent: ../shared/corpus not found — \(name) not repaired")
            return nil
        }
        let original = folder.appendingPathComponent(name)
        let scratch = try Scratch()
        let bytes = [UInt8](try Data(contentsOf: original))
        let boxes = try Contract.topLevelBoxes(original)
        let broken = scratch.file("broken.mp4")
        let kept = boxes.filter { $0.type != "moov" }.flatMap { bytes[Int($0.offset)..<Int($0.offset + $0.size)] }
        #expect(kept.count < bytes.count, "\(name) has no index box: \(boxes.map(\.type))")
        try Data(kept).write(to: broken)
        let fixed = scratch.file("fixed.mp4")
        let run = try CLI.cropzoom(["repair", broken.path, "--reference", original.path, "-o", fixed.path])
        #expect(run.status == 0, "\(run)")
        let (streams, decode) = try score(original: original, broken: broken, repaired: fixed)
        for s in streams.prefix(2) {
            #expect(s["whole"] as? Int == s["recovered"] as? Int && (s["whole"] as? Int ?? 0) > 0, "\(s)")
            #expect(s["foreign"] as? Int == 0, "\(s)")
        }
        return (streams, decode)
    }

    /// Tests/tools/repair_score.py's figures for each stream of the original, and the decode's complaints.
    /// `vfr`: a recording whose frame rate changed (the decode check's null output not re-timed at the nominal rate).
    static func score(original: URL, broken: URL, repaired: URL, vfr: Bool = false) throws -> (
        streams: [[String: Any]], decode: String
    ) {
        let json = try AnimatedZoomTests.tool(
            "repair_score.py", (vfr ? ["--vfr"] : []) + [original.path, broken.path, repaired.path])
        let streams = try #require(json["streams"] as? [[String: Any]])
        return (streams, json["decode_errors"] as? String ?? "?")
    }

    /// A recording's sound channels (0: none) and encoder options (`video`; the sound's rate apart).
    struct Case: Sendable, CustomTestStringConvertible {
        var channels: Int
        var video: [String]
        var ext = "mp4"
        var sound: String? = nil
        var seconds = 6
        var rate = 30
        var rotate: Int? = nil
        /// The sound's sample rate (`-ar` where it is not the source's 48 kHz).
        var sampleRate = 48000
        /// The encoder options: `video`, and the sound's rate where it is not 48 kHz.
        var options: [String] { video + (sampleRate == 48000 ? [] : ["-ar", "\(sampleRate)"]) }
        var testDescription: String {
            "\(channels) channels, \(video.joined(separator: " ")), \(ext)" + (sound.map { ", \($0)" } ?? "")
                + (rate == 30 ? "" : ", \(rate) fps") + (sampleRate == 48000 ? "" : ", \(sampleRate) Hz")
                + (rotate.map { ", rotated \($0)°" } ?? "")
        }
        static let all = [
            Case(channels: 2, video: ["-bf", "0"]), Case(channels: 1, video: ["-bf", "0"]),
            Case(channels: 0, video: ["-bf", "0"]),
            // x264's adaptive B-frames: an irregular pattern, which untrunc's tiled composition offsets get wrong.
            Case(channels: 2, video: ["-bf", "3", "-x264-params", "b-adapt=2"]),
            // B-pyramid and an IDR every 40 frames: several sequences of picture order counts.
            Case(channels: 2, video: ["-bf", "3", "-x264-params", "b-pyramid=normal:keyint=40"]),
            // One-second chunks (runs of about 30 frames, then 47 audio frames), and QuickTime's container.
            Case(channels: 2, video: ["-bf", "3", "-chunk_duration", "1000000"]),
            Case(channels: 2, video: ["-bf", "3"], ext: "mov"),
            // A phone's 3GP (ffmpeg's 3gp muxer: brand 3gp6, a free box before the media data), mono AAC.
            Case(channels: 1, video: ["-bf", "0"], ext: "3gp"),
            // Uncompressed sound in a MOV, as many cameras write it (little- and big-endian: sowt, twos): untrunc
            // stopped at 46 % of such a file.
            Case(channels: 2, video: ["-bf", "3", "-c:a", "pcm_s16le"], ext: "mov"),
            Case(channels: 1, video: ["-bf", "0", "-c:a", "pcm_s16be"], ext: "mov"),
            // HEVC (as phones record), B-frames and an open GOP (a CRA every 40 frames, RASL pictures after it; the
            // order counts run on through CRAs and wrap past x265's 256), with mono sound; and in a MOV with PCM.
            Case(
                channels: 1,
                video: ["-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error:bframes=4:keyint=40"],
                seconds: 12),
            Case(
                channels: 2,
                video: ["-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error", "-c:a", "pcm_s16le"],
                ext: "mov"),
            // Loud white noise: PCM bytes that look like the start of a picture at some 4-byte step (seen with this
            // seed), which the reference's chunk granularity (4096 bytes) steps over.
            Case(
                channels: 2, video: ["-bf", "3", "-c:a", "pcm_s16le"], ext: "mov",
                sound: "anoisesrc=color=white:sample_rate=48000:amplitude=0.5:seed=2"),
            // PCM resampled to 8 kHz, 25 fps: the sound's chunks vary by a sample frame (682 or 684 bytes), so a run's
            // end is looked for at every 2 bytes, through the look at each place before a probe (mightOpen).
            Case(channels: 1, video: ["-bf", "0", "-c:a", "pcm_s16le"], ext: "mov", rate: 25, sampleRate: 8000),
            // 60 fps (a frame every 1/60 s: AAC frames and pictures interleave at another rhythm), and a portrait
            // phone clip whose display matrix turns it: the matrix comes from the reference.
            Case(channels: 2, video: ["-bf", "3"], rate: 60),
            Case(channels: 2, video: ["-bf", "3"], ext: "mov", rotate: 90),
        ]
    }

    @Test(
        """
        an H.264 or HEVC MP4/MOV cut just before its index (the mdat's size as written, and 0 as a crashed writer leaves it), with \
        stereo AAC, mono AAC (whose frames can start like a NAL length) and no sound (frame after frame), without and \
        with B-frames (adaptive, pyramid, several IDR sequences), one-second chunks, 3GP, MOV with PCM sound (a tone, 8 kHz \
        resampled, loud noise; sowt and twos): every packet back with identical bytes, in order, \
        at its original time (B-frames in display order, the sound's priming as the writer put it), a clean decode, \
        exit 0 and one line saying what was recovered
        """, arguments: Case.all)
    func cutBeforeIndex(_ c: Case) throws {
        let channels = c.channels
        let scratch = try Scratch()
        let original = scratch.file("original.\(c.ext)")
        let reference = scratch.file("reference.\(c.ext)")
        try Self.recording(
            original, content: "testsrc2", tone: 440, seconds: Double(c.seconds), more: c.options, channels: channels,
            sound: c.sound, rate: c.rate, rotate: c.rotate)
        try Self.recording(
            reference, content: "testsrc", tone: 880, seconds: 3, more: c.options, channels: channels, rate: c.rate,
            rotate: c.rotate)
        let counts = try (0..<(channels > 0 ? 2 : 1)).map { try Oracle.packets(original.path, streamIndex: $0).count }
        #expect(counts.first == c.rate * c.seconds)
        for zero in [false, true] {
            let broken = scratch.file("broken-\(zero).\(c.ext)")
            let fixed = scratch.file("fixed-\(zero).\(c.ext)")
            try Self.cutBeforeIndex(original, to: broken, zeroSize: zero)
            // FFmpeg refuses the broken file, and cropzoom's transcode names the way out.
            let refused = try CLI.cropzoom([broken.path, "-o", scratch.file("t.mp4").path])
            #expect(refused.status == 3 && refused.stderr.contains("cropzoom repair"), "\(refused)")
            let run = try CLI.cropzoom(["repair", broken.path, "--reference", reference.path, "-o", fixed.path])
            #expect(run.status == 0, "\(run)")
            let pcm = c.video.contains("-c:a")
            let sound =
                channels == 0
                ? "\n" : pcm ? ", \(c.seconds * c.sampleRate) audio samples" : ", \(counts[1]) audio frames"
            #expect(
                run.stderr.contains(
                    "repaired \(broken.path) → \(fixed.path): \(c.rate * c.seconds) video frames (\(c.seconds).00 s)\(sound)"
                ),
                "\(run.stderr)")
            let (streams, decode) = try Self.score(original: original, broken: broken, repaired: fixed)
            for s in streams {
                #expect(s["whole"] as? Int == s["recovered"] as? Int, "\(s)")
                #expect(s["foreign"] as? Int == 0, "\(s)")
                #expect(s["pts_error"] as? Double == 0, "\(s)")
                let first = s["first_pts"] as? [Double]
                #expect(first?.count == 2 && first?[0] == first?[1], "\(s)")
            }
            #expect(streams.map { $0["whole"] as? Int } == counts, "\(streams)")
            #expect(decode.isEmpty, "\(decode)")
            // The sample entries' types as the original's (HEVC's `hvc1`, not FFmpeg's default `hev1`).
            let tags = ["-v", "error", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0"]
            let fixedTags = try Oracle.runChecked("ffprobe", tags + [fixed.path]).stdout
            #expect(fixedTags == (try Oracle.runChecked("ffprobe", tags + [original.path]).stdout), "\(fixedTags)")
            if let rotate = c.rotate {
                let args = ["-v", "error", "-show_entries", "stream_side_data=rotation", "-of", "csv=p=0"]
                let turned = try Oracle.runChecked("ffprobe", args + [fixed.path]).stdout
                #expect(turned == (try Oracle.runChecked("ffprobe", args + [original.path]).stdout), "\(turned)")
                #expect(turned.contains("\(rotate)"), "\(turned)")
            }
        }
        #expect(Files.temporaryLeftovers(in: scratch.url).isEmpty, "\(Files.names(in: scratch.url))")
    }

    /// `original` (a picture and a sound stream) cut before its index and repaired with `reference`: exit 0, every
    /// whole packet back with its bytes at its time (`pictures` of them), a clean decode. The repaired file.
    static func repairedWhole(_ original: URL, reference: URL, pictures: Int, in scratch: Scratch) throws -> URL {
        let (run, broken, fixed) = try repairCut(original, reference: reference, in: scratch)
        #expect(run.status == 0, "\(run)")
        let (streams, decode) = try score(original: original, broken: broken, repaired: fixed)
        #expect(streams.count == 2)
        for s in streams {
            #expect(s["whole"] as? Int == s["recovered"] as? Int && s["foreign"] as? Int == 0, "\(s)")
            #expect(s["pts_error"] as? Double == 0, "\(s)")
        }
        #expect(streams.first?["whole"] as? Int == pictures, "\(streams)")
        #expect(decode.isEmpty, "\(decode)")
        return fixed
    }

    @Test(
        """
        H.264 with B-frames whose picture order counts are of type 1 (derived from frame_num, as some cameras write \
        them; Tests/tools/h264_poc_type1.py rewrites x264's, ffmpeg's decode unchanged): every picture back at its \
        time, with the reference's type-1 SPS
        """)
    func pictureOrderTypeOne() throws {
        let scratch = try Scratch()
        let root = try #require(Oracle.packageRoot)
        let rewrite = root.appendingPathComponent("Tests/tools/h264_poc_type1.py").path
        var files: [URL] = []
        for (name, content, seconds) in [("original", "testsrc2", 4.0), ("reference", "testsrc", 2.0)] {
            let x264 = scratch.file("\(name)-x264.mp4")
            // CAVLC (the rewriter's), B-pyramid (reference B-frames), an IDR every 40 frames.
            try Self.recording(
                x264, content: content, tone: name == "original" ? 440 : 880, seconds: seconds,
                more: ["-coder", "0", "-bf", "3", "-x264-params", "b-pyramid=normal:keyint=40"])
            let file = scratch.file("\(name).mp4")
            _ = try Oracle.runChecked("python3", [rewrite, x264.path, file.path])
            let frames = { (path: String) in
                try Oracle.runChecked("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-f", "framemd5", "-"])
                    .stdout
            }
            #expect(try frames(file.path) == (try frames(x264.path)), "the rewritten stream decodes otherwise")
            files.append(file)
        }
        let header = try Oracle.runChecked(
            "ffmpeg",
            ["-i", files[0].path, "-map", "0:v", "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"]
        ).stderr
        #expect(header.contains("pic_order_cnt_type                                        010 = 1"))
        _ = try Self.repairedWhole(files[0], reference: files[1], pictures: 120, in: scratch)
    }

    @Test(
        """
        parameter sets only in the stream (`avc3` and `hev1` whose sample entry has none, as some writers leave it; \
        Tests/tools/inband_parameter_sets.py empties them): read from the recording's keyframes; every packet back \
        at its time, the sample entry's type kept, a clean decode
        """, arguments: ["h264", "hevc"])
    func parameterSetsInTheStream(_ codec: String) throws {
        let scratch = try Scratch()
        let root = try #require(Oracle.packageRoot)
        let empty = root.appendingPathComponent("Tests/tools/inband_parameter_sets.py").path
        let video =
            codec == "h264"
            ? ["-bf", "3", "-x264-params", "keyint=40", "-bsf:v", "dump_extra=freq=keyframe", "-tag:v", "avc3"]
            : [
                "-c:v", "libx265", "-tag:v", "hev1", "-x265-params",
                "log-level=error:repeat-headers=1:bframes=4:keyint=40",
            ]
        var files: [URL] = []
        for (name, content, seconds) in [("original", "testsrc2", 4.0), ("reference", "testsrc", 2.0)] {
            let written = scratch.file("\(name)-written.mp4")
            try Self.recording(
                written, content: content, tone: name == "original" ? 440 : 880, seconds: seconds, more: video)
            let file = scratch.file("\(name).mp4")
            _ = try Oracle.runChecked("python3", [empty, written.path, file.path])
            files.append(file)
        }
        let size = ["-v", "error", "-select_streams", "v", "-show_entries", "stream=extradata_size", "-of", "csv=p=0"]
        // The configuration record's fields only: 7 bytes of avcC, 23 of hvcC.
        #expect(try Oracle.runChecked("ffprobe", size + [files[1].path]).stdout == (codec == "h264" ? "7\n" : "23\n"))
        let fixed = try Self.repairedWhole(files[0], reference: files[1], pictures: 120, in: scratch)
        let tag = ["-v", "error", "-select_streams", "v", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0"]
        #expect(try Oracle.runChecked("ffprobe", tag + [fixed.path]).stdout == (codec == "h264" ? "avc3\n" : "hev1\n"))
    }

    @Test(
        """
        cut in the middle of the media (inside a video frame, and inside an audio frame), with B-frames: every sample \
        before the cut back at its time (the last pictures too, whose neighbours in display order lie past the cut), \
        the cut one reported with its bytes, exit 0
        """)
    func cutMidSample() throws {
        let scratch = try Scratch()
        let original = scratch.file("original.mp4")
        let reference = scratch.file("reference.mp4")
        // With B-frames: the pictures shown just before the last whole one lie past the cut.
        try Self.recording(original, content: "testsrc2", tone: 440, seconds: 4, more: ["-bf", "3"])
        try Self.recording(reference, content: "testsrc", tone: 880, seconds: 2, more: ["-bf", "3"])
        // A packet in the middle of each stream: the file cut 10 bytes into it.
        for stream in [0, 1] {
            let packets = try Oracle.packets(original.path, streamIndex: stream)
            let middle = packets[packets.count / 2]
            let pos = try #require(middle.pos)
            let broken = scratch.file("broken-\(stream).mp4")
            let fixed = scratch.file("fixed-\(stream).mp4")
            try Self.cutBeforeIndex(original, to: broken, keep: pos + 10)
            let run = try CLI.cropzoom([
                "repair", broken.path, "--reference", reference.path, "-o", fixed.path, "--json",
            ])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr.contains("cut mid-sample at the end (10 bytes at "), "\(run.stderr)")
            let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            let gaps = report?["gaps"] as? [[String: Any]]
            #expect(gaps?.count == 1, "\(run.stdout)")
            #expect(gaps?.first?["offset"] as? Int == pos && gaps?.first?["bytes"] as? Int == 10, "\(run.stdout)")
            #expect(gaps?.first?["reason"] as? String == "cut", "\(run.stdout)")
            let (streams, decode) = try Self.score(original: original, broken: broken, repaired: fixed)
            for s in streams {
                #expect(s["whole"] as? Int == s["recovered"] as? Int && s["foreign"] as? Int == 0, "\(s)")
                // Every picture at its time, the last ones before the cut too.
                #expect(s["pts_error"] as? Double == 0, "\(s)")
            }
            // The cut packet itself is not whole in the broken file: every whole one is back, and not more.
            #expect(streams[stream]["whole"] as? Int == packets.count / 2, "\(streams)")
            #expect(decode.isEmpty, "\(decode)")
        }
    }

    @Test(
        """
        cropzoom's own transcode killed with SIGKILL mid-write (its temporary copied aside: ftyp, mdat of size 0, no \
        index, the last sample cut) is repaired from a short transcode with the same options: every whole packet of \
        the same transcode run to its end comes back, at its time, decoding clean
        """)
    func ownCrashedTranscode() throws {
        let scratch = try Scratch()
        let source = scratch.file("source.mp4")
        let other = scratch.file("other.mp4")
        try Self.recording(source, content: "testsrc2", tone: 440, seconds: 12, more: ["-bf", "3"])
        try Self.recording(other, content: "testsrc", tone: 880, seconds: 2, more: ["-bf", "3"])
        let options = ["--zoom", "1.5", "--preset", "veryfast", "--quiet"]
        let reference = scratch.file("reference.mp4")
        let made = try CLI.cropzoom([other.path, "-o", reference.path] + options)
        #expect(made.status == 0, "\(made)")
        // Killed once its temporary holds 400 kB, copied aside first (the next run would clear it away).
        let crashed = scratch.file("crashed.mp4")
        let out = scratch.file("out.mp4")
        let killed = try CLI.cropzoom(
            [source.path, "-o", out.path] + options, sending: SIGKILL,
            once: {
                guard let name = Files.names(in: scratch.url).first(where: { $0.hasPrefix(".out.mp4.cropzoom-tmp-") }),
                    let size = try? FileManager.default.attributesOfItem(
                        atPath: scratch.file(name).path)[.size] as? Int, size > 400_000
                else { return false }
                try? FileManager.default.removeItem(at: crashed)
                try? FileManager.default.copyItem(at: scratch.file(name), to: crashed)
                return true
            })
        #expect(killed.killedBySignal && killed.status == SIGKILL, "\(killed)")
        let boxes = try Contract.topLevelBoxes(crashed).map(\.type)
        #expect(!boxes.contains("moov"), "\(boxes)")
        // The same transcode to its end: the truth (x264 is deterministic for the same options and threads).
        let finished = try CLI.cropzoom([source.path, "-o", out.path, "-y"] + options)
        #expect(finished.status == 0, "\(finished)")
        let fixed = scratch.file("fixed.mp4")
        let run = try CLI.cropzoom([
            "repair", crashed.path, "--reference", reference.path, "-o", fixed.path, "--progress", "json",
        ])
        #expect(run.status == 0, "\(run)")
        // --progress json: progress events by the share of the media data walked, then done with the report.
        let events = run.stderr.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let progress = events.filter { $0["event"] as? String == "progress" }
        #expect(progress.last?["percent"] as? Double == 100, "\(run.stderr)")
        let done = events.last?["repair"] as? [String: Any]
        #expect(events.last?["event"] as? String == "done", "\(run.stderr)")
        #expect((done?["tracks"] as? [[String: Any]])?.count == 2, "\(run.stderr)")
        let (streams, decode) = try Self.score(original: out, broken: crashed, repaired: fixed)
        for s in streams {
            #expect(s["whole"] as? Int == s["recovered"] as? Int && (s["whole"] as? Int ?? 0) > 20, "\(s)")
            #expect(s["foreign"] as? Int == 0 && s["pts_error"] as? Double == 0, "\(s)")
        }
        #expect(decode.isEmpty, "\(decode)")
    }

    @Test(
        """
        a recording whose sound is of other settings than the reference's (mono AAC at 64 kb/s for a stereo \
        reference at 128 kb/s; ffmpeg puts a sound frame first without B-frames), or repaired from a reference with \
        no sound at all: every picture back with identical bytes at its time, decoding clean; the sound stepped over \
        between the pictures and said so, exit 0
        """, arguments: [["-bf", "0"], ["-bf", "3"]])
    func soundOfOtherSettings(_ video: [String]) throws {
        let scratch = try Scratch()
        let original = scratch.file("original.mp4")
        let reference = scratch.file("reference.mp4")
        let mono = video + ["-c:a", "aac", "-b:a", "64k"]
        try Self.recording(original, content: "testsrc2", tone: 440, seconds: 6, more: mono, channels: 1)
        try Self.recording(reference, content: "testsrc", tone: 880, seconds: 3, more: video, channels: 2)
        let (run, broken, fixed) = try Self.repairCut(original, reference: reference, in: scratch)
        #expect(run.status == 0, "\(run)")
        #expect(
            run.stderr.contains(
                "180 video frames (6.00 s), 0 audio frames (0.00 s), sound the reference's settings do "
                    + "not read stepped over ("), "\(run.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let gaps = try #require(report["gaps"] as? [[String: Any]])
        #expect(gaps.count == 1 && gaps[0]["reason"] as? String == "unmatched", "\(gaps)")
        #expect(gaps[0]["runs"] as? Int ?? 0 > 100, "one gap counting the runs: \(gaps)")
        let (streams, decode) = try Self.score(original: original, broken: broken, repaired: fixed)
        let pictures = try #require(streams.first)
        #expect(pictures["whole"] as? Int == 180 && pictures["recovered"] as? Int == 180, "\(pictures)")
        #expect(pictures["foreign"] as? Int == 0 && pictures["pts_error"] as? Double == 0, "\(pictures)")
        #expect(streams.dropFirst().allSatisfy { $0["recovered"] as? Int == 0 }, "\(streams)")
        #expect(decode.isEmpty, "\(decode)")
        // A reference without sound (before: exit 3, "no sample of the reference's tracks found").
        let silent = scratch.file("silent.mp4")
        try Self.recording(silent, content: "testsrc", tone: 880, seconds: 3, more: video, channels: 0)
        let other = try Scratch()
        let mute = try Self.repairCut(original, reference: silent, in: other)
        #expect(mute.run.status == 0, "\(mute.run)")
        #expect(
            mute.run.stderr.contains(
                "180 video frames (6.00 s), bytes between the pictures stepped over (")
                && mute.run.stderr.contains("the recording's sound? the reference has no sound track to read it with)"),
            "\(mute.run.stderr)")
        let (muted, clean) = try Self.score(original: original, broken: mute.broken, repaired: mute.fixed)
        #expect(muted.first?["recovered"] as? Int == 180 && muted.first?["pts_error"] as? Double == 0, "\(muted)")
        #expect(muted.allSatisfy { $0["foreign"] as? Int == 0 }, "\(muted)")
        #expect(clean.isEmpty, "\(clean)")
    }

    @Test(
        """
        bad input: not an MP4 (exit 3), a file with its index (exit 2, not broken), a reference that is itself cut \
        (exit 2), media data with nothing recognisable (exit 3; noise, zeros, HEVC for an H.264 reference: what it \
        holds named), a reference of another resolution or profile, or with video repair does not read (VP9) (exit \
        2, named): one line naming the file and \
        the reason, nothing left behind; the output is never the reference, nor an existing file without -y, nor a \
        container other than MP4/MOV/3GP (the transcode that writes it named)
        """)
    func badInput() throws {
        let scratch = try Scratch()
        let (original, reference, broken) = try Self.brokenRecording(in: scratch)
        let text = scratch.file("notes.txt")
        try Data("not a recording\n".utf8).write(to: text)
        // References from other settings: another resolution; 4:4:4 chroma (x264 then writes High 4:4:4).
        let wide = scratch.file("wide.mp4")
        try Self.recording(wide, content: "testsrc", tone: 880, seconds: 1, size: "1280x720")
        let rgb = scratch.file("rgb.mp4")
        try Self.recording(rgb, content: "testsrc", tone: 880, seconds: 1, pixelFormat: "yuv444p")
        let noise = scratch.file("noise.mp4")
        var bytes: [UInt8] = [0, 0, 0, 24] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isomiso2".utf8)
        var rng = SystemRandomNumberGenerator()
        bytes += [0, 0, 0, 0] + Array("mdat".utf8) + (0..<100_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        try Data(bytes).write(to: noise)
        // Media data of zeros (space a writer reserved), and an HEVC recording (its parameter sets in the stream) for
        // an H.264 reference: nothing matches, and the line says what the media data holds instead.
        let zeros = scratch.file("zeros.mp4")
        try Data(Array(bytes.prefix(32)) + [UInt8](repeating: 0, count: 100_000)).write(to: zeros)
        let hevc = scratch.file("hevc.mp4")
        let hevcSettings = ["-c:v", "libx265", "-tag:v", "hev1", "-x265-params", "log-level=error:repeat-headers=1"]
        try Self.recording(hevc, content: "testsrc2", tone: 440, seconds: 1, more: hevcSettings, channels: 0)
        let silent = scratch.file("silent.mp4")
        try Self.recording(silent, content: "testsrc", tone: 880, seconds: 1, channels: 0)
        let brokenHEVC = scratch.file("broken-hevc.mp4")
        try Self.cutBeforeIndex(hevc, to: brokenHEVC)
        // HEVC as phones store it (`hvc1`: the parameter sets in the sample entry only) with a 4:4:4 and a 10-bit
        // reference: FFmpeg's decoder gives garbage frames, unflagged, unless told to refuse what it decodes past.
        let phone = ["-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error"]
        let hvc1 = scratch.file("hvc1.mp4")
        try Self.recording(hvc1, content: "testsrc2", tone: 440, seconds: 1, more: phone, channels: 0)
        let brokenHVC1 = scratch.file("broken-hvc1.mp4")
        try Self.cutBeforeIndex(hvc1, to: brokenHVC1)
        let hvc1Wide = scratch.file("hvc1-444.mp4")
        try Self.recording(
            hvc1Wide, content: "testsrc", tone: 880, seconds: 1, more: phone, channels: 0, pixelFormat: "yuv444p")
        let hvc1Deep = scratch.file("hvc1-10bit.mp4")
        try Self.recording(
            hvc1Deep, content: "testsrc", tone: 880, seconds: 1, more: phone, channels: 0, pixelFormat: "yuv420p10le")
        let out = scratch.file("out.mp4")
        let cases: [(input: URL, reference: URL, status: Int32, says: String)] = [
            (text, reference, 3, "\(text.path): reading the recording to repair: not an MP4/MOV/3GP file"),
            (
                zeros, reference, 3,
                "\(zeros.path): repairing: no sample of the reference's tracks found in its 100.0 kB of media data; "
                    + "its media data starts with zeros (space the writer reserved and never filled), the reference's "
                    + "are 640x360 h264 High: is \(reference.path) from the same camera and settings?"
            ),
            (
                brokenHEVC, silent, 3,
                "\(brokenHEVC.path): repairing: no sample of the reference's tracks found in its ",
            ),
            (
                brokenHEVC, silent, 3,
                "of media data; its media data holds HEVC pictures (640x360), the reference's are 640x360 h264 "
                    + "High: is \(silent.path) from the same camera and settings?"
            ),
            (original, reference, 2, "\(original.path): reading the recording to repair: not broken: it has its index"),
            (broken, broken, 2, "\(broken.path): reading the reference: has no index (moov)"),
            (noise, reference, 3, "\(noise.path): repairing: no sample of the reference's tracks found"),
            (
                broken, wide, 2,
                "of its first 4 pictures do not decode with the reference's parameters (1280x720 h264 High); its "
                    + "media data holds H.264 pictures: is \(wide.path) from the same camera with the same settings?"
            ),
            (
                broken, rgb, 2,
                "of its first 4 pictures do not decode with the reference's parameters (640x360 h264 High 4:4:4 "
                    + "Predictive)"
            ),
            (
                brokenHVC1, hvc1Wide, 2,
                "of its first 4 pictures do not decode with the reference's parameters (640x360 hevc Rext)",
            ),
            (
                brokenHVC1, hvc1Deep, 2,
                "of its first 4 pictures do not decode with the reference's parameters (640x360 hevc Main 10)",
            ),
        ]
        for c in cases {
            let run = try CLI.cropzoom(["repair", c.input.path, "--reference", c.reference.path, "-o", out.path])
            #expect(run.status == c.status, "\(run)")
            let lines = run.stderr.split(separator: "\n")
            let says = c.says.hasPrefix("/") ? "cropzoom: error: \(c.says)" : c.says
            #expect(lines.count == 1 && lines[0].contains(says), "\(run.stderr)")
            #expect(lines.first?.hasPrefix("cropzoom: error: \(c.input.path): ") == true, "\(run.stderr)")
            #expect(!Files.exists(out) && Files.temporaryLeftovers(in: scratch.url).isEmpty, "\(run)")
        }
        // A reference whose video repair does not read (VP9): its pictures cannot be stepped over, so the sound
        // between them cannot be reached either — refused before the walk (it took the first sound frame and stopped).
        let vp9 = scratch.file("vp9.mp4")
        let vp9Settings = ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"]
        try Self.recording(vp9, content: "testsrc", tone: 880, seconds: 1, more: vp9Settings)
        let brokenVP9 = scratch.file("broken-vp9.mp4")
        try Self.cutBeforeIndex(vp9, to: brokenVP9)
        let unread = try CLI.cropzoom(["repair", brokenVP9.path, "--reference", vp9.path, "-o", out.path])
        #expect(
            unread.status == 2
                && unread.stderr == "cropzoom: error: \(vp9.path): reading the reference: its video (vp09) is not one "
                    + "repair recognises yet (H.264 or HEVC video): the sound between its pictures cannot be reached "
                    + "either\n",
            "\(unread)")
        #expect(!Files.exists(out) && Files.temporaryLeftovers(in: scratch.url).isEmpty, "\(unread)")
        // A reference whose own first picture the walk does not read (the sample made one NAL unit of type 14, an
        // SVC prefix, holding the rest, as a Samsung slow-motion clip's samples are): named before the walk, not
        // "no sample found" after it.
        let odd = scratch.file("odd.mp4")
        var oddBytes = [UInt8](try Data(contentsOf: reference))
        let packet = try #require(try Oracle.packets(reference.path, streamIndex: 0).first)
        let first = try #require(packet.pos)
        #expect(oddBytes[first + 4] == 0x06, "x264's first NAL unit is its SEI")
        let length = UInt32(packet.size - 4)
        oddBytes.replaceSubrange(
            first..<first + 4, with: (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) })
        oddBytes[first + 4] = 0x0E
        try Data(oddBytes).write(to: odd)
        let misread = try CLI.cropzoom(["repair", broken.path, "--reference", odd.path, "-o", out.path])
        #expect(
            misread.status == 2
                && misread.stderr.hasPrefix(
                    "cropzoom: error: \(odd.path): reading the reference: its own first picture (")
                && misread.stderr.contains(
                    "bytes at byte \(first), its first NAL unit of type 14) does not read as the H.264 sample repair "
                        + "looks for (NAL units with their lengths, a picture's slices): repair cannot find the pictures "
                        + "of its recordings\n"),
            "\(misread)")
        #expect(!Files.exists(out) && Files.temporaryLeftovers(in: scratch.url).isEmpty, "\(misread)")
        // The reference is never the output, even with -y.
        let over = try CLI.cropzoom(["repair", broken.path, "--reference", reference.path, "-o", reference.path, "-y"])
        #expect(over.status == 2 && over.stderr.contains("the output is the reference recording"), "\(over)")
        #expect(try Oracle.packets(reference.path, streamIndex: 0).count == 60, "the reference was replaced")
        // Without a reference: a usage error naming the option.
        let bare = try CLI.cropzoom(["repair", broken.path, "-o", out.path])
        #expect(bare.status == 2 && bare.stderr.contains("--reference"), "\(bare)")
        // An existing output stays unless -y.
        try Data("keep".utf8).write(to: out)
        let kept = try CLI.cropzoom(["repair", broken.path, "--reference", reference.path, "-o", out.path])
        #expect(kept.status == 2 && (try? String(contentsOf: out, encoding: .utf8)) == "keep", "\(kept)")
        // Another container than the MP4 family: refused with the transcode that writes it (a remux into Matroska,
        // TS or FLV would move every time by the AAC priming, or rewrite the bytes), nothing written.
        for name in ["fixed.mkv", "fixed.ts", "fixed"] {
            let other = scratch.file(name)
            let run = try CLI.cropzoom(["repair", broken.path, "--reference", reference.path, "-o", other.path])
            #expect(run.status == 2 && run.errorLines.count == 1, "\(run)")
            let says = "\(other.path): a repair copies the samples into an MP4, MOV or 3GP file"
            #expect(
                run.errorLines.first?.contains(says) == true
                    && run.stderr.contains("--reference \(reference.path) -o \(other.path)"), "\(run)")
            #expect(!Files.exists(other) && Files.temporaryLeftovers(in: scratch.url).isEmpty, "\(run)")
        }
        let mov = scratch.file("fixed.MOV")
        let upper = try CLI.cropzoom(["repair", broken.path, "--reference", reference.path, "-o", mov.path])
        #expect(upper.status == 0, "\(upper)")
        #expect(try Oracle.packets(mov.path, streamIndex: 0).count == 60)
    }

    @Test(
        """
        the AAC frame probe finds each frame's length by decoding — several frames in one decode (each frame's \
        pkt_size), and the shortest packet that decodes — on the FFmpeg in use: every packet of a recording, from its \
        place in the file, at its own size
        """)
    func aacProbe() throws {
        let scratch = try Scratch()
        let original = scratch.file("original.mp4")
        try Self.recording(original, content: "testsrc2", tone: 440, seconds: 2)
        let input = try InputFormat(path: original.path)
        let probe = try AACFrameProbe(reference: input, stream: 1, frameSamples: 1024)
        let file = try Data(contentsOf: original)
        let packets = try Oracle.packets(original.path, streamIndex: 1)
        #expect(packets.count > 90)
        for p in packets {
            let pos = try #require(p.pos)
            let window = [UInt8](file[pos..<min(file.count, pos + probe.longestFrame)])
            #expect(probe.frameLength(window) == p.size, "packet at \(pos)")
        }
        // Several frames in one decode: each frame's length from what was left of the packet when it started — known
        // for every frame the file holds another frame right after (the last one of a run needs bisection).
        var known = 0
        for (n, p) in packets.enumerated() {
            let pos = try #require(p.pos)
            let window = [UInt8](file[pos..<min(file.count, pos + 16 * probe.longestFrame)])
            let lengths = probe.frameLengths(window)
            let followed = n + 1 < packets.count && packets[n + 1].pos == pos + p.size
            if followed { #expect(lengths.first == p.size, "packet at \(pos): \(lengths)") }
            if let first = lengths.first { #expect(first == p.size, "packet at \(pos): \(lengths)") }
            known += lengths.isEmpty ? 0 : 1
        }
        #expect(known > 10, "\(known) frames' lengths known from one decode")
        // Video bytes are not taken for sound.
        let video = try #require(try Oracle.packets(original.path, streamIndex: 0).first?.pos)
        #expect(probe.frameLength([UInt8](file[video..<video + probe.longestFrame])) == nil)
    }

    @Test("the library: RepairJob returns the report (tracks, samples, the sound's start against the picture's)")
    func library() async throws {
        let scratch = try Scratch()
        let (original, reference, broken) = try Self.brokenRecording(in: scratch)
        let job = RepairJob(
            configuration: RepairConfiguration(
                input: broken.path, reference: reference.path, output: scratch.file("fixed.mp4").path))
        let report = try await job.run()
        let counts = [
            try Oracle.packets(original.path, streamIndex: 0).count,
            try Oracle.packets(original.path, streamIndex: 1).count,
        ]
        #expect(report.tracks.map(\.samples) == counts, "\(report)")
        #expect(report.tracks.map(\.keyframes).first == 1, "\(report)")
        // ffmpeg's AAC priming (1024 samples at 48 kHz) puts the first audio frame 21.3 ms before the picture.
        #expect(abs((report.audioStartOffset ?? 0) + 1024.0 / 48000) < 1e-9, "\(report)")
        #expect(report.gaps.isEmpty && report.recoveredBytes == report.mediaBytes, "\(report)")
    }

    @Test(
        """
        the library: a RepairJob cancelled (by cancel(), or by cancelling the task awaiting it) throws `.cancelled` \
        naming the output, ends its events with that failure, and leaves nothing: no output, no temporary, the broken \
        file and the reference as they were
        """, arguments: ["cancel()", "task"])
    func libraryCancelled(_ how: String) async throws {
        let scratch = try Scratch()
        let (_, reference, broken) = try Self.brokenRecording(in: scratch)
        let before = try [broken, reference].map { try Data(contentsOf: $0) }
        let listing = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted()
        let output = scratch.file("fixed.mp4").path
        let job = RepairJob(
            configuration: RepairConfiguration(input: broken.path, reference: reference.path, output: output))
        let events = Task { () -> [RepairEvent] in
            var all: [RepairEvent] = []
            for await event in job.events { all.append(event) }
            return all
        }
        let run = Task { () async throws -> RepairReport in
            // Cancelled before it starts, so that the repair of a small file cannot end first.
            if how == "task" { withUnsafeCurrentTask { $0?.cancel() } }
            return try await job.run()
        }
        if how == "cancel()" { job.cancel() }
        do {
            let report = try await run.value
            Issue.record("not cancelled: \(report.line)")
        } catch let error as CropZoomError {
            #expect(error.kind == .cancelled && error.path == output, "\(error)")
        }
        let last = await events.value.last
        if case .failed(let error) = last {
            #expect(error.kind == .cancelled, "\(error)")
        } else {
            Issue.record("the events did not end with the failure: \(String(describing: last))")
        }
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted() == listing)
        #expect(try [broken, reference].map { try Data(contentsOf: $0) } == before)
    }
}

/// Damaged media data (issue 31 item 2): the walk steps over bytes it cannot read to the next keyframe.
@Suite("Repair: damage")
struct RepairDamageTests {
    /// A recording, its video encoder's options (the keyframes), its sound, its container; and how its damage is made.
    struct Case: Sendable, CustomTestStringConvertible {
        var video: [String]
        var reference: [String]? = nil
        var ext = "mp4"
        var zeros = false
        /// The reference's keyframes are not evenly spaced: the time lost is estimated from the bytes.
        var exact = true
        var testDescription: String {
            "\(video.joined(separator: " ")), \(ext), \(zeros ? "zeros" : "noise")" + (exact ? "" : ", no fixed GOP")
        }
        static let fixedGOP = ["-x264-params", "keyint=30:min-keyint=30:scenecut=0"]
        static let all = [
            Case(video: ["-bf", "3"] + fixedGOP),
            Case(video: ["-bf", "3"] + fixedGOP, zeros: true),
            // HEVC with an open GOP: the walk resumes at a CRA and leaves out its RASL pictures.
            Case(
                video: [
                    "-c:v", "libx265", "-tag:v", "hvc1", "-x265-params",
                    "log-level=error:bframes=4:keyint=30:min-keyint=30:scenecut=0:open-gop=1",
                ]),
            Case(video: ["-bf", "3", "-c:a", "pcm_s16le"] + fixedGOP, ext: "mov"),
            Case(
                video: ["-bf", "3", "-force_key_frames", "0,2.1,3.3,5.9,7.2,9.8"],
                reference: ["-bf", "3", "-force_key_frames", "0,0.7,2.2"], exact: false),
        ]
    }

    @Test(
        """
        damaged bytes in the middle of the media data (noise, or zeros; 1.2 s of it, from the start of a picture): the \
        walk resumes at the next keyframe (an HEVC CRA without its RASL pictures), every packet before the damage and \
        from that keyframe on comes back with identical bytes, the damage is reported with its bytes, the file decodes \
        clean; the time lost is found on the reference's keyframe grid (exact) or from the bytes (picture and sound \
        still together)
        """, arguments: Case.all)
    func damagedRegion(_ c: Case) throws {
        let scratch = try Scratch()
        let original = scratch.file("original.\(c.ext)")
        let reference = scratch.file("reference.\(c.ext)")
        try RepairTests.recording(original, content: "testsrc2", tone: 440, seconds: 12, more: c.video)
        try RepairTests.recording(reference, content: "testsrc", tone: 880, seconds: 3, more: c.reference ?? c.video)
        let broken = scratch.file("broken.\(c.ext)")
        try RepairTests.cutBeforeIndex(original, to: broken)
        var bytes = [UInt8](try Data(contentsOf: broken))
        let videoPackets = try Oracle.packets(original.path, streamIndex: 0)
        let audioPackets = try Oracle.packets(original.path, streamIndex: 1)
        let start = try #require(videoPackets[videoPackets.count * 2 / 5].pos)
        let length = bytes.count / 10
        var rng = SystemRandomNumberGenerator()
        for i in start..<start + length { bytes[i] = c.zeros ? 0 : UInt8.random(in: 0...255, using: &rng) }
        try Data(bytes).write(to: broken)
        // What can come back: the packets before the damage, and from the first keyframe after it on (a picture
        // shown before that keyframe leans on pictures lost).
        let keyframe = try #require(videoPackets.first { $0.isKeyframe && ($0.pos ?? 0) >= start + length })
        let resume = try #require(keyframe.pos)
        let keyTime = try #require(keyframe.ptsTime)
        // Uncompressed sound has no syntax: its run just before the damage ends at no picture and is lost with it.
        let pcm = c.video.contains("-c:a")
        let ends = videoPackets.compactMap { packet in packet.pos.map { $0 + packet.size } }
        let lastPicture = ends.filter { $0 <= start }.max() ?? 0
        func expected(_ packets: [Oracle.PacketInfo], video: Bool) -> Int {
            packets.filter {
                guard let pos = $0.pos else { return false }
                let before = pos + $0.size <= start && (video || !pcm || pos < lastPicture)
                return before || (pos >= resume && (!video || ($0.ptsTime ?? 0) >= keyTime))
            }
            .count
        }
        let fixed = scratch.file("fixed.\(c.ext)")
        let run = try CLI.cropzoom(["repair", broken.path, "--reference", reference.path, "-o", fixed.path, "--json"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("damaged bytes skipped ("), "\(run.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        let gaps = report?["gaps"] as? [[String: Any]]
        #expect(gaps?.count == 1 && gaps?.first?["reason"] as? String == "damaged", "\(run.stdout)")
        let gapStart = pcm ? lastPicture : start
        #expect(gaps?.first?["offset"] as? Int == gapStart && gaps?.first?["bytes"] as? Int == resume - gapStart)
        let (streams, decode) = try RepairTests.score(original: original, broken: broken, repaired: fixed)
        #expect(
            streams.map { $0["recovered"] as? Int } == [
                expected(videoPackets, video: true), expected(audioPackets, video: false),
            ], "\(streams)")
        for s in streams { #expect(s["foreign"] as? Int == 0, "\(s)") }
        // Uncompressed sound resumes with the picture: the time the damage stood for is silence (a MOV times such
        // sound by its count); compressed sound simply resumes later.
        #expect((streams[1]["silent"] as? Int ?? 0 > 0) == pcm, "\(streams)")
        #expect(decode.isEmpty, "\(decode)")
        let errors = streams.map { $0["pts_error"] as? Double ?? 99 }
        if c.exact {
            #expect(errors == [0, 0], "\(streams)")
        } else {
            // Off by what the bytes mis-estimate, but picture and sound together: within a frame of each.
            #expect(
                errors.allSatisfy { $0 < 1 } && abs(errors[0] - errors[1]) <= 1.0 / 30 + 1024.0 / 48000, "\(errors)")
        }
    }
}

/// Several sound tracks (issue 31 item 2: OBS writes up to six): each frame back in its own track.
@Suite("Repair: several sound tracks")
struct RepairSoundTracksTests {
    struct Case: Sendable, CustomTestStringConvertible {
        /// Each sound track's channels.
        var channels: [Int]
        var more: [String] = []
        var ext = "mp4"
        var referenceSeconds = 3
        var testDescription: String {
            channels.map(String.init).joined(separator: " + ") + " channels, \(ext)"
                + (more.isEmpty ? "" : " " + more.joined(separator: " ")) + ", a \(referenceSeconds) s reference"
        }
        static let all = [
            // Packet by packet (ffmpeg's interleave, OBS): the track furthest behind in time comes next.
            Case(channels: [2, 2]), Case(channels: [1, 2]),
            // OBS records up to six tracks of one configuration.
            Case(channels: [2, 2, 2, 2, 2, 2]),
            // One-second chunks: the reference's layout of its sound chunks, as long as it lasts; past a shorter
            // reference, each run of sound between two chunks of pictures shared out by time.
            Case(channels: [2, 2], more: ["-chunk_duration", "1000000"], ext: "mov", referenceSeconds: 8),
            Case(channels: [2, 2], more: ["-chunk_duration", "1000000"], ext: "mov"),
            Case(channels: [2, 2, 2], more: ["-chunk_duration", "1000000"]),
            // Uncompressed sound in several tracks (a camera's MOV): the runs between pictures shared out in the
            // reference's chunks, then by time; the last run so that the tracks end together.
            Case(channels: [2, 2], more: ["-c:a", "pcm_s16le"], ext: "mov"),
            Case(channels: [1, 2, 1], more: ["-c:a", "pcm_s16be"], ext: "mov"),
        ]
    }

    static func recording(_ path: URL, content: String, tone: Int, seconds: Int, _ c: Case) throws {
        let inputs = c.channels.indices.flatMap { i in
            ["-f", "lavfi", "-i", "sine=frequency=\(tone + 110 * i):sample_rate=48000"]
        }
        let maps = c.channels.indices.flatMap { ["-map", "\($0 + 1):a"] }
        let layouts = c.channels.enumerated().flatMap { ["-ac:a:\($0)", "\($1)"] }
        _ = try Oracle.runChecked(
            "ffmpeg",
            ["-v", "error", "-y", "-f", "lavfi", "-i", "\(content)=size=640x360:rate=30"] + inputs
                + ["-t", "\(seconds)", "-map", "0:v"] + maps
                + ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-bf", "3", "-c:a", "aac"]
                + layouts + c.more + [path.path])
    }

    @Test(
        """
        several sound tracks — two AAC of the same configuration, mono beside stereo, six as OBS records, in \
        one-second chunks; two and three PCM tracks — are recovered as as many tracks, every frame in its own track \
        with identical bytes at its time, decoding clean
        """, arguments: Case.all)
    func severalSoundTracks(_ c: Case) throws {
        let scratch = try Scratch()
        let original = scratch.file("original.\(c.ext)")
        let reference = scratch.file("reference.\(c.ext)")
        try Self.recording(original, content: "testsrc2", tone: 440, seconds: 8, c)
        try Self.recording(reference, content: "testsrc", tone: 880, seconds: c.referenceSeconds, c)
        let (run, broken, fixed) = try RepairTests.repairCut(original, reference: reference, in: scratch)
        #expect(run.status == 0, "\(run)")
        let (streams, decode) = try RepairTests.score(original: original, broken: broken, repaired: fixed)
        #expect(streams.count == 1 + c.channels.count, "\(streams)")
        for s in streams {
            #expect(s["whole"] as? Int == s["recovered"] as? Int && s["foreign"] as? Int == 0, "\(s)")
            #expect(s["pts_error"] as? Double == 0, "\(s)")
        }
        #expect(decode.isEmpty, "\(decode)")
    }

    @Test(
        """
        a long-chunk writer's two sound tracks of one configuration past a 3 s reference, the file cut inside the \
        second track's last chunk: the first track's chunk goes to it whole (its length as in the last whole run, \
        within a frame), the rest to the second
        """)
    func cutInsideTheLastRun() throws {
        let scratch = try Scratch()
        let c = Case(channels: [2, 2], more: ["-chunk_duration", "1000000"], ext: "mov")
        let (original, reference) = (scratch.file("original.mov"), scratch.file("reference.mov"))
        try Self.recording(original, content: "testsrc2", tone: 440, seconds: 8, c)
        try Self.recording(reference, content: "testsrc", tone: 880, seconds: 3, c)
        // Cut 100 bytes into the 20th frame from the end of the second track's last whole chunk (stream 2), itself
        // after the first track's (stream 1) chunk of the same second.
        let second = try Oracle.packets(original.path, streamIndex: 2).compactMap(\.pos).sorted()
        let cutAt = try #require(second.dropLast(2).suffix(20).first) + 100
        let broken = scratch.file("broken.mov")
        let bytes = try Data(contentsOf: original)
        try bytes.prefix(cutAt).write(to: broken)
        let fixed = scratch.file("fixed.mov")
        let run = try CLI.cropzoom(["repair", broken.path, "--reference", reference.path, "-o", fixed.path, "--json"])
        #expect(run.status == 0, "\(run)")
        let (streams, decode) = try RepairTests.score(original: original, broken: broken, repaired: fixed)
        #expect(streams.count == 3, "\(streams)")
        for s in streams {
            let (whole, recovered, foreign) = (
                s["whole"] as? Int ?? 0, s["recovered"] as? Int ?? 0, s["foreign"] as? Int ?? 9
            )
            #expect(whole - recovered <= 1 && foreign <= 1, "\(s)")
        }
        #expect(streams.map { $0["recovered"] as? Int ?? 0 }.reduce(0, +) > 800, "\(streams)")
        #expect(decode.isEmpty, "\(decode)")
    }
}

/// A timecode track (issue 31 item 2: camera tracks recognised from the reference, never mistaken for media).
/// Two video tracks of one codec whose pictures read alike (the same parameter set ids): a dash camera's front and
/// rear, a motion photo's stills.
@Suite("Repair: several video tracks")
struct RepairVideoTracksTests {
    /// Two H.264 tracks (640x360 and 320x240) and a sound track from ffmpeg, `more` its options; cut before the index.
    static func twoTracks(_ scratch: Scratch, _ more: [String], rates: (Int, Int) = (30, 30)) throws -> (
        original: URL, broken: URL
    ) {
        let original = scratch.file("two.mp4")
        _ = try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=640x360:rate=\(rates.0)", "-f", "lavfi", "-i",
                "testsrc2=size=320x240:rate=\(rates.1)", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                "-t", "4", "-map", "0:v", "-map", "1:v", "-map", "2:a", "-c:v", "libx264", "-preset", "veryfast",
                "-pix_fmt", "yuv420p", "-c:a", "aac",
            ] + more + [original.path])
        let broken = scratch.file("broken.mp4")
        try RepairTests.cutBeforeIndex(original, to: broken)
        return (original, broken)
    }

    @Test(
        """
        two H.264 tracks a packet interleave writes in turns (and with B-frames): every picture back in its own \
        track at its time, the sound too, decoding clean
        """, arguments: [["-bf", "0"], ["-bf", "3"]])
    func takingTurns(_ more: [String]) throws {
        let scratch = try Scratch()
        let (original, broken) = try Self.twoTracks(scratch, more)
        let fixed = scratch.file("fixed.mp4")
        let run = try CLI.cropzoom(["repair", broken.path, "--reference", original.path, "-o", fixed.path])
        #expect(run.status == 0, "\(run)")
        let (streams, decode) = try RepairTests.score(original: original, broken: broken, repaired: fixed)
        #expect(streams.count == 3)
        for s in streams {
            #expect(s["whole"] as? Int == s["recovered"] as? Int && (s["whole"] as? Int ?? 0) > 0, "\(s)")
            #expect(s["foreign"] as? Int == 0 && s["pts_error"] as? Double == 0, "\(s)")
        }
        #expect(decode.isEmpty, "\(decode)")
    }

    @Test(
        """
        two H.264 tracks at other rates (30 and 25 fps: turns that vary), nothing in their pictures to tell them \
        apart: the picture check refuses the mix (exit 2), nothing written — never a muxer failure
        """)
    func turnsThatVary() throws {
        let scratch = try Scratch()
        let (original, broken) = try Self.twoTracks(scratch, ["-bf", "2"], rates: (30, 25))
        let fixed = scratch.file("fixed.mp4")
        let run = try CLI.cropzoom(["repair", broken.path, "--reference", original.path, "-o", fixed.path])
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains("of its first 4 pictures do not decode with the reference's parameters"), "\(run)")
        #expect(!Files.exists(fixed) && Files.temporaryLeftovers(in: scratch.url).isEmpty, "\(run)")
    }

    @Test(
        """
        a Pixel motion photo (the corpus's: 53 pictures of 1440x1080, then two 2048x1536 stills, both HEVC with the \
        same parameter set ids, the first still carrying its own): each still in its track at its time (the stills' \
        track's durations are 1.77 s and 0, the writer's "not known"), none among the pictures
        """)
    func motionPhoto() throws {
        guard let (streams, decode) = try RepairTests.repairWithoutIndex(corpus: "axm-mv_with_2_top_shots.mp4") else {
            return
        }
        // Both stills at 0 before: the 0 taken for the track's duration.
        #expect(streams.dropFirst().first?["pts_error"] as? Double == 0, "\(streams)")
        #expect(decode.isEmpty, "\(decode)")
    }
}

@Suite("Repair: timecode and camera metadata tracks")
struct RepairTimecodeTests {
    @Test(
        """
        a MOV with a timecode track (its 4-byte sample first in the media data) keeps its own timecode, not the \
        reference's — 30 fps, and 29.97 with drop-frame counting — and every picture and sound frame
        """, arguments: [("30", "01:02:03:04", "10:00:00:00"), ("30000/1001", "00:59:59;28", "10:00:00;00")])
    func ownTimecode(_ rate: String, _ own: String, _ other: String) throws {
        let scratch = try Scratch()
        let original = scratch.file("original.mov")
        let reference = scratch.file("reference.mov")
        for (path, content, timecode, seconds) in [(original, "testsrc2", own, 6), (reference, "testsrc", other, 3)] {
            _ = try Oracle.runChecked(
                "ffmpeg",
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "\(content)=size=640x360:rate=\(rate)", "-f", "lavfi",
                    "-i", "sine=frequency=440:sample_rate=48000", "-t", "\(seconds)", "-c:v", "libx264", "-preset",
                    "veryfast", "-pix_fmt", "yuv420p", "-bf", "3", "-c:a", "aac", "-timecode", timecode, path.path,
                ])
        }
        let (run, broken, fixed) = try RepairTests.repairCut(original, reference: reference, in: scratch)
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("timecode \(own)"), "\(run.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(report?["timecode"] as? String == own, "\(run.stdout)")
        let tags = try Oracle.runChecked(
            "ffprobe",
            [
                "-v", "error", "-show_entries", "stream=codec_tag_string:stream_tags=timecode", "-of", "csv=p=0",
                fixed.path,
            ]
        ).stdout
        #expect(tags.split(separator: "\n").map(String.init) == ["avc1,\(own)", "mp4a", "tmcd,\(own)"], "\(tags)")
        let (streams, decode) = try RepairTests.score(original: original, broken: broken, repaired: fixed)
        for s in streams.prefix(2) {
            #expect(s["whole"] as? Int == s["recovered"] as? Int && s["foreign"] as? Int == 0, "\(s)")
            #expect(s["pts_error"] as? Double == 0, "\(s)")
        }
        #expect(decode.isEmpty, "\(decode)")
    }

    @Test(
        """
        a MOV with a GoPro-style metadata track (`gpmd`, a 1 kB sample every 0.15 s between the pictures and the \
        sound): its samples stepped over, never taken for media — every picture and sound frame back at its time, \
        nothing foreign, a clean decode — and the line names the track by its sample entry
        """)
    func cameraMetadataSteppedOver() throws {
        let scratch = try Scratch()
        let original = scratch.file("original.mov")
        let reference = scratch.file("reference.mov")
        for (path, content, seconds) in [(original, "testsrc2", 4), (reference, "testsrc", 2)] {
            let metadata = scratch.file("\(content).bin")
            try Data((0..<24_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ seconds) }).write(to: metadata)
            _ = try Oracle.runChecked(
                "ffmpeg",
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "\(content)=size=320x240:rate=30", "-f", "lavfi",
                    "-i", "sine=frequency=440:sample_rate=48000", "-f", "data", "-i", metadata.path, "-map", "0:v",
                    "-map", "1:a", "-map", "2", "-t", "\(seconds)", "-c:v", "libx264", "-preset", "veryfast",
                    "-pix_fmt", "yuv420p", "-c:a", "aac", "-c:d", "copy", "-tag:d", "gpmd", "-bsf:d",
                    "setts=ts=N*0.15/TB", path.path,
                ])
        }
        let (run, broken, fixed) = try RepairTests.repairCut(original, reference: reference, in: scratch)
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("not recovered: data (gpmd, stepped over)"), "\(run.stderr)")
        let (streams, decode) = try RepairTests.score(original: original, broken: broken, repaired: fixed)
        #expect(streams.count == 3, "\(streams)")
        for s in streams.prefix(2) {
            #expect(s["whole"] as? Int == s["recovered"] as? Int && s["foreign"] as? Int == 0, "\(s)")
            #expect(s["pts_error"] as? Double == 0, "\(s)")
        }
        #expect((streams.first?["whole"] as? Int ?? 0) >= 119, "\(streams)")
        #expect(decode.isEmpty, "\(decode)")
    }

    @Test(
        """
        a reference whose timecode track's index claims 4,294,967,280 samples of one size (its stsz and stts counts \
        patched, as a damaged or hostile index may say): read without listing them — the same repaired file, with \
        the recording's own timecode, as with the index as written (a walk through the count would not end: the run is
        killed after a minute)
        """)
    func billionsOfOneSize() throws {
        let scratch = try Scratch()
        let original = scratch.file("original.mov")
        let reference = scratch.file("reference.mov")
        for (path, content, timecode, seconds) in [
            (original, "testsrc2", "01:02:03:04", 6), (reference, "testsrc", "10:00:00:00", 3),
        ] {
            _ = try Oracle.runChecked(
                "ffmpeg",
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "\(content)=size=320x240:rate=30", "-f", "lavfi", "-i",
                    "sine=frequency=440:sample_rate=48000", "-t", "\(seconds)", "-c:v", "libx264", "-preset",
                    "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-timecode", timecode, path.path,
                ])
        }
        var bytes = [UInt8](try Data(contentsOf: reference))
        let huge = scratch.file("huge.mov")
        #expect(Self.claimTimecodeSamples(0xFFFF_FFF0, in: &bytes))
        try Data(bytes).write(to: huge)
        let probed = try Oracle.runChecked(
            "ffprobe", ["-v", "error", "-show_entries", "stream=nb_frames", "-of", "csv=p=0", huge.path]
        ).stdout
        #expect(probed.split(separator: "\n").last == "4294967280", "\(probed)")
        let (run, broken, fixed) = try RepairTests.repairCut(original, reference: reference, in: scratch)
        #expect(run.status == 0, "\(run)")
        let again = scratch.file("again.mov")
        let hugeRun = try CLI.run(
            try CLI.binary(), ["repair", broken.path, "--reference", huge.path, "-o", again.path], timeout: 60)
        #expect(hugeRun.status == 0 && hugeRun.stderr.contains("timecode 01:02:03:04"), "\(hugeRun)")
        #expect(try Data(contentsOf: again) == Data(contentsOf: fixed))
    }

    /// Sets the sample count of the timecode track's `stsz` (one size) and of its `stts`'s one run to `count`: the
    /// track found by its media handler (`tmcd`). False when there is no such track.
    static func claimTimecodeSamples(_ count: UInt32, in bytes: inout [UInt8]) -> Bool {
        func u32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        func type(_ at: Int) -> String { String(decoding: bytes[at + 4..<at + 8], as: UTF8.self) }
        // The boxes of a trak, depth first (moov, trak, mdia, minf, stbl hold others).
        func boxes(_ from: Int, _ end: Int) -> [(offset: Int, type: String)] {
            var out: [(Int, String)] = []
            var at = from
            while at + 8 <= end, u32(at) >= 8 {
                out.append((at, type(at)))
                if ["moov", "trak", "mdia", "minf", "stbl"].contains(type(at)) { out += boxes(at + 8, at + u32(at)) }
                at += u32(at)
            }
            return out
        }
        let all = boxes(0, bytes.count)
        for trak in all where trak.type == "trak" {
            let inside = boxes(trak.offset + 8, trak.offset + u32(trak.offset))
            guard let handler = inside.first(where: { $0.type == "hdlr" }),
                type(handler.offset + 12) == "tmcd",
                let stsz = inside.first(where: { $0.type == "stsz" }),
                let stts = inside.first(where: { $0.type == "stts" }), u32(stsz.offset + 12) == 4
            else { continue }
            for at in [stsz.offset + 16, stts.offset + 16] {
                bytes.replaceSubrange(at..<at + 4, with: (0..<4).reversed().map { UInt8(count >> (8 * $0) & 0xFF) })
            }
            return true
        }
        return false
    }
}

/// Real phone footage (the corpus's iPhone MOVs: HEVC Main 10 with Dolby Vision, negative composition offsets, AAC
/// with 2112 samples of priming, Apple `mebx` metadata tracks), cut before its index and repaired with the complete
/// recording as its reference.
@Suite("Repair: phone footage from the corpus")
struct RepairCorpusTests {
    @Test(
        """
        an iPhone MOV cut before its index: every picture (Dolby Vision RPUs inside) and sound frame back with \
        identical bytes at its time, decoding clean; its mebx metadata stepped over, never taken for media
        """, arguments: ["axm-dolbyVision-hdr.MOV", "mbn-no-correct-videoframe-format.mov"])
    func iPhoneRecording(_ name: String) throws {
        guard let folder = Oracle.corpusDirectory else {
            print("corpus absent: ../shared/corpus not found — \(name) not repaired")
            return
        }
        let original = folder.appendingPathComponent(name)
        let scratch = try Scratch()
        // The copy keeps the file's extension (MOV), as the repair's output does.
        let (run, broken, fixed) = try RepairTests.repairCut(original, reference: original, in: scratch)
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("data (mebx, stepped over)"), "\(run.stderr)")
        let (streams, decode) = try RepairTests.score(original: original, broken: broken, repaired: fixed)
        for s in streams.prefix(2) {
            #expect(s["whole"] as? Int == s["recovered"] as? Int && (s["whole"] as? Int ?? 0) > 0, "\(s)")
            #expect(s["foreign"] as? Int == 0 && s["pts_error"] as? Double == 0, "\(s)")
        }
        #expect(decode.isEmpty, "\(decode)")
    }

    @Test(
        """
        an iPhone clip an editor rewrote (androidx's sample_edit_list.mp4: two seconds of sound stored before pictures \
        from before it; order counts in 30 fps ticks, 2 a picture where the rate fell to 15 fps) with its index gone: \
        the sound no clock for its pictures, every picture within its frame-rate drops (0.2 s) of its time, decoding \
        clean
        """)
    func editorRewrittenClip() throws {
        // Its index comes first (ftyp, moov, mdat): the crash is its removal.
        guard let (streams, decode) = try RepairTests.repairWithoutIndex(corpus: "axm-sample_edit_list.mp4") else {
            return
        }
        // The pictures at the reference's 30 fps: off by the seven 15 fps pictures' extra time at most; the sound
        // exact. Timed by the sound they were 2.16 s off, and the last pictures' order broke the decode.
        #expect((streams.first?["pts_error"] as? Double ?? 9) <= 0.21, "\(streams.first ?? [:])")
        #expect(streams.dropFirst().first?["pts_error"] as? Double == 0, "\(streams)")
        #expect(decode.isEmpty, "\(decode)")
    }

    @Test(
        """
        a phone file with an empty second video track between its pictures and its sound (androidx's \
        sample_empty_track.mp4, its sound stored first) with its index gone: every picture and sound frame back — \
        the empty track not written, the sound scored as the repaired file's sound track —, the pictures at their \
        times, decoding clean
        """)
    func emptyTrack() throws {
        guard let (streams, decode) = try RepairTests.repairWithoutIndex(corpus: "axm-sample_empty_track.mp4") else {
            return
        }
        // The empty track has no packets: the original's picture and sound streams (0 and 2) are scored.
        #expect(streams.map { $0["index"] as? Int } == [0, 2], "\(streams)")
        #expect((streams.first?["pts_error"] as? Double ?? 9) < 0.001, "\(streams)")
        // The writer gave its first sound frame (23 bytes) 67 ms where the frames after it last 23.2: the repair
        // times each frame by its 1024 samples, so the sound after it is 44 ms early (its length is not in the data).
        #expect((streams.last?["pts_error"] as? Double ?? 9) < 0.045, "\(streams)")
        #expect(decode.isEmpty, "\(decode)")
    }

    @Test(
        """
        an iPhone's HDR recording (Dolby Vision, 10-bit) with an SDR reference, and pictures without Dolby Vision with \
        an HDR reference: exit 2 naming it, nothing written — the slices of either decode with the other's bit depth
        """)
    func dolbyVisionAgainstReference() throws {
        let name = "axm-dolbyVision-hdr.MOV"
        guard let folder = Oracle.corpusDirectory else {
            print("corpus absent: ../shared/corpus not found — \(name) not repaired against other settings")
            return
        }
        let original = folder.appendingPathComponent(name)
        let bytes = [UInt8](try Data(contentsOf: original))
        // The SDR reference: the sample entry's Dolby Vision box (`dvvC`) renamed `free`.
        var sdr = bytes
        for i in 0..<(sdr.count - 4) where sdr[i..<i + 4].elementsEqual("dvvC".utf8) {
            sdr.replaceSubrange(i..<i + 4, with: "free".utf8)
        }
        #expect(sdr != bytes)
        // SDR pictures: every RPU (NAL type 62) made type 63, which the walk steps over as it did the RPU.
        var plain = bytes
        var renamed = 0
        for packet in try Oracle.packets(original.path, streamIndex: 0) {
            var at = try #require(packet.pos)
            let end = at + packet.size
            while at + 4 < end {
                let length = plain[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
                if plain[at + 4] >> 1 & 0x3F == 62 {
                    plain[at + 4] = 63 << 1 | plain[at + 4] & 0x81
                    renamed += 1
                }
                at += 4 + length
            }
        }
        #expect(renamed == 5)
        for (recording, reference, says) in [
            (bytes, sdr, "its first 4 pictures carry Dolby Vision metadata and the reference's do not"),
            (plain, bytes, "its first 4 pictures carry no Dolby Vision metadata and the reference's do"),
        ] {
            let scratch = try Scratch()
            let (source, good) = (scratch.file("recording.MOV"), scratch.file("reference.MOV"))
            try Data(recording).write(to: source)
            try Data(reference).write(to: good)
            let (run, broken, fixed) = try RepairTests.repairCut(source, reference: good, in: scratch)
            #expect(run.status == 2, "\(run)")
            #expect(
                run.stderr.contains("\(broken.path): repairing: \(says) (1280x720 hevc Main 10)")
                    && run.stderr.contains("(HDR video on or off)?"), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: fixed.path))
        }
    }
}
