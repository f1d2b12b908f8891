#!/usr/bin/env python3
"""Animated zoom and pan, side by side: cropzoom's keyframed --center against ffmpeg's zoompan
(5.1 and 9) and an animated crop expression, on a still picture panned slowly, measured with
Tests/tools/motion_jitter.py (velocity, jitter, backward steps) — plus each renderer's wall time.
Writes Benchmarks/results-motion.md.

Usage: python3 Benchmarks/motion.py   (after `swift build -c release`)
"""
import json, os, platform, shlex, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
from compare import ffmpeg9  # noqa: E402

TOOL = os.path.join(ROOT, "Tests", "tools", "motion_jitter.py")


def main():
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
    path = os.path.join(ROOT, "Benchmarks", "results-motion.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
