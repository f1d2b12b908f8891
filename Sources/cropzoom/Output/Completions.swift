import ArgumentParser

/// `--generate-completion-script SHELL`: ArgumentParser's script, taught the default command. ArgumentParser offers a
/// root's sub-command names only, so `cropzoom clip.mp4 --zo<TAB>` — the form the README teaches — completed
/// nothing. Here a first word that is no sub-command's name (an input, an option) completes as `transcode`'s, and
/// the first word also completes as a file.
enum Completions {
    /// The script for `shell` ("bash", "zsh", "fish"), or nil for a shell ArgumentParser does not know.
    static func script(for shell: String) -> String? {
        guard let kind = CompletionShell(rawValue: shell) else { return nil }
        let script = CropZoom.completionScript(for: kind)
        let names = CropZoom.configuration.subcommands.map { $0._commandName } + ["help"]
        switch kind {
        case .bash: return bash(script, names)
        case .zsh: return zsh(script, names)
        case .fish: return fish(script)
        default: return script
        }
    }

    /// The root's fall-back (`*)`: offer sub-command names) becomes: a later word, or an option, goes to
    /// `_cropzoom_transcode` with every word after `cropzoom`; the first word is also a file.
    static func bash(_ script: String, _ names: [String]) -> String {
        let offer = "        COMPREPLY+=($(compgen -W '\(names.joined(separator: " "))' -- \"${cur}\"))\n"
        let fallback = "    *)\n        # Offer subcommand completions\n" + offer + "        ;;\n"
        let replacement =
            "    *)\n"
            + "        # The default command (transcode): an input, then its options.\n"
            + "        if [[ \"${COMP_CWORD}\" -gt 1 || \"${cur}\" == -* ]]; then\n"
            + "            unparsed_words=(\"${COMP_WORDS[@]:1:${COMP_CWORD}}\")\n"
            + "            _cropzoom_transcode\n"
            + "        else\n"
            + "    " + offer
            + "            __cropzoom_add_completions -f\n"
            + "        fi\n"
            + "        ;;\n"
        return script.replacingOccurrences(of: fallback, with: replacement)
    }

    /// Before the root's `_arguments`: a first word that is no sub-command's name hands the line to
    /// `_cropzoom_transcode` (which reads `cropzoom clip.mp4 --zo` as `transcode clip.mp4 --zo`); the first word also
    /// completes as a file.
    static func zsh(_ script: String, _ names: [String]) -> String {
        let anchor = "    local -i ret=1\n    local -ar arg_specs=(\n        '--version[Show the version.]'"
        let dispatch =
            "    # The default command (transcode): an input, then its options.\n"
            + "    if (( CURRENT > 2 )) || [[ \"${words[2]}\" == -* ]]; then\n"
            + "        case \"${words[2]}\" in\n"
            + "        \(names.joined(separator: "|"))|-h|--help|--version) ;;\n"
            + "        *) _cropzoom_transcode; return ;;\n"
            + "        esac\n"
            + "    fi\n"
        var out = script.replacingOccurrences(of: anchor, with: dispatch + anchor)
        out = out.replacingOccurrences(
            of: "        _describe -V subcommand subcommands && ret=0\n",
            with: "        _describe -V subcommand subcommands && ret=0\n        _files && ret=0\n")
        return out
    }

    /// The token parser's sub-command switch gains a last case: any other first word is `transcode`'s input.
    static func fish(_ script: String) -> String {
        let lines = script.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let i = lines.firstIndex(where: { $0.hasPrefix("        case 'transcode'") }), i + 1 < lines.count
        else { return script }
        let parse = lines[i + 1]
        var out = lines
        // After the last case of that switch (its `end` at the same indentation as `switch`).
        guard let end = lines[(i + 1)...].firstIndex(where: { $0 == "        end" }) else { return script }
        // (Only once that word is complete, or when an option is typed: a first word being typed is a sub-command or a
        // file.)
        out.insert(
            contentsOf: [
                "        case '*'",
                "            if test (count $unparsed_tokens) -ge 1; or string match -q -- '-*' (commandline -ct)",
                "                set -p unparsed_tokens transcode",
                "    " + parse,
                "            end",
            ], at: end)
        out.append(
            "complete -c 'cropzoom' -n '__cropzoom_should_offer_completions_for_positional \"cropzoom\" -eq 1' -F")
        return out.joined(separator: "\n")
    }
}
