// `cropzoom repair` beyond a single MP4 without its index (issue 31 items 1, 3, 4): a repair inside a transcode and a
// batch (`--reference`), a fragmented recording cut mid-fragment (no reference needed), and `repair FOLDER` for the
// recordings cropzoom's own killed runs left.

import Foundation
import Testing

@Suite("Repair: in transcodes, batches, fragments and folders")
struct RepairWorkflowTests {
    /// The `done` record of a `--progress json` run's stderr.
    static func done(_ stderr: String) -> [String: Any]? {
        stderr.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        .last { $0["event"] as? String == "done" }
    }

    @Test(
        """
        a transcode with --reference repairs an input without its index first and transcodes what came back: every \
        frame (zoomed) and every audio packet of the original, the repair in the done record and a notice; nothing \
        left beside the output; an input with its index is read as it is (a notice); a reference from other settings \
        fails with exit 2 and leaves nothing
        """)
    func transcodeWithReference() throws {
        let scratch = try Scratch()
        let (original, reference, broken) = try RepairTests.brokenRecording(in: scratch)
        let audio = try Oracle.packets(original.path, streamIndex: 1).count
        let out = scratch.file("out.mp4")
        let run = try CLI.cropzoom([
            broken.path, "--reference", reference.path, "-o", out.path, "--zoom", "1.5", "--progress", "json",
        ])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("\(broken.path): repaired with \(reference.path) (--reference): 60 video frames"))
        #expect(try Oracle.packets(out.path, streamIndex: 0).count == 60)
        // The sound is copied: the original's packets, byte for byte.
        let copied = try Oracle.packets(out.path, streamIndex: 1)
        #expect(copied.map(\.hash) == (try Oracle.packets(original.path, streamIndex: 1)).map(\.hash))
        #expect(copied.count == audio)
        let record = Self.done(run.stderr)
        let repair = record?["repair"] as? [String: Any]
        let tracks = repair?["tracks"] as? [[String: Any]]
        #expect(tracks?.map { $0["samples"] as? Int } == [60, audio], "\(run.stderr)")
        #expect(repair?["audio_start_offset"] is Double, "\(run.stderr)")
        #expect(Files.names(in: scratch.url) == ["broken.mp4", "original.mp4", "out.mp4", "reference.mp4"])

        // Not broken: read as it is.
        let plain = try CLI.cropzoom([original.path, "--reference", reference.path, "-o", out.path, "-y"])
        #expect(plain.status == 0, "\(plain)")
        #expect(plain.stderr.contains("has its index (moov): --reference is not needed"), "\(plain.stderr)")

        // A reference from other settings: the repair's refusal, nothing written.
        let wide = scratch.file("wide.mp4")
        try RepairTests.recording(wide, content: "testsrc", tone: 880, seconds: 1, size: "1280x720")
        let other = scratch.file("other.mp4")
        let refused = try CLI.cropzoom([broken.path, "--reference", wide.path, "-o", other.path])
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.stderr.contains("do not decode with the reference's parameters (1280x720"), "\(refused)")
        #expect(
            !Files.exists(other) && Files.temporaryLeftovers(in: scratch.url).isEmpty, "\(Files.names(in: scratch.url))"
        )
    }

    @Test(
        """
        a transcode with --reference into each container a transcode writes (MOV, Matroska and WebM with their 1 ms \
        clock, MPEG-TS, FLV) gives what the same transcode of the complete original gives, packet for packet: every \
        picture at the original's time and the sound copied (re-encoded for WebM), moved together only where the \
        container cannot start before 0 (TS, FLV: by the encoder's B-frame delay), the offset between them kept
        """, arguments: ["mov", "mkv", "ts", "flv", "webm"])
    func transcodeWithReferenceInto(_ ext: String) throws {
        let scratch = try Scratch()
        let (original, reference, broken) = try RepairTests.brokenRecording(in: scratch)
        let out = scratch.file("out.\(ext)")
        let healthy = scratch.file("healthy.\(ext)")
        let run = try CLI.cropzoom([broken.path, "--reference", reference.path, "-o", out.path, "--zoom", "1.5"])
        #expect(run.status == 0, "\(run)")
        let plain = try CLI.cropzoom([original.path, "-o", healthy.path, "--zoom", "1.5"])
        #expect(plain.status == 0, "\(plain)")
        for stream in 0..<2 {
            let (a, b) = (
                try Oracle.packets(out.path, streamIndex: stream), try Oracle.packets(healthy.path, streamIndex: stream)
            )
            #expect(
                a.count == b.count && a.map(\.ptsTime) == b.map(\.ptsTime), "stream \(stream): \(a.count), \(b.count)")
            #expect(a.map(\.hash) == b.map(\.hash), "stream \(stream): the packets' bytes differ")
        }
        // Against the original: every picture at its time, after the container's common shift.
        let (truth, pictures) = (try Oracle.videoFramePTS(original.path), try Oracle.videoFramePTS(out.path))
        #expect(pictures.count == 60 && truth.count == 60, "\(pictures.count) pictures")
        let shift = (pictures.min() ?? 0) - (truth.min() ?? 0)
        #expect(shift == 0 || (["ts", "flv"].contains(ext) && shift > 0 && shift <= 0.1), "shifted by \(shift) s")
        let video = try #require(try Oracle.streams(out.path).first { $0.codecType == "video" })
        let tolerance = Contract.tolerance(video.timeBase)
        #expect(zip(truth, pictures).allSatisfy { abs($1 - shift - $0) <= tolerance }, "\(pictures)")
        if ext != "webm" {
            // MPEG-TS carries AAC with ADTS headers: the times and the offset are compared, not the bytes.
            let audio = try Contract.checkCopiedAudio(
                input: original.path, output: out, compareHashes: ext != "ts", shift: shift)
            #expect(audio.isEmpty, "\(audio)")
        }
        #expect(
            Files.names(in: scratch.url)
                == ["broken.mp4", "healthy.\(ext)", "original.mp4", "out.\(ext)", "reference.mp4"].sorted())
    }

    @Test(
        """
        batch --reference: a folder's file without its index is repaired and transcoded beside a whole one (both ok); \
        without --reference it fails naming the way out; --dry-run plans it from the reference
        """)
    func batchWithReference() throws {
        let scratch = try Scratch()
        let (original, reference, broken) = try RepairTests.brokenRecording(in: scratch)
        let inputs = scratch.file("in")
        try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: broken, to: inputs.appendingPathComponent("broken.mp4"))
        try FileManager.default.copyItem(at: original, to: inputs.appendingPathComponent("whole.mp4"))
        let outs = scratch.file("out")
        let plan = try CLI.cropzoom([
            "batch", "run", inputs.path, "--out-dir", outs.path, "--reference", reference.path, "--zoom", "1.2",
            "--dry-run",
        ])
        #expect(plan.status == 0, "\(plan)")
        // Planned from the reference (same camera, same settings): the broken file's line is a plan, not an error.
        let line = plan.stdout.split(separator: "\n").first {
            $0.hasPrefix(inputs.appendingPathComponent("broken.mp4").path)
        }
        #expect(line?.contains("640x360") == true && line?.contains("broken-zoom.mp4") == true, "\(plan.stdout)")
        let run = try CLI.cropzoom([
            "batch", "run", inputs.path, "--out-dir", outs.path, "--reference", reference.path, "--zoom", "1.2",
        ])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("2 files: 2 ok"), "\(run.stdout)")
        for name in ["broken-zoom.mp4", "whole-zoom.mp4"] {
            #expect(try Oracle.packets(outs.appendingPathComponent(name).path, streamIndex: 0).count == 60, "\(name)")
        }
        #expect(Files.temporaryLeftovers(in: outs).isEmpty, "\(Files.names(in: outs))")
        let without = try CLI.cropzoom(["batch", "run", inputs.path, "--out-dir", scratch.file("out2").path])
        #expect(without.status == 1, "\(without)")
        #expect(without.stdout.contains("no index (moov)") && without.stdout.contains("--reference GOOD"), "\(without)")
    }

    @Test(
        """
        a fragmented recording cut mid-fragment needs no reference: its whole fragments are copied into a regular \
        MP4 (every whole packet with identical bytes at its time, a clean decode, no moof left), the cut reported; a \
        whole fragmented file is not broken (exit 2)
        """)
    func fragmentedCut() throws {
        let scratch = try Scratch()
        let original = scratch.file("fragmented.mp4")
        try RepairTests.recording(
            original, content: "testsrc2", tone: 440, seconds: 6,
            more: ["-bf", "3", "-g", "30", "-movflags", "+frag_keyframe+empty_moov"])
        let size = try #require(try FileManager.default.attributesOfItem(atPath: original.path)[.size] as? Int)
        let cut = scratch.file("cut.mp4")
        try Data(try Data(contentsOf: original).prefix(size * 4 / 5)).write(to: cut)
        let fixed = scratch.file("fixed.mp4")
        let run = try CLI.cropzoom(["repair", cut.path, "-o", fixed.path, "--json"])
        #expect(run.status == 0, "\(run)")
        let report = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(report?["reference"] == nil, "\(run.stdout)")
        let gaps = report?["gaps"] as? [[String: Any]]
        #expect(gaps?.count == 1 && gaps?.first?["reason"] as? String == "cut", "\(run.stdout)")
        #expect((gaps?.first?["offset"] as? Int ?? 0) + (gaps?.first?["bytes"] as? Int ?? 0) == size * 4 / 5)
        let (streams, decode) = try RepairTests.score(original: original, broken: cut, repaired: fixed)
        for s in streams {
            #expect(s["whole"] as? Int == s["recovered"] as? Int && (s["whole"] as? Int ?? 0) > 100, "\(s)")
            #expect(s["foreign"] as? Int == 0 && s["pts_error"] as? Double == 0, "\(s)")
        }
        #expect(decode.isEmpty, "\(decode)")
        let boxes = try Contract.topLevelBoxes(fixed).map(\.type)
        #expect(!boxes.contains("moof") && boxes.contains("moov"), "\(boxes)")

        let whole = try CLI.cropzoom(["repair", original.path, "-o", scratch.file("again.mp4").path])
        #expect(whole.status == 2 && whole.stderr.contains("is fragmented, with every fragment whole"), "\(whole)")
    }

    @Test(
        """
        repair FOLDER lists (--list) and restores what a killed cropzoom recording left (.NAME.cropzoom-rec-PID of a \
        process that is gone) as STEM-recovered-PID.EXT, as recover does; a file and a folder together, or -o with \
        folders, are usage errors (exit 2)
        """)
    func folderOfLeftovers() throws {
        let scratch = try Scratch()
        // A process id that was alive and is gone.
        let gone = Process()
        gone.executableURL = URL(fileURLWithPath: "/bin/true")
        try gone.run()
        gone.waitUntilExit()
        let pid = gone.processIdentifier
        let hidden = scratch.file(".live.mp4.cropzoom-rec-\(pid)")
        try FileManager.default.copyItem(at: try Files.sample("std-h264-aac.mp4"), to: hidden)
        let listed = try CLI.cropzoom(["repair", "--list", scratch.url.path])
        #expect(listed.status == 0 && listed.stdout.contains("live-recovered-\(pid).mp4"), "\(listed)")
        #expect(Files.exists(hidden), "--list moved it")
        let restored = try CLI.cropzoom(["repair", scratch.url.path])
        #expect(restored.status == 0, "\(restored)")
        let back = scratch.file("live-recovered-\(pid).mp4")
        #expect(restored.stdout.contains("as \(back.path)") && !Files.exists(hidden), "\(restored)")
        #expect(try Oracle.packets(back.path, streamIndex: 0).count > 0)
        for args in [["repair", scratch.url.path, back.path], ["repair", scratch.url.path, "-o", "x.mp4"]] {
            let bad = try CLI.cropzoom(args)
            #expect(bad.status == 2, "\(bad)")
        }
    }

    @Test(
        """
        a repair onto a disk that fills (the file written on a thread of its own): exit 1 with one line naming the \
        output and the disk's reason, nothing left — at the sample being written when it fills early or mid-way, at \
        the latest with the index; with room, every picture
        """)
    func fullDisk() throws {
        let scratch = try Scratch()
        let (_, reference, broken) = try RepairTests.brokenRecording(in: scratch, seconds: 8)
        let whole = scratch.file("whole.mp4")
        let first = try CLI.cropzoom(["repair", broken.path, "--reference", reference.path, "-o", whole.path])
        try #require(first.status == 0, "\(first)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: whole.path)[.size] as? Int)
        let disk = try FaultTests.TmpfsMount(at: scratch.file("disk"), kilobytes: 64)
        let folder = URL(fileURLWithPath: disk.path)
        for fraction in [0.05, 0.4, 0.97, 1.5] {
            let kilobytes = max(8, Int(Double(size) * fraction) / 1024)
            try disk.remount("size=\(kilobytes)k")
            let output = folder.appendingPathComponent("fixed.mp4")
            let label = "a disk of \(kilobytes) KiB for \(size / 1024) KiB"
            let run = try CLI.cropzoom(["repair", broken.path, "--reference", reference.path, "-o", output.path])
            if fraction > 1 {
                #expect(run.status == 0, "\(label): \(run)")
                #expect(try Oracle.packets(output.path, streamIndex: 0).count == 240, "\(label)")
            } else {
                // Early and mid-way the writer's own error stops the walk (FFmpeg's buffered I/O tells a full disk
                // at its next flush); near the end the index's write is where it shows.
                let reason = fraction < 0.5 ? "\(output.path): writing: No space left on device" : "No space left"
                #expect(run.status == 1 && run.errorLines.count == 1, "\(label): \(run)")
                #expect(
                    run.errorLines.first?.contains(output.path) == true
                        && run.errorLines.first?.contains(reason) == true, "\(label): \(run)")
                #expect(Files.names(in: folder).isEmpty, "\(label): left \(Files.names(in: folder))")
            }
            for name in Files.names(in: folder) {
                try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
            }
        }
    }

    @Test(
        """
        interrupted (SIGINT, SIGTERM) while the set-up reads the reference and while the walk writes: exit 128 + the \
        signal with one line naming the output, nothing there and no temporary left, the broken file and the reference \
        as they were — a signal during the reference's reading said exit 2, "reading the reference: Immediate exit \
        requested"
        """)
    func interrupted() throws {
        let scratch = try Scratch()
        // Five minutes of small pictures and 8 kHz PCM: 7,500 pictures to read in the reference's index and to walk.
        let reference = scratch.file("reference.mov")
        try RepairTests.recording(
            reference, content: "testsrc", tone: 440, seconds: 300, more: ["-c:a", "pcm_s16le"], channels: 1,
            size: "160x120", sound: "sine=frequency=440:sample_rate=8000", rate: 25)
        let broken = scratch.file("broken.mov")
        try RepairTests.cutBeforeIndex(reference, to: broken)
        let (brokenBytes, referenceBytes) = (try Data(contentsOf: broken), try Data(contentsOf: reference))
        let fixed = scratch.file("fixed.mov")
        let writing = { Files.names(in: scratch.url).contains { $0.hasPrefix(".fixed.mov.cropzoom-tmp-") } }
        // The set-up opens the reference, then FFmpeg does, then the temporary output is made.
        let stages: [(name: String, ready: () -> Bool)] = [
            (
                "reading the reference",
                { Self.openFiles(ofCommandNaming: fixed.path).contains(reference.path) && !writing() }
            ),
            ("walking", writing),
        ]
        for signal in [SIGINT, SIGTERM] {
            for stage in stages {
                let run = try CLI.cropzoom(
                    ["repair", broken.path, "--reference", reference.path, "-o", fixed.path], sending: signal,
                    once: stage.ready)
                let label = "signal \(signal) while \(stage.name)"
                #expect(!run.killedBySignal && run.status == 128 + signal, "\(label): \(run)")
                #expect(run.stderr == "cropzoom: error: \(fixed.path): interrupted; nothing written\n", "\(label)")
                #expect(!Files.exists(fixed) && Files.temporaryLeftovers(in: scratch.url).isEmpty, "\(label)")
            }
        }
        #expect(try Data(contentsOf: broken) == brokenBytes && Data(contentsOf: reference) == referenceBytes)
    }

    /// The files open in the running process whose command line names `argument` (`/proc/PID/fd`).
    static func openFiles(ofCommandNaming argument: String) -> [String] {
        let fm = FileManager.default
        for pid in (try? fm.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(pid) != nil {
            guard let line = fm.contents(atPath: "/proc/\(pid)/cmdline"),
                line.split(separator: 0).contains(where: { String(decoding: $0, as: UTF8.self) == argument })
            else { continue }
            let fds = (try? fm.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            return fds.compactMap { try? fm.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
        }
        return []
    }
}
