#!/usr/bin/env python3
"""End-to-end comparison of cropzoom with the ffmpeg CLI on the same jobs.

Runs each row's commands alternately (A B C A B C …, `--rounds` rounds), measuring every run
with `/usr/bin/time -v` (wall clock, user+system CPU, peak RSS), and writes the medians and the
ratios against each peer to `Benchmarks/results.md` (and JSON next to it), with the machine,
the versions and the exact command lines.

Peers: Debian's ffmpeg 5.1 CLI (the same libraries as cropzoom) and ffmpeg 9 from
`pip install imageio-ffmpeg` when it is installed.

Usage: python3 Benchmarks/compare.py [--rounds 5] [--rows A,B,C,D,P,M] [--out Benchmarks/results.md]

Two cropzoom builds against each other (a restructure that must not cost speed): `--baseline BIN`
adds every cropzoom command run with BIN, alternated with the others; `--no-ffmpeg` leaves the
ffmpeg peers out.
"""
import argparse, json, os, platform, re, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "Benchmarks", "work")


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), check=True, capture_output=True, text=True, **kw)


def ffmpeg9():
    try:
        import imageio_ffmpeg
        return imageio_ffmpeg.get_ffmpeg_exe()
    except Exception:
        return None


def make_input(name, size, seconds):
    """A 30 fps H.264 High clip with B-frames and AAC, from lavfi test sources."""
    path = os.path.join(WORK, name)
    if not os.path.exists(path):
        sh(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate=30:duration={seconds}",
            "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={seconds}",
            "-c:v", "libx264", "-profile:v", "high", "-bf", "3", "-preset", "veryfast", "-crf", "20",
            "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k", path])
    return path


def crop_for_zoom(w, h, zoom):
    """The window cropzoom reads for --zoom (centre, offsets on the 4:2:0 grid)."""
    cw, ch = round(w / zoom / 2) * 2, round(h / zoom / 2) * 2
    x = round((w / 2 - w / zoom / 2) / 2) * 2
    y = round((h / 2 - h / zoom / 2) / 2) * 2
    return cw, ch, min(x, (w - cw) // 2 * 2), min(y, (h - ch) // 2 * 2)


def timed(cmd):
    """Runs cmd under /usr/bin/time -v; returns wall s, cpu s, peak RSS MiB."""
    return timed_with_stderr(cmd)[:3]


def timed_with_stderr(cmd):
    """As timed, with the command's stderr (time's report at its end) as a fourth value."""
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
    def field(name):
        m = re.search(rf"{re.escape(name)}: ([0-9.:]+)", p.stderr)
        return m.group(1) if m else "0"
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    rss = int(field("Maximum resident set size (kbytes)")) / 1024
    return wall, cpu, rss, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rows", default="A,B,C,D,P,M")
    ap.add_argument("--out", default=os.path.join(ROOT, "Benchmarks", "results.md"))
    ap.add_argument("--cropzoom", default=os.path.join(ROOT, ".build", "release", "cropzoom"))
    ap.add_argument("--baseline", help="another cropzoom binary, run alternately with --cropzoom")
    ap.add_argument("--no-ffmpeg", action="store_true", help="cropzoom builds only, no ffmpeg peers")
    args = ap.parse_args()
    os.makedirs(WORK, exist_ok=True)
    if not os.path.exists(args.cropzoom):
        sh(["swift", "build", "-c", "release", "--product", "cropzoom"], cwd=ROOT)
    cz = args.cropzoom
    ff5 = shutil.which("ffmpeg")
    ff9 = ffmpeg9()
    out = lambda n: os.path.join(WORK, n)

    in1080 = make_input("in1080-10s.mp4", "1920x1080", 10)
    w, h = 1920, 1080
    cw, ch, x, y = crop_for_zoom(w, h, 1.65)
    vf = f"crop={cw}:{ch}:{x}:{y},scale=1920:1080:flags=bicubic"
    enc = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23"]
    rows = {}

    def ff_row(binary, inp, vf, extra, dst, pre=()):
        return [binary, "-v", "error", "-y", *pre, "-i", inp, "-vf", vf] + extra + [dst]

    # For transparency, ffmpeg 5.1 also runs with cropzoom's thread plan on 2 cores (one decoder
    # thread; x264 3 threads with 3 lookahead threads, or 1 thread at ultrafast): how much of the
    # difference is the plan, how much the pipeline.
    plan_a = (["-threads", "1"], ["-threads", "3", "-x264-params", "lookahead-threads=3"])
    plan_d = (["-threads", "1"], ["-threads", "1"])

    if "A" in args.rows:
        rows["A"] = ("zoom 1.65 → x264 veryfast crf 23, audio copied (10 s 1080p30)", {
            "cropzoom": [cz, in1080, "-o", out("a-cz.mp4"), "-y", "--zoom", "1.65", "--preset", "veryfast", "--crf", "23", "--quiet"],
            "ffmpeg 5.1": ff_row(ff5, in1080, vf, enc + ["-c:a", "copy"], out("a-ff5.mp4")),
            **({"ffmpeg 9": ff_row(ff9, in1080, vf, enc + ["-c:a", "copy"], out("a-ff9.mp4"))} if ff9 else {}),
            **({"ffmpeg 5.1 + cropzoom's thread plan": ff_row(ff5, in1080, vf, enc + plan_a[1] + ["-c:a", "copy"], out("a-ff5p.mp4"), plan_a[0])}
               if os.cpu_count() == 2 else {}),
        })
    if "B" in args.rows:
        rows["B"] = ("decode + zoom 1.65 only, output discarded (10 s 1080p30)", {
            "cropzoom": [cz, in1080, "--null", "--codec", "none", "--zoom", "1.65", "--quiet"],
            "ffmpeg 5.1": [ff5, "-v", "error", "-i", in1080, "-vf", vf, "-f", "null", "-"],
            **({"ffmpeg 9": [ff9, "-v", "error", "-i", in1080, "-vf", vf, "-f", "null", "-"]} if ff9 else {}),
        })
    if "C" in args.rows:
        in4k = make_input("in2160-10s.mp4", "3840x2160", 10)
        cw4, ch4, x4, y4 = crop_for_zoom(3840, 2160, 1.65)
        vf4 = f"crop={cw4}:{ch4}:{x4}:{y4},scale=1920:1080:flags=bicubic"
        rows["C"] = ("4K source, zoom 1.65, scaled down to 1080p → x264 veryfast crf 23", {
            "cropzoom": [cz, in4k, "-o", out("c-cz.mp4"), "-y", "--zoom", "1.65", "--size", "1920x1080", "--preset", "veryfast", "--crf", "23", "--quiet"],
            "ffmpeg 5.1": ff_row(ff5, in4k, vf4, enc + ["-c:a", "copy"], out("c-ff5.mp4")),
            **({"ffmpeg 9": ff_row(ff9, in4k, vf4, enc + ["-c:a", "copy"], out("c-ff9.mp4"))} if ff9 else {}),
        })
    if "D" in args.rows:
        ultra = ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "23", "-c:a", "copy"]
        rows["D"] = ("row A with x264 -preset ultrafast", {
            "cropzoom": [cz, in1080, "-o", out("d-cz.mp4"), "-y", "--zoom", "1.65", "--preset", "ultrafast", "--crf", "23", "--quiet"],
            "ffmpeg 5.1": ff_row(ff5, in1080, vf, ultra, out("d-ff5.mp4")),
            **({"ffmpeg 9": ff_row(ff9, in1080, vf, ultra, out("d-ff9.mp4"))} if ff9 else {}),
            **({"ffmpeg 5.1 + cropzoom's thread plan": ff_row(ff5, in1080, vf, ultra[:6] + plan_d[1] + ultra[6:], out("d-ff5p.mp4"), plan_d[0])}
               if os.cpu_count() == 2 else {}),
        })
    if "P" in args.rows:
        rows["P"] = ("per-core view: row B at --threads 1 and at all cores", {
            f"cropzoom --threads {os.cpu_count()}": [cz, in1080, "--null", "--codec", "none", "--zoom", "1.65", "--quiet", "--threads", str(os.cpu_count())],
            "cropzoom --threads 1": [cz, in1080, "--null", "--codec", "none", "--zoom", "1.65", "--quiet", "--threads", "1"],
        })
    if "M" in args.rows:
        in60 = make_input("in1080-60s.mp4", "1920x1080", 60)
        rows["M"] = ("memory: row A on a 10 s and a 60 s clip (peak RSS must stay flat)", {
            "cropzoom 10 s": [cz, in1080, "-o", out("m10.mp4"), "-y", "--zoom", "1.65", "--preset", "veryfast", "--crf", "23", "--quiet"],
            "cropzoom 60 s": [cz, in60, "-o", out("m60.mp4"), "-y", "--zoom", "1.65", "--preset", "veryfast", "--crf", "23", "--quiet"],
        })

    if args.baseline or args.no_ffmpeg:
        for key, (title, cmds) in list(rows.items()):
            kept = {}
            for n, c in cmds.items():
                if c[0] != cz:
                    if not args.no_ffmpeg:
                        kept[n] = c
                    continue
                kept[n] = c
                if args.baseline:
                    kept[f"{n} (baseline)"] = [args.baseline] + c[1:]
            rows[key] = (title, kept)

    results = {}
    for key, (title, cmds) in rows.items():
        names = list(cmds)
        samples = {n: [] for n in names}
        timed(cmds[names[0]])  # warm-up (page cache, first-run costs)
        for r in range(args.rounds):
            for n in names:  # alternate A B A B
                samples[n].append(timed(cmds[n]))
                print(f"row {key} round {r + 1} {n}: wall {samples[n][-1][0]:.2f} s", file=sys.stderr)
        med = {n: tuple(statistics.median(s[i] for s in samples[n]) for i in range(3)) for n in names}
        spread = {n: (min(s[0] for s in samples[n]), max(s[0] for s in samples[n])) for n in names}
        results[key] = {"title": title, "commands": {n: " ".join(cmds[n]) for n in names},
                        "median": med, "spread": spread, "samples": samples}

    ffv = sh([ff5, "-version"]).stdout.splitlines()[0]
    ff9v = sh([ff9, "-version"]).stdout.splitlines()[0] if ff9 else "not installed"
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    swiftv = sh(["swift", "--version"]).stdout.strip().splitlines()[0] if shutil.which("swift") else "?"
    lines = ["# Benchmark results", "",
             f"Written by `python3 Benchmarks/compare.py --rounds {args.rounds} --rows {args.rows}"
             + (f" --baseline {args.baseline}" if args.baseline else "") + (" --no-ffmpeg" if args.no_ffmpeg else "")
             + "` on "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", "",
             f"- machine: {os.cpu_count()} cores ({cpu}), {round(os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30)} GiB, {platform.platform()}",
             f"- cropzoom: release build, {swiftv}", f"- peer 1: {ffv} (Debian)", f"- peer 2: {ff9v} (imageio-ffmpeg)",
             f"- method: each row's commands run alternately, {args.rounds} rounds after one warm-up run; medians of wall "
             "time, CPU (user+system) and peak RSS (`/usr/bin/time -v`); the ratio is cropzoom's median wall time over the peer's.",
             ""]
    for key, r in results.items():
        lines += [f"## Row {key}: {r['title']}", "", "| command | median wall s | min–max s | median CPU s | median peak RSS MiB |",
                  "|---|---|---|---|---|"]
        for n, (wall, cpu_s, rss) in r["median"].items():
            lo, hi = r["spread"][n]
            lines.append(f"| {n} | {wall:.2f} | {lo:.2f}–{hi:.2f} | {cpu_s:.2f} | {rss:.0f} |")
        names = list(r["median"])
        base = names[0]
        ratios = [f"{base} / {n}: **{r['median'][base][0] / r['median'][n][0]:.2f}** (wall), RSS {r['median'][base][2] / r['median'][n][2]:.2f}"
                  for n in names[1:]]
        lines += [""] + [f"- {x}" for x in ratios] + ["", "Commands:", ""]
        lines += [f"- {n}: `{c.replace(WORK + '/', 'work/').replace(ROOT + '/', '')}`" for n, c in r["commands"].items()]
        lines.append("")
    # Keep the section motion.py writes into results.md (animated zoom against zoompan).
    kept = ""
    if os.path.exists(args.out):
        old = open(args.out).read()
        b, e = "<!-- motion.py: begin -->", "<!-- motion.py: end -->"
        if b in old and e in old:
            kept = "\n" + old[old.index(b):old.index(e) + len(e)] + "\n"
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + kept)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump(results, f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
