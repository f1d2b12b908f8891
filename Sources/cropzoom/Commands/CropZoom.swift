import ArgumentParser

/// The root command: its subcommands, one per file in this folder (transcode is the default).
struct CropZoom: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cropzoom",
        abstract:
            "Crop, zoom, rotate and rescale recorded video frame by frame, keeping every frame, audio packet and "
            + "timestamp.",
        discussion: """
            Exit codes: 0 ok, 1 failed while processing, 2 bad usage, 3 input unreadable, \
            130 interrupted (SIGINT), 143 terminated (SIGTERM).
            """,
        version: "0.1.0",
        subcommands: [
            Transcode.self, Batch.self, RunJobFile.self, ReportCommand.self, ProbeCommand.self, Bench.self,
            AnalyzeMotion.self, Recover.self,
        ],
        defaultSubcommand: Transcode.self)
}
