// Installing (issue 27 item 19): scripts/install.sh PREFIX puts the binary, the sample `bench` looks for, the man page
// and the three shells' completions in place; --version names the FFmpeg libraries it runs on (as ffmpeg -version
// does); -h shows the options a first run types, not only the sub-commands.

import Foundation
import Testing

@Suite("Install")
struct InstallTests {
    @Test(
        """
        install.sh PREFIX: bin/cropzoom runs from anywhere, bench finds its installed sample, man -l renders the page, \
        the completions are where bash, zsh and fish look
        """)
    func installsEverything() throws {
        let scratch = try Scratch()
        let prefix = scratch.file("prefix").path
        let root = try #require(Oracle.packageRoot)
        let run = try CLI.bash(
            "CROPZOOM_INSTALL_BINARY=\(try CLI.binary()) bash \(root.path)/scripts/install.sh \(prefix)")
        #expect(run.status == 0 && run.stdout.contains("installed cropzoom"), "\(run)")
        for file in [
            "bin/cropzoom", "lib/cropzoom/libCropZoomFaces.so", "share/cropzoom/samples/bench-720p.mp4",
            "share/man/man1/cropzoom.1",
            "share/bash-completion/completions/cropzoom", "share/zsh/site-functions/_cropzoom",
            "share/fish/vendor_completions.d/cropzoom.fish",
        ] {
            #expect(FileManager.default.fileExists(atPath: "\(prefix)/\(file)"), "\(file) not installed")
        }
        // bench with no INPUT, from a folder without samples/: the installed sample.
        let elsewhere = scratch.file("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let bench = try CLI.bash(
            "cd \(elsewhere.path) && \(prefix)/bin/cropzoom bench --threads 1 --frames 10 --repeat 1 --format json")
        #expect(bench.status == 0 && bench.stdout.contains("bench-720p.mp4"), "\(bench)")
        // --follow opens the face plugin from the prefix (no build folder beside the installed binary).
        let follow = try CLI.bash(
            "cd \(elsewhere.path) && \(prefix)/bin/cropzoom \(try Files.sample("std-h264-aac.mp4").path) -o f.mp4 "
                + "--aspect 9:16 --follow auto")
        #expect(follow.status == 0 && follow.stderr.contains("std-h264-aac.mp4: "), "\(follow)")
        #expect(!follow.stderr.contains("face plugin"), "\(follow)")
        let page = try CLI.bash("MANWIDTH=100 man -l -P cat \(prefix)/share/man/man1/cropzoom.1")
        #expect(page.status == 0, "\(page)")
        for text in ["CROPZOOM(1)", "cropzoom transcode", "--zoom", "cropzoom recover", "EXIT STATUS"] {
            #expect(page.stdout.contains(text), "the man page lacks \(text)")
        }
        // A section for batch and a subsection for each of its subcommands, with their own options.
        let lines = page.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        for name in ["batch", "batch run", "batch watch", "batch submit", "batch status", "batch shard"] {
            #expect(lines.contains("cropzoom \(name)"), "the man page has no section for cropzoom \(name)")
        }
        for text in ["--settle <SECONDS>", "--scheduler-option <ARG>", "--shard <I/N|auto>", "<DIR>"] {
            #expect(page.stdout.contains(text), "the man page lacks \(text)")
        }
        #expect(!page.stderr.contains("warning"), "\(page.stderr)")
        // man finds it by name where the prefix's man pages are looked for.
        let byName = try CLI.bash("MANPATH=\(prefix)/share/man MANWIDTH=100 man -P cat cropzoom")
        #expect(byName.status == 0 && byName.stdout == page.stdout, "\(byName.stderr)")
    }

    @Test("--version names cropzoom's version and the FFmpeg libraries it runs on, as ffmpeg -version does")
    func versionNamesTheLibraries() throws {
        let run = try CLI.cropzoom(["--version"])
        #expect(run.status == 0 && run.stdout.hasPrefix("cropzoom 0.1.0\nFFmpeg "), "\(run)")
        // ffmpeg -version: "libavcodec     59. 37.100 / 59. 37.100" (built against / running on).
        let ffmpeg = try Oracle.runChecked("ffmpeg", ["-version"]).stdout
        for library in ["libavutil", "libavcodec", "libavformat", "libswscale", "libswresample"] {
            let line = try #require(ffmpeg.split(separator: "\n").first { $0.hasPrefix(library) })
            let running = line.split(separator: "/").last!.replacingOccurrences(of: " ", with: "")
            #expect(run.stdout.contains("\(library) \(running)"), "\(library): ffmpeg says \(line)")
        }
        #expect(run.stdout.contains("zimg 3."), "\(run.stdout)")
    }

    @Test("-h shows the transcode options a first run types (-o, --zoom, --crop, --codec …) beside the sub-commands")
    func helpShowsCommonOptions() throws {
        let run = try CLI.cropzoom(["-h"])
        #expect(run.status == 0, "\(run)")
        for text in ["-o, --output FILE", "--zoom Z", "--crop W:H[:X:Y]", "--codec NAME", "--start T", "recover"] {
            #expect(run.stdout.contains(text), "-h lacks \(text): \(run.stdout)")
        }
    }
}
