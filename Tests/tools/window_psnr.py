#!/usr/bin/env python3
"""PSNR of each frame of a zoom against a float reference: a still source picture resampled in
double precision at the exact (fractional) window a linear zoom ramp asks for at the frame's
time. The reference uses the cubic with B = 0, C = 0.6 (swscale's and cropzoom's bicubic), so
what remains is rounding — and any error in where the window is.

Usage: window_psnr.py VIDEO STILL.png Z0 Z1 SECONDS [CX CY]
  The zoom goes linearly from Z0 at 0 s to Z1 at SECONDS around (CX, CY) (default 0.5 0.5).
  Prints {"frames", "psnr_min", "psnr_mean"} (luma, dB).
"""
import json, subprocess, sys
import numpy as np


def gray(path, w=None, h=None):
    if w is None:
        out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                              "-of", "csv=p=0", path], check=True, capture_output=True, text=True).stdout.strip()
        w, h = map(int, out.split(",")[:2])
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", "gray", "-"],
                         check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w).astype(np.float64), w, h


def times(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0", path],
                         check=True, capture_output=True, text=True).stdout
    return [float(l.split(",")[0]) for l in out.split() if l.strip()]


def cubic(x, b=0.0, c=0.6):
    x = np.abs(x)
    return np.where(x < 1, ((12 - 9 * b - 6 * c) * x**3 + (-18 + 12 * b + 6 * c) * x**2 + (6 - 2 * b)) / 6,
                    np.where(x < 2, ((-b - 6 * c) * x**3 + (6 * b + 30 * c) * x**2 + (-12 * b - 48 * c) * x + (8 * b + 24 * c)) / 6, 0))


def weights(n_out, start, length, n_in):
    """Rows of taps: output sample i reads input samples around start + (i + 0.5) * length / n_out - 0.5."""
    scale = length / n_out
    pos = start + (np.arange(n_out) + 0.5) * scale - 0.5
    support = 2 * max(1.0, scale)
    lo = np.floor(pos - support).astype(int) + 1
    taps = int(np.ceil(2 * support)) + 1
    idx = lo[:, None] + np.arange(taps)[None, :]
    wgt = cubic((idx - pos[:, None]) / max(1.0, scale))
    wgt /= wgt.sum(axis=1, keepdims=True)
    return np.clip(idx, 0, n_in - 1), wgt


def main():
    video, still = sys.argv[1], sys.argv[2]
    z0, z1, span = map(float, sys.argv[3:6])
    cx, cy = (map(float, sys.argv[6:8]) if len(sys.argv) >= 8 else (0.5, 0.5))
    out, W, H = gray(video)
    src, sw, sh = gray(still)
    src = src[0]
    psnrs = []
    for frame, t in zip(out, times(video)):
        z = z0 + (z1 - z0) * min(max(t / span, 0), 1)
        w, h = sw / z, sh / z
        x = min(max(cx * sw - w / 2, 0), sw - w)
        y = min(max(cy * sh - h / 2, 0), sh - h)
        ix, wx = weights(W, x, w, sw)
        iy, wy = weights(H, y, h, sh)
        rows = (src[:, ix] * wx[None, :, :]).sum(axis=2)          # sh x W
        ref = (rows[iy, :] * wy[:, :, None]).sum(axis=1)          # H x W
        ref = np.clip(np.round(ref), 0, 255)
        mse = np.mean((frame - ref) ** 2)
        psnrs.append(99.0 if mse == 0 else 10 * np.log10(255 ** 2 / mse))
    print(json.dumps({"frames": len(psnrs), "psnr_min": float(min(psnrs)), "psnr_mean": float(np.mean(psnrs))}))


if __name__ == "__main__":
    main()
