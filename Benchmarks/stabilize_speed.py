#!/usr/bin/env python3
"""Speed of `--stabilize` at 1080p30 (issue 29): the analysis alone against real time, and the whole stabilised
transcode against vid.stab's two passes, side by side in one run.

Clip: Tests/tools/shake.py, 1920x1080 30 fps, --seconds (default 10) of a held camera with 9 px / 0.3 degree RMS hand
shake, from the real picture of ../shared/corpus/axm-sample_edit_list.mp4 (1080x1920: --scale 0.5), H.264 CRF 16 +
AAC. Rows, alternated A B C D A B C D … (--runs rounds), each under /usr/bin/time -v:

- `cropzoom analyze-motion IN --camera-path`: the analysis alone (decode, motion, path);
- `cropzoom IN -o OUT.mp4 --stabilize`: the whole stabilised transcode (analysis + render, libx264 preset medium
  CRF 23 — the defaults of both tools — audio copied);
- vid.stab tuned as its documentation advises, both passes: `vidstabdetect=shakiness=10:accuracy=15:stepsize=4`
  to a null output, then `vidstabtransform=smoothing=30:optzoom=1,unsharp=5:5:0.8:3:3:0.4`, libx264, audio copied;
- `cropzoom IN -o OUT.mp4`: a plain transcode, what every row pays for decoding and encoding.

Writes Benchmarks/results/stabilize-speed.{md,json}: medians, the ratio to vid.stab, the analysis' frames per
second against 30 (real time).

Usage: python3 Benchmarks/stabilize_speed.py --cropzoom .build/release/cropzoom [--runs 3] [--seconds 10]
"""
import argparse, json, os, platform, re, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def timed(cmd):
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{p.stderr[-2000:]}")

    def field(name):
        return re.search(re.escape(name) + r": (.*)", p.stderr).group(1).strip()

    parts = [float(x) for x in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")]
    wall = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) == 3 else 0)
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    return wall, cpu, int(field("Maximum resident set size (kbytes)")) / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cropzoom", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--work", default=os.path.join(HERE, "work", "stabilize-speed"))
    ap.add_argument("--results", default=os.path.join(HERE, "results", "stabilize-speed"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    cz = os.path.abspath(args.cropzoom)
    src = os.path.join(args.work, "held-1080.mp4")
    if not os.path.exists(src):
        subprocess.run([sys.executable, os.path.join(REPO, "Tests", "tools", "shake.py"), src, "--size", "1920x1080",
                        "--scale", "0.5", "--shake-px", "9", "--seconds", str(args.seconds), "--path", "static"],
                       check=True)
    out = lambda name: os.path.join(args.work, name)
    trf = out("held.trf")
    rows = [
        ("cropzoom analysis (analyze-motion --camera-path)", [[cz, "analyze-motion", src, "--camera-path"]]),
        ("cropzoom --stabilize (analysis + render)", [[cz, src, "-o", out("cz.mp4"), "--stabilize", "-y", "--quiet"]]),
        ("vid.stab tuned, two passes", [
            ["ffmpeg", "-v", "error", "-y", "-i", src, "-vf",
             f"vidstabdetect=shakiness=10:accuracy=15:stepsize=4:result={trf}", "-f", "null", "-"],
            ["ffmpeg", "-v", "error", "-y", "-i", src, "-vf",
             f"vidstabtransform=input={trf}:smoothing=30:optzoom=1,unsharp=5:5:0.8:3:3:0.4", "-c:v", "libx264",
             "-c:a", "copy", out("vs.mp4")]]),
        ("cropzoom plain transcode", [[cz, src, "-o", out("plain.mp4"), "-y", "--quiet"]]),
    ]
    runs = {name: [] for name, _ in rows}
    load = os.getloadavg()
    started = time.time()
    for _ in range(args.runs):
        for name, cmds in rows:
            w = c = r = 0.0
            for cmd in cmds:
                a, b, m = timed(cmd)
                w += a
                c += b
                r = max(r, m)
            runs[name].append((w, c, r))
            print(f"{name}: {w:.2f} s", flush=True)
    frames = int(args.seconds * 30)
    med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v),
               statistics.median(x[2] for x in v)) for k, v in runs.items()}
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
    result = dict(machine=dict(cpu=cpu, cores=os.cpu_count(), kernel=platform.release(), load_at_start=load),
                  seconds=args.seconds, frames=frames, runs=runs, medians=med,
                  commands={k: [" ".join(c).replace(src, "IN.mp4").replace(cz, "cropzoom")
                                .replace(args.work + os.sep, "") for c in v]
                            for k, v in rows}, elapsed_s=time.time() - started)
    with open(args.results + ".json", "w") as fh:
        json.dump(result, fh, indent=1)
    a = med[rows[0][0]][0]
    s = med[rows[1][0]][0]
    v = med[rows[2][0]][0]
    L = ["# `--stabilize` at 1080p30: speed (issue 29)", "",
         "Made by `python3 Benchmarks/stabilize_speed.py` (its docstring says what each row is). Clip: "
         f"{args.seconds:g} s of 1920x1080 at 30 fps ({frames} frames), a held camera with hand shake, H.264 + AAC. "
         f"Machine: {cpu}, {os.cpu_count()} cores, load average {load[0]:.2f} at the start. Medians of "
         f"{args.runs} alternated rounds (A B C D A B C D …), `/usr/bin/time -v`.", "",
         "| row | wall s | CPU s | peak RSS MiB | runs (wall s) |", "| --- | ---: | ---: | ---: | --- |"]
    for name, _ in rows:
        m = med[name]
        L.append(f"| {name} | {m[0]:.2f} | {m[1]:.2f} | {m[2]:.0f} | "
                 + ", ".join(f"{x[0]:.2f}" for x in runs[name]) + " |")
    L += ["", f"- The analysis alone: {frames / a:.1f} frames per second, {frames / a / 30:.2f} times real time "
              f"(target: faster than real time, above 1).",
          f"- The whole stabilised transcode against vid.stab's two passes: {s:.2f} s against {v:.2f} s, "
          f"{s / v:.2f} times its wall time (target: below 1).", "", "Command lines:", ""]
    for k, v2 in result["commands"].items():
        L.append(f"- {k}: " + "; ".join(f"`{c}`" for c in v2))
    with open(args.results + ".md", "w") as fh:
        fh.write("\n".join(L) + "\n")
    print(f"wrote {args.results}.md and .json")


if __name__ == "__main__":
    main()
