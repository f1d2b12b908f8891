import ArgumentParser

/// `cropzoom report`: what can be done with batch reports (`merge`).
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Work with batch reports (--report JSON).",
        subcommands: [ReportMerge.self])
}
