import ArgumentParser
import CropZoomKit

/// The root command: its subcommands, one per file in this folder (transcode is the default).
struct CropZoom: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "cropzoom",
        abstract:
            "Crop, zoom, rotate and rescale recorded video frame by frame, keeping every frame, audio packet and "
            + "timestamp.",
        discussion: """
            Without a sub-command, cropzoom transcodes: cropzoom INPUT -o OUTPUT [options]. \
            The options typed most (all of them: cropzoom transcode --help):

            \(commonOptions)

            Exit codes: 0 ok, 1 failed while processing, 2 bad usage, 3 input unreadable, \
            4 done from damaged input (batch, run), 130 interrupted (SIGINT), 143 terminated (SIGTERM).
            """,
        version: "cropzoom \(version)\n" + LibraryVersions.description,
        subcommands: subcommands,
        defaultSubcommand: Transcode.self)

    /// The subcommands, transcode (the default) first.
    static let subcommands: [ParsableCommand.Type] = [
        Transcode.self, Batch.self, RunJobFile.self, ReportCommand.self, ProbeCommand.self, Bench.self,
        AnalyzeMotion.self, Repair.self, Recover.self,
    ]

    /// A named subcommand other than transcode, parsed as a root of its own: the same parse, without the root's
    /// first look at `cropzoom repair …` building transcode's hundred-odd options to learn whether `repair` might be
    /// one of its values, nor the root's help and version texts (3.5 ms of a small repair's 60:
    /// docs/design/repair.md, "Session 9"). nil for the root's own requests (help, version, completions), which name
    /// the command in full, and for transcode.
    static func parseNamedSubcommand(_ arguments: [String]) throws -> ParsableCommand? {
        let rootRequests: Set<String> = ["-h", "--help", "help", "--version", "--experimental-dump-help"]
        guard let name = arguments.first,
            let command = namedSubcommands[name],
            !arguments.contains(where: { rootRequests.contains($0) || $0.hasPrefix("--generate-completion") })
        else { return nil }
        return try command.parseAsRoot(Array(arguments.dropFirst()))
    }

    /// The subcommands other than transcode by name, spelled here: a command's `_commandName` builds its whole
    /// configuration (batch's help text alone was 1 ms of a small repair). `CommandNameTests` checks the table against
    /// ``subcommands``.
    static let namedSubcommands: [String: ParsableCommand.Type] = [
        "batch": Batch.self, "run": RunJobFile.self, "report": ReportCommand.self, "probe": ProbeCommand.self,
        "bench": Bench.self, "analyze-motion": AnalyzeMotion.self, "repair": Repair.self, "recover": Recover.self,
    ]

    /// `-o`, `-y` and the settings a first run uses, one line each within 80 columns (the flags from the settings
    /// table).
    static var commonOptions: String {
        let audio = Setting.audio.choices?.joined(separator: "|") ?? "MODE"
        let rows: [(String, String)] = [
            ("-o, --output FILE", "Output file; its extension picks the container"),
            ("-y, --overwrite", "Replace an existing output"),
            ("\(Setting.zoom.flag) Z", "Zoom (1.65, or keyframes '0s:1, 4s:1.65')"),
            ("\(Setting.center.flag) X,Y", "Where to zoom: fractions of the picture (0.5,0.5)"),
            ("\(Setting.crop.flag) W:H[:X:Y]", "Crop a window, in pixels"),
            ("\(Setting.size.flag) WxH", "Output size (1280x-2 keeps the shape)"),
            ("\(Setting.rotate.flag) DEGREES", "Rotate by any angle"),
            ("\(Setting.start.flag) T, \(Setting.end.flag) T", "Trim (seconds or hh:mm:ss; also --duration T)"),
            ("\(Setting.codec.flag) NAME", "h264, hevc, av1, vp9 … (default: from -o's type)"),
            ("\(Setting.crf.flag) N, \(Setting.preset.flag) NAME", "The encoder's quality and speed"),
            ("\(Setting.audio.flag) \(audio)", "The sound (default auto: copy when it fits)"),
            ("--progress bar|json|none", "How progress is shown"),
        ]
        let width = (rows.map(\.0.count).max() ?? 0) + 2
        return rows.map { "  " + $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + $0.1 }
            .joined(separator: "\n")
    }
}
