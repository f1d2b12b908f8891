import ArgumentParser
import CropZoomKit
import Foundation

/// `cropzoom report merge r1.json r2.json … -o all.json`: one report from the reports of a batch's shards, or of
/// several runs of one shard (`BatchReport.merge`).
struct ReportMerge: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge batch reports (the shards of one batch, or the runs of one) into one.",
        discussion: """
            Every report must be of the same output folder. A file named by several reports gets the entry of the \
            last one (in the order given) in which it ran or was skipped; an entry that says interrupted or not \
            started gives way to one that says what became of the file. The merged table is printed. Exit codes: \
            0 merged (whatever the files' results), 2 a report missing, unreadable, of another folder, or an \
            output that exists without -y.
            """)

    @Argument(help: ArgumentHelp("The reports (batch --report JSON).", valueName: "report.json"))
    var reports: [String] = []

    @Option(name: .shortAndLong, help: ArgumentHelp("The merged report.", valueName: "FILE.json"))
    var output: String?

    @Flag(name: [.customShort("y"), .long], help: "Replace the output if it exists.")
    var overwrite = false

    func validate() throws {
        if reports.isEmpty { throw ValidationError("no report to merge: name the reports") }
        guard let output else { throw ValidationError("missing -o FILE.json (the merged report)") }
        if RawPath.exists(output) && !overwrite { throw ValidationError("-o \(output) exists (add -y to replace it)") }
        if reports.contains(where: { FileIdentity.same($0, output) }) {
            throw ValidationError("-o \(output) is one of the reports: a merge never replaces its input")
        }
    }

    func run() throws {
        let merged = try BatchReport.merge(try reports.map(BatchReport.read), names: reports)
        try Bench.writeAtomically(try merged.json(), to: output!)
        Stdout.write(Batch.table(merged.files))
    }
}
