#!/usr/bin/env python3
"""Lower bounds for the end-to-end rows: how fast *any* program could do each job on this
machine with these libraries and encoder settings, from each stage's cost measured alone.

Every stage of a row is timed on its own, at its cheapest (single-threaded decoding, scaling
with nothing else running, x264 fed raw frames from RAM at its cheapest thread setting), in
the same alternating rounds as the full jobs of cropzoom and the ffmpeg CLIs. Running stages
together can only add to their cost (threading overhead, shared caches), so a job on N cores
needs at least

    wall >= start-up + max(longest serial chain, sum of the stages' CPU / N)

A target ratio below (bound / peer's median wall) cannot be met by any schedule: that is what
"shown impossible with numbers" means in Benchmarks/README.md. Writes Benchmarks/bounds.md.

Usage: python3 Benchmarks/bounds.py [--rounds 5]   (after Benchmarks/compare.sh has built cropzoom)
"""
import argparse, os, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import ROOT, WORK, crop_for_zoom, ffmpeg9, make_input, sh, timed  # noqa: E402

RAW = "/dev/shm/cropzoom-bounds-scaled.yuv"


def timed_together(cmds):
    """Starts the commands at once and waits for all: wall s until the last ends, CPU s of all."""
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for c in cmds]
    for p, c in zip(procs, cmds):
        if p.wait() != 0:
            raise SystemExit(f"failed ({p.returncode}): {' '.join(c)}")
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "Benchmarks", "bounds.md"))
    ap.add_argument("--cropzoom", default=os.path.join(ROOT, ".build", "release", "cropzoom"))
    args = ap.parse_args()
    os.makedirs(WORK, exist_ok=True)
    n = os.cpu_count()
    cz, ff5, ff9 = args.cropzoom, "ffmpeg", ffmpeg9()
    src = make_input("in1080-10s.mp4", "1920x1080", 10)
    one = os.path.join(WORK, "one1080.mp4")
    sh(["ffmpeg", "-v", "error", "-y", "-i", src, "-frames:v", "1", "-c", "copy", "-an", one])
    cw, ch, x, y = crop_for_zoom(1920, 1080, 1.65)
    vf = f"crop={cw}:{ch}:{x}:{y},scale=1920:1080:flags=bicubic"
    # The frames x264 gets in rows A and D, decoded and scaled once, kept in RAM.
    sh([ff5, "-v", "error", "-y", "-i", src, "-vf", vf, "-f", "rawvideo", "-pix_fmt", "yuv420p", RAW])
    raw_in = [ff5, "-v", "error", "-y", "-f", "rawvideo", "-s", "1920x1080", "-pix_fmt", "yuv420p", "-r", "30", "-i", RAW]
    x264 = lambda preset, *extra: raw_in + ["-c:v", "libx264", "-preset", preset, "-crf", "23", *extra, "-f", "null", "-"]
    stages = {
        "start-up (cropzoom, 1-frame 1080p clip)": [cz, one, "--null", "--codec", "none", "--zoom", "1.65", "--quiet"],
        "decode, 1 thread": [ff5, "-v", "error", "-threads", "1", "-i", src, "-an", "-f", "null", "-"],
        f"decode, {n + 1} frame threads": [ff5, "-v", "error", "-threads", str(n + 1), "-i", src, "-an", "-f", "null", "-"],
        "decode + crop/scale, 1 thread": [ff5, "-v", "error", "-threads", "1", "-i", src, "-an", "-vf", vf, "-f", "null", "-"],
        "raw frames from RAM (x264's feed)": raw_in + ["-c:v", "rawvideo", "-f", "null", "-"],
        "x264 veryfast, 1 thread": x264("veryfast", "-threads", "1"),
        "x264 veryfast, 3 threads + 2 lookahead": x264("veryfast", "-threads", "3", "-x264-params", "lookahead-threads=2"),
        "x264 veryfast, 3 threads + 3 lookahead": x264("veryfast", "-threads", "3", "-x264-params", "lookahead-threads=3"),
        "x264 veryfast, 6 threads": x264("veryfast", "-threads", "6"),
        "x264 ultrafast, 1 thread": x264("ultrafast", "-threads", "1"),
        "x264 ultrafast, 2 threads": x264("ultrafast", "-threads", "2"),
        "x264 ultrafast, 3 threads": x264("ultrafast", "-threads", "3"),
    }
    full = {
        "A cropzoom": [cz, src, "-o", os.path.join(WORK, "b-a.mp4"), "-y", "--zoom", "1.65", "--preset", "veryfast", "--crf", "23", "--quiet"],
        "A ffmpeg 5.1": [ff5, "-v", "error", "-y", "-i", src, "-vf", vf, "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-c:a", "copy", os.path.join(WORK, "b-a5.mp4")],
        "B cropzoom": [cz, src, "--null", "--codec", "none", "--zoom", "1.65", "--quiet"],
        "B cropzoom --threads 1": [cz, src, "--null", "--codec", "none", "--zoom", "1.65", "--quiet", "--threads", "1"],
        "B ffmpeg 5.1": [ff5, "-v", "error", "-i", src, "-vf", vf, "-f", "null", "-"],
        "D cropzoom": [cz, src, "-o", os.path.join(WORK, "b-d.mp4"), "-y", "--zoom", "1.65", "--preset", "ultrafast", "--crf", "23", "--quiet"],
        "D ffmpeg 5.1": [ff5, "-v", "error", "-y", "-i", src, "-vf", vf, "-c:v", "libx264", "-preset", "ultrafast", "-crf", "23", "-c:a", "copy", os.path.join(WORK, "b-d5.mp4")],
    }
    if ff9:
        full["A ffmpeg 9"] = [ff9] + full["A ffmpeg 5.1"][1:-1] + [os.path.join(WORK, "b-a9.mp4")]
        full["B ffmpeg 9"] = [ff9] + full["B ffmpeg 5.1"][1:]
        full["D ffmpeg 9"] = [ff9] + full["D ffmpeg 5.1"][1:-1] + [os.path.join(WORK, "b-d9.mp4")]
    # Row D's work as two independent processes started together — decode + transform
    # (cropzoom, one thread) beside x264 ultrafast: the same work with no dependency between the
    # halves, which a pipeline cannot beat, *with* the two halves sharing the chip (caches,
    # memory bus), which the CPU sums leave out.
    # The same with x264 on 2 and 3 threads covers the frame-threaded plans: whatever the plan,
    # row D is this work on these cores.
    together = {f"D halves side by side (cropzoom decode+transform | x264 ultrafast {t} thread{'s' if t > 1 else ''})":
                [full["B cropzoom --threads 1"], stages[f"x264 ultrafast, {t} thread{'s' if t > 1 else ''}"]]
                for t in (1, 2, 3)}
    # Row P's ceiling on this machine: the single-threaded job twice at once, sharing nothing but
    # the chip. No parallel form of one job can scale better than two independent copies.
    pair = "B cropzoom --threads 1, two copies side by side"
    together[pair] = [full["B cropzoom --threads 1"], full["B cropzoom --threads 1"]]
    everything = {**stages, **full, **together}
    samples = {k: [] for k in everything}
    try:
        run = lambda k: timed_together(everything[k]) if k in together else timed(everything[k])
        for k in everything:  # warm-up
            run(k)
        for r in range(args.rounds):
            for k in everything:
                samples[k].append(run(k))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    finally:
        if os.path.exists(RAW):
            os.remove(RAW)
    wall = {k: statistics.median(s[0] for s in v) for k, v in samples.items()}
    cpu = {k: statistics.median(s[1] for s in v) for k, v in samples.items()}

    feed = cpu["raw frames from RAM (x264's feed)"]
    decode = cpu["decode, 1 thread"]
    frames = 300
    # Crop+scale at its cheapest: ffmpeg's filter graph (swscale), or cropzoom's own transform
    # (its --threads 1 job less decoding and start-up), whichever costs less.
    scale_ff = max(0.0, cpu["decode + crop/scale, 1 thread"] - decode)
    start0 = wall["start-up (cropzoom, 1-frame 1080p clip)"]
    scale_cz = max(0.0, cpu["B cropzoom --threads 1"] - decode - start0)
    scale = min(scale_ff, scale_cz)
    # Start-up: the 1-frame job less its one frame's decode and scale (counted in the totals).
    start = max(0.0, start0 - (decode + scale) / frames)
    enc = lambda k: max(0.0, cpu[k] - feed)  # x264's own CPU
    vf_best = min(enc(k) for k in stages if k.startswith("x264 veryfast"))
    uf_1 = enc("x264 ultrafast, 1 thread")
    uf_mt = min(enc("x264 ultrafast, 2 threads"), enc("x264 ultrafast, 3 threads"))

    decode_mt = cpu[f"decode, {n + 1} frame threads"]
    # Per-core view (row P): one H.264 stream is decoded in parallel only by frame threads (the
    # input has one slice per picture, and keyframes at frames 0 and 250 only, so no GOP split):
    # those cost decode_mt of CPU. Without them decoding is a serial chain of `decode`.
    p_bound = start + min(max(decode, (decode + scale) / n), (decode_mt + scale) / n)
    bounds = {
        # B: decode and scale, on n cores.
        "B": start + (decode + scale) / n,
        # A: every stage's cheapest CPU on n cores (x264 at its cheapest thread setting).
        "A": start + (decode + scale + vf_best) / n,
        # D: x264 on one thread is a serial chain of uf_1; on more threads it costs uf_mt.
        "D": start + min(max(uf_1, (decode + scale + uf_1) / n), (decode + scale + uf_mt) / n),
    }
    targets = [("A", "ffmpeg 5.1", 0.90), ("A", "ffmpeg 9", 1.00), ("D", "ffmpeg 5.1", 0.85),
               ("B", "ffmpeg 5.1", 0.75), ("B", "ffmpeg 9", 0.85)]
    lines = ["# Lower bounds for the end-to-end rows", "",
             f"Written by `python3 Benchmarks/bounds.py --rounds {args.rounds}` on "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {n} cores. Method: the module "
             "docstring of bounds.py; every command below ran alternately with the others, "
             f"{args.rounds} rounds after a warm-up; medians.", "",
             "## Stages measured alone", "", "| stage | median wall s | median CPU s |", "|---|---|---|"]
    lines += [f"| {k} | {wall[k]:.3f} | {cpu[k]:.3f} |" for k in stages]
    lines += ["", f"Derived CPU: decode {decode:.2f} s ({decode_mt:.2f} s with {n + 1} frame threads), crop/scale {scale:.2f} s (ffmpeg's filter graph {scale_ff:.2f} s, cropzoom's transform {scale_cz:.2f} s), x264 veryfast at its cheapest "
              f"{vf_best:.2f} s, x264 ultrafast {uf_1:.2f} s on 1 thread / {uf_mt:.2f} s threaded "
              f"(x264 rows minus the raw feed's {feed:.2f} s); start-up {start:.3f} s.", "",
              "## Full jobs, same rounds", "", "| job | median wall s | median CPU s |", "|---|---|---|"]
    lines += [f"| {k} | {wall[k]:.2f} | {cpu[k]:.2f} |" for k in full]
    feed_wall = wall["raw frames from RAM (x264's feed)"]
    sides = {k: wall[k] - feed_wall for k in together if k != pair}
    best_side = min(sides.values())
    lines += ["", "## Row D with the halves sharing the chip", "",
              "The work of row D — decode + transform (cropzoom, one thread) and x264 ultrafast — as two independent "
              "processes started together: no dependency between the halves, which a pipeline (whose stages wait on each "
              "other) cannot beat, and *with* the halves sharing the chip (caches, memory bus), which the CPU sums below "
              "leave out. "
              f"Walls less x264's raw feed ({feed_wall:.2f} s):", "",
              "| halves | median wall s | CPU s | less the feed s | × ffmpeg 5.1's row D |", "|---|---|---|---|---|"]
    lines += [f"| {k} | {wall[k]:.2f} | {cpu[k]:.2f} | {sides[k]:.2f} | {sides[k] / wall['D ffmpeg 5.1']:.2f} |" for k in sides]
    # How close cropzoom's own plans come to their own CPU: wall >= start + (CPU - start) / n.
    t1 = wall["B cropzoom --threads 1"]
    lines += ["", "## Row P: the machine's ceiling and cropzoom's plans against their own CPU", "",
              f"Two copies of `cropzoom --threads 1` (row B) side by side: {wall[pair]:.2f} s for twice the work that "
              f"takes {t1:.2f} s alone, a ceiling of **{2 * t1 / wall[pair]:.2f}** for any parallel form of the job "
              "on this machine (independent copies share nothing but the chip).", "",
              "Each all-cores job at 100 % use of the cores *at the CPU it spends* (start-up serial): "
              "`start-up + (CPU − start-up) / cores`. The gap to the job's wall is idle time in its plan; the gap "
              "between this CPU and the stages' CPU alone (above) is what parallel decoding and sharing the chip add.", "",
              "| job | CPU s | at 100 % s | wall s | cores busy | what that allows |", "|---|---|---|---|---|---|"]
    for job, ref, what in [("B cropzoom", "B cropzoom --threads 1", "speed-up"), ("D cropzoom", "D ffmpeg 5.1", "× ffmpeg 5.1")]:
        full_use = start0 + (cpu[job] - start0) / n
        allows = wall[ref] / full_use if what == "speed-up" else full_use / wall[ref]
        lines.append(f"| {job} | {cpu[job]:.2f} | {full_use:.2f} | {wall[job]:.2f} | {cpu[job] / wall[job]:.2f} | "
                     f"{what} {allows:.2f} |")
    lines += ["", "## Bounds against the targets", "",
              "| row | lower bound s | cropzoom s | peer | peer s | best possible ratio | target | cropzoom's ratio | verdict |",
              "|---|---|---|---|---|---|---|---|---|"]
    for row, peer, target in targets:
        key = f"{row} {peer}"
        if key not in wall:
            continue
        if row == "D":
            best = best_side / wall[key]
            ours = wall[f"{row} cropzoom"] / wall[key]
            verdict = "met" if ours <= target else ("impossible: bound above target" if best > target else "missed, not ruled out")
            lines.append(f"| D (halves side by side) | {best_side:.2f} | {wall['D cropzoom']:.2f} | {peer} | {wall[key]:.2f} | "
                         f"{best:.2f} | ≤ {target:.2f} | {ours:.2f} | {verdict} |")
        best = bounds[row] / wall[key]
        ours = wall[f"{row} cropzoom"] / wall[key]
        verdict = "met" if ours <= target else ("impossible: bound above target" if best > target else "missed, not ruled out")
        lines.append(f"| {row} | {bounds[row]:.2f} | {wall[f'{row} cropzoom']:.2f} | {peer} | {wall[key]:.2f} | "
                     f"{best:.2f} | ≤ {target:.2f} | {ours:.2f} | {verdict} |")
    best_speedup = t1 / p_bound
    ours = t1 / wall["B cropzoom"]
    verdict = "met" if ours >= 1.8 else ("impossible: bound below target" if best_speedup < 1.8 else "missed, not ruled out")
    lines += [f"| P | {p_bound:.2f} | {wall['B cropzoom']:.2f} | cropzoom --threads 1 | {t1:.2f} | "
              f"speed-up {best_speedup:.2f} | ≥ 1.80 | speed-up {ours:.2f} | {verdict} |", ""]
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
