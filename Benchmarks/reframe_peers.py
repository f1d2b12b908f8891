#!/usr/bin/python3
"""The bar for issue 30 (--aspect 9:16 --follow auto): cropzoom's reframing against the baselines people use, on the
ground-truth clips of Tests/tools/reframe.py, every output measured from its pixels by Tests/tools/reframe_measure.py.

Clips (1280x720 30 fps, 10 s, H.264 CRF 16 + a sine): a real face (python3-skimage's astronaut) over a real
background frame holding, drifting, moving fast and cut to another background (`main`); the same with a cup sweeping
across the picture (`distractor`); with a second, smaller face (`two`); no face, the cup moving along that path
(`motion`).

Rows (all rendered by the same renderer, `cropzoom --path-in`, losslessly with FFV1, so that where the window goes is
measured and not the encoder):
- centre crop: the 9:16 window in the middle;
- face per frame: OpenCV's Haar cascade (alt2, the detector cropzoom uses) run on every frame (the picture averaged
  down to 384 px wide, as cropzoom's analysis), the window centred on the largest face, held where none is found;
- moving average: that centre averaged over the last 0.5 s (15 frames), as a smoothing script would;
- cropzoom --follow auto.

Figures per row: the share of frames with the subject wholly inside the window, the mean IoU with the ideal window
(the subject centred), the jitter (RMS second difference of the window's centre outside cuts, px/frame²), direction
reversals per 100 frames. Wall time: `cropzoom --aspect 9:16 --follow auto` (analysis + render) against the centre
crop's render, alternating runs (A B A B …), medians.

With --speed, a 1920x1080 version of the main clip is made and `--follow auto --size 1080x1920` (H.264, x264's default
preset) timed against the same without --follow: real time is the clip's 10 s.

Needs Debian's python3 with python3-opencv and opencv-data (the face-per-frame baseline), python3-skimage (clips).
Writes Benchmarks/results/reframe-peers.{md,json}, reframe-path.svg (the window's centre per frame, main clip) and
reframe-sheet.png (cropzoom's --preview of the two-faces clip); clips and outputs in Benchmarks/work/reframe/.

Usage: /usr/bin/python3 Benchmarks/reframe_peers.py --cropzoom .build/release/cropzoom [--runs 3] [--speed]
(build both products first: swift build -c release --product cropzoom; swift build -c release --product
CropZoomFaces, the face plugin --follow opens beside the binary)
       [--scenes main,distractor,two,motion] [--only-speed]
"""
import argparse, json, os, platform, statistics, subprocess, sys, time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TOOLS = os.path.join(REPO, "Tests", "tools")
sys.path.insert(0, TOOLS)
import reframe_measure  # noqa: E402

CASCADE = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt2.xml"
ENC = ["--codec", "ffv1", "--audio", "copy"]
WORK = os.path.join(HERE, "work", "reframe")


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"reframe_peers: failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
    return p


def timed(cmd):
    t0 = time.monotonic()
    run(["nice", "-n", "15"] + cmd)
    return time.monotonic() - t0


def faces_per_frame(clip):
    """The centre x of the largest face OpenCV's cascade finds in each frame (NaN: none), in clip px."""
    import cv2
    cascade = cv2.CascadeClassifier(CASCADE)
    frames = reframe_measure.grey_frames(clip)
    n, h, w = frames.shape
    scale = 384 / max(w, h)
    xs = []
    for f in frames:
        small = cv2.resize(f.astype(np.uint8), (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
        found = cascade.detectMultiScale(small, 1.1, 3, 0, (12, 12))
        if len(found) == 0:
            xs.append(float("nan"))
            continue
        x, y, fw, fh = max(found, key=lambda b: b[2] * b[3])
        xs.append((x + fw / 2) / scale)
    return np.array(xs)


def write_path(path, W, H, ww, wh, times, xs):
    with open(path, "w") as f:
        f.write(f"# cropzoom reframe path {W}x{H}\ntime,x,y,width,height\n")
        for t, x in zip(times, xs):
            f.write(f"{t:.6f},{min(max(x, 0), W - ww):.4f},0,{ww},{wh}\n")


def baselines(clip, truth, ww):
    W, H = truth["clip"]["width"], truth["clip"]["height"]
    times = [r["t"] for r in truth["frames"]]
    centre = [(W - ww) / 2] * len(times)
    fx = faces_per_frame(clip)
    per_frame, last = [], W / 2
    for x in fx:
        if not np.isnan(x):
            last = x
        per_frame.append(last - ww / 2)
    avg = [float(np.mean(per_frame[max(0, i - 14):i + 1])) for i in range(len(per_frame))]
    found = int(np.sum(~np.isnan(fx)))
    return {"centre crop": centre, "face per frame": per_frame, "moving average (0.5 s)": avg}, found


def measure(out, clip, truth_path):
    p = run([sys.executable, os.path.join(TOOLS, "reframe_measure.py"), out, clip, "--truth", truth_path,
             "--aspect", "9:16", "--per-frame"])
    return json.loads(p.stdout)


def svg_paths(series, truth, path, title):
    """The window's centre x per frame for each row, and the subject's centre, as an SVG plot."""
    w, h, pad = 900, 320, 50
    n = len(truth["frames"])
    W = truth["clip"]["width"]
    colours = {"subject (truth)": "#999", "face per frame": "#d62728", "moving average (0.5 s)": "#ff7f0e",
               "centre crop": "#2ca02c", "cropzoom --follow auto": "#1f77b4"}

    def X(i):
        return pad + (w - 2 * pad) * i / max(1, n - 1)

    def Y(v):
        return pad + (h - 2 * pad) * (1 - v / W)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h + 40}" font-family="sans-serif" '
             f'font-size="12"><rect width="100%" height="100%" fill="white"/>',
             f'<text x="{pad}" y="20" font-size="14">{title}</text>',
             f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>']
    for v in range(0, W + 1, 320):
        parts.append(f'<text x="{pad - 8}" y="{Y(v) + 4}" text-anchor="end">{v}</text>')
    for s in range(0, n + 1, 60):
        parts.append(f'<text x="{X(s)}" y="{h - pad + 16}" text-anchor="middle">{s / 30:.0f} s</text>')
    for k, (name, ys) in enumerate(series.items()):
        pts = " ".join(f"{X(i):.1f},{Y(v):.1f}" for i, v in enumerate(ys))
        width = 2.5 if name.startswith("cropzoom") else 1.2
        parts.append(f'<polyline fill="none" stroke="{colours.get(name, "#000")}" stroke-width="{width}" '
                     f'points="{pts}"/>')
        parts.append(f'<rect x="{pad + 10 + 170 * k}" y="{h + 8}" width="12" height="12" '
                     f'fill="{colours.get(name, "#000")}"/><text x="{pad + 26 + 170 * k}" y="{h + 18}">{name}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cropzoom", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scenes", default="main,distractor,two,motion")
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--only-speed", action="store_true",
                    help="run the speed rows alone, keeping the scenes of the last results/reframe-peers.json")
    a = ap.parse_args()
    if a.only_speed:
        a.speed = True
        a.scenes = ""
    os.makedirs(WORK, exist_ok=True)
    cz = os.path.abspath(a.cropzoom)
    results = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                           "cropzoom": run([cz, "--version"]).stdout.strip()}, "scenes": {}}
    if a.only_speed:
        results["scenes"] = json.load(open(os.path.join(HERE, "results", "reframe-peers.json")))["scenes"]
    for scene in [x for x in a.scenes.split(",") if x]:
        clip = os.path.join(WORK, f"{scene}.mp4")
        if not os.path.exists(clip):
            run([sys.executable, os.path.join(TOOLS, "reframe.py"), clip, "--scene", scene])
        truth_path = clip + ".json"
        truth = json.load(open(truth_path))
        W, H = truth["clip"]["width"], truth["clip"]["height"]
        ww, wh = truth["frames"][0]["ideal"]["9:16"][2:4]
        ww -= ww % 2
        paths, found = baselines(clip, truth, ww)
        rows = {}
        series = {"subject (truth)": [r["face"][0] + r["face"][2] / 2 for r in truth["frames"]]}
        for name, xs in paths.items():
            csv = os.path.join(WORK, f"{scene}-{name.split()[0]}.csv")
            times = [r["t"] for r in truth["frames"]]
            write_path(csv, W, H, ww, wh, times, xs)
            out = os.path.join(WORK, f"{scene}-{name.split()[0]}.mkv")
            run([cz, clip, "-o", out, "-y", "--aspect", "9:16", "--follow", "faces", "--path-in", csv] + ENC)
            rows[name] = measure(out, clip, truth_path)
        out = os.path.join(WORK, f"{scene}-cropzoom.mkv")
        pcsv = os.path.join(WORK, f"{scene}-cropzoom.csv")
        sheet = ["--preview", os.path.join(WORK, "reframe-sheet.png")] if scene == "two" else []
        run([cz, clip, "-o", out, "-y", "--aspect", "9:16", "--follow", "auto", "--path-out", pcsv] + sheet + ENC)
        rows["cropzoom --follow auto"] = measure(out, clip, truth_path)
        for name, m in rows.items():
            series[name] = [w[0] + w[2] / 2 for w in m["windows"]]
            del m["windows"]
        # Wall time: follow (analysis + render) against the centre crop's render, alternating.
        walls = {"centre crop render": [], "cropzoom --follow auto": []}
        for _ in range(a.runs):
            walls["centre crop render"].append(
                timed([cz, clip, "-o", os.path.join(WORK, "t-centre.mkv"), "-y", "--aspect", "9:16"] + ENC))
            walls["cropzoom --follow auto"].append(
                timed([cz, clip, "-o", os.path.join(WORK, "t-follow.mkv"), "-y", "--aspect", "9:16", "--follow",
                       "auto"] + ENC))
        results["scenes"][scene] = {
            "frames": len(truth["frames"]), "faces found per frame by the baseline": found, "rows": rows,
            "wall": {k: statistics.median(v) for k, v in walls.items()}, "wall_runs": walls}
        if scene == "two":
            # The README's copy of the sheet, at 0.6 of its size (the full one is 1.4 MB).
            run(["ffmpeg", "-v", "error", "-y", "-i", os.path.join(WORK, "reframe-sheet.png"), "-vf",
                 "scale=iw*0.6:-1:flags=area", os.path.join(HERE, "results", "reframe-sheet.png")])
        if scene == "main":
            svg_paths(series, truth, os.path.join(HERE, "results", "reframe-path.svg"),
                      "main clip, 9:16: the window's centre x (px) per frame")
        print(f"{scene}: " + "; ".join(f"{k}: inside {v['inside']:.3f} iou {v['iou']:.3f} jitter "
                                       f"{v['jitter_px']:.3f}" for k, v in rows.items()), file=sys.stderr)
    if a.speed:
        clip = os.path.join(WORK, "main-1080p.mp4")
        if not os.path.exists(clip):
            run([sys.executable, os.path.join(TOOLS, "reframe.py"), clip, "--size", "1920x1080", "--face-width",
                 "300"])
        rows = {"centre crop (--aspect 9:16 --size 1080x1920)": ["--aspect", "9:16", "--size", "1080x1920"],
                "--follow auto (analysis + render)": ["--aspect", "9:16", "--follow", "auto", "--size", "1080x1920"]}
        walls = {k: [] for k in rows}
        for _ in range(a.runs):
            for k, extra in rows.items():
                walls[k].append(timed([cz, clip, "-o", os.path.join(WORK, "t-1080.mp4"), "-y"] + extra))
        results["speed_1080p"] = {"media_seconds": 10.0, "wall": {k: statistics.median(v) for k, v in walls.items()},
                                  "runs": walls}
    with open(os.path.join(HERE, "results", "reframe-peers.json"), "w") as f:
        json.dump(results, f, indent=1)
    lines = ["# Reframing (issue 30): cropzoom --follow against the baselines", "",
             f"Machine: {results['machine']['cpus']} CPUs, {results['machine']['platform']}; "
             f"{results['machine']['cropzoom']}. Made by `Benchmarks/reframe_peers.py` "
             f"(runs {a.runs}, medians; every command under nice -n 15). Outputs FFV1, 9:16 (404x720) from 1280x720.",
             "", "Targets (issue 30): subject inside ≥ 0.95, IoU ≥ 0.90, jitter < 0.3 px/frame² and at most half "
             "the moving average's, at least real time.", ""]
    for scene, r in results["scenes"].items():
        lines += [f"## {scene} ({r['frames']} frames; the per-frame cascade found a face in "
                  f"{r['faces found per frame by the baseline']})", "",
                  "| row | inside | mean IoU | jitter px/frame² | reversals /100 frames |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        for name, m in r["rows"].items():
            lines.append(f"| {name} | {m['inside']:.3f} | {m['iou']:.3f} | {m['jitter_px']:.3f} | "
                         f"{m['reversals_per_100']:.2f} |")
        w = r["wall"]
        lines += ["", f"Wall time (10 s clip): centre crop render {w['centre crop render']:.2f} s, --follow auto "
                      f"(analysis + render) {w['cropzoom --follow auto']:.2f} s "
                      f"({w['cropzoom --follow auto'] / w['centre crop render']:.2f}x).", ""]
    if "speed_1080p" in results:
        s = results["speed_1080p"]
        lines += ["## Speed: 1920x1080 30 fps, 10 s → 1080x1920 H.264 (x264 default preset)", ""]
        for k, v in s["wall"].items():
            lines.append(f"- `{k}`: {v:.2f} s wall, {10.0 / v:.2f}x real time")
        lines.append("")
    with open(os.path.join(HERE, "results", "reframe-peers.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
