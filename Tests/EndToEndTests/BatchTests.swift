// `cropzoom batch`: a folder with good, damaged and non-media files; the report; resuming an
// interrupted batch with --skip-existing; shards; conflicts refused before any work; dry runs.

import CropZoomKit
import Foundation
import Testing

@Suite("Batch")
struct BatchTests {
    /// A folder of inputs: good clips (one in a sub-folder), one whose codec is unknown and a text file
    /// with a media name.
    static func mixedFolder(_ scratch: Scratch) throws -> URL {
        let dir = try scratch.folder("in")
        let sub = try scratch.folder("in/sub")
        let fm = FileManager.default
        try fm.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: dir.appendingPathComponent("a.mp4"))
        try fm.copyItem(at: try Files.sample("rotate90.mp4"), to: sub.appendingPathComponent("b.mp4"))
        // (A truncated clip would now succeed with a warning: an unknown codec fails.)
        try fm.copyItem(at: try Files.sample("unknown-codec.mkv"), to: dir.appendingPathComponent("broken.mp4"))
        try fm.copyItem(at: try Files.sample("not-media.mp4"), to: dir.appendingPathComponent("notes.mp4"))
        try fm.copyItem(at: try Files.sample("vfr-h264.mp4"), to: dir.appendingPathComponent("c.mov"))
        try "not a clip\n".write(to: dir.appendingPathComponent("readme.txt"), atomically: true, encoding: .utf8)
        return dir
    }

    static func report(_ path: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any])
    }

    @Test("a folder: good files succeed (sub-folders kept), bad ones fail, non-media is skipped; the report agrees")
    func mixedFolderAndReport() throws {
        let scratch = try Scratch()
        let input = try Self.mixedFolder(scratch)
        let out = scratch.file("out")
        let reportPath = scratch.file("report.json")
        let run = try CLI.cropzoom([
            "batch", input.path, "--out-dir", out.path, "--zoom", "1.4", "--preset", "ultrafast",
            "--report", reportPath.path, "--progress", "lines",
        ])
        #expect(run.status == 1, "\(run)")
        let expected: [String: (result: String, output: String?)] = [
            "a.mp4": ("ok", "a-zoom.mp4"), "sub/b.mp4": ("ok", "sub/b-zoom.mp4"), "c.mov": ("ok", "c-zoom.mov"),
            "broken.mp4": ("failed", nil), "notes.mp4": ("skipped", nil), "readme.txt": ("skipped", nil),
        ]
        let report = try Self.report(reportPath)
        #expect(report["schema"] as? String == "cropzoom-batch" && report["version"] as? Int == 1)
        let files = try #require(report["files"] as? [[String: Any]])
        #expect(files.count == expected.count)
        for f in files {
            let inputPath = try #require(f["input"] as? String)
            let rel = String(inputPath.dropFirst(input.path.count + 1))
            let want = try #require(expected[rel], "unexpected \(rel)")
            #expect(f["result"] as? String == want.result, "\(rel): \(f)")
            if let name = want.output {
                let output = out.appendingPathComponent(name)
                #expect(f["output"] as? String == output.path)
                #expect(
                    f["output_bytes"] as? Int
                        == (try FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int))
                let frames = try Oracle.decodedFrameHashes(output.path).count
                #expect(
                    frames > 0 && f["frames"] as? Int == frames,
                    "\(rel): \(frames) frames in the file, report \(f["frames"] ?? "-")")
                #expect(run.stdout.contains(inputPath) && run.stdout.contains(output.path))
            } else if want.result == "skipped" {
                // Not media: skipped with the reason, not failed (it must not make the batch exit 1).
                #expect(
                    f["reason"] as? String == "not a media file" && f["error"] == nil && f["exit_code"] == nil,
                    "\(rel): \(f)")
                let row = run.stdout.split(separator: "\n").first { $0.hasPrefix(inputPath) }
                #expect(row?.contains("skipped") == true && row?.contains("not a media file") == true, "\(run.stdout)")
            } else {
                let error = try #require(f["error"] as? String)
                #expect(error.contains(rel.split(separator: "/").last!), "\(rel): \(error)")
                #expect(f["exit_code"] as? Int == 3 && run.stdout.contains(error))
            }
        }
        #expect(
            (report["summary"] as? [String: Int])
                == [
                    "total": 6, "ok": 3, "failed": 1, "skipped": 2, "interrupted": 0, "not_started": 0, "salvaged": 0,
                ])
        #expect(report["jobs"] as? Int == max(1, UsableCPUs.count / 2))
        // Nothing else in the output folder: no partial or temporary files.
        #expect(
            Set(try FileManager.default.subpathsOfDirectory(atPath: out.path)) == [
                "a-zoom.mp4", "c-zoom.mov", "sub", "sub/b-zoom.mp4",
            ])
        #expect(run.stdout.contains("6 files: 3 ok, 1 failed, 2 skipped"), "\(run.stdout)")
        #expect(
            run.stderrLines.filter { $0.hasPrefix("batch: [") }.count == 4,
            "one progress line per file run (notes.mp4 and readme.txt are skipped at probing): \(run.stderr)")
    }

    @Test(
        """
        Ctrl-C: running files stop and leave nothing, no new file starts, exit 130; --skip-existing then finishes the \
        rest
        """
    )
    func interruptAndResume() throws {
        let scratch = try Scratch()
        let dir = try scratch.folder("in")
        for i in 1...4 {
            try FileManager.default.copyItem(
                at: try Files.sample("bench-720p.mp4"), to: dir.appendingPathComponent("clip\(i).mp4"))
        }
        let out = scratch.file("out")
        let args = [
            "batch", dir.path, "--out-dir", out.path, "--zoom", "1.3", "--jobs", "1", "--report",
            scratch.file("r1.json").path,
        ]
        // Sent once the first file is being written, however slowly the batch started (a sanitized build).
        let writing = { !Files.temporaryLeftovers(in: out).isEmpty }
        let first = try CLI.cropzoom(args, sending: SIGINT, once: writing)
        #expect(first.status == 130, "\(first)")
        let r1 = try Self.report(scratch.file("r1.json"))
        let files1 = try #require(r1["files"] as? [[String: Any]])
        let results1 = files1.map { $0["result"] as? String ?? "" }
        #expect(
            results1.allSatisfy { ["ok", "interrupted", "not started"].contains($0) }
                && results1.contains { $0 != "ok" }, "\(results1)")
        #expect(
            r1["interrupted"] as? Bool == true
                && (first.stdout.contains("interrupted") || first.stdout.contains("not started")))
        // Only complete outputs are there.
        let written = Files.names(in: out).filter { !$0.hasPrefix(".") }
        #expect(
            written.count == results1.filter { $0 == "ok" }.count && Files.temporaryLeftovers(in: out).isEmpty,
            "\(Files.names(in: out))")
        for name in written {
            #expect(try Oracle.decodedFrameHashes(out.appendingPathComponent(name).path).count == 150)
        }

        let second = try CLI.cropzoom([
            "batch", dir.path, "--out-dir", out.path, "--zoom", "1.3", "--jobs", "1", "--skip-existing",
            "--report", scratch.file("r2.json").path,
        ])
        #expect(second.status == 0, "\(second)")
        let files2 = try #require(try Self.report(scratch.file("r2.json"))["files"] as? [[String: Any]])
        for (a, b) in zip(files1, files2) {
            #expect(b["result"] as? String == (a["result"] as? String == "ok" ? "skipped" : "ok"), "\(a) then \(b)")
        }
        for i in 1...4 {
            #expect(try Oracle.decodedFrameHashes(out.appendingPathComponent("clip\(i)-zoom.mp4").path).count == 150)
        }
    }

    @Test(
        """
        a truncated clip in a batch is "salvaged", not "ok": the damage in the table's column and the report, exit 4 \
        (exit 0 without it); --strict fails it (exit 1, nothing written for it)
        """)
    func truncatedIsSalvaged() throws {
        let scratch = try Scratch()
        let dir = try scratch.folder("card")
        let fm = FileManager.default
        try fm.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: dir.appendingPathComponent("a.mp4"))
        try fm.copyItem(at: try Files.sample("truncated.mp4"), to: dir.appendingPathComponent("cut.mp4"))
        let out = scratch.file("z")
        let reportPath = scratch.file("r.json")
        let run = try CLI.cropzoom([
            "batch", dir.path, "--out-dir", out.path, "--report", reportPath.path, "--preset", "ultrafast",
            "--progress", "lines",
        ])
        #expect(run.status == 4, "\(run)")
        let files = try #require(try Self.report(reportPath)["files"] as? [[String: Any]])
        let cut = try #require(files.first { ($0["input"] as? String)?.hasSuffix("cut.mp4") == true })
        #expect(cut["result"] as? String == "salvaged", "\(cut)")
        #expect((cut["warning"] as? String)?.hasPrefix("truncated: the data ends at") == true, "\(cut)")
        let good = try #require(files.first { ($0["input"] as? String)?.hasSuffix("a.mp4") == true })
        #expect(good["result"] as? String == "ok" && good["warning"] == nil, "\(good)")
        #expect((try Self.report(reportPath)["summary"] as? [String: Int])?["salvaged"] == 1)
        let header = try #require(run.stdout.split(separator: "\n").first)
        #expect(header.contains("damage"), "\(run.stdout)")
        let row = try #require(run.stdout.split(separator: "\n").first { $0.contains("cut.mp4") })
        #expect(row.contains("salvaged") && row.contains("truncated: the data ends at"), "\(run.stdout)")
        #expect(run.stdout.contains("2 files: 1 ok, 1 salvaged, 0 failed, 0 skipped"), "\(run.stdout)")
        #expect(run.stderr.contains("salvaged \(dir.path)/cut.mp4: truncated"), "\(run.stderr)")

        let strictOut = scratch.file("strict")
        let strict = try CLI.cropzoom([
            "batch", dir.path, "--out-dir", strictOut.path, "--strict", "--preset", "ultrafast",
            "--progress", "none",
        ])
        #expect(strict.status == 1, "\(strict)")
        #expect(Files.names(in: strictOut) == ["a-zoom.mp4"], "\(Files.names(in: strictOut))")
        // Nothing damaged: exit 0 and no damage column.
        try fm.removeItem(at: dir.appendingPathComponent("cut.mp4"))
        let clean = try CLI.cropzoom([
            "batch", dir.path, "--out-dir", scratch.file("clean").path, "--preset", "ultrafast", "--progress", "none",
        ])
        #expect(clean.status == 0 && !clean.stdout.contains("damage"), "\(clean)")
    }

    @Test("--shard I/N: the shards together cover every input exactly once, each every N-th by sorted path")
    func shards() throws {
        let scratch = try Scratch()
        let dir = try scratch.folder("in")
        let names = (1...7).map { "f\($0).mp4" }
        for n in names {
            try FileManager.default.copyItem(at: try Files.sample("one-frame.mp4"), to: dir.appendingPathComponent(n))
        }
        var seen: [String] = []
        for i in 1...3 {
            let run = try CLI.cropzoom([
                "batch", dir.path, "--out-dir", scratch.file("out").path, "--dry-run", "--shard", "\(i)/3",
            ])
            try #require(run.status == 0, "\(run)")
            let mine = run.stdout.split(separator: "\n").map { String($0.prefix { $0 != ":" }) }.map {
                ($0 as NSString).lastPathComponent
            }
            #expect(mine == stride(from: i - 1, to: 7, by: 3).map { names[$0] }, "shard \(i)/3: \(mine)")
            seen += mine
        }
        #expect(seen.sorted() == names)
        #expect(!Files.exists(scratch.file("out")), "a dry run created the output folder")
        for bad in ["0/3", "4/3", "1/0", "x", "1/2/3"] {
            let r = try CLI.cropzoom(["batch", dir.path, "--out-dir", scratch.file("out").path, "--shard", bad])
            #expect(r.status == 2 && r.stderrLines.count == 1 && r.stderr.contains("--shard"), "\(bad): \(r)")
        }
    }

    @Test("refused before any work: two inputs, one output; an output that is an input; an existing output; no inputs")
    func conflicts() throws {
        let scratch = try Scratch()
        let x = try scratch.folder("x")
        let y = try scratch.folder("y")
        for d in [x, y] {
            try FileManager.default.copyItem(
                at: try Files.sample("one-frame.mp4"), to: d.appendingPathComponent("a.mp4"))
        }
        let out = scratch.file("out")
        let same = try CLI.cropzoom([
            "batch", x.appendingPathComponent("a.mp4").path, y.appendingPathComponent("a.mp4").path, "--out-dir",
            out.path,
        ])
        #expect(
            same.status == 2 && same.stderrLines.count == 1 && same.stderr.contains("would both be written"), "\(same)")
        #expect(!Files.exists(out))
        let intoInput = try CLI.cropzoom(["batch", x.path, "--out-dir", x.path, "--name", "{name}"])
        #expect(intoInput.status == 2 && intoInput.stderr.contains("is an input"), "\(intoInput)")
        let ok = try CLI.cropzoom(["batch", x.path, "--out-dir", out.path, "--progress", "none"])
        #expect(ok.status == 0, "\(ok)")
        let before = try Data(contentsOf: out.appendingPathComponent("a-zoom.mp4"))
        let again = try CLI.cropzoom(["batch", x.path, "--out-dir", out.path])
        #expect(again.status == 2 && again.stderr.contains("already exists"), "\(again)")
        #expect(try Data(contentsOf: out.appendingPathComponent("a-zoom.mp4")) == before)
        for bad in [
            ["batch", "--out-dir", out.path], ["batch", x.path], ["batch", "/nonexistent/dir", "--out-dir", out.path],
            ["batch", x.path, "--out-dir", out.path, "--name", "{stem}"],
            ["batch", x.path, "--out-dir", out.path, "--name", "fixed.mp4"],
            ["batch", x.path, "--out-dir", out.path, "--skip-existing", "-y"],
            ["batch", "\(x.path)/*.nothing", "--out-dir", out.path],
        ] {
            let r = try CLI.cropzoom(bad)
            #expect(r.status == 2 && r.stderrLines.count == 1, "\(bad): \(r)")
        }
    }

    @Test("--dry-run prints window, size, orientation, codecs and output per file and writes nothing; globs expand")
    func dryRunAndGlobs() throws {
        let scratch = try Scratch()
        let input = try Self.mixedFolder(scratch)
        let out = scratch.file("out")
        let run = try CLI.cropzoom([
            "batch", "\(input.path)/*.mp4", "\(input.path)/sub", "--out-dir", out.path, "--zoom", "1.5", "--dry-run",
        ])
        #expect(run.status == 0, "\(run)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "a.mp4, broken.mp4, notes.mp4 and sub/b.mp4: \(lines)")
        let a = try #require(lines.first { $0.hasPrefix(input.appendingPathComponent("a.mp4").path) })
        #expect(
            a.contains("window 426x240 at (106, 60) → 640x360") && a.contains("libx264 yuv420p")
                && a.contains("audio #1 copied")
                && a.hasSuffix("\(out.path)/a-zoom.mp4 (mp4)"), "\(a)")
        let b = try #require(lines.first { $0.contains("b.mp4") })
        #expect(
            b.contains("240x320") && b.contains("orientation rotate 90") && b.contains("\(out.path)/b-zoom.mp4"), "\(b)"
        )
        #expect(lines.contains { $0.hasSuffix("notes.mp4: skip (not a media file)") }, "\(lines)")
        #expect(!Files.exists(out))
    }

    @Test("a folder of links: links to files are taken (once, with their target), links to folders are not descended")
    func folderOfLinks() throws {
        let scratch = try Scratch()
        let clips = try scratch.folder("clips")
        let fm = FileManager.default
        try fm.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: clips.appendingPathComponent("a.mp4"))
        let picks = try scratch.folder("picks")
        try fm.createSymbolicLink(
            at: picks.appendingPathComponent("first.mp4"), withDestinationURL: clips.appendingPathComponent("a.mp4"))
        try fm.createSymbolicLink(
            at: picks.appendingPathComponent("again.mp4"), withDestinationURL: clips.appendingPathComponent("a.mp4"))
        try fm.createSymbolicLink(at: picks.appendingPathComponent("loop"), withDestinationURL: picks)
        try fm.createSymbolicLink(
            at: picks.appendingPathComponent("gone.mp4"),
            withDestinationURL: clips.appendingPathComponent("missing.mp4"))
        let out = scratch.file("out")
        let run = try CLI.cropzoom(["batch", picks.path, "--out-dir", out.path, "--zoom", "1.5", "--dry-run"])
        #expect(run.status == 0, "\(run)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        // again.mp4 sorts first and is kept; first.mp4 names the same file; loop/ and the dangling
        // link are passed over.
        #expect(
            lines.count == 1 && lines[0].hasPrefix(picks.appendingPathComponent("again.mp4").path)
                && lines[0].hasSuffix("\(out.path)/again-zoom.mp4 (mp4)"), "\(lines)")
    }

    @Test("--jobs shares the cores: never more files at once than cores, threads per file = cores / jobs")
    func jobsShareTheCores() throws {
        let scratch = try Scratch()
        let input = try Self.mixedFolder(scratch)
        let cores = UsableCPUs.count
        let run = try CLI.cropzoom([
            "batch", "\(input.path)/a.mp4", "--out-dir", scratch.file("out").path, "--jobs", "\(cores * 2)",
            "--report", scratch.file("r.json").path, "--progress", "none",
        ])
        #expect(run.status == 0 && run.stderr.contains("more than the \(cores) cores"), "\(run)")
        let report = try Self.report(scratch.file("r.json"))
        #expect(report["jobs"] as? Int == cores && report["threads_per_job"] as? Int == 1)
    }

    @Test("a re-run does not take the batch's own outputs as inputs: --out-dir inside the scanned folder, or itself")
    func ownOutputsAreNotInputs() throws {
        let scratch = try Scratch()
        let dir = try scratch.folder("in")
        let sub = try scratch.folder("in/sub")
        try FileManager.default.copyItem(at: try Files.sample("one-frame.mp4"), to: dir.appendingPathComponent("a.mp4"))
        try FileManager.default.copyItem(at: try Files.sample("one-frame.mp4"), to: sub.appendingPathComponent("b.mp4"))
        let cz = ChildProcess.shellQuoted([try CLI.binary()])
        let cases = [
            ("zoomed", ["zoomed/a-zoom.mp4", "zoomed/sub/b-zoom.mp4"]),
            (".", ["a-zoom.mp4", "sub/b-zoom.mp4"]),
        ]
        for (outDir, written) in cases {
            let batch =
                "cd \(ChildProcess.shellQuoted([dir.path])) && \(cz) batch . --out-dir \(outDir) --progress none"
            let first = try CLI.bash(batch)
            #expect(first.status == 0 && first.stdout.contains("2 files: 2 ok"), "\(outDir): \(first)")
            let again = try CLI.bash(batch + " --skip-existing")
            #expect(
                again.status == 0 && again.stdout.contains("2 files: 0 ok, 0 failed, 2 skipped"),
                "\(outDir): \(again)")
            for w in written { #expect(Files.exists(dir.appendingPathComponent(w)), "\(outDir): \(w)") }
            try FileManager.default.removeItem(at: dir.appendingPathComponent(written[0]))
            try FileManager.default.removeItem(at: dir.appendingPathComponent(written[1]))
        }
        let left = try FileManager.default.subpathsOfDirectory(atPath: dir.path).sorted()
        #expect(left == ["a.mp4", "sub", "sub/b.mp4", "zoomed", "zoomed/sub"], "no output of an output: \(left)")
        // With -y, a file the scan found is never replaced, even when it looks like an earlier output.
        let original = dir.appendingPathComponent("a-zoom.mp4")
        try FileManager.default.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: original)
        let before = try Data(contentsOf: original)
        let replace = try CLI.cropzoom(["batch", dir.path, "--out-dir", dir.path, "-y", "--progress", "none"])
        #expect(replace.status == 2 && replace.stderr.contains("a-zoom.mp4 is an input"), "\(replace)")
        #expect(try Data(contentsOf: original) == before)
    }

    @Test("an empty shard (more shards than files) succeeds with a note and an empty report")
    func emptyShard() throws {
        let scratch = try Scratch()
        let dir = try scratch.folder("in")
        for i in 1...2 {
            let name = dir.appendingPathComponent("f\(i).mp4")
            try FileManager.default.copyItem(at: try Files.sample("one-frame.mp4"), to: name)
        }
        let report = scratch.file("r.json")
        let out = scratch.file("out").path
        let run = try CLI.cropzoom(["batch", dir.path, "--out-dir", out, "--shard", "3/3", "--report", report.path])
        #expect(run.status == 0 && run.stderr.contains("note: shard 3/3 has no files (2 files in all)"), "\(run)")
        #expect(run.stdout.contains("0 files: 0 ok, 0 failed, 0 skipped"), "\(run)")
        #expect((try Self.report(report)["summary"] as? [String: Int])?["total"] == 0)
        let dry = try CLI.cropzoom(["batch", dir.path, "--out-dir", out, "--shard", "3/3", "--dry-run"])
        #expect(dry.status == 0 && dry.stdout.isEmpty, "\(dry)")
        // No files at all is still bad usage.
        let none = try CLI.cropzoom(["batch", try scratch.folder("empty").path, "--out-dir", out, "--shard", "1/2"])
        #expect(none.status == 2 && none.stderr.contains("no files in"), "\(none)")
    }

    @Test("--include/--exclude: a pattern with / matches the path under the folder, one without the name; any case")
    func includeExclude() throws {
        let scratch = try Scratch()
        let input = try Self.mixedFolder(scratch)
        let out = scratch.file("out").path
        func picked(_ args: [String]) throws -> [String] {
            let run = try CLI.cropzoom(["batch", input.path, "--out-dir", out, "--dry-run"] + args)
            try #require(run.status == 0, "\(args): \(run)")
            let inputs = run.stdout.split(separator: "\n").map { $0.prefix { $0 != ":" } }
            return inputs.map { String($0.dropFirst(input.path.count + 1)) }
        }
        #expect(try picked(["--include", "*.MP4"]) == ["a.mp4", "broken.mp4", "notes.mp4", "sub/b.mp4"])
        #expect(try picked(["--include", "sub/*"]) == ["sub/b.mp4"])
        #expect(
            try picked(["--include", "*.mp4", "--include", "*.mov", "--exclude", "sub/*", "--exclude", "no*"])
                == ["a.mp4", "broken.mp4", "c.mov"])
        let none = try CLI.cropzoom(["batch", input.path, "--out-dir", out, "--include", "*.avi"])
        #expect(none.status == 2 && none.stderr.contains("that --include/--exclude keep"), "\(none)")
    }

    @Test(
        """
        batch run is the default: batch DIR, batch run DIR and the old batch DIR --scheduler none write the same \
        files; two modes at once are refused (exit 2, one line naming both subcommands), nothing written
        """)
    func runIsTheDefault() throws {
        let scratch = try Scratch()
        let dir = try scratch.folder("in")
        let sample = try Files.sample("one-frame.mp4")
        for name in ["a.mp4", "b.mp4"] {
            try FileManager.default.copyItem(at: sample, to: dir.appendingPathComponent(name))
        }
        for (k, spelling) in [
            ["batch", dir.path], ["batch", "run", dir.path], ["batch", dir.path, "--scheduler", "none"],
        ].enumerated() {
            let out = scratch.file("out\(k)")
            let report = scratch.file("r\(k).json")
            let options = ["--out-dir", out.path, "--report", report.path, "--progress", "none"]
            let run = try CLI.cropzoom(spelling + options + ["--preset", "ultrafast"])
            #expect(run.status == 0 && run.stdout.contains("2 files: 2 ok, 0 failed"), "\(spelling): \(run)")
            #expect(Files.names(in: out) == ["a-zoom.mp4", "b-zoom.mp4"], "\(spelling)")
            #expect((try Self.report(report)["summary"] as? [String: Int])?["ok"] == 2, "\(spelling)")
        }
        let out = scratch.file("both")
        let both = try CLI.cropzoom(["batch", dir.path, "--out-dir", out.path, "--watch", "--scheduler", "slurm"])
        #expect(both.status == 2 && both.errorLines.count == 1 && both.stdout.isEmpty, "\(both)")
        #expect(both.stderr.contains("cropzoom batch watch …") && both.stderr.contains("cropzoom batch submit …"))
        #expect(!Files.exists(out))
    }
}
