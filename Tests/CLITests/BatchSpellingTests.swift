import ArgumentParser
import Testing

@testable import cropzoom

/// `batch`'s modes are subcommands (`run`, the default, `watch`, `submit`, `status`, `shard`); the spellings from
/// before them (`batch --watch`, `--scheduler slurm`, `--status DIR`, `--manifest FILE`) are routed to the same
/// subcommand with the same values (`BatchSpellings`), and two modes at once are refused naming both subcommands.
@Suite("Batch spellings")
struct BatchSpellingTests {
    /// The command `cropzoom ARGS` parses to, as main.swift parses it.
    func parse(_ args: [String]) throws -> ParsableCommand {
        try CropZoom.parseAsRoot(try BatchSpellings.route(args).arguments)
    }

    @Test("the old spellings route to the subcommands and parse to what the new spellings parse to")
    func oldSpellingsParseAsTheNew() throws {
        // batch INPUT… (run, the default) and batch run INPUT…, with --scheduler none (the old local batch).
        for args in [
            ["batch", "in", "--out-dir", "o", "--jobs", "2", "--zoom", "1.5"],
            ["batch", "run", "in", "--out-dir", "o", "--jobs", "2", "--zoom", "1.5"],
            ["batch", "in", "--scheduler", "none", "--out-dir", "o", "--jobs", "2", "--zoom", "1.5"],
            ["batch", "in", "--out-dir", "o", "--scheduler=none", "--jobs", "2", "--zoom", "1.5"],
        ] {
            let run = try #require(try parse(args) as? BatchRun, "\(args)")
            #expect(run.files.inputs == ["in"] && run.files.outDir == "o" && run.jobs.jobs == 2, "\(args)")
            #expect(run.settings.settings.arguments() == ["--zoom", "1.5"], "\(args)")
        }
        // --watch, anywhere among the options (a watch takes folders that exist).
        for args in [
            ["batch", "watch", "/tmp", "--out-dir", "o", "--settle", "5"],
            ["batch", "/tmp", "--watch", "--out-dir", "o", "--settle", "5"],
            ["batch", "--watch", "/tmp", "--out-dir", "o", "--settle", "5"],
        ] {
            let watch = try #require(try parse(args) as? BatchWatch, "\(args)")
            #expect(watch.files.inputs == ["/tmp"] && watch.files.outDir == "o" && watch.settle == 5, "\(args)")
        }
        // --scheduler slurm (either form).
        for args in [
            ["batch", "submit", "in", "--out-dir", "o", "--shards", "4", "--no-wait", "--retries", "2"],
            ["batch", "in", "--out-dir", "o", "--scheduler", "slurm", "--shards", "4", "--no-wait", "--retries", "2"],
            ["batch", "in", "--out-dir", "o", "--scheduler=slurm", "--shards", "4", "--no-wait", "--retries", "2"],
        ] {
            let submit = try #require(try parse(args) as? BatchSubmit, "\(args)")
            #expect(submit.files.inputs == ["in"] && submit.scheduler == .slurm && submit.shards == 4, "\(args)")
            #expect(submit.noWait && submit.retries == 2, "\(args)")
        }
        // --status DIR (either form).
        for args in [["batch", "status", "/data/out"], ["batch", "--status", "/data/out"], ["batch", "--status=/o"]] {
            let status = try #require(try parse(args) as? BatchStatus, "\(args)")
            #expect(status.outDir == (args.count == 2 ? "/o" : "/data/out"), "\(args)")
        }
        // --manifest FILE (either form), with the options the job script gives.
        for args in [
            ["batch", "shard", "m.json", "--shard", "auto", "--requeue-exit", "75", "--jobs", "2"],
            ["batch", "--manifest", "m.json", "--shard", "auto", "--requeue-exit", "75", "--jobs", "2"],
            ["batch", "--shard", "auto", "--manifest=m.json", "--requeue-exit", "75", "--jobs", "2"],
        ] {
            let shard = try #require(try parse(args) as? BatchShard, "\(args)")
            #expect(shard.manifest == "m.json" && shard.shard == "auto" && shard.requeue.requeueExit == 75, "\(args)")
            #expect(shard.jobs.jobs == 2, "\(args)")
        }
    }

    @Test("what is not an old spelling is left alone: the new spellings, other commands, words after --, values")
    func othersUntouched() throws {
        for args in [
            ["batch", "watch", "in", "--out-dir", "o"], ["transcode", "--status", "x"], ["batch"],
            ["batch", "in", "--out-dir", "o", "--", "--watch"],
            ["batch", "in", "--out-dir", "o", "--scheduler-option", "--watch"],
        ] {
            let routed = try BatchSpellings.route(args)
            #expect(routed == BatchSpellings.Routed(arguments: args), "\(args)")
        }
        let routed = try BatchSpellings.route(["batch", "in", "--watch", "--out-dir", "o"])
        #expect(routed.arguments == ["batch", "watch", "in", "--out-dir", "o"])
        #expect(routed.old == "cropzoom batch --watch" && routed.new == "cropzoom batch watch")
    }

    @Test("two modes at once are refused (exit 2), naming both subcommands")
    func twoModes() throws {
        for (args, names) in [
            (["batch", "in", "--watch", "--scheduler", "slurm"], ["batch watch", "batch submit"]),
            (["batch", "--status", "o", "--manifest", "m.json"], ["batch status", "batch shard"]),
        ] {
            do {
                _ = try BatchSpellings.route(args)
                Issue.record("\(args) was not refused")
            } catch {
                #expect(error.exitCode == 2, "\(args)")
                for name in names { #expect(error.description.contains("cropzoom \(name) …"), "\(args): \(error)") }
            }
        }
        // --scheduler none is no mode of its own: with --watch it is the watch.
        let watch = try BatchSpellings.route(["batch", "in", "--watch", "--scheduler", "none", "--out-dir", "o"])
        #expect(watch.arguments == ["batch", "watch", "in", "--out-dir", "o"])
    }
}
