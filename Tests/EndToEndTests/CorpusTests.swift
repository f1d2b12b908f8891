// The real-world corpus in ../shared/corpus (see its INDEX.md): every readable video clip
// transcodes with `--zoom 1.25 --preset ultrafast --crf 18` to MP4 and meets contract points
// 1-3; the unreadable ones are refused with exit 3 and one error line.  One line per file is
// printed: `corpus PASS <name> (…)` or `corpus FAIL <name>: <reasons>`.
//
// When the corpus folder is absent, `corpusPresence` says so in the test output and the
// parameterized test has no cases.

import Foundation
import Testing

struct CorpusFile: Sendable, CustomTestStringConvertible {
    var name: String
    var testDescription: String { name }

    /// The media files of the corpus (everything but its notes), sorted; empty when absent.
    static var all: [CorpusFile] {
        guard let folder = Oracle.corpusDirectory else { return [] }
        return Files.names(in: folder)
            .filter { !$0.hasPrefix(".") && !["INDEX.md", "SHA256SUMS", "SOURCES.tsv"].contains($0) }
            .map(CorpusFile.init)
    }

    /// Files cropzoom must refuse with exit 3: unreadable, truncated, or without video.
    static let unreadable: [String: String] = [
        "axm-sample_malformed_free_box.mp4": "no index (moov): no moov atom found (malformed free box)",
        "mij-sample.mkv": "header-only Matroska piece",
        "axm-invalid-bitstream.webm": "VP9 with invalid sync codes: nothing decodes",
        "axm-sample_opus_fragmented.mp4": "audio only",
        "mbn-multiple-aac-tracks.mp4": "audio only",
    ]

    /// Files cut short: transcoded as far as they go with one warning (exit 0); `--strict`
    /// refuses them (exit 3).
    static let truncated: [String: String] = [
        "mbn-annex-b.mp4": "the sample table points past the end of the file"
    ]

    /// How the ffmpeg CLI reference must be made for clips whose orientation the 5.1 CLI
    /// does not apply correctly by itself.
    var orientationOverride: (autorotate: Bool, filter: String, swapsAxes: Bool)? {
        switch name {
        case "axm-sample_rotate_and_reflect.mp4":
            // The tkhd matrix is [0 1; 1 0]: x' = y, y' = x, a transpose (a mirror about the
            // main diagonal, determinant -1).  ffprobe 5.1 reports only `rotation=-90` for
            // it, which read alone means a plain 90° clockwise turn (that loses the mirror).
            // The 5.1.9 CLI's autorotate happens to special-case this matrix (it picks
            // `cclock_flip` when the matrix's [3] entry is positive; checked: its frames are
            // identical to `-noautorotate -vf transpose=0`), but the reference should not
            // hinge on that special case or on the CLI version, so it is built explicitly
            // from the coded picture: `-noautorotate`, then transpose=0 (ffmpeg's
            // "cclock_flip", a pure transpose: output(x, y) = input(y, x)).  A plain
            // rotation (transpose=clock) as reference scores about 9 dB against a correct
            // output, so the check does tell the mirror apart.
            return (false, "transpose=0", true)
        case "axm-sample_with_htc_rotation_track_name.mkv":
            // Rotation given only by the Matroska track name "htc_video_rotA-090" (HTC
            // phones; ExoPlayer reads it as "rotate 90° clockwise to display"), which FFmpeg
            // does not know: add the clockwise quarter turn by hand.
            return (true, "transpose=clock", true)
        default:
            return nil
        }
    }
}

@Suite("Real-world corpus (../shared/corpus)")
struct CorpusTests {

    static let options = ["--zoom", "1.25", "--preset", "ultrafast", "--crf", "18"]

    @Test("the corpus is present, or its absence is recorded")
    func corpusPresence() throws {
        guard let folder = Oracle.corpusDirectory else {
            print("corpus absent: ../shared/corpus not found — corpus checks not run")
            return
        }
        let files = CorpusFile.all.map(\.name)
        print("corpus present: \(folder.path), \(files.count) files")
        #expect(!files.isEmpty, "the corpus folder \(folder.path) holds no media files")
        // Every file INDEX.md lists must be there (a partial copy would silently test less).
        let index = (try? String(contentsOf: folder.appendingPathComponent("INDEX.md"), encoding: .utf8)) ?? ""
        let listed = index.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `") else { return nil }
            return line.dropFirst(3).split(separator: "`").first.map(String.init)
        }
        let missing = Set(listed).subtracting(files)
        #expect(missing.isEmpty, "files listed in INDEX.md but missing: \(missing.sorted())")
        for name in CorpusFile.unreadable.keys where !files.contains(name) {
            Issue.record("the corpus should hold \(name)")
        }
    }

    @Test(arguments: CorpusFile.all)
    func corpusFile(_ file: CorpusFile) throws {
        let folder = try #require(Oracle.corpusDirectory)
        let input = folder.appendingPathComponent(file.name).path
        let scratch = try Scratch()
        let output = scratch.file("out.mp4")
        let run = try CLI.cropzoom([input, "-o", output.path] + Self.options, timeout: 400)

        if let why = CorpusFile.truncated[file.name] {
            var problems: [String] = []
            let warnings = run.stderrLines.filter { $0.hasPrefix("cropzoom: warning: \(input): truncated") }
            if run.status != 0 || warnings.count != 1 {
                problems.append(
                    "expected exit 0 and one truncation warning (\(why)), got \(run.shellStatus): \(run.stderr)")
            }
            let strict = try CLI.cropzoom([input, "-o", scratch.file("strict.mp4").path, "--strict"] + Self.options)
            if strict.status != 3 || strict.errorLines.first?.contains("truncated") != true {
                problems.append(
                    "--strict: expected exit 3 naming the truncation, got \(strict.shellStatus): \(strict.stderr)")
            }
            report(file, problems, success: "transcoded what is there, warned: \(warnings.first ?? "")")
            return
        }
        if let why = CorpusFile.unreadable[file.name] {
            var problems: [String] = []
            if run.status != 3 || run.killedBySignal {
                problems.append("expected exit 3 (\(why)), got \(run.shellStatus)")
            }
            let lines = run.stderrLines
            if lines.count != 1 || !(lines.first ?? "").hasPrefix("cropzoom: error: \(input): ") {
                problems.append(
                    "expected one line `cropzoom: error: \(input): <reason>`, got: \(lines.joined(separator: " | "))")
            }
            if !Files.names(in: scratch.url).isEmpty { problems.append("left behind: \(Files.names(in: scratch.url))") }
            report(file, problems, success: "refused, exit 3: \(lines.first ?? "")")
            return
        }

        guard run.status == 0, !run.killedBySignal else {
            report(
                file, ["cropzoom exit \(run.shellStatus): \(run.errorLines.first ?? run.stderrLines.last ?? "")"],
                success: "")
            return
        }
        var problems: [String] = []
        var notes: [String] = []
        // A complete file is not called truncated (a fragmented MP4's bogus duration once was).
        if let warning = run.stderrLines.first(where: { $0.contains("truncated") }) {
            problems.append("a complete file was warned truncated: \(warning)")
        }

        // Point 1: frames and pts (frames with repeated pts may go, exactly as reported).
        let dropped = Contract.repeatedTimestampsDropped(run.stderr)
        let frames = try Contract.checkFrames(input: input, output: output, repeatsDropped: dropped)
        problems += frames.problems.map { "point 1: \($0)" }
        notes.append("\(frames.outputFrames) frames" + (dropped > 0 ? ", \(dropped) repeated-pts dropped" : ""))

        // Point 2: audio, for MP4/MOV inputs (same container family, so byte-identical).
        let inStreams = try Oracle.streams(input)
        let isMP4Family = ["mp4", "mov", "m4v"].contains((file.name as NSString).pathExtension.lowercased())
        if isMP4Family && inStreams.contains(where: { $0.codecType == "audio" }) {
            let audio = try Contract.checkCopiedAudio(input: input, output: output)
            problems += audio.map { "point 2: \($0)" }
            notes.append("audio ok")
        }

        // Geometry and point 3.
        let inVideo = try #require(inStreams.first { $0.codecType == "video" })
        let outVideo = try #require(try Oracle.streams(output.path).first { $0.codecType == "video" })
        let override = file.orientationOverride
        var upright = try #require(inVideo.uprightSize)
        var quarterTurn = Int(((inVideo.rotation ?? 0) / 90).rounded()) % 2 != 0
        if let override, override.swapsAxes, inVideo.rotation == nil {
            upright = (upright.height, upright.width)
            quarterTurn = true
        }
        let sar = inVideo.sampleAspectRatio.map { $0.num > 0 && $0.den > 0 ? $0.doubleValue : 1 } ?? 1
        let is444 = (inVideo.pixFmt ?? "").contains("444")
        let outIs444 = (outVideo.pixFmt ?? "").contains("444")
        let spec = GeometrySpec(zoom: 1.25)
        let reference = ReferencePicture.make(
            spec, upright: upright, sar: sar, sarAlongY: quarterTurn,
            align: is444 ? 1 : 2, outputAlign: outIs444 ? 1 : 2)
        let (ow, oh) = (outVideo.width ?? 0, outVideo.height ?? 0)
        // The displayed size, on the output pixel format's grid: allow the other neighbour
        // when the exact display size falls between two multiples.
        if abs(ow - reference.width) > 1 || abs(oh - reference.height) > 1 {
            problems.append(
                "output \(ow)x\(oh), expected the displayed upright size \(reference.width)x\(reference.height)")
        }
        if outVideo.rotation != nil {
            problems.append("output keeps a display matrix (rotation \(outVideo.rotation!))")
        }

        let filter =
            (override.map { $0.filter + "," } ?? "")
            + reference.filter.replacingOccurrences(
                of: "scale=\(reference.width):\(reference.height)",
                with: "scale=\(ow):\(oh)")
        let pixelFormat = Contract.comparisonPixelFormat(inVideo.pixFmt, output: outVideo.pixFmt)
        let psnr = try Oracle.meanPSNR(
            reference: input, referenceFilter: filter, output: output.path,
            pixelFormat: pixelFormat, referenceAutorotate: override?.autorotate ?? true,
            alignStarts: true)
        if !(psnr >= 35) {
            problems.append("point 3: mean PSNR \(String(format: "%.2f", psnr)) dB < 35 (reference `\(filter)`)")
        }
        notes.append(String(format: "psnr %.1f", psnr))

        problems += try Contract.checkFaststart(output).map { "faststart: \($0)" }
        if Files.names(in: scratch.url) != ["out.mp4"] {
            problems.append("folder holds \(Files.names(in: scratch.url))")
        }

        report(file, problems, success: notes.joined(separator: ", "))
    }

    private func report(_ file: CorpusFile, _ problems: [String], success: String) {
        if problems.isEmpty {
            print("corpus PASS \(file.name) (\(success))")
        } else {
            print("corpus FAIL \(file.name): \(problems.joined(separator: "; "))")
            for problem in problems { Issue.record("\(file.name): \(problem)") }
        }
    }
}

/// The 2-D warp (`--rotate` by any angle, `--transform`) composes the display matrix into its one
/// map: on phone clips with rotation, mirror and 10-bit HEVC, a near-zero extra angle gives the
/// separable path's picture. Without the corpus there are no cases (the presence test says so).
@Suite("Real-world corpus: the warp honours orientation metadata")
struct CorpusWarpTests {
    static var cases: [CorpusFile] {
        let wanted: Set = ["axm-sample_rotate_and_reflect.mp4", "mbn-rotate-buck-bunny.mp4", "axm-dolbyVision-hdr.MOV"]
        return CorpusFile.all.filter { wanted.contains($0.name) }
    }

    @Test("--rotate 0.0001 gives the same upright picture as no rotation (luma ≥ 60 dB)", arguments: cases)
    func orientation(_ file: CorpusFile) throws {
        let folder = try #require(Oracle.corpusDirectory)
        let scratch = try Scratch()
        let input = folder.appendingPathComponent(file.name).path
        let warped = scratch.file("w.mkv").path
        let plain = scratch.file("p.mkv").path
        #expect(
            try CLI.cropzoom([input, "-o", warped, "--codec", "ffv1", "--rotate", "0.0001", "--quiet"]).status == 0)
        #expect(try CLI.cropzoom([input, "-o", plain, "--codec", "ffv1", "--quiet"]).status == 0)
        let a = try Oracle.streams(warped).first { $0.codecType == "video" }
        let b = try Oracle.streams(plain).first { $0.codecType == "video" }
        #expect(a?.width == b?.width && a?.height == b?.height, "size")
        let stderr = try Oracle.run(
            "ffmpeg",
            ["-hide_banner", "-nostats", "-i", warped, "-i", plain, "-lavfi", "[0][1]psnr", "-f", "null", "-"]
        ).stderr
        let y = stderr.split(separator: " ").first { $0.hasPrefix("y:") }.map { String($0.dropFirst(2)) }
        let value = y == "inf" ? Double.infinity : Double(y ?? "") ?? 0
        #expect(value >= 60, "\(file.name): luma \(y ?? "?") dB")
    }
}

/// An iPhone's Dolby Vision clip (HLG base layer, profile 8): re-encoded, its Dolby Vision is not carried, and
/// a note says so and what the picture is. Without the corpus there are no cases (the presence test says so).
@Suite("Real-world corpus: Dolby Vision")
struct CorpusDolbyVisionTests {
    static var cases: [CorpusFile] { CorpusFile.all.filter { $0.name == "mbn-no-correct-videoframe-format.mov" } }

    @Test("the note names what is kept; the output is HLG without a Dolby Vision record", arguments: cases)
    func dolbyVisionIsNoted(_ file: CorpusFile) throws {
        let folder = try #require(Oracle.corpusDirectory)
        let scratch = try Scratch()
        let output = scratch.file("out.mp4").path
        let run = try CLI.cropzoom([folder.appendingPathComponent(file.name).path, "-o", output, "--zoom", "1.2"])
        try #require(run.status == 0, "\(run)")
        #expect(
            run.stderrLines.contains(
                "cropzoom: note: video stream #0: its Dolby Vision (profile 8) is not kept; the output is its HLG "
                    + "picture"), "\(run.stderrLines)")
        let video = try #require(try Media.streams(output).first { $0["codec_type"] as? String == "video" })
        #expect(video["color_transfer"] as? String == "arib-std-b67", "\(video)")
        let side = (video["side_data_list"] as? [[String: Any]] ?? []).compactMap { $0["side_data_type"] as? String }
        #expect(!side.contains("DOVI configuration record"), "\(side)")
    }
}
