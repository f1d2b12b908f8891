import ArgumentParser

/// `cropzoom --generate-manual`: a man page (roff, `man -l` reads it) made from the commands' own help, so it never
/// disagrees with `--help`: NAME, SYNOPSIS, DESCRIPTION with the common options, one section per command with its
/// full help (a subsection for each of its subcommands: `batch run`, `batch watch` …), EXIT STATUS and SEE
/// ALSO. It is checked in as docs/man/cropzoom.1, which CI regenerates and compares (scripts/manpage.sh, which also
/// says why swift-argument-parser's generate-manual plugin is not used: its page loses every non-ASCII character of
/// the help); `scripts/install.sh` writes it to share/man/man1/cropzoom.1 from the binary it installs.
enum ManualPage {
    static func text() -> String {
        let root = CropZoom.configuration
        var out = ".TH CROPZOOM 1 \"\" \"cropzoom \(CropZoom.version)\" \"User Commands\"\n"
        out += ".SH NAME\ncropzoom \\- \(escape(root.abstract))\n"
        out += ".SH SYNOPSIS\n.B cropzoom\n\\fIINPUT\\fR \\fB\\-o\\fR \\fIOUTPUT\\fR [\\fIoptions\\fR]\n.br\n"
        out += ".B cropzoom\n\\fICOMMAND\\fR [\\fIarguments\\fR]\n"
        out += ".SH DESCRIPTION\n.nf\n" + escape(root.discussion) + "\n.fi\n"
        for command in root.subcommands {
            let name = command._commandName
            out += ".SH \"cropzoom \(name)\"\n.nf\n"
            out += escape(CropZoom.helpMessage(for: command, columns: 100)) + "\n.fi\n"
            // A command's own subcommands (`batch run`, `batch watch`, …), each in a subsection.
            for subcommand in command.configuration.subcommands {
                out += ".SS \"cropzoom \(name) \(subcommand._commandName)\"\n.nf\n"
                out += escape(CropZoom.helpMessage(for: subcommand, columns: 100)) + "\n.fi\n"
            }
        }
        out +=
            ".SH \"EXIT STATUS\"\n0 ok, 1 failed while processing, 2 bad usage, 3 input unreadable, 4 done from damaged "
        out += "input (batch, run), 130 interrupted (SIGINT), 143 terminated (SIGTERM).\n"
        out += ".SH \"SEE ALSO\"\nffmpeg(1), ffprobe(1); README.md and docs/ in the source for the details.\n"
        return out
    }

    /// Text as roff reads it literally: backslashes, hyphens, and a leading dot or quote.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(".") || $0.hasPrefix("'") ? "\\&" + $0 : String($0) }
            .joined(separator: "\n")
    }
}
