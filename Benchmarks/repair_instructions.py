#!/usr/bin/env python3
"""`cropzoom repair` against untrunc on a 2 MB recording, counted in instructions rather than timed (issue 31's "faster
than it"; docs/design/repair.md, "Session 13").

A 2 MB repair takes 50-80 ms, and this machine's wall times move by a third from one hour to the next, so a few
milliseconds of change cannot be seen in them. Valgrind's callgrind counts the instructions each thread of a run
executes; that count does not move with the machine's load (two runs of one binary differ by under 0.1 %), so it
shows what a change did to the work itself — not what it did to page faults, cache misses or waiting between threads,
which repair_speed.py's wall times still judge.

Each tool repairs case d (repair_peers.py's; made when missing) with the `hflip-full` reference, into an emptied
folder, under `valgrind --tool=callgrind --separate-threads=yes`; cropzoom's binary is run from a copy without its
debug information (valgrind's reader gives up on the Swift binary's). The page lists each run's total and each
thread's, named by what it runs (the loader and the command line, the walk, the picture check, the reference's probe,
the writer), and the functions of note on the critical path.

Needs valgrind (`apt-get install valgrind`). Writes Benchmarks/results/repair-instructions.md; the raw callgrind
files go to WORK/instructions/.

Usage: python3 Benchmarks/repair_instructions.py [--before OLD_CROPZOOM] [--cropzoom .build/release/cropzoom]
       [--untrunc Benchmarks/work/untrunc/untrunc]
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

from repair_peers import HERE, REPO, machine, make_case

# What a thread runs, by a function only it calls (callgrind's names, mangled for Swift).
# The walk hands pictures to the check and samples to the writer, and the writer waits for the probe: the others are
# named by the closure their own thread starts in (`…cfcyyYbcfU…`, the closure given to `Thread` in `init`).
ROLES = [
    ("main: loader, command line, summary", r"rtld\.c:_dl_start\b"),
    ("walk (set-up, the media data)", r"MediaWalkerC4walk"),
    ("picture check (its first pictures decoded: 4 from e26beaf, 12 before)", r"BackgroundPictureCheckC\w*cfcyyYbcfU_ "),
    ("writer (the muxer)", r"BackgroundRemuxC\w*cfcyyYbcfU0_ "),
    ("reference probe (avformat_find_stream_info)", r"ReferenceProbeC4pathACSS_tcfcyyYbcfU_ "),
]
# Functions worth a line: (label, pattern in callgrind's inclusive listing).
NOTED = [
    ("the dynamic loader (`_dl_start`)", r"\brtld\.c:_dl_start\b"),
    ("cropzoom's main (`cropzoom_main`)", r"\?\?\?:cropzoom_main "),
    ("ArgumentParser: the repair command parsed", r"parseNamedSubcommand"),
    ("Swift runtime: protocol conformance look-ups", r"swift_conformsToProtocolMaybeInstantiateSuperclasses\(swift"),
    ("the walk", r"MediaWalkerC4walk8progress"),
    ("its AAC syntax (frame lengths)", r"AACSyntaxO(11frameLength|5parse)"),
    ("the reference's probe", r"ReferenceProbeC4path"),
    ("the picture check's decoding", r"RecoveredPictureCheckC3add"),
]


def callgrind(argv, out):
    """Runs argv under callgrind, one file per thread at out-NN; {thread number: instructions}."""
    for f in glob.glob(out + "-*"):
        os.remove(f)
    p = subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={out}"]
                       + argv, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"{argv[0]} exited {p.returncode}: {p.stderr.strip().splitlines()[-3:]}")
    totals = {}
    for f in sorted(glob.glob(out + "-*")):
        for line in open(f):
            if line.startswith("summary:"):
                totals[f] = int(line.split()[1])
                break
    return totals


def inclusive(files):
    """callgrind_annotate's inclusive listing of every thread's file, joined."""
    text = ""
    for f in files:
        text += subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", f],
                               capture_output=True, text=True).stdout
    return text


def count(listing, pattern):
    """The largest inclusive count of a function matching pattern (its outermost frame), or 0."""
    best = 0
    for line in listing.splitlines():
        m = re.match(r"\s*([\d,]+) \(", line)
        if m and re.search(pattern, line):
            best = max(best, int(m.group(1).replace(",", "")))
    return best


def run_tool(label, argv, out_dir, work):
    folder = os.path.join(work, "instructions", "out-" + label.replace(" ", "-"))
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    argv = [a.replace("{o}", os.path.join(folder, "repaired.mov")) for a in argv]
    threads = callgrind(argv, os.path.join(out_dir, label.replace(" ", "-") + ".callgrind"))
    rows = []
    for f, n in threads.items():
        listing = inclusive([f])
        # (Valgrind runs one thread at a time and gives an ended thread's number to the next: one file can hold
        # the probe and then the writer.)
        role = "its one thread" if len(threads) == 1 else " + ".join(
            name for name, key in ROLES if re.search(key, listing)) or "other"
        rows.append((role, n, f))
    noted = inclusive(list(threads))
    return dict(label=label, total=sum(threads.values()), threads=sorted(rows, key=lambda r: -r[1]),
                noted={name: count(noted, pat) for name, pat in NOTED})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cropzoom", default=os.path.join(REPO, ".build/release/cropzoom"))
    ap.add_argument("--before", help="an older cropzoom binary, counted beside")
    ap.add_argument("--untrunc", default=os.path.join(HERE, "work/untrunc/untrunc"))
    ap.add_argument("--work", default=os.path.join(HERE, "work/repair"))
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("repair_instructions: valgrind is needed (apt-get install valgrind)")
    case = make_case("d", ["hflip-full"], args.work, print)
    broken, reference = case["broken"], case["references"]["hflip-full"]
    out_dir = os.path.join(args.work, "instructions")
    os.makedirs(out_dir, exist_ok=True)
    tools = [("cropzoom", args.cropzoom)] + ([("cropzoom before", args.before)] if args.before else [])
    runs = []
    for label, binary in tools:
        stripped = os.path.join(out_dir, label.replace(" ", "-") + ".stripped")
        subprocess.run(["objcopy", "--strip-debug", binary, stripped], check=True)
        runs.append(run_tool(label, [stripped, "repair", broken, "-o", "{o}", "--reference", reference, "-y"],
                             out_dir, args.work))
    runs.append(run_tool("untrunc", [args.untrunc, "-n", "-dst", "{o}", reference, broken], out_dir, args.work))
    m = machine(args.cropzoom, args.untrunc)
    lines = ["# `cropzoom repair` against untrunc: a 2 MB repair counted in instructions", "",
             f"{m['date']}: cropzoom {m['cropzoom_commit']}" + (" (sources changed)" if m["cropzoom_dirty"] else "")
             + f", untrunc {m['untrunc_commit']}; {m['nproc']} cores ({m['cpu']}), Linux {m['kernel']}. "
             "Case d of repair_peers.py (640x360 H.264 with B-frames + AAC in MOV, one-second chunks, 20 s, 2.1 MB) "
             "repaired with the `hflip-full` reference, each tool once under valgrind's callgrind "
             "(`--separate-threads=yes`): the instructions each thread executed. Counts, not times: they do not move "
             "with the machine's load, and they leave out page faults, cache misses and the waits between threads, "
             "which [repair-speed.md](repair-speed.md) times. Written by `Benchmarks/repair_instructions.py`"
             + (f" with `--before` {os.path.basename(args.before)}" if args.before else "") + ".", "",
             "| tool | instructions in all | per thread (millions) |", "|---|---|---|"]
    for r in runs:
        per = "; ".join(f"{role} {n / 1e6:.1f}" for role, n, _ in r["threads"] if n > 1e6)
        lines.append(f"| {r['label']} | {r['total'] / 1e6:.1f} M | {per} |")
    lines += ["", "![instructions per tool and thread](repair-instructions.svg)", "",
              "(Valgrind runs one thread at a time and gives an ended thread's number to the next, so the probe and "
              "the writer, which starts after it under valgrind, share a line. The main thread's count includes the "
              "dynamic loader, the same for both tools within 5 %: below.)"]
    lines += ["", "Functions of note (instructions, millions; inclusive: with what they call):", "",
              "| function | " + " | ".join(r["label"] for r in runs if r["label"] != "untrunc") + " |",
              "|---|" + "---|" * (len(runs) - 1)]
    for name, _ in NOTED:
        lines.append(f"| {name} | " + " | ".join(f"{r['noted'][name] / 1e6:.1f}" for r in runs
                                                    if r["label"] != "untrunc") + " |")
    u = next(r for r in runs if r["label"] == "untrunc")
    lines += ["", f"untrunc's dynamic loader: {u['noted']['the dynamic loader (`_dl_start`)'] / 1e6:.1f} M of its "
              f"{u['total'] / 1e6:.1f} M (one thread).", "", "Commands:", "", "```"]
    lines.append(f"valgrind --tool=callgrind --separate-threads=yes cropzoom repair {os.path.relpath(broken, HERE)} "
                 f"-o OUT --reference {os.path.relpath(reference, HERE)} -y")
    lines.append(f"valgrind --tool=callgrind --separate-threads=yes untrunc -n -dst OUT "
                 f"{os.path.relpath(reference, HERE)} {os.path.relpath(broken, HERE)}")
    lines += ["```", ""]
    page = os.path.join(HERE, "results", "repair-instructions.md")
    with open(page, "w") as f:
        f.write("\n".join(lines))
    with open(page[:-3] + ".svg", "w") as f:
        f.write(svg(runs))
    print("wrote", page, "and .svg")


def svg(runs):
    """One bar per tool, its threads stacked (millions of instructions)."""
    colours = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1"]
    roles = []
    for r in runs:
        for role, n, _ in r["threads"]:
            if n > 1e6 and role not in roles:
                roles.append(role)
    width, left, bar, gap = 760, 130, 34, 22
    top = 40
    h = top + len(runs) * (bar + gap) + 30 + 18 * len(roles)
    scale = (width - left - 70) / max(r["total"] for r in runs)
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h}" font-family="sans-serif" '
         'font-size="12">', f'<rect width="{width}" height="{h}" fill="white"/>',
         '<text x="10" y="22" font-size="14">A 2 MB repair (case d): instructions executed, per thread (millions)'
         '</text>']
    for i, r in enumerate(runs):
        y = top + i * (bar + gap)
        s.append(f'<text x="10" y="{y + bar / 2 + 4}">{r["label"]}</text>')
        x = left
        for role, n, _ in r["threads"]:
            if n <= 1e6:
                continue
            w = n * scale
            c = colours[roles.index(role) % len(colours)]
            s.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar}" fill="{c}" stroke="white"/>')
            if w > 34:
                s.append(f'<text x="{x + 4:.1f}" y="{y + bar / 2 + 4}" fill="white">{n / 1e6:.0f}</text>')
            x += w
        s.append(f'<text x="{x + 4:.1f}" y="{y + bar / 2 + 4}">{r["total"] / 1e6:.0f} M</text>')
    y = top + len(runs) * (bar + gap) + 10
    for j, role in enumerate(roles):
        s.append(f'<rect x="{left}" y="{y + 18 * j}" width="12" height="12" fill="{colours[j % len(colours)]}"/>')
        s.append(f'<text x="{left + 18}" y="{y + 18 * j + 10}">{role}</text>')
    s.append("</svg>")
    return "\n".join(s)


if __name__ == "__main__":
    main()
