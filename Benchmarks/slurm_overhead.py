#!/usr/bin/env python3
"""A batch of many short clips on this machine: a local `cropzoom batch --jobs 2` against the same batch as a
2-task Slurm job array (`--scheduler slurm --shards 2`, one CPU per task) on the private cluster of
scripts/slurm.sh. Alternated A B A B at two batch sizes; the medians, the ratio, and a straight line
time = fixed + per_clip x clips fitted to each, which splits the scheduler's cost into a part per shard (the fixed
part: submission, start of the tasks, the wait's polling) and a part per clip.

    python3 Benchmarks/slurm_overhead.py --binary .build/release/cropzoom --rounds 3 --sizes 16,64

Writes Benchmarks/results/slurm-overhead.{md,json,svg}. Needs root (the cluster) and the ffmpeg CLI (the clips).
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def make_clips(folder, count):
    """`count` 1-second 320x240 H.264 + AAC clips (different pictures: testsrc at different offsets)."""
    os.makedirs(folder, exist_ok=True)
    first = os.path.join(folder, "clip000.mp4")
    sh(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30:duration=1",
        "-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:v", "libx264", "-preset", "ultrafast",
        "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", first])
    for k in range(1, count):
        shutil.copyfile(first, os.path.join(folder, f"clip{k:03d}.mp4"))


def run(cmd, env):
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, text=True, capture_output=True)
    seconds = time.monotonic() - start
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
    return seconds


def fit(points):
    """Least squares of y = a + b x over (x, y) points."""
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def svg(rows, sizes, path):
    w, h, left, bottom = 520, 300, 60, 40
    top = max(max(r["local"]["median"], r["slurm"]["median"]) for r in rows) * 1.15
    xmax = max(sizes) * 1.1

    def px(x):
        return left + (w - left - 20) * x / xmax

    def py(y):
        return h - bottom - (h - bottom - 20) * y / top

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           'font-size="12">', f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<line x1="{left}" y1="{py(0)}" x2="{w - 20}" y2="{py(0)}" stroke="black"/>',
           f'<line x1="{left}" y1="{py(0)}" x2="{left}" y2="20" stroke="black"/>',
           f'<text x="{w / 2}" y="{h - 8}" text-anchor="middle">clips in the batch</text>',
           f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" text-anchor="middle">wall seconds '
           '(median)</text>']
    for s in sizes:
        out.append(f'<text x="{px(s)}" y="{py(0) + 15}" text-anchor="middle">{s}</text>')
    step = max(1, round(top / 5))
    y = 0
    while y <= top:
        out.append(f'<text x="{left - 6}" y="{py(y) + 4}" text-anchor="end">{y}</text>')
        y += step
    for key, colour, label in [("local", "#1f77b4", "local --jobs 2"), ("slurm", "#d62728", "Slurm, 2 shards")]:
        pts = [(r["clips"], r[key]["median"]) for r in rows]
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                   % (colour, " ".join(f"{px(x):.1f},{py(v):.1f}" for x, v in pts)))
        for x, v in pts:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(v):.1f}" r="3" fill="{colour}"/>')
        ly = 30 if key == "local" else 48
        out.append(f'<rect x="{left + 12}" y="{ly - 9}" width="12" height="3" fill="{colour}"/>'
                   f'<text x="{left + 30}" y="{ly - 4}">{label}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, ".build/release/cropzoom"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", default="16,64")
    ap.add_argument("--out", default=os.path.join(ROOT, "Benchmarks/results/slurm-overhead"))
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    start = subprocess.run(["bash", os.path.join(ROOT, "scripts/slurm.sh"), "start"], check=True, text=True,
                           capture_output=True).stdout
    conf = [l for l in start.splitlines() if l.startswith("export SLURM_CONF=")][-1].split("=", 1)[1]
    env = dict(os.environ, SLURM_CONF=conf)
    binary = os.path.abspath(a.binary)
    settings = ["--zoom", "1.5", "--preset", "ultrafast", "--progress", "none"]
    work = tempfile.mkdtemp(prefix="cz-slurm-bench-")
    rows, commands = [], {}
    try:
        for n in sizes:
            clips = os.path.join(work, f"in{n}")
            make_clips(clips, n)
            times = {"local": [], "slurm": []}
            for r in range(a.rounds + 1):  # round 0 warms the caches and is not counted
                for key in ["local", "slurm"]:
                    out = os.path.join(work, f"out-{n}-{key}-{r}")
                    cmd = [binary, "batch", clips, "--out-dir", out] + settings
                    cmd += ["--jobs", "2"] if key == "local" else ["--scheduler", "slurm", "--shards", "2"]
                    commands[key] = " ".join(cmd).replace(out, "$OUT").replace(clips, "$CLIPS")
                    t = run(cmd, env)
                    if r > 0:
                        times[key].append(t)
                    shutil.rmtree(out)
            row = {"clips": n}
            for key in times:
                row[key] = {"runs": [round(t, 3) for t in times[key]], "median": round(statistics.median(times[key]), 3)}
            row["ratio"] = round(row["slurm"]["median"] / row["local"]["median"], 3)
            rows.append(row)
            print(f"{n} clips: local {row['local']['median']} s, slurm {row['slurm']['median']} s, "
                  f"ratio {row['ratio']}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = {k: fit([(r["clips"], r[k]["median"]) for r in rows]) for k in ["local", "slurm"]}
    overhead = {"per_shard_s": round(lines["slurm"][0] - lines["local"][0], 3),
                "per_clip_s": round(lines["slurm"][1] - lines["local"][1], 4)}
    machine = {"cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
                           "?"), "cores": os.cpu_count(), "system": platform.platform(),
               "slurm": sh(["sbatch", "--version"], env=env).stdout.strip(), "date": time.strftime("%Y-%m-%d %H:%M")}
    result = {"machine": machine, "commands": commands, "rounds": a.rounds, "rows": rows,
              "fit": {k: {"fixed_s": round(v[0], 3), "per_clip_s": round(v[1], 4)} for k, v in lines.items()},
              "scheduler_overhead": overhead}
    with open(a.out + ".json", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    svg(rows, sizes, a.out + ".svg")
    md = [f"# Slurm array against a local batch ({machine['date']})", "",
          f"Machine: {machine['cpu']}, {machine['cores']} cores, {machine['system']}; {machine['slurm']} "
          "(scripts/slurm.sh: one node, 1 CPU per task).", "",
          f"Clips: 1 s 320x240 H.264 + AAC each; {a.rounds} rounds after a warm-up, local and Slurm alternated.", "",
          "```", f"A: {commands['local']}", f"B: {commands['slurm']}", "```", "",
          "| clips | local --jobs 2 (median s) | Slurm 2 shards (median s) | ratio B/A | runs A | runs B |",
          "|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['clips']} | {r['local']['median']} | {r['slurm']['median']} | {r['ratio']}× | "
                  f"{r['local']['runs']} | {r['slurm']['runs']} |")
    md += ["", f"Fitted time = fixed + per-clip × clips: local {lines['local'][0]:.2f} s + {lines['local'][1]:.3f} s"
           f"/clip; Slurm {lines['slurm'][0]:.2f} s + {lines['slurm'][1]:.3f} s/clip. The scheduler's overhead: "
           f"**{overhead['per_shard_s']:.2f} s per batch of 2 shards** (submission, task start, the wait's polling) "
           f"and **{overhead['per_clip_s'] * 1000:.0f} ms per clip**.", "",
           f"![time against clips]({os.path.basename(a.out)}.svg)", ""]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
