import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom batch`: many inputs, one output folder, N files at a time. Each file is its own
/// `cropzoom transcode` process (a file that crashes a decoder cannot take the batch with it),
/// with the machine's threads shared between the files that run at once. One subcommand per way of running a batch,
/// one per file in this folder (as SwiftPM's `package config` has `set-mirror`, `unset-mirror`, `get-mirror`); `run`
/// is the default. The spellings from before the subcommands (`batch --watch`, …) are routed to them
/// (``BatchSpellings``).
struct Batch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Transcode many files (files, folders, globs) into one output folder, several at a time.",
        discussion: """
              cropzoom batch INPUT… --out-dir DIR [options]
                  the files here, several at a time (batch run, the default)
              cropzoom batch watch FOLDER… --out-dir DIR [options]
                  each media file in the folders once it is complete, until Ctrl-C
              cropzoom batch submit INPUT… --out-dir DIR --shards N [options]
                  on Slurm: a job array of N shards, waited for, one table and report
              cropzoom batch status DIR
                  where a batch submitted into DIR stands
              cropzoom batch shard MANIFEST --shard I/N|auto
                  one shard of a submitted batch (what its job script runs)

            The earlier spellings still work: batch --watch, batch --scheduler slurm, batch --status DIR, \
            batch --manifest FILE. Exit codes: 0 every file succeeded (or was skipped), 4 none failed but some \
            input was salvaged, 1 some file failed, 2 bad usage (nothing was started), 130 interrupted (SIGINT; \
            143 SIGTERM). cropzoom batch SUBCOMMAND --help gives each one's options.
            """,
        subcommands: [BatchRun.self, BatchWatch.self, BatchSubmit.self, BatchStatus.self, BatchShard.self],
        defaultSubcommand: BatchRun.self)
}
