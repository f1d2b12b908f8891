// Options that were accepted and then clamped or ignored are refused (exit 2, one line, nothing
// written); the messages of a forgotten -o, --null and `help` with an unknown command.

import Foundation
import Testing

@Suite("Option checks")
struct OptionCheckTests {
    @Test("--crf outside the encoder's range, --crf with --bitrate, --bitrate when lossless: exit 2, nothing written")
    func rateSettings() throws {
        let scratch = try Scratch()
        let input = try Files.sample("std-h264-aac.mp4").path
        let cases: [([String], String, String)] = [
            (["--crf", "60"], "x.mp4", "--crf 60: libx264 takes 0–51"),
            (["--codec", "libx265", "--crf", "52"], "x.mkv", "--crf 52: libx265 takes 0–51"),
            (["--crf", "20", "--bitrate", "1M"], "x.mp4", "use one of --crf or --bitrate"),
            (["--codec", "ffv1", "--bitrate", "4M"], "x.mkv", "--bitrate: ffv1 is lossless"),
            (["--codec", "huffyuv", "--bitrate", "4M"], "x.avi", "--bitrate: huffyuv is lossless"),
            (["--codec", "utvideo", "--bitrate", "4M"], "x.avi", "--bitrate: utvideo is lossless"),
            (["--codec", "png", "--bitrate", "4M"], "x.avi", "--bitrate: png is lossless"),
            (["--codec", "rawvideo", "--bitrate", "4M"], "x.nut", "--bitrate: rawvideo is lossless"),
        ]
        for (args, name, needle) in cases {
            let run = try CLI.cropzoom([input, "-o", scratch.file(name).path, "--progress", "none"] + args)
            #expect(run.status == 2 && run.errorLines.count == 1 && run.stderr.contains(needle), "\(args): \(run)")
            #expect(Files.names(in: scratch.url).isEmpty, "\(args): something was written")
        }
        // VP9 uses both (constrained quality: the crf's quality, capped at the bit rate).
        let vp9 = try CLI.cropzoom([
            input, "-o", scratch.file("cq.webm").path, "--crf", "30", "--bitrate", "300k",
            "--duration", "0.5", "--progress", "none",
        ])
        #expect(vp9.status == 0 && Files.exists(scratch.file("cq.webm")), "\(vp9)")
    }

    @Test("cropzoom IN OUT: the missing -o is named with the command meant; a stray word is refused")
    func missingOutputHint() throws {
        let scratch = try Scratch()
        let input = try Files.sample("one-frame.mp4").path
        let out = scratch.file("out.mp4").path
        let run = try CLI.cropzoom([input, out])
        #expect(
            run.status == 2 && run.errorLines.count == 1
                && run.stderr.contains("missing -o OUTPUT (did you mean: cropzoom \(input) -o \(out)?)"), "\(run)")
        let stray = try CLI.cropzoom([input, "-o", out, "extra.mp4"])
        #expect(stray.status == 2 && stray.stderr.contains("unexpected argument 'extra.mp4'"), "\(stray)")
        #expect(!Files.exists(scratch.file("out.mp4")) && !Files.exists(scratch.file("extra.mp4")))
        let plain = try CLI.cropzoom([input])
        #expect(plain.status == 2 && plain.stderr.contains("missing -o OUTPUT (see"), "\(plain)")
    }

    @Test("--null: the summary says nothing was written")
    func nullSummary() throws {
        let run = try CLI.cropzoom([try Files.sample("one-frame.mp4").path, "--null", "--progress", "none"])
        #expect(
            run.status == 0 && run.stderr.hasPrefix("cropzoom: nothing written (--null): 320x240 libx264"),
            "\(run)")
        #expect(!run.stderr.contains("(null)"), "\(run)")
    }

    @Test("help with an unknown command: exit 2 naming it; help with a known one: exit 0")
    func helpUnknownCommand() throws {
        let bad = try CLI.cropzoom(["help", "nonsense"])
        #expect(
            bad.status == 2 && bad.errorLines.count == 1 && bad.stderr.contains("unknown command 'nonsense'")
                && bad.stdout.isEmpty, "\(bad)")
        let good = try CLI.cropzoom(["help", "batch"])
        #expect(good.status == 0 && good.stdout.contains("--out-dir"), "\(good)")
        #expect(try CLI.cropzoom(["help"]).status == 0)
    }

    @Test(
        """
        a subcommand named first is parsed on its own (without the root building transcode's options) with the same \
        results: its errors, its help naming `cropzoom repair`, the root's --version, nested subcommands
        """)
    func namedSubcommandParse() throws {
        let cases: [([String], String)] = [
            (["repair", "a.mp4", "b.mp4"], "one recording at a time (2 given)"),
            (["repair", "x.mp4"], "missing -o FIXED: where the repaired recording goes"),
            (["repair", "x.mp4", "-o", "y.mp4", "--progress", "xml"], "The value 'xml' is invalid for '--progress"),
            (["probe", "--nope", "x.mp4"], "Unknown option '--nope'"),
            (["report", "merge"], "no report to merge: name the reports"),
        ]
        for (args, needle) in cases {
            let run = try CLI.cropzoom(args)
            #expect(
                run.status == 2 && run.errorLines.count == 1 && run.stderr.contains(needle) && run.stdout.isEmpty,
                "\(args): \(run)")
        }
        let help = try CLI.cropzoom(["repair", "--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: cropzoom repair <recording|folder>"), "\(help)")
        let version = try CLI.cropzoom(["repair", "--version"])
        #expect(version.status == 0 && version.stdout.hasPrefix("cropzoom 0.1.0\nFFmpeg"), "\(version)")
    }

    @Test(
        """
        ffmpeg's single-dash options are usage errors naming cropzoom's spelling (-hide_banner and -threads printed \
        help and exited 0 with nothing written); cropzoom's own short options, negative numbers and - still work
        """)
    func ffmpegSingleDashOptions() throws {
        let scratch = try Scratch()
        let input = try Files.sample("one-frame.mp4").path
        let out = scratch.file("out.mp4").path
        let cases: [([String], String)] = [
            (["-hide_banner"], "-hide_banner is ffmpeg's spelling; cropzoom's is nothing: cropzoom prints no banner"),
            (["-threads", "2"], "-threads is ffmpeg's spelling; cropzoom's is --threads"),
            (["-vn"], "cropzoom's is --streams"),
            (["-c", "copy"], "--codec has no copy for video, because every frame is transformed"),
            (["-c:v", "copy"], "--codec has no copy for video"),
            (["-c:a", "copy"], "-c:a copy is ffmpeg's spelling; cropzoom's is --audio copy"),
            (["-r", "30"], "cropzoom's is --framerate"),
            (["-map", "0"], "cropzoom's is --streams and --audio-stream"),
            (["-nonsense"], "-nonsense is not an option of cropzoom: its options are spelled with two dashes"),
        ]
        for (args, needle) in cases {
            let run = try CLI.cropzoom([input, "-o", out] + args)
            #expect(
                run.status == 2 && run.errorLines.count == 1 && run.stderr.contains(needle) && run.stdout.isEmpty,
                "\(args): \(run)")
            #expect(Files.names(in: scratch.url).isEmpty, "\(args): something was written")
        }
        // Where ffmpeg's spelling comes before the input too.
        let first = try CLI.cropzoom(["-hide_banner", input, "-o", out])
        #expect(first.status == 2 && first.stdout.isEmpty, "\(first)")
        // cropzoom's own: -y and -v bundled, negative values after options that take any value.
        let ok = try CLI.cropzoom([input, "-o", out, "-yv", "--rotate", "-90", "--size", "-2x120"])
        #expect(ok.status == 0 && Files.exists(scratch.file("out.mp4")), "\(ok)")
        let help = try CLI.cropzoom(["-h"])
        #expect(help.status == 0 && help.stdout.contains("USAGE"), "\(help)")
    }
}
