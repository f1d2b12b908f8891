// Contract point 5: unreadable inputs exit 3 with one `cropzoom: error: <path>: <reason>`
// line and leave nothing behind; bad usage exits 2.  Also damaged (but readable) inputs.

import Foundation
import Testing

struct BadInput: Sendable, CustomTestStringConvertible {
    enum Kind: Sendable {
        case sample(String)
        case missing, directory
    }
    var kind: Kind
    /// The reason must start with this (lowercased), when set.
    var reasonPrefix: String? = nil
    /// The reason must contain this (lowercased), when set.
    var reasonContains: String? = nil
    /// Extra options.
    var arguments: [String] = []

    var testDescription: String {
        switch kind {
        case .sample(let name): return ([name] + arguments).joined(separator: " ")
        case .missing: return "a missing file"
        case .directory: return "a directory"
        }
    }

    static let all: [BadInput] = [
        .init(kind: .missing),
        .init(kind: .directory),
        .init(kind: .sample("empty.mp4")),
        .init(kind: .sample("not-media.mp4")),
        .init(kind: .sample("truncated.mp4"), reasonPrefix: "truncated", arguments: ["--strict"]),
        .init(kind: .sample("audio-only.m4a"), reasonContains: "no video stream"),
        .init(kind: .sample("unknown-codec.mkv")),
    ]
}

struct UsageError: Sendable, CustomTestStringConvertible {
    var args: [String]
    /// The message must mention this (the option at fault).
    var mentions: String
    var testDescription: String { args.joined(separator: " ") }

    static let all: [UsageError] = [
        .init(args: ["--zoom", "0.05"], mentions: "--zoom"),
        .init(args: ["--rotate", "45deg"], mentions: "--rotate"),
        .init(args: ["--crop", "10:abc"], mentions: "--crop"),
        .init(args: ["--center", "2,2"], mentions: "--center"),
        .init(args: ["--size", "0x0"], mentions: "--size"),
        .init(args: ["--codec", "nosuch"], mentions: "--codec"),
        .init(args: ["--pix-fmt", "nosuch"], mentions: "--pix-fmt"),
        // std-h264-aac.mp4 is 640x360: one pixel too wide, and a window reaching outside.
        .init(args: ["--crop", "641:360"], mentions: "--crop"),
        .init(args: ["--crop", "100:100:600:0"], mentions: "--crop"),
        .init(args: ["--flip", "diagonal"], mentions: "--flip"),
        .init(args: ["--scaler", "nosuch"], mentions: "--scaler"),
        // Refused inside x264's open before (exit 1, x264's own log line and a second line).
        .init(args: ["--preset", "nosuch"], mentions: "--preset"),
        .init(args: ["--codec", "libx265", "--preset", "nosuch"], mentions: "--preset"),
        .init(args: ["--codec", "mpeg4", "--preset", "fast"], mentions: "--preset"),
    ]
}

@Suite("Bad inputs and bad usage")
struct BadInputTests {

    @Test(arguments: BadInput.all)
    func unreadableInput(_ bad: BadInput) throws {
        let scratch = try Scratch()
        let outFolder = try scratch.folder("out")
        let input: String
        switch bad.kind {
        case .sample(let name): input = try Files.sample(name).path
        case .missing: input = scratch.file("no-such-file.mp4").path
        case .directory: input = try scratch.folder("a-folder.mp4").path
        }
        let output = outFolder.appendingPathComponent("out.mp4")
        let run = try CLI.cropzoom([input, "-o", output.path] + bad.arguments)
        #expect(run.status == 3 && !run.killedBySignal, "expected exit 3: \(run)")
        let lines = run.stderrLines
        #expect(lines.count == 1, "expected exactly one stderr line, got \(lines.count): \(run.stderr)")
        let prefix = "cropzoom: error: \(input): "
        let line = lines.first ?? ""
        #expect(line.hasPrefix(prefix), "expected `\(prefix)<reason>`, got: \(line)")
        if line.hasPrefix(prefix) {
            let reason = String(line.dropFirst(prefix.count)).lowercased()
            #expect(!reason.trimmingCharacters(in: .whitespaces).isEmpty, "empty reason: \(line)")
            if let p = bad.reasonPrefix { #expect(reason.hasPrefix(p), "the reason should start with '\(p)': \(line)") }
            if let s = bad.reasonContains { #expect(reason.contains(s), "the reason should say '\(s)': \(line)") }
        }
        #expect(Files.names(in: outFolder).isEmpty, "left behind after a failure: \(Files.names(in: outFolder))")
    }

    @Test(arguments: UsageError.all)
    func badUsage(_ usage: UsageError) throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let run = try CLI.cropzoom([input, "-o", scratch.file("out.mp4").path] + usage.args)
        #expect(run.status == 2 && !run.killedBySignal, "expected exit 2 (bad usage): \(run)")
        let lines = run.stderrLines
        let first = lines.first ?? ""
        #expect(first.hasPrefix("cropzoom: error: "), "expected `cropzoom: error: <message>`: \(run.stderr)")
        #expect(first.contains(usage.mentions), "the message should name \(usage.mentions): \(first)")
        // Usage errors are one line, like every other error (whether found while parsing the
        // options or once the input is known, e.g. a crop larger than the picture).
        #expect(lines.count == 1, "expected exactly one line, got \(lines.count):\n\(run.stderr)")
        #expect(Files.names(in: scratch.url).isEmpty, "left behind: \(Files.names(in: scratch.url))")
    }

    @Test("a truncated input: what is there is transcoded, one warning says where the data ends, JSON says truncated")
    func truncatedInput() throws {
        let scratch = try Scratch()
        let input = try Files.sample("truncated.mp4").path
        let output = scratch.file("out.mp4")
        let run = try CLI.cropzoom([input, "-o", output.path])
        #expect(run.status == 0, "\(run)")
        let warnings = run.stderrLines.filter { $0.hasPrefix("cropzoom: warning: ") }
        #expect(
            warnings.count == 1 && warnings[0].contains("truncated: the data ends at 0.87 s of 2.00 s"), "\(run.stderr)"
        )
        let frames = try Oracle.videoFramePTS(output.path)
        #expect(!frames.isEmpty && frames.allSatisfy { $0 < 0.9 }, "frames: \(frames)")

        let json = try CLI.cropzoom([input, "-o", scratch.file("j.mp4").path, "--progress", "json"])
        let done = json.stderrLines.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        .last { $0["event"] as? String == "done" }
        #expect((done?["truncated"] as? String)?.hasPrefix("truncated: the data ends") == true, "\(json.stderr)")
    }

    @Test("stream information that cannot be read (AV1 in IVF whose packets are all invalid): exit 3, no crash")
    func unreadableStreamInformation() throws {
        let scratch = try Scratch()
        let ivf = scratch.file("av1.ivf")
        try Clip.video(.testsrc, seconds: 0.2, size: "64x48").codec("libaom-av1", options: ["-cpu-used", "8"])
            .write(to: ivf.path)
        // Every frame's payload set to 0xFF: no valid OBU, so FFmpeg's extradata extraction (part
        // of avformat_find_stream_info) fails — the failure path that closed the input twice.
        var bytes = [UInt8](try Data(contentsOf: ivf))
        var position = Int(bytes[6]) | Int(bytes[7]) << 8
        while position + 12 <= bytes.count {
            let size =
                Int(bytes[position]) | Int(bytes[position + 1]) << 8 | Int(bytes[position + 2]) << 16
                | Int(bytes[position + 3]) << 24
            for k in (position + 12)..<min(bytes.count, position + 12 + size) { bytes[k] = 0xFF }
            position += 12 + size
        }
        let bad = scratch.file("bad.ivf")
        try Data(bytes).write(to: bad)
        let run = try CLI.cropzoom([bad.path, "-o", scratch.file("out.mp4").path])
        #expect(!run.killedBySignal && run.status == 3, "\(run)")
        #expect(run.errorLines.count == 1 && run.errorLines[0].contains("reading stream information"), "\(run.stderr)")
        #expect(Files.names(in: scratch.url) == ["av1.ivf", "bad.ivf"])
    }

    @Test("an MP4 whose recording never finished (no moov) says so, exit 3")
    func missingMoov() throws {
        let scratch = try Scratch()
        let whole = scratch.file("whole.mp4")
        // -movflags 0: the index (moov) at the end, as a camera writes it when it stops.
        try Clip.video(.testsrc, seconds: 2, size: "160x120", rate: 25).extra(["-movflags", "0"]).write(to: whole.path)
        let bytes = try Data(contentsOf: whole)
        let cut = scratch.file("cut.mp4")
        try bytes.prefix(bytes.count / 2).write(to: cut)
        let run = try CLI.cropzoom([cut.path, "-o", scratch.file("out.mp4").path])
        #expect(run.status == 3, "\(run)")
        #expect(
            run.errorLines == [
                "cropzoom: error: \(cut.path): no index (moov): the recording was not finished, "
                    + "or the file is damaged (`cropzoom repair FILE --reference GOOD -o FIXED`, or --reference GOOD "
                    + "here, brings it back from a complete recording of the same camera)"
            ], "\(run.stderr)")
    }

    // MARK: - Damaged but readable input

    /// An MPEG-TS remux of std-h264-aac.mp4 (ffmpeg -c copy) with some damage, written to
    /// `scratch`:
    /// - `.video`: 30 bytes of noise in the payload of 15 video TS packets from 1/3 of the file
    ///   (the H.264 decoder reports errors on them);
    /// - `.audioHeader`: the 7-byte ADTS header of the AAC frame that opens the 3rd audio PES
    ///   zeroed (the packet the demuxer returns is not valid ADTS).
    enum Damage { case video, audioHeader }

    static func damagedTS(_ damage: Damage, in scratch: Scratch) throws -> URL {
        let clean = scratch.file("clean.ts")
        try Oracle.runChecked(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-y", "-i", try Files.sample("std-h264-aac.mp4").path,
                "-map", "0", "-c", "copy", "-f", "mpegts", clean.path,
            ])
        var bytes = [UInt8](try Data(contentsOf: clean))
        let videoPID = 0x100
        let audioPID = 0x101  // the FFmpeg mpegts muxer's defaults
        var seed: UInt32 = 12345
        func noise() -> UInt8 {
            seed = seed &* 1_103_515_245 &+ 12345
            return UInt8((seed >> 16) & 0xFF)
        }
        var damaged = 0
        var audioPES = 0
        var offset = damage == .video ? bytes.count / 3 / 188 * 188 : 0
        while offset + 188 <= bytes.count {
            defer { offset += 188 }
            guard bytes[offset] == 0x47 else { throw Oracle.Failure("\(clean.path): no TS sync byte at \(offset)") }
            let pid = (Int(bytes[offset + 1]) & 0x1F) << 8 | Int(bytes[offset + 2])
            let unitStart = bytes[offset + 1] & 0x40 != 0
            let adaptation = (bytes[offset + 3] >> 4) & 3
            switch damage {
            case .video:
                guard pid == videoPID, adaptation == 1, damaged < 15 else { continue }
                for k in 100..<130 { bytes[offset + k] = noise() }
                damaged += 1
            case .audioHeader:
                guard pid == audioPID, unitStart else { continue }
                audioPES += 1
                guard audioPES == 3 else { continue }
                var p = offset + 4
                if adaptation == 3 { p += 1 + Int(bytes[p]) }
                guard bytes[p] == 0, bytes[p + 1] == 0, bytes[p + 2] == 1 else {
                    throw Oracle.Failure("\(clean.path): no PES start code in the audio packet at \(offset)")
                }
                let adts = p + 9 + Int(bytes[p + 8])
                guard bytes[adts] == 0xFF, bytes[adts + 1] & 0xF0 == 0xF0 else {
                    throw Oracle.Failure("\(clean.path): no ADTS header at \(adts)")
                }
                for k in 0..<7 { bytes[adts + k] = 0 }
                damaged += 1
            }
        }
        guard damaged > 0 else { throw Oracle.Failure("could not damage \(clean.path) (\(damage))") }
        let url = scratch.file(damage == .video ? "damaged-video.ts" : "damaged-audio.ts")
        try Data(bytes).write(to: url)
        try FileManager.default.removeItem(at: clean)
        return url
    }

    /// The ffmpeg CLI's own view: decoding the whole file reports decoding errors or
    /// concealment (the H.264 decoder logs "concealing … errors" at verbose level only).
    static func ffmpegReportsDamage(_ url: URL) throws -> Bool {
        let r = try Oracle.run(
            "ffmpeg",
            [
                "-hide_banner", "-nostdin", "-nostats", "-v", "verbose", "-i", url.path,
                "-map", "0", "-f", "null", "-",
            ])
        return r.stderr.split(separator: "\n").contains { line in
            let l = line.lowercased()
            return l.contains("concealing") || l.contains("error while decoding") || l.contains("corrupt")
                || l.contains("invalid data")
        }
    }

    enum DamagedInput: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// samples/corrupt-middle.ts: 12 TS packets' payload scrambled at 45 % of the file.
        case sampleCorruptMiddle = "corrupt-middle.ts"
        /// Noise in 15 video TS packets, made here (see `damagedTS`).
        case generatedVideoNoise = "generated video noise"
        var testDescription: String { rawValue }
    }

    @Test(
        """
        damaged packets are skipped and counted (frames and audio still match what decodes); --strict makes them fatal \
        and leaves nothing
        """,
        arguments: DamagedInput.allCases)
    func damagedPackets(_ which: DamagedInput) throws {
        let scratch = try Scratch()
        let input =
            which == .sampleCorruptMiddle ? try Files.sample(which.rawValue) : try Self.damagedTS(.video, in: scratch)
        try #require(try Self.ffmpegReportsDamage(input), "test set-up: ffmpeg finds no damage in \(input.path)")

        // TS -> TS, so that the only timing at stake is cropzoom's own.
        // The count is exact with a single-threaded decoder (--threads 1); FFmpeg 5.1's
        // frame-threaded H.264 decoder reports a concealed frame only on some schedules, so
        // with the default engine the contract (frames, audio) is checked, not the count.
        let counted = try CLI.cropzoom([input.path, "-o", scratch.file("counted.ts").path, "--threads", "1"])
        #expect(counted.status == 0, "\(counted)")
        #expect(
            Contract.damagedPacketsSkipped(counted.stderr) > 0,
            "the summary should count damaged packets skipped: \(counted.stderr)")
        let output = scratch.file("out.ts")
        let run = try CLI.cropzoom([input.path, "-o", output.path])
        #expect(run.status == 0, "without --strict damaged packets should be skipped: \(run)")
        if run.status == 0 {
            // Every frame ffprobe can decode from the damaged input is in the output, with its pts.
            let frames = try Contract.checkFrames(input: input.path, output: output)
            #expect(frames.problems.isEmpty, "point 1: \(frames.problems.joined(separator: "; "))")
            let audio = try Contract.checkCopiedAudio(input: input.path, output: output, shift: frames.shift)
            #expect(audio.isEmpty, "point 2: \(audio.joined(separator: "; "))")
        }

        let strictFolder = try scratch.folder("strict")
        let strictOutput = strictFolder.appendingPathComponent("strict.mp4")
        let strict = try CLI.cropzoom([input.path, "-o", strictOutput.path, "--strict"])
        #expect(strict.status == 1, "--strict should fail (exit 1) on damaged packets: \(strict)")
        #expect(
            strict.stderrLines.count == 1
                && strict.errorLines.first?.hasPrefix("cropzoom: error: \(input.path): ") == true,
            "expected one line `cropzoom: error: \(input.path): <reason>`: \(strict.stderr)")
        #expect(
            Files.names(in: strictFolder).isEmpty,
            "left behind after --strict failure: \(Files.names(in: strictFolder))")
    }

    @Test("a damaged copied audio packet (bad ADTS header, TS -> MP4) is skipped and counted, not fatal")
    func damagedAudioHeader() throws {
        let scratch = try Scratch()
        let input = try Self.damagedTS(.audioHeader, in: scratch)
        let output = scratch.file("out.mp4")
        let run = try CLI.cropzoom([input.path, "-o", output.path])
        #expect(run.status == 0, "without --strict a damaged audio packet should be skipped and counted: \(run)")
        if run.status == 0 {
            #expect(
                Contract.damagedPacketsSkipped(run.stderr) > 0,
                "the summary should count the damaged packet: \(run.stderr)")
            let frames = try Contract.checkFrames(input: input.path, output: output)
            #expect(
                frames.problems.isEmpty,
                "video untouched by the damage, point 1: \(frames.problems.joined(separator: "; "))")
        }
        #expect(
            Files.temporaryLeftovers(in: scratch.url).isEmpty,
            "temporary files left: \(Files.temporaryLeftovers(in: scratch.url))")
    }
}
