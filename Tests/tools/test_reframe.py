#!/usr/bin/env python3
"""reframe_measure.py checked against crops whose windows are known (issue 30's yardstick, before the feature).

A clip (samples/bench-720p.mp4, which samples/generate.sh makes; without it,
ffmpeg's testsrc2) is cropped by the ffmpeg CLI to a 9:16 window along known positions; reframe_measure.py must find
each window again from the pixels alone:
  - a fixed window within TOL_FIXED px of its x (ffmpeg's crop puts x on the chroma grid: even);
  - a moving window (x = 100 + 100 t, on the chroma grid) within TOL_MOVING px every frame, no reversal;
  - a window that shakes (x alternating by 8 px) reads as jitter and as reversals;
  - the measure can fail: a window moved by 2 px in the check is caught.
Run as a script (python3 Tests/tools/test_reframe.py) or with pytest; about 20 s.
"""
import math, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import reframe_measure as rm  # noqa: E402

TOL_FIXED = 0.1
TOL_MOVING = 0.15
_tmp = tempfile.TemporaryDirectory(prefix="reframe-test-")


def source():
    """A 1280x720 clip of 90 frames: the repository's sample when present, else testsrc2."""
    out = os.path.join(_tmp.name, "src.nut")   # NUT: times in 1/30 s (Matroska rounds them to ms)
    sample = os.path.join(REPO, "samples", "bench-720p.mp4")
    inp = ["-i", sample] if os.path.isfile(sample) else ["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30"]
    subprocess.run(["ffmpeg", "-v", "error", "-y"] + inp + ["-frames:v", "90", "-vf", "scale=1280:720,format=yuv420p",
                    "-an", "-c:v", "ffv1", out], check=True)
    return out


def crop(src, x_expr, name):
    out = os.path.join(_tmp.name, name + ".nut")
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", src, "-vf", f"crop=404:720:{x_expr}:0", "-c:v", "ffv1",
                    out], check=True)
    return out


def windows(out, src):
    return rm.measure(out, src, None, "9:16", per_frame=True)


def test_all():
    src = source()
    r = windows(crop(src, "437", "fixed"), src)
    xs = [w[0] for w in r["windows"]]
    assert r["frames"] == 90 and all(abs(x - 436) <= TOL_FIXED for x in xs), xs[:5]
    assert r["jitter_px"] < 0.05 and r["reversals_per_100"] == 0, r
    r = windows(crop(src, "'100+t*100'", "pan"), src)
    want = [2 * math.floor((100 + i * 100 / 30) / 2) for i in range(90)]
    off = [abs(w[0] - x) for w, x in zip(r["windows"], want)]
    assert max(off) <= TOL_MOVING and r["reversals_per_100"] == 0, (max(off), r["reversals_per_100"])
    # the measure can fail: the same pan checked against windows 2 px off is caught
    assert max(abs(w[0] - (x + 2)) for w, x in zip(r["windows"], want)) > 1.5
    r = windows(crop(src, "'400+8*mod(n\\,2)'", "shake"), src)
    assert r["jitter_px"] > 10 and r["reversals_per_100"] > 50, r
    print(f"test_reframe: fixed, pan and shaking windows found again (pan within {max(off):.3f} px)")


if __name__ == "__main__":
    test_all()
