import ArgumentParser

/// The batch modes as they were spelled before they became subcommands — flags of one `batch` command — rewritten to
/// the subcommands before parsing (main.swift), so that scripts and job scripts written for them keep working:
///
///     batch DIR --watch --out-dir OUT …        → batch watch DIR --out-dir OUT …
///     batch --status DIR                       → batch status DIR
///     batch … --scheduler slurm --shards N …   → batch submit … --scheduler slurm --shards N …
///     batch --manifest FILE --shard auto …     → batch shard FILE --shard auto …
///     batch … --scheduler none …               → batch … (run, as it always did)
///
/// ArgumentParser cannot do this itself: a word that is no subcommand's name sends the whole line to the default
/// subcommand (`run`), which does not know `--watch`. Two modes at once were refused before and are refused here, with
/// the new spellings (exit 2).
enum BatchSpellings {
    /// `arguments` as parsed, and for an old spelling what it was and what it is now (`cropzoom batch --watch`,
    /// `cropzoom batch watch`), for the hint on a usage error.
    struct Routed: Equatable {
        var arguments: [String]
        var old: String?
        var new: String?
    }

    /// The subcommand a mode flag stands for, and whether the flag's value becomes the subcommand's argument (`--status
    /// DIR` → `status DIR`) or stays an option (`--scheduler slurm`).
    private static let modes: [(flag: String, subcommand: String, valueIsArgument: Bool?)] = [
        ("--watch", "watch", nil),
        ("--status", "status", true),
        ("--manifest", "shard", true),
        ("--scheduler", "submit", false),
    ]

    static func route(_ arguments: [String]) throws(CommandError) -> Routed {
        let unchanged = Routed(arguments: arguments)
        let names = Batch.configuration.subcommands.map { $0._commandName } + ["help"]
        guard arguments.count >= 2, arguments[0] == "batch", !names.contains(arguments[1]) else { return unchanged }
        var rest: [String] = []
        var found: [(old: String, subcommand: String)] = []
        var argument: [String] = []
        var i = 1
        while i < arguments.count {
            let word = arguments[i]
            if word == "--" {
                rest += arguments[i...]
                break
            }
            // The value of an option that takes any word (`--zoom -1`, `--scheduler-option=…` spelled apart).
            if FFmpegSpellings.takesAnyValue.contains(word) {
                rest += arguments[i..<min(i + 2, arguments.count)]
                i += 2
                continue
            }
            let flag = String(word.split(separator: "=", maxSplits: 1).first ?? "")
            guard let mode = modes.first(where: { $0.flag == flag }) else {
                rest.append(word)
                i += 1
                continue
            }
            var value: String? = nil
            var words = [word]
            if let equals = word.firstIndex(of: "=") {
                value = String(word[word.index(after: equals)...])
            } else if mode.valueIsArgument != nil, i + 1 < arguments.count {
                value = arguments[i + 1]
                words.append(arguments[i + 1])
            }
            i += words.count
            switch mode.valueIsArgument {
            case nil:
                found.append((word, mode.subcommand))
            case true?:
                found.append((words.joined(separator: " "), mode.subcommand))
                argument = value.map { [$0] } ?? []
            case false?:
                // `--scheduler none` was the local batch: `run`, without the option.
                if value == "none" {
                    found.append((words.joined(separator: " "), "run"))
                    continue
                }
                found.append((words.joined(separator: " "), mode.subcommand))
                rest += words
            }
        }
        guard let first = found.first(where: { $0.subcommand != "run" }) ?? found.first else { return unchanged }
        if let other = found.first(where: { $0.subcommand != first.subcommand && $0.subcommand != "run" }) {
            throw CommandError.usage(
                "batch \(first.old) and \(other.old) are two different batch commands: cropzoom batch "
                    + "\(first.subcommand) … or cropzoom batch \(other.subcommand) … (see cropzoom batch --help)")
        }
        return Routed(
            arguments: ["batch", first.subcommand] + argument + rest, old: "cropzoom batch \(first.old)",
            new: "cropzoom batch \(first.subcommand)")
    }
}
