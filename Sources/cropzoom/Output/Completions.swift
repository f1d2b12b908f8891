import ArgumentParser

/// `--generate-completion-script SHELL`: ArgumentParser's script, taught the default commands. ArgumentParser offers a
/// command's sub-command names only, so `cropzoom clip.mp4 --zo<TAB>` — the form the README teaches — completed
/// nothing, nor did `cropzoom batch clips --zo<TAB>`. Here, in `cropzoom` and in `cropzoom batch`, a first word that is
/// no sub-command's name (an input, an option) completes as the default's (`transcode`, `batch run`), and the first
/// word also completes as a file.
enum Completions {
    /// A command with a default sub-command: its words (`cropzoom`, `cropzoom batch`), its sub-commands' names as the
    /// script offers them, and the default's name.
    struct Default {
        var path: [String]
        var names: [String]
        var defaultName: String

        /// The script's function for the command, or for one of its sub-commands.
        func function(_ subcommand: String? = nil) -> String {
            "_" + (path + (subcommand.map { [$0] } ?? [])).joined(separator: "_")
        }
    }

    /// The root (whose sub-commands include ArgumentParser's `help`) and each of its commands that has a default.
    static var defaults: [Default] {
        let root = CropZoom.configuration
        var out = [
            Default(
                path: ["cropzoom"], names: root.subcommands.map { $0._commandName } + ["help"],
                defaultName: root.defaultSubcommand?._commandName ?? "transcode")
        ]
        for command in root.subcommands {
            guard let name = command.configuration.defaultSubcommand?._commandName else { continue }
            out.append(
                Default(
                    path: ["cropzoom", command._commandName],
                    names: command.configuration.subcommands.map { $0._commandName }, defaultName: name))
        }
        return out
    }

    /// The script for `shell` ("bash", "zsh", "fish"), or nil for a shell ArgumentParser does not know.
    static func script(for shell: String) -> String? {
        guard let kind = CompletionShell(rawValue: shell) else { return nil }
        var script = CropZoom.completionScript(for: kind)
        for command in defaults {
            switch kind {
            case .bash: script = bash(script, command)
            case .zsh: script = zsh(script, command)
            case .fish: script = fish(script, command)
            default: break
            }
        }
        if kind == .zsh {
            // A first word that is no sub-command may be an input: files too.
            script = script.replacingOccurrences(
                of: "        _describe -V subcommand subcommands && ret=0\n",
                with: "        _describe -V subcommand subcommands && ret=0\n        _files && ret=0\n")
        }
        return script
    }

    /// `body` with `change` applied to the text of the shell function `name` only (from `name() {` to its closing
    /// brace at the start of a line).
    static func inFunction(_ name: String, of script: String, _ change: (String) -> String) -> String {
        guard let start = script.range(of: "\n\(name)() {\n"),
            let end = script.range(of: "\n}\n", range: start.upperBound..<script.endIndex)
        else { return script }
        return script.replacingCharacters(
            in: start.upperBound..<end.lowerBound, with: change(String(script[start.upperBound..<end.lowerBound])))
    }

    /// The command's fall-back (`*)`: offer sub-command names) becomes: a later word, or an option, goes to the
    /// default's function with every word after the command's; the first word is also a file.
    static func bash(_ script: String, _ command: Default) -> String {
        let depth = command.path.count
        let offer = "        COMPREPLY+=($(compgen -W '\(command.names.joined(separator: " "))' -- \"${cur}\"))\n"
        let fallback = "    *)\n        # Offer subcommand completions\n" + offer + "        ;;\n"
        let replacement =
            "    *)\n"
            + "        # The default command (\(command.defaultName)): an input, then its options.\n"
            + "        if [[ \"${COMP_CWORD}\" -gt \(depth) || \"${cur}\" == -* ]]; then\n"
            + "            unparsed_words=(\"${COMP_WORDS[@]:\(depth):$((COMP_CWORD - \(depth - 1)))}\")\n"
            + "            \(command.function(command.defaultName))\n"
            + "        else\n"
            + "    " + offer
            + "            __cropzoom_add_completions -f\n"
            + "        fi\n"
            + "        ;;\n"
        return inFunction(command.function(), of: script) { $0.replacingOccurrences(of: fallback, with: replacement) }
    }

    /// Before the command's `_arguments`: a first word that is no sub-command's name hands the line to the default's
    /// function (which reads `cropzoom clip.mp4 --zo` as `transcode clip.mp4 --zo`).
    static func zsh(_ script: String, _ command: Default) -> String {
        let anchor = "    local -i ret=1\n    local -ar arg_specs=(\n"
        let dispatch =
            "    # The default command (\(command.defaultName)): an input, then its options.\n"
            + "    if (( CURRENT > 2 )) || [[ \"${words[2]}\" == -* ]]; then\n"
            + "        case \"${words[2]}\" in\n"
            + "        \(command.names.joined(separator: "|"))|-h|--help|--version) ;;\n"
            + "        *) \(command.function(command.defaultName)); return ;;\n"
            + "        esac\n"
            + "    fi\n"
        return inFunction(command.function(), of: script) { body in
            guard let at = body.range(of: anchor) else { return body }
            return body.replacingCharacters(in: at.lowerBound..<at.lowerBound, with: dispatch)
        }
    }

    /// The token parser's switch of the command's sub-commands gains a last case: any other first word is the
    /// default's input. The first word also completes as a file.
    static func fish(_ script: String, _ command: Default) -> String {
        let lines = script.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let indent = String(repeating: " ", count: 4 * command.path.count)
        let inner = indent + "    "
        // The command's case in its parent's switch, then its default's case and the end of its own switch.
        guard let parent = lines.firstIndex(of: indent + "case '\(command.path.last!)'"),
            let i = lines[parent...].firstIndex(of: inner + "case '\(command.defaultName)'"), i + 1 < lines.count,
            let end = lines[(i + 1)...].firstIndex(of: inner + "end")
        else { return script }
        let parse = lines[i + 1]
        var out = lines
        // (Only once that word is complete, or when an option is typed: a first word being typed is a sub-command or a
        // file.)
        out.insert(
            contentsOf: [
                inner + "case '*'",
                inner + "    if test (count $unparsed_tokens) -ge 1; or string match -q -- '-*' (commandline -ct)",
                inner + "        set -p unparsed_tokens \(command.defaultName)",
                "    " + parse,
                inner + "    end",
            ], at: end)
        let words = command.path.joined(separator: " ")
        out.append(
            "complete -c 'cropzoom' -n '__cropzoom_should_offer_completions_for_positional \"\(words)\" -eq 1' -F")
        return out.joined(separator: "\n")
    }
}
