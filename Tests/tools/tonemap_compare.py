#!/usr/bin/env python3
"""An SDR picture made from HDR against FFmpeg's own tone mapping: the HDR input through zscale and
tonemap (libzimg's transfer and gamut conversions, the `tonemap` filter's curve, desat=0) into
BT.709 4:2:0, both turned into 8-bit RGB by the ffmpeg CLI the same way.

Usage: tonemap_compare.py SDR_OUTPUT HDR_INPUT [CURVE] [FRAMES]
  CURVE: the tonemap filter's (hable, reinhard, clip …; default hable). FRAMES: how many to compare (default all).
Prints JSON: frames, psnr (RGB, dB), mean_luma and colourfulness of each (BT.709 luma of R'G'B' 0–255; Hasler and
Süsstrunk's colourfulness), their ratios, and the output's tags as ffprobe reads them.
"""
import json, subprocess, sys
import numpy as np


def size(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                          "-of", "csv=p=0", path], check=True, capture_output=True, text=True).stdout.strip()
    return tuple(map(int, out.split(",")[:2]))


def rgb(path, vf, frames, w, h):
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough"]
    if frames:
        cmd += ["-frames:v", str(frames)]
    cmd += ["-vf", vf, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    raw = subprocess.run(cmd, check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3).astype(np.float64)


# Both pictures are BT.709 limited-range 4:2:0 before they become RGB, the same way.
TO_RGB = "scale=in_color_matrix=bt709:in_range=tv:flags=bicubic+accurate_rnd+full_chroma_int,format=rgb24"


def stats(x):
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    luma = 0.2126 * r + 0.7152 * g + 0.0722 * b
    rg = r - g
    yb = 0.5 * (r + g) - b
    colourfulness = np.sqrt(rg.var() + yb.var()) + 0.3 * np.sqrt(rg.mean() ** 2 + yb.mean() ** 2)
    return float(luma.mean()), float(colourfulness)


def main():
    out, hdr = sys.argv[1], sys.argv[2]
    curve = sys.argv[3] if len(sys.argv) > 3 else "hable"
    frames = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    w, h = size(out)
    # The reference at the output's size (bicubic in linear light is not what cropzoom does, so scale in the signal).
    reference = (f"scale={w}:{h}:flags=bicubic,zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,"
                 f"tonemap=tonemap={curve}:desat=0,zscale=t=bt709:m=bt709:r=tv,format=yuv420p,{TO_RGB}")
    a = rgb(out, TO_RGB, frames, w, h)
    b = rgb(hdr, reference, frames, w, h)
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    mse = float(((a - b) ** 2).mean())
    psnr = 99.0 if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)
    la, ca = stats(a)
    lb, cb = stats(b)
    tags = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                           "stream=pix_fmt,color_space,color_transfer,color_primaries", "-of", "json", out],
                          check=True, capture_output=True, text=True).stdout
    print(json.dumps({
        "frames": n, "psnr": round(psnr, 2),
        "mean_luma": round(la, 2), "reference_mean_luma": round(lb, 2), "luma_ratio": round(la / max(lb, 1e-9), 4),
        "colourfulness": round(ca, 2), "reference_colourfulness": round(cb, 2),
        "colourfulness_ratio": round(ca / max(cb, 1e-9), 4),
        "tags": json.loads(tags)["streams"][0],
    }))


if __name__ == "__main__":
    main()
