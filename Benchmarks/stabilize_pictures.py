#!/usr/bin/env python3
"""Pictures of `--stabilize` (issue 29): the recorded camera against the path cropzoom chose, and a before/after
contact sheet.

A shaky clip is rendered by Tests/tools/shake.py from the real picture of ../shared/corpus/axm-sample_edit_list.mp4
(a slow pan, and a held camera, each with 3 px / 0.3 degree RMS hand shake, 640x360, 4 s), stabilised with `cropzoom --stabilize --path-out`,
and drawn:

- `stabilize-path.svg`: from the pan's path CSV, the camera's x, y (px) and angle (degrees) per frame as recorded
  (camera_*) and as stabilised (path_*), one panel each, and the correction's zoom per frame;
- `stabilize-sheet.png`: six frames of the held camera's input (top row) and the same six of the output (bottom row), each
  cropped to the same detail with a fixed crosshair, made by the ffmpeg CLI's crop, drawbox, tile and vstack
  filters: in the top row the picture moves under the crosshair, in the bottom row it does not.

Usage: python3 Benchmarks/stabilize_pictures.py --cropzoom .build/release/cropzoom [--out Benchmarks/results]
"""
import argparse, csv, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def run(cmd):
    subprocess.run(cmd, check=True)


def panel(rows, key_camera, key_path, title, unit, x0, y0, w, h, digits=1):
    """One SVG panel: two polylines over the frame index (one when key_camera is None)."""
    cam = [float(r[key_camera]) for r in rows] if key_camera else []
    pth = [float(r[key_path]) for r in rows]
    lo, hi = min(cam + pth), max(cam + pth)
    if hi - lo < 1e-9:
        hi, lo = lo + 1, lo - 1
    pad = 0.08 * (hi - lo)
    lo, hi = lo - pad, hi + pad
    n = len(rows)

    def pt(i, v):
        return f"{x0 + 50 + (w - 60) * i / max(1, n - 1):.1f},{y0 + 20 + (h - 40) * (hi - v) / (hi - lo):.1f}"

    out = [f'<rect x="{x0 + 50}" y="{y0 + 20}" width="{w - 60}" height="{h - 40}" fill="none" stroke="#ccc"/>',
           f'<text x="{x0 + 50}" y="{y0 + 14}" font-size="13">{title} ({unit})</text>',
           f'<text x="{x0 + 44}" y="{y0 + 25}" font-size="10" text-anchor="end">{hi:.{digits}f}</text>',
           f'<text x="{x0 + 44}" y="{y0 + h - 20}" font-size="10" text-anchor="end">{lo:.{digits}f}</text>',
           '<polyline fill="none" stroke="#d62728" stroke-width="1.2" points="'
           + " ".join(pt(i, v) for i, v in enumerate(cam)) + '"/>',
           '<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="'
           + " ".join(pt(i, v) for i, v in enumerate(pth)) + '"/>']
    return out


def svg(rows, path, title):
    w, h = 760, 190
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{4 * h + 80}" font-family="sans-serif">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="10" y="20" font-size="15">{title}</text>',
             '<line x1="50" y1="38" x2="80" y2="38" stroke="#d62728" stroke-width="1.2"/>'
             '<text x="85" y="42" font-size="12">recorded camera</text>',
             '<line x1="200" y1="38" x2="230" y2="38" stroke="#1f77b4" stroke-width="2"/>'
             '<text x="235" y="42" font-size="12">stabilised path (where the output\'s centre looks)</text>']
    for k, (a, b, name, unit) in enumerate([("camera_x", "path_x", "x", "px"), ("camera_y", "path_y", "y", "px"),
                                            ("camera_angle", "path_angle", "angle", "°")]):
        parts += panel(rows, a, b, name, unit, 0, 50 + k * h, w, h)
    parts += panel(rows, None, "zoom", "the correction's zoom", "x", 0, 50 + 3 * h, w, h, digits=3)
    parts.append(f'<text x="{w // 2}" y="{4 * h + 70}" font-size="11" text-anchor="middle">frame</text>')
    parts.append("</svg>")
    with open(path, "w") as fh:
        fh.write("\n".join(parts) + "\n")


def sheet(src, out, png, frames=6, step=10):
    """Top row: input frames 0, step, 2 step …; bottom row: the output's; a 200x150 detail, a fixed crosshair."""
    def row(i):
        return (f"[{i}:v]select='not(mod(n\\,{step}))',crop=200:150:220:105,"
                f"drawbox=x=99:y=0:w=2:h=150:color=red@0.8:t=fill,drawbox=x=0:y=74:w=200:h=2:color=red@0.8:t=fill,"
                f"pad=204:154:2:2:white,tile={frames}x1[r{i}]")
    graph = f"{row(0)};{row(1)};[r0][r1]vstack"
    run(["ffmpeg", "-v", "error", "-y", "-i", src, "-i", out, "-filter_complex", graph, "-frames:v", "1",
         "-update", "1", png])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cropzoom", required=True)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--work", default=os.path.join(HERE, "work", "stabilize-pictures"))
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(REPO, "Tests", "tools"))
    import shake  # noqa: E402
    if shake.default_picture() is None:
        sys.exit("stabilize_pictures.py: ../shared/corpus is absent (the picture is its axm-sample_edit_list.mp4)")
    os.makedirs(args.work, exist_ok=True)
    made = {}
    for kind, seed in (("pan", "22"), ("static", "21")):
        src = os.path.join(args.work, f"{kind}.mp4")
        out = os.path.join(args.work, f"{kind}.stabilised.mkv")
        csv_path = os.path.join(args.work, f"{kind}.path.csv")
        run([sys.executable, os.path.join(REPO, "Tests", "tools", "shake.py"), src, "--path", kind, "--seconds", "4",
             "--seed", seed])
        run([args.cropzoom, src, "-o", out, "--codec", "ffv1", "--stabilize", "--path-out", csv_path, "-y",
             "--quiet"])
        made[kind] = (src, out, list(csv.DictReader(l for l in open(csv_path) if not l.startswith("#"))))
    rows = made["pan"][2]
    zooms = [float(r["zoom"]) for r in rows]
    svg(rows, os.path.join(args.out, "stabilize-path.svg"),
        f"A slow pan with hand shake: the recorded camera and cropzoom's path (zoom {min(zooms):.3f}-{max(zooms):.3f})")
    # The held camera shows it best: the picture jumps under the crosshair above, and holds below.
    sheet(made["static"][0], made["static"][1], os.path.join(args.out, "stabilize-sheet.png"))
    print(f"wrote {args.out}/stabilize-path.svg and stabilize-sheet.png")


if __name__ == "__main__":
    main()
