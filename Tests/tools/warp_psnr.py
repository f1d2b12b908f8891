#!/usr/bin/env python3
"""PSNR of each frame of a rotation against a float reference: a still source picture rotated
in double precision about the frame's centre by the angle a linear ramp asks for at the frame's
time, each output pixel read with a 4x4 cubic (B = 0, C = 0.6, cropzoom's and swscale's
bicubic) around its exact source position. Only pixels whose 4x4 footprint lies inside the
picture are compared (the corners show the background).

Usage: warp_psnr.py VIDEO STILL.png DEG0 DEG1 SECONDS
  The angle goes linearly from DEG0 at 0 s to DEG1 at SECONDS, clockwise on screen.
  Prints {"frames", "psnr_min", "psnr_mean", "compared"} (luma, dB; compared: pixels per frame).
"""
import json, math, sys
import numpy as np
from window_psnr import gray, times, cubic


def rotate(src, deg):
    h, w = src.shape
    t = math.radians(deg)
    co, si = math.cos(t), math.sin(t)
    cx, cy = w / 2, h / 2
    qx, qy = np.meshgrid(np.arange(w) + 0.5 - cx, np.arange(h) + 0.5 - cy)
    # The inverse of a clockwise rotation (y down) about the centre, then sample index = coordinate - 0.5.
    u = cx + co * qx + si * qy - 0.5
    v = cy - si * qx + co * qy - 0.5
    ui, vi = np.floor(u).astype(int), np.floor(v).astype(int)
    fu, fv = u - ui, v - vi
    inside = (ui >= 1) & (vi >= 1) & (ui + 2 < w) & (vi + 2 < h)
    out = np.zeros_like(u)
    for r in range(4):
        wy = cubic(r - 1 - fv)
        row = np.zeros_like(u)
        for k in range(4):
            wx = cubic(k - 1 - fu)
            row += wx * src[np.clip(vi + r - 1, 0, h - 1), np.clip(ui + k - 1, 0, w - 1)]
        out += wy * row
    return out, inside


def main():
    video, still = sys.argv[1], sys.argv[2]
    d0, d1, span = map(float, sys.argv[3:6])
    out, W, H = gray(video)
    src, sw, sh = gray(still)
    src = src[0]
    assert (W, H) == (sw, sh), "the output should keep the still's size"
    psnrs, compared = [], 0
    for frame, t in zip(out, times(video)):
        deg = d0 + (d1 - d0) * min(max(t / span, 0), 1)
        ref, inside = rotate(src, deg)
        diff = (frame - np.clip(np.round(ref), 0, 255))[inside]
        compared = int(inside.sum())
        mse = float(np.mean(diff * diff))
        psnrs.append(99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse))
    print(json.dumps({"frames": len(psnrs), "psnr_min": round(min(psnrs), 2), "psnr_mean": round(sum(psnrs) / len(psnrs), 2),
                      "compared": compared}))


if __name__ == "__main__":
    main()
