// Shell completions (issue 27 item 17), run in the real shells: bash's completion function called as bash calls it,
// fish's `complete -C`, and zsh's completion system driven through a pseudo-terminal (zsh/zpty) with a real TAB.
// The form the README teaches everywhere — `cropzoom clip.mp4 --zo<TAB>`, the default command — completes, as does
// batch's default (`cropzoom batch clips --out<TAB>`, batch run) and its subcommands, and settings with a fixed set
// of values offer them.

import Foundation
import Testing

@Suite("Shell completions")
struct CompletionTests {
    /// A folder with `clip.mp4` in it and the script for `shell` written there.
    static func setUp(_ shell: String) throws -> (Scratch, String) {
        let scratch = try Scratch()
        try Data().write(to: scratch.file("clip.mp4"))
        let script = scratch.file("cropzoom.\(shell)").path
        let run = try CLI.bash("\(try CLI.binary()) --generate-completion-script \(shell) > \(script)")
        try #require(run.status == 0, "\(run)")
        return (scratch, script)
    }

    static let lines = [
        "cropzoom clip.mp4 --zo", "cropzoom --zo", "cropzoom clip.mp4 --scaler ", "cropzoom clip.mp4 --kernel ",
        "cropzoom b", "cropzoom cl", "cropzoom batch x --zo", "cropzoom batch x --out", "cropzoom batch w",
        "cropzoom batch watch x --se",
    ]

    /// What each of ``lines`` should offer (at least).
    static let expected: [[String]] = [
        ["--zoom"], ["--zoom"], ["bicubic", "bilinear", "lanczos", "area", "neighbor"], ["auto", "zimg", "swscale"],
        ["batch", "bench"], ["clip.mp4"], ["--zoom"], ["--out-dir"], ["watch"], ["--settle"],
    ]

    @Test("bash: the default command's options, files, sub-commands and --scaler/--kernel values are offered")
    func bash() throws {
        let (scratch, script) = try Self.setUp("bash")
        // ArgumentParser's other spelling of the option gives the same script.
        let joined = try CLI.cropzoom(["--generate-completion-script=bash"])
        #expect(joined.stdout == (try String(contentsOfFile: script, encoding: .utf8)), "the = form differs")
        var body = "source \(script)\ncd \(scratch.url.path)\n"
        body += """
            offer() {
                read -r -a COMP_WORDS <<< "$1"
                [[ "$1" == *" " ]] && COMP_WORDS+=("")
                COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
                _cropzoom cropzoom "${COMP_WORDS[$COMP_CWORD]}" "${COMP_WORDS[$COMP_CWORD-1]}"
                echo "${COMPREPLY[*]}"
            }

            """
        for line in Self.lines { body += "offer '\(line)'\n" }
        let file = scratch.file("run.bash").path
        try body.write(toFile: file, atomically: true, encoding: .utf8)
        let run = try CLI.bash("bash \(file)")
        let got = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (i, line) in Self.lines.enumerated() {
            let offered = Set((i < got.count ? got[i] : "").split(separator: " ").map(String.init))
            #expect(Set(Self.expected[i]).isSubset(of: offered), "bash: '\(line)' offered \(offered)")
        }
    }

    @Test("fish: the same, through complete -C")
    func fish() throws {
        let (scratch, script) = try Self.setUp("fish")
        for (i, line) in Self.lines.enumerated() {
            let run = try CLI.bash(
                "cd \(scratch.url.path) && fish -c 'source \(script); complete -C \"\(line)\"' | cut -f1")
            let offered = Set(run.stdout.split(separator: "\n").map(String.init))
            #expect(Set(Self.expected[i]).isSubset(of: offered), "fish: '\(line)' offered \(offered) \(run.stderr)")
        }
    }

    @Test("zsh: TAB in an interactive zsh completes the default command's options, files and values")
    func zsh() throws {
        let (scratch, script) = try Self.setUp("zsh")
        let driver = scratch.file("drive.zsh").path
        try """
        zmodload zsh/zpty
        zpty z 'zsh -f -i'
        zpty -w z 'PS1="> "; autoload -U compinit; compinit -u -D; setopt nolistbeep; LISTMAX=1000'
        zpty -w z 'source \(script); compdef _cropzoom cropzoom; cd \(scratch.url.path)'
        zpty -w -n z "$1"$'\\t'
        sleep 1.5
        out=''
        while zpty -r -t z more; do out+=$more; done
        print -r -- "$out"
        zpty -d z
        """.write(toFile: driver, atomically: true, encoding: .utf8)
        // zsh inserts a single match and lists several: either way each expected word shows after the line.
        let zshLines: [(String, [String])] = [
            ("cropzoom clip.mp4 --zo", ["--zoom"]), ("cropzoom --zo", ["--zoom"]),
            ("cropzoom clip.mp4 --scaler la", ["lanczos"]),
            ("cropzoom clip.mp4 --kernel ", ["auto", "zimg", "swscale"]),
            ("cropzoom cl", ["clip.mp4"]), ("cropzoom batch x --zo", ["--zoom"]),
            // batch's default (run) has --out-dir where transcode has --output.
            ("cropzoom batch x --out-d", ["--out-dir"]), ("cropzoom batch watch x --sett", ["--settle"]),
        ]
        for (line, words) in zshLines {
            let run = try CLI.bash("zsh \(driver) '\(line)'")
            // What the terminal shows (escape sequences and backspaces removed): a single match inserted after the
            // typed line, several listed after it.
            let plain = run.stdout.replacingOccurrences(
                of: "\u{1B}\\[[0-9;?]*[a-zA-Z]|\u{8}", with: "", options: .regularExpression)
            let typed = line.split(separator: " ", omittingEmptySubsequences: false).last.map(String.init) ?? ""
            let stem = String(line.dropLast(typed.count))
            let listed = plain.components(separatedBy: line).dropFirst().joined()
            for word in words {
                #expect(
                    plain.contains(stem + word) || listed.contains(word),
                    "zsh: '\(line)' showed \(plain.suffix(300).debugDescription)")
            }
        }
    }
}
