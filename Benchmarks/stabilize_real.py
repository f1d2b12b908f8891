#!/usr/bin/env python3
"""`--stabilize` on real handheld footage (issue 29): phone recordings of ../shared/corpus, where no truth is known,
against ffmpeg 5.1's vid.stab, each output measured frame to frame by Tests/tools/stability.py (the registration of
consecutive frames, no picture to hold on to: jitter of the chained camera path, px/frame² and °/frame²).

Rows per clip (alternated A B C D A B C D … over --runs rounds, outputs FFV1, audio copied where there is any):
the input decoded and re-encoded (its own shake, measured the same way); vid.stab with its defaults; vid.stab tuned
as its documentation advises (shakiness=10:accuracy=15:stepsize=4, smoothing=30, optzoom=1, unsharp); and
`cropzoom --stabilize`. The ffmpeg CLI turns each phone clip upright by its display matrix, as cropzoom does.

Usage: python3 Benchmarks/stabilize_real.py --cropzoom .build/release/cropzoom [--runs 3]
       [--clips axm-pixel7_videoOnly_cleaned.mp4,axm-sample_edit_list.mp4,...]
"""
import argparse, json, os, re, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "Tests", "tools"))
sys.path.insert(0, HERE)
import shake, stability  # noqa: E402
from stabilize_peers import ENC, UNSHARP, DETECT_TUNED, timed  # noqa: E402

CLIPS = ("axm-pixel7_videoOnly_cleaned.mp4,axm-sample_edit_list.mp4,axm-mv_with_2_top_shots.mp4,"
         "axm-sample_sef_slow_motion.mp4")


NOTES = """What the clips are (each looked at):

- The Pixel 7 clip is black (a covered lens): cropzoom's analysis finds no texture and says so (`no frame has texture
  enough to measure the camera's motion: the output is not stabilised`), so its row is the clip as recorded, and every
  figure of that clip — the input's own included — is the frame-to-frame registration's noise on black frames.
- The iPhone clip (2.5 s, a building's front) shakes by less than a pixel: cropzoom zooms by at most 1.001 (its path's own
  jitter 0.15 px/frame²; one zoom for the clip, the rule before the zoom per frame, chose 1.096 for 0.221 here).
- The motion photo (Android, HEVC 1440x1080 at 120 fps nominal, VFR, its first video track; the ffmpeg rows are given
  the same track with `-map 0:v:0`) is a selfie at arm's length: 10 px/frame² of shake, the face (near, half the
  picture) and the ceiling behind it moving differently (parallax); no single camera motion steadies both.
- The Samsung slow-motion clip (320x240, 2 s) has little shake.

The frame-to-frame measure reads about 0.2 px/frame² on these clips even where the path's own figure is lower."""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cropzoom", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--clips", default=CLIPS)
    ap.add_argument("--work", default=os.path.join(HERE, "work", "stabilize-real"))
    ap.add_argument("--results", default=os.path.join(HERE, "results", "stabilize-real"))
    args = ap.parse_args()
    corpus = shake.corpus_dir()
    if corpus is None:
        sys.exit("stabilize_real.py: ../shared/corpus is absent")
    os.makedirs(args.work, exist_ok=True)
    cz = os.path.abspath(args.cropzoom)
    rows = []
    for name in args.clips.split(","):
        src = os.path.join(corpus, name)
        stem = os.path.splitext(name)[0]
        out = lambda row: os.path.join(args.work, f"{stem}.{row}.mkv")
        trf = os.path.join(args.work, f"{stem}.trf")
        # The ffmpeg CLI takes the largest picture of a file with two (the motion photo's 2048x1536 still track);
        # cropzoom, the first video stream: both are given the first.
        V = ["-map", "0:v:0"]
        A = V + ["-map", "0:a?"]
        plan = [
            ("input (decoded, re-encoded)", [["ffmpeg", "-v", "error", "-y", "-i", src] + A + ENC + [out("input")]],
             out("input")),
            ("vid.stab defaults", [
                ["ffmpeg", "-v", "error", "-y", "-i", src] + V + ["-vf", f"vidstabdetect=result={trf}", "-f", "null",
                                                                   "-"],
                ["ffmpeg", "-v", "error", "-y", "-i", src] + A + ["-vf", f"vidstabtransform=input={trf}"] + ENC
                + [out("vidstab")]], out("vidstab")),
            ("vid.stab tuned, optzoom=1", [
                ["ffmpeg", "-v", "error", "-y", "-i", src] + V + ["-vf", f"vidstabdetect={DETECT_TUNED}:result={trf}.t",
                                                                   "-f", "null", "-"],
                ["ffmpeg", "-v", "error", "-y", "-i", src] + A + [
                    "-vf", f"vidstabtransform=input={trf}.t:smoothing=30:optzoom=1,{UNSHARP}"] + ENC + [out("tuned")]],
             out("tuned")),
            ("cropzoom --stabilize", [[cz, src, "-o", out("cropzoom"), "--codec", "ffv1", "--stabilize", "-y",
                                       "--quiet"]], out("cropzoom")),
        ]
        times = {p[0]: [] for p in plan}
        for _ in range(args.runs):
            for label, cmds, _o in plan:
                w = 0.0
                for cmd in cmds:
                    w += timed(cmd)[0]
                times[label].append(w)
        for label, cmds, o in plan:
            r = stability.measure(o, None, None, affine=False)
            rows.append(dict(clip=name, row=label, jitter_px=r["jitter_px"], jitter_deg=r["jitter_deg"],
                             frames=r.get("frames"), wall_s=statistics.median(times[label]), runs=times[label],
                             commands=[" ".join(c).replace(src, "IN").replace(cz, "cropzoom")
                                       .replace(args.work + os.sep, "") for c in cmds]))
            print(f"{name} {label}: {r['jitter_px']:.3f} px/f², {r['jitter_deg']:.4f} °/f²", flush=True)
    with open(args.results + ".json", "w") as fh:
        json.dump(rows, fh, indent=1)
    L = ["# `--stabilize` on real handheld footage (issue 29)", "",
         "Made by `python3 Benchmarks/stabilize_real.py` (its docstring says how). Phone recordings from "
         "../shared/corpus (no truth: each output measured frame to frame by `Tests/tools/stability.py`, the chained "
         f"registration of consecutive frames). Medians of {args.runs} alternated rounds; outputs FFV1.", "",
         "| clip | row | frames | jitter px/f² | jitter °/f² | wall s |", "| --- | --- | ---: | ---: | ---: | ---: |"]
    for r in rows:
        L.append(f"| {r['clip']} | {r['row']} | {r['frames']} | {r['jitter_px']:.3f} | {r['jitter_deg']:.4f} | "
                 f"{r['wall_s']:.2f} |")
    L += ["", NOTES, "", "Command lines:", ""]
    for r in rows:
        L.append(f"- {r['clip']}, {r['row']}: " + "; ".join(f"`{c}`" for c in r["commands"]))
    with open(args.results + ".md", "w") as fh:
        fh.write("\n".join(L) + "\n")
    print(f"wrote {args.results}.md and .json")


if __name__ == "__main__":
    main()
