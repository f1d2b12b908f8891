#!/usr/bin/env python3
"""`cropzoom repair` against untrunc on speed alone (issue 31: "faster than it"; docs/design/repair.md, "Session 7").

The cases are repair_peers.py's (made by it when missing, in the same work folder): d (640x360 MOV, B-frames,
one-second chunks, 2.1 MB), i (1280x720, 120 s, B-frames + AAC, 42 MB) and j (the same without B-frames, 47 MB),
with the references untrunc recovers every packet with (`hflip-full`; on j also the 5 s `hflip`), so that both
tools walk the whole file; and k (160x120 at 25 fps, 300 s, 7,500 small pictures between runs of 8 kHz PCM, 15 MB:
where the walk's cost per sample shows) with the original itself as the reference (the only one untrunc walks it
whole with), and l, k made by resampling (its sound's chunks vary by a sample frame), where untrunc stops after one
picture with any reference: its time is listed, cropzoom's is the time to recover the whole file. The tools run alternately — cropzoom, untrunc (and `--before`, an older cropzoom, when
given), the order reversed every other round — for --rounds rounds, each writing into a folder emptied before the run (cropzoom looks for a killed run's
temporaries beside its output), under /usr/bin/time (user + system CPU, peak RSS; the wall time to the millisecond by
this script's clock). Each run must exit 0 and
write a file; cropzoom's outputs must be identical from round to round (what they hold is scored in
repair-peers.md). Quoted: medians and the ratio cropzoom / untrunc, and round by round (the two runs of a round a
second apart, under the same load: this machine's load moves a 50 ms run's median by a few ms from one sitting to the
next) the median of the rounds' ratios and how many rounds cropzoom was the quicker; every run is in the page.

With `--large`, the 4.6 GB recording of repair_large.py (made by it, in Benchmarks/work/repair-large) too, for
`--large-rounds` rounds: there the disk's writing is much of the time (untrunc stops at 4.2 % of it: its time is
listed, not compared).

Run it with nothing else on the machine: the page records the load average before and after.

Writes Benchmarks/results/repair-speed.md and repair-speed.svg; the raw runs go to WORK/speed.json.

Usage: python3 Benchmarks/repair_speed.py [--rounds 9] [--before OLD_CROPZOOM] [--large [--large-rounds 3]]
       [--markdown-only]
       [--cropzoom .build/release/cropzoom] [--untrunc Benchmarks/work/untrunc/untrunc]
"""
import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from repair_peers import HERE, REPO, machine, make_case, write_pages

# (case, reference) pairs: both tools walk the whole file with these references (repair-peers.md); on k (small
# pictures and PCM) untrunc does so only with the original itself as the reference ("original" is that file); on l
# it stops after one picture with any.
PAIRS = [("d", "hflip-full"), ("i", "hflip-full"), ("j", "hflip"), ("j", "hflip-full"), ("k", "original"),
         ("l", "original")]


def run(argv):
    """Runs argv under /usr/bin/time: dict(exit, wall, cpu, rss_mib). The wall time is this script's clock around the
    run (to the millisecond; /usr/bin/time gives it to 10 ms), CPU and peak RSS are /usr/bin/time's."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", t.name] + argv,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - start
        user, system, rss = t.read().split()[-3:]
    return dict(exit=p.returncode, wall=wall, cpu=float(user) + float(system), rss_mib=int(rss) / 1024,
                stderr=p.stderr.strip().splitlines()[-1:] if p.returncode else [])


def md5(path):
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tools(args):
    rows = [("cropzoom", lambda b, r, o: [args.cropzoom, "repair", b, "--reference", r, "-o", o]),
            ("untrunc", lambda b, r, o: [args.untrunc, "-n", "-dst", o, r, b])]
    if args.before:
        rows.append(("cropzoom before", lambda b, r, o: [args.before, "repair", b, "--reference", r, "-o", o]))
    return rows


def measure(args):
    log = lambda s: print(s, file=sys.stderr, flush=True)
    rows = tools(args)
    data = dict(machine=machine(args.cropzoom, args.untrunc), rounds=args.rounds, tools=[l for l, _ in rows],
                before=args.before, before_label=args.before_label, load_before=os.getloadavg(), pairs=[])
    cases = {}
    pairs = list(PAIRS)
    if args.large:
        large = os.path.join(HERE, "work", "repair-large")
        if not os.path.exists(os.path.join(large, "broken.mp4")):
            sys.exit("repair_speed.py: --large needs Benchmarks/work/repair-large (python3 repair_large.py makes it)")
        cases["large"] = dict(broken=os.path.join(large, "broken.mp4"), broken_bytes=os.path.getsize(
            os.path.join(large, "broken.mp4")), title="4.6 GB, repair_large.py's", references=dict(
            reference=os.path.join(large, "reference.mp4")))
        pairs.append(("large", "reference"))
    for case, ref in pairs:
        if case not in cases:
            cases[case] = make_case(case, sorted({r for c, r in PAIRS if c == case and r != "original"}),
                                    args.work, log)
            cases[case]["references"]["original"] = cases[case]["original"]
        c = cases[case]
        pair = dict(case=case, reference=ref, broken_bytes=c["broken_bytes"], title=c["title"], runs=[])
        folder = tempfile.mkdtemp(prefix="repair-speed-")
        for rnd in range(1, (args.large_rounds if case == "large" else args.rounds) + 1):
            # The order turns round every other round (A B C, C B A): a tool's place after another moved its times
            # by a few milliseconds (docs/design/repair.md, "Session 11").
            for label, build in (rows if rnd % 2 else rows[::-1]):
                for name in os.listdir(folder):
                    os.remove(os.path.join(folder, name))
                if case == "large":
                    subprocess.run(["sync"])  # the last run's 4.6 GB written back before this one starts
                out = os.path.join(folder, "out" + os.path.splitext(c["broken"])[1])
                r = run(build(c["broken"], c["references"][ref], out))
                r.update(tool=label, round=rnd, out_bytes=os.path.getsize(out) if os.path.exists(out) else None,
                         md5=md5(out) if os.path.exists(out) and label.startswith("cropzoom") else None)
                pair["runs"].append(r)
                log(f"[{case} {ref}] r{rnd} {label}: exit {r['exit']}, {r['wall']:.2f} s, {r['cpu']:.2f} s CPU, "
                    f"{r['rss_mib']:.0f} MiB")
                if r["exit"] != 0 or not r["out_bytes"]:
                    sys.exit(f"repair_speed.py: {label} failed on {case}/{ref}: {r}")
        shutil.rmtree(folder)
        for label in ("cropzoom", "cropzoom before"):
            sums = {r["md5"] for r in pair["runs"] if r["tool"] == label}
            if len(sums) > 1:
                sys.exit(f"repair_speed.py: {label}'s outputs differ between rounds on {case}/{ref}")
        data["pairs"].append(pair)
    data["load_after"] = os.getloadavg()
    return data


def med(runs, tool, key):
    return statistics.median(r[key] for r in runs if r["tool"] == tool)


def markdown(data):
    m = data["machine"]
    large = next((p for p in data["pairs"] if p["case"] == "large"), None)
    large = f" ({len(large['runs']) // len(data['tools'])} on the 4.6 GB recording)" if large else ""
    out = ["# `cropzoom repair` against untrunc: speed, measured alone", "",
           f"{m['date']}: cropzoom {m['cropzoom_commit']} (release build{', sources changed' if m['cropzoom_dirty'] else ''})"
           f", untrunc {m['untrunc_commit']}; {m['nproc']} cores ({m['cpu']}), Linux {m['kernel']}; load average "
           f"{data['load_before'][0]:.2f} before, {data['load_after'][0]:.2f} after. {data['rounds']} rounds{large}, the tools "
           f"alternating ({', '.join(data['tools'])}; the order reversed every other round), each output into an emptied folder; wall time by the script's "
           "clock around each run (ms), CPU (user + system) and peak RSS by `/usr/bin/time`. Every run exited 0; cropzoom's outputs are identical from round to round (what they hold: "
           "[repair-peers.md](repair-peers.md), every whole packet of each case at its time).", "",
           "Written by `Benchmarks/repair_speed.py`"
           + (f" with `--before` {data.get('before_label') or data['before']}" if data["before"] else "") + ".", "",
           "| case, reference | broken file | " + " | ".join(f"{t} wall (CPU, RSS)" for t in data["tools"])
           + " | wall cropzoom / untrunc | round by round: median ratio, cropzoom quicker |",
           "|---|---|" + "---|" * len(data["tools"]) + "---|---|"]
    for p in data["pairs"]:
        cells = []
        for t in data["tools"]:
            cells.append(f"{med(p['runs'], t, 'wall'):.3f} s ({med(p['runs'], t, 'cpu'):.2f} s, "
                         f"{med(p['runs'], t, 'rss_mib'):.0f} MiB)")
        ratio = med(p["runs"], "cropzoom", "wall") / med(p["runs"], "untrunc", "wall")
        # untrunc stops at 4.2 % of the large recording (repair-large.md): no ratio there.
        stops = {"large": "(untrunc stops at 4.2 %)", "l": "(untrunc stops after 1 picture)"}
        shown = stops.get(p["case"], f"{ratio:.2f}")
        walls = {(r["tool"], r["round"]): r["wall"] for r in p["runs"]}
        rounds = sorted({r["round"] for r in p["runs"]})
        ratios = [walls["cropzoom", n] / walls["untrunc", n] for n in rounds]
        paired = "" if p["case"] in stops else (
            f"{statistics.median(ratios):.2f}, {sum(x < 1 for x in ratios)} of {len(ratios)}")
        out.append(f"| {p['case']}, `{p['reference']}` | {p['broken_bytes'] / 1e6:.1f} MB | " + " | ".join(cells)
                   + f" | {shown} | {paired} |")
    out += ["", "Every run's wall time (s), in the order run:", ""]
    for p in data["pairs"]:
        for t in data["tools"]:
            walls = " ".join(f"{r['wall']:.3f}" for r in p["runs"] if r["tool"] == t)
            out.append(f"- {p['case']} `{p['reference']}` {t}: {walls}")
    out += ["", "Commands (BROKEN, REFERENCE from `Benchmarks/work/repair`, made by `repair_peers.py`):", "", "```",
            "cropzoom repair BROKEN --reference REFERENCE -o OUT", "untrunc -n -dst OUT REFERENCE BROKEN", "```", "",
            "On k and l, REFERENCE `original` is the complete recording the broken file was cut from. On l untrunc "
            "stops after one picture (1 of 7,502 pictures, 1,034 of 2,400,000 sound samples): its time is not "
            "that of a repair.", ""]
    return "\n".join(out)


def svg(data):
    """Each run's wall time as a dot, a row per case and tool, the median as a bar."""
    colours = {"cropzoom": "#1f77b4", "untrunc": "#d62728", "cropzoom before": "#7f7f7f"}
    # The 4.6 GB case (seconds, not tenths) is in the page's table only.
    rows = [(p, t) for p in data["pairs"] if p["case"] != "large" for t in data["tools"]]
    top = max(r["wall"] for p, _ in rows for r in p["runs"])
    scale = 520 / (top * 1.05)
    h = 40 + 22 * len(rows) + 40
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="760" height="{h}" font-family="sans-serif" '
         'font-size="12">', '<rect width="100%" height="100%" fill="white"/>',
         '<text x="10" y="20" font-size="14">cropzoom repair vs untrunc: wall time of each run (dots), median (bar)'
         '</text>']
    x0 = 220
    for k, (p, t) in enumerate(rows):
        y = 45 + 22 * k
        s.append(f'<text x="10" y="{y + 4}">{p["case"]} {p["reference"]}: {t}</text>')
        for r in p["runs"]:
            if r["tool"] == t:
                s.append(f'<circle cx="{x0 + r["wall"] * scale:.1f}" cy="{y}" r="3" fill="{colours[t]}" '
                         'fill-opacity="0.6"/>')
        m = med(p["runs"], t, "wall")
        s.append(f'<line x1="{x0 + m * scale:.1f}" x2="{x0 + m * scale:.1f}" y1="{y - 8}" y2="{y + 8}" '
                 f'stroke="{colours[t]}" stroke-width="3"/>')
    axis = 45 + 22 * len(rows)
    s.append(f'<line x1="{x0}" x2="{x0 + 520}" y1="{axis}" y2="{axis}" stroke="black"/>')
    step = 0.05 if top < 0.4 else 0.1 if top < 1 else 0.5
    v = 0.0
    while v <= top * 1.05:
        s.append(f'<line x1="{x0 + v * scale:.1f}" x2="{x0 + v * scale:.1f}" y1="{axis}" y2="{axis + 5}" '
                 'stroke="black"/>')
        s.append(f'<text x="{x0 + v * scale:.1f}" y="{axis + 18}" text-anchor="middle">{v:.2f}</text>')
        v += step
    s.append(f'<text x="{x0 + 260}" y="{axis + 34}" text-anchor="middle">wall time (s)</text>')
    s.append("</svg>")
    return "\n".join(s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--cropzoom", default=os.path.join(REPO, ".build", "release", "cropzoom"))
    ap.add_argument("--untrunc", default=os.path.join(HERE, "work", "untrunc", "untrunc"))
    ap.add_argument("--before", help="an older cropzoom binary, run in the same rounds")
    ap.add_argument("--before-label", help="what --before is (a commit), for the page")
    ap.add_argument("--large", action="store_true", help="also the 4.6 GB recording of repair_large.py")
    ap.add_argument("--large-rounds", type=int, default=3)
    ap.add_argument("--work", default=os.path.join(HERE, "work", "repair"))
    ap.add_argument("--results", default=os.path.join(HERE, "results", "repair-speed"))
    ap.add_argument("--markdown-only", action="store_true", help="re-render the page from WORK/speed.json")
    args = ap.parse_args()
    args.cropzoom, args.untrunc, args.work = map(os.path.abspath, (args.cropzoom, args.untrunc, args.work))
    raw = os.path.join(args.work, "speed.json")
    if args.markdown_only:
        data = json.load(open(raw))
    else:
        data = measure(args)
        json.dump(data, open(raw, "w"), indent=1)
    write_pages(args.results, markdown(data), svg(data))


if __name__ == "__main__":
    main()
