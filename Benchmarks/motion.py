#!/usr/bin/env python3
"""Animated zoom and pan, side by side: cropzoom's keyframed --center against ffmpeg's zoompan
(5.1 and 9) and an animated crop expression, on a still picture panned slowly, measured with
Tests/tools/motion_jitter.py (velocity, jitter, backward steps) — plus each renderer's wall time.
Then the cost per frame of what moves: cropzoom's transform stage (`--threads 1 --null --codec
none --stats`, its own timer) for a static zoom, an animated zoom, a rotation by any angle and a
zoom-out over the blurred picture, on a 1080p clip, the variants alternating, median of each.

Writes Benchmarks/results-motion.md and the same text as a section of Benchmarks/results.md
(between markers that compare.py keeps when it rewrites that file).

Usage: python3 Benchmarks/motion.py [--rounds 7]   (after `swift build -c release`)
"""
import json, os, platform, re, shlex, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
from compare import ffmpeg9  # noqa: E402

TOOL = os.path.join(ROOT, "Tests", "tools", "motion_jitter.py")


def main():
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 7
    cz = os.path.join(ROOT, ".build", "release", "cropzoom")
    ff9 = ffmpeg9()
    with tempfile.TemporaryDirectory() as tmp:
        png, still = os.path.join(tmp, "still.png"), os.path.join(tmp, "still.mp4")
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x360:d=0.04", "-frames:v", "1", png], check=True)
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-loop", "1", "-framerate", "30", "-t", "4", "-i", png,
                        "-c:v", "libx264", "-crf", "10", "-pix_fmt", "yuv420p", still], check=True)
        zoompan = "zoompan=z=2:x='(0.48+0.04*in/120)*iw-iw/4':y=ih/4:d=1:s=640x360:fps=30"
        rows = [
            ("cropzoom (keyframed --center)", [cz, still, "-o", "OUT", "-y", "--codec", "ffv1", "--zoom", "2",
                                               "--center", "0s:0.48,0.5, 4s:0.52,0.5", "--quiet"]),
            ("ffmpeg 5.1 zoompan", ["ffmpeg", "-v", "error", "-y", "-i", still, "-vf", zoompan, "-c:v", "ffv1", "OUT"]),
            ("ffmpeg 5.1 animated crop", ["ffmpeg", "-v", "error", "-y", "-i", still, "-vf",
                                          "crop=320:180:'(0.48+0.04*t/4)*640-160':90,scale=640:360:flags=bicubic", "-c:v", "ffv1", "OUT"]),
        ]
        if ff9:
            rows.insert(2, ("ffmpeg 9 zoompan", [ff9, "-v", "error", "-y", "-i", still, "-vf", zoompan, "-c:v", "ffv1", "OUT"]))
        lines = ["# Animated zoom and pan: jitter", "",
                 f"Written by `python3 Benchmarks/motion.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
                 f"{os.cpu_count()} cores, {platform.platform()}.", "",
                 "A 640x360 `testsrc2` still (4 s at 30 fps) panned at zoom 2 from centre 0.48 to 0.52: the window moves "
                 "0.2133 px/frame, the picture on screen 0.4267 px/frame. Measured by `Tests/tools/motion_jitter.py` "
                 "(Lucas–Kanade between consecutive frames): jitter is the change of velocity from frame to frame.", "",
                 "| renderer | velocity px/frame | jitter mean px/frame² | jitter max px/frame² | backward steps | wall s |",
                 "|---|---|---|---|---|---|"]
        commands = []
        for name, cmd in rows:
            out = os.path.join(tmp, "out.mkv")
            cmd = [out if c == "OUT" else c for c in cmd]
            t0 = time.monotonic()
            subprocess.run(cmd, check=True)
            wall = time.monotonic() - t0
            m = json.loads(subprocess.run(["python3", TOOL, out], check=True, capture_output=True, text=True).stdout)
            lines.append(f"| {name} | {m['velocity_mean'][0]:.4f} | {m['jitter_mean']:.3f} | {m['jitter_max']:.3f} | "
                         f"{m['backward_steps']} | {wall:.2f} |")
            shown = [os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd]
            commands.append(f"- {name}: `{shlex.join(shown).replace(tmp + '/', '')}`")
        lines += ["", "Commands (the still made by `ffmpeg -f lavfi -i testsrc2=s=640x360:d=0.04 -frames:v 1 still.png`, "
                  "then `-loop 1 -framerate 30 -t 4 … -crf 10 still.mp4`):", ""] + commands + [""]
        lines += speed(cz, tmp, rounds)
    path = os.path.join(ROOT, "Benchmarks", "results-motion.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    embed("\n".join(lines))
    print("\n".join(lines))


BEGIN, END = "<!-- motion.py: begin -->", "<!-- motion.py: end -->"


def embed(text):
    """Puts `text` (one level down) into results.md between the markers, replacing what was there."""
    path = os.path.join(ROOT, "Benchmarks", "results.md")
    old = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
    section = BEGIN + "\n" + re.sub(r"^#", "##", text, flags=re.M) + "\n" + END + "\n"
    if BEGIN in old and END in old:
        new = old[:old.index(BEGIN)] + section + old[old.index(END) + len(END) + 1:]
    else:
        new = old.rstrip("\n") + "\n\n" + section
    with open(path, "w") as f:
        f.write(new)


def speed(cz, tmp, rounds):
    """Transform ms/frame at --threads 1 for each variant, alternating; medians and ratios."""
    clip = os.path.join(tmp, "1080p.mp4")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=1920x1080:r=30:d=4",
                    "-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p", clip], check=True)
    variants = [
        ("static zoom 1.65 (swscale)", ["--zoom", "1.65"]),
        ("animated zoom 1.6 → 1.7", ["--zoom", "0s:1.6, 4s:1.7"]),
        ("animated zoom + pan", ["--zoom", "0s:1.6, 4s:1.7", "--center", "0s:0.45,0.5, 4s:0.55,0.45"]),
        ("rotate 7.5° (2-D warp)", ["--rotate", "7.5"]),
        ("zoom 0.6, --background blur", ["--zoom", "0.6", "--background", "blur"]),
    ]
    samples = {name: [] for name, _ in variants}
    for r in range(rounds + 1):
        for name, extra in variants:
            cmd = [cz, clip, "--null", "--codec", "none", "--threads", "1", "--stats", "--quiet"] + extra
            err = subprocess.run(cmd, check=True, capture_output=True, text=True).stderr
            m = re.search(r"transform [0-9.]+ s \(([0-9.]+) ms/frame\)", err)
            if r > 0 and m:   # round 0 warms up
                samples[name].append(float(m.group(1)))
    base = statistics.median(samples[variants[0][0]])
    lines = ["", "## Cost per frame of what moves", "",
             f"cropzoom's transform stage on a 4 s 1920x1080 `testsrc2` clip (H.264), `--threads 1 --null --codec none --stats` "
             f"(the stage's own busy time per frame), the variants alternating, {rounds} rounds after a warm-up; "
             "medians and the ratio to the static zoom (target for an animated zoom: ≤ 1.3).", "",
             "| variant | options | transform ms/frame (median) | min–max | ratio to static |", "|---|---|---|---|---|"]
    for name, extra in variants:
        v = samples[name]
        med = statistics.median(v)
        lines.append(f"| {name} | `{shlex.join(extra)}` | {med:.2f} | {min(v):.2f}–{max(v):.2f} | {med / base:.2f} |")
    return lines + [""]


if __name__ == "__main__":
    main()
