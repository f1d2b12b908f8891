#!/usr/bin/env python3
"""Measures how smoothly the picture in a video moves: the global translation between each
pair of consecutive frames (Lucas–Kanade on the whole frame, after a Gaussian blur, so shifts
of a fraction of a pixel are resolved), then the jitter — how much that velocity changes from
one frame to the next, in pixels per frame² — and the backward steps (a frame that moves
against the overall direction).

Frames are decoded by the ffmpeg CLI (luma only). Meant for slow pans of static content: the
true velocity is then constant, and any jitter is the renderer's.

Usage: motion_jitter.py VIDEO [--skip N]  → one JSON object on stdout:
  {"frames", "velocity_mean": [vx, vy], "jitter_mean", "jitter_max", "backward_steps"}
"""
import json, subprocess, sys
import numpy as np


def frames(path):
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                            "-of", "csv=p=0", path], check=True, capture_output=True, text=True).stdout.strip()
    w, h = map(int, probe.split(",")[:2])
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", "gray", "-"],
                         check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w).astype(np.float64)


def blur(a, sigma=1.5):
    """Gaussian blur through the FFT (periodic edges; the margins are left out of the fit)."""
    h, w = a.shape
    fy = np.fft.fftfreq(h)[:, None]; fx = np.fft.rfftfreq(w)[None, :]
    g = np.exp(-2 * (np.pi * sigma) ** 2 * (fx ** 2 + fy ** 2))
    return np.fft.irfft2(np.fft.rfft2(a) * g, s=a.shape)


_grids = {}


def grid(h, w):
    if (h, w) not in _grids:
        _grids[(h, w)] = np.mgrid[0:h, 0:w].astype(np.float64)
    return _grids[(h, w)]


def shift(a, b, margin=16):
    """(dx, dy) that moves the content of a onto b (blurred frames; a Lucas–Kanade step,
    refined twice)."""
    dx = dy = 0.0
    h, w = a.shape
    ys, xs = grid(h, w)
    for _ in range(3):
        # Warp b back by the current estimate (bilinear), then solve for the rest.
        x = np.clip(xs + dx, 0, w - 1.001); y = np.clip(ys + dy, 0, h - 1.001)
        x0 = np.floor(x).astype(int); y0 = np.floor(y).astype(int); fx = x - x0; fy = y - y0
        bw = (b[y0, x0] * (1 - fx) * (1 - fy) + b[y0, x0 + 1] * fx * (1 - fy)
              + b[y0 + 1, x0] * (1 - fx) * fy + b[y0 + 1, x0 + 1] * fx * fy)
        m = (slice(margin, -margin), slice(margin, -margin))   # the blur wraps at the edges
        avg = (a + bw) / 2
        gy, gx = np.gradient(avg)
        gt = bw - a
        gx, gy, gt = gx[m], gy[m], gt[m]
        A = np.array([[np.sum(gx * gx), np.sum(gx * gy)], [np.sum(gx * gy), np.sum(gy * gy)]])
        rhs = -np.array([np.sum(gx * gt), np.sum(gy * gt)])
        ddx, ddy = np.linalg.solve(A, rhs)
        dx += ddx; dy += ddy
    return dx, dy


def main():
    path = sys.argv[1]
    skip = int(sys.argv[sys.argv.index("--skip") + 1]) if "--skip" in sys.argv else 0
    f = [blur(x) for x in frames(path)[skip:]]
    v = np.array([shift(f[k], f[k + 1]) for k in range(len(f) - 1)])
    mean = v.mean(axis=0)
    direction = mean / (np.linalg.norm(mean) or 1)
    along = v @ direction
    jitter = np.linalg.norm(np.diff(v, axis=0), axis=1)
    print(json.dumps({"frames": int(len(f)), "velocity_mean": [float(mean[0]), float(mean[1])],
                      "jitter_mean": float(jitter.mean()), "jitter_max": float(jitter.max()),
                      "backward_steps": int(np.sum(along < -0.05 * np.linalg.norm(mean)))}))


if __name__ == "__main__":
    main()
