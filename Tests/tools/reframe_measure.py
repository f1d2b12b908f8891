#!/usr/bin/env python3
"""Measures a reframed clip against the ground truth of Tests/tools/reframe.py (issue 30), from the pixels alone.

For each frame the output picture is located in the input frame of the same index: the window is axis-aligned, of
the output's shape, its height the input's divided by --zoom (1: the largest window of that shape); its position is
found by normalised cross-correlation of the grey pictures (both averaged down by --step, the correlation computed
with FFTs), then at full resolution around it, and to a fraction of a pixel by Gauss-Newton on the shift (brightness
and contrast normalised). From the windows and
the sidecar:

- inside: the share of frames whose face box lies wholly inside the window;
- iou: the mean intersection over union of the window with the sidecar's ideal window of that aspect;
- jitter: the RMS second difference of the window's centre (px/frame²), over triples of frames that no cut splits;
- reversals: changes of the centre's horizontal direction per 100 frames (moves under 0.5 px a frame are holds);
- the windows themselves with --per-frame.

Usage: reframe_measure.py OUTPUT INPUT [--truth INPUT.json] [--aspect 9:16] [--zoom 1] [--step 4] [--per-frame]
       [--out report.json]
"""
import argparse, json, math, subprocess, sys
import numpy as np


def grey_frames(path):
    """(n, h, w) float32 luma of every frame, as decoded and shown (upright; every frame as it is: no rate
    conversion)."""
    probe = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
         "stream=width,height:stream_side_data=rotation", "-of", "json", path],
        check=True, capture_output=True, text=True).stdout)["streams"][0]
    w, h = int(probe["width"]), int(probe["height"])
    # ffmpeg turns the frames upright (the display matrix): a quarter turn swaps the sides.
    if any(abs(int(sd.get("rotation", 0))) == 90 for sd in probe.get("side_data_list", [])):
        w, h = h, w
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-f",
                          "rawvideo", "-pix_fmt", "gray", "-"], check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w).astype(np.float32)


def shrink(img, k):
    h, w = img.shape
    h2, w2 = h // k, w // k
    return img[:h2 * k, :w2 * k].reshape(h2, k, w2, k).mean(axis=(1, 3))


def resize(img, w, h):
    """Area-average resize (bilinear when enlarging) of a grey picture to w x h."""
    ih, iw = img.shape
    ys = (np.arange(h) + 0.5) * ih / h - 0.5
    xs = (np.arange(w) + 0.5) * iw / w - 0.5
    if iw > 2 * w or ih > 2 * h:     # average first so that the samples do not alias
        k = max(1, min(iw // w, ih // h))
        img = shrink(img, k)
        ih, iw = img.shape
        ys = (np.arange(h) + 0.5) * ih / h - 0.5
        xs = (np.arange(w) + 0.5) * iw / w - 0.5
    X, Y = np.meshgrid(np.clip(xs, 0, iw - 1.0001), np.clip(ys, 0, ih - 1.0001))
    x0, y0 = np.floor(X).astype(int), np.floor(Y).astype(int)
    fx, fy = X - x0, Y - y0
    a, b, c, d = img[y0, x0], img[y0, x0 + 1], img[y0 + 1, x0], img[y0 + 1, x0 + 1]
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def locate(frame, template):
    """(x, y) of the top-left of `template` in `frame` by normalised cross-correlation, sub-pixel."""
    H, W = frame.shape
    h, w = template.shape
    t = template - template.mean()
    tn = math.sqrt(float((t * t).sum())) or 1.0
    F = np.fft.rfft2(frame)
    T = np.fft.rfft2(t[::-1, ::-1], s=frame.shape)
    num = np.fft.irfft2(F * T, s=frame.shape)[h - 1:, w - 1:]
    # local sums of the frame (and its square) over the template's size, for the normalisation
    c1 = np.cumsum(np.cumsum(np.pad(frame, ((1, 0), (1, 0))), 0), 1)
    c2 = np.cumsum(np.cumsum(np.pad(frame * frame, ((1, 0), (1, 0))), 0), 1)
    s1 = c1[h:, w:] - c1[:-h, w:] - c1[h:, :-w] + c1[:-h, :-w]
    s2 = c2[h:, w:] - c2[:-h, w:] - c2[h:, :-w] + c2[:-h, :-w]
    var = np.maximum(s2 - s1 * s1 / (h * w), 1e-6)
    ncc = num[:s1.shape[0], :s1.shape[1]] / (np.sqrt(var) * tn)
    y, x = np.unravel_index(int(np.argmax(ncc)), ncc.shape)

    def vertex(m, c, p):
        d = m - 2 * c + p
        return 0.0 if d >= 0 else 0.5 * (m - p) / d
    dx = vertex(ncc[y, x - 1], ncc[y, x], ncc[y, x + 1]) if 0 < x < ncc.shape[1] - 1 else 0.0
    dy = vertex(ncc[y - 1, x], ncc[y, x], ncc[y + 1, x]) if 0 < y < ncc.shape[0] - 1 else 0.0
    return x + dx, y + dy, float(ncc[y, x])


def refine(frame, template, x, y, reach):
    """The coarse position (x, y) refined at full resolution: NCC at every whole-pixel offset within `reach`, then
    Gauss-Newton on the shift from the best."""
    H, W = frame.shape
    h, w = template.shape
    t = template - template.mean()
    tn = math.sqrt(float((t * t).sum())) or 1.0
    xs = range(max(0, round(x) - reach), min(W - w, round(x) + reach) + 1)
    ys = range(max(0, round(y) - reach), min(H - h, round(y) + reach) + 1)
    score = np.full((len(ys), len(xs)), -2.0)
    for j, yy in enumerate(ys):
        for i, xx in enumerate(xs):
            p = frame[yy:yy + h, xx:xx + w]
            p = p - p.mean()
            score[j, i] = float((p * t).sum()) / ((math.sqrt(float((p * p).sum())) or 1.0) * tn)
    j, i = np.unravel_index(int(np.argmax(score)), score.shape)
    x, y = float(xs[i]), float(ys[j])
    # sub-pixel: Gauss-Newton on the shift, brightness and contrast normalised (a parabola through NCC scores is
    # biased by a third of a pixel on some content)
    tz = t / tn
    for _ in range(4):
        X, Y = np.meshgrid(x + np.arange(w), y + np.arange(h))
        p = sample(frame, X, Y)
        gx = (sample(frame, X + 0.5, Y) - sample(frame, X - 0.5, Y))
        gy = (sample(frame, X, Y + 0.5) - sample(frame, X, Y - 0.5))
        pm, ps = p.mean(), p.std() or 1.0
        r = (p - pm) / ps - tz * math.sqrt(h * w)
        gx, gy = gx / ps, gy / ps
        can_x, can_y = W - w > 0, H - h > 0
        A = np.array([[float((gx * gx).sum()), float((gx * gy).sum())], [float((gx * gy).sum()), float((gy * gy).sum())]])
        b = -np.array([float((gx * r).sum()), float((gy * r).sum())])
        if not can_y:
            d = np.array([b[0] / A[0, 0] if A[0, 0] > 0 else 0.0, 0.0])
        elif not can_x:
            d = np.array([0.0, b[1] / A[1, 1] if A[1, 1] > 0 else 0.0])
        else:
            d = np.linalg.solve(A + 1e-9 * np.eye(2), b)
        d = np.clip(d, -1, 1)
        x = min(max(x + d[0], 0.0), W - w)
        y = min(max(y + d[1], 0.0), H - h)
        if abs(d[0]) < 1e-3 and abs(d[1]) < 1e-3:
            break
    return x, y, float(score[j, i])


def sample(img, X, Y):
    """Bilinear samples of img at (X, Y) (pixel centres at integers), clamped to the picture."""
    H, W = img.shape
    X = np.clip(X, 0, W - 1.0001)
    Y = np.clip(Y, 0, H - 1.0001)
    x0, y0 = np.floor(X).astype(int), np.floor(Y).astype(int)
    fx, fy = X - x0, Y - y0
    a, b, c, d = img[y0, x0], img[y0, x0 + 1], img[y0 + 1, x0], img[y0 + 1, x0 + 1]
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def iou(a, b):
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def measure(output, source, truth, aspect, zoom=1.0, step=4, per_frame=False):
    outs, ins = grey_frames(output), grey_frames(source)
    if len(outs) != len(ins):
        raise SystemExit(f"reframe_measure.py: {output}: {len(outs)} frames, {source}: {len(ins)}")
    H, W = ins.shape[1:]
    oh, ow = outs.shape[1:]
    r = ow / oh
    ww, wh = (W, W / r) if W / H <= r else (H * r, H)
    ww, wh = ww / zoom, wh / zoom
    windows, scores = [], []
    for o, i in zip(outs, ins):
        small = shrink(i, step)
        tw, th = max(8, round(ww / step)), max(8, round(wh / step))
        x, y, s = locate(small, resize(o, tw, th))
        # the coarse top-left in input px, refined at full resolution (the window rounded to whole pixels there)
        full = o if (ow, oh) == (round(ww), round(wh)) else resize(o, round(ww), round(wh))
        x, y, s = refine(i, full, x * step, y * step, step + 1)
        windows.append([x, y, ww, wh])
        scores.append(s)
    rep = {"output": output, "input": source, "frames": len(windows), "window": [round(ww, 3), round(wh, 3)],
           "aspect": aspect, "match_min": round(min(scores), 4)}
    cx = np.array([w[0] + w[2] / 2 for w in windows])
    cy = np.array([w[1] + w[3] / 2 for w in windows])
    cuts = set()
    if truth:
        recs = truth["frames"]
        cuts = {k for k, f in enumerate(recs) if f.get("cut")}
        inside = [f["face"][0] >= w[0] - 0.5 and f["face"][1] >= w[1] - 0.5 and
                  f["face"][0] + f["face"][2] <= w[0] + w[2] + 0.5 and f["face"][1] + f["face"][3] <= w[1] + w[3] + 0.5
                  for f, w in zip(recs, windows)]
        rep["inside"] = round(sum(inside) / len(inside), 4)
        if aspect in recs[0].get("ideal", {}):
            rep["iou"] = round(float(np.mean([iou(w, f["ideal"][aspect]) for f, w in zip(recs, windows)])), 4)
    d2 = [math.hypot(cx[k + 1] - 2 * cx[k] + cx[k - 1], cy[k + 1] - 2 * cy[k] + cy[k - 1])
          for k in range(1, len(cx) - 1) if k not in cuts and k + 1 not in cuts]
    rep["jitter_px"] = round(math.sqrt(float(np.mean(np.square(d2)))) if d2 else 0.0, 4)
    v = np.diff(cx)
    moving = [(k, np.sign(x)) for k, x in enumerate(v) if abs(x) >= 0.5 and k + 1 not in cuts]
    turns = sum(1 for (k0, s0), (k1, s1) in zip(moving, moving[1:]) if s0 != s1)
    rep["reversals_per_100"] = round(100 * turns / max(1, len(cx)), 3)
    if per_frame:
        rep["windows"] = [[round(x, 3) for x in w] for w in windows]
    return rep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("output")
    ap.add_argument("input")
    ap.add_argument("--truth")
    ap.add_argument("--aspect", default="9:16")
    ap.add_argument("--zoom", type=float, default=1.0)
    ap.add_argument("--step", type=int, default=4)
    ap.add_argument("--per-frame", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    truth = json.load(open(a.truth)) if a.truth else None
    rep = measure(a.output, a.input, truth, a.aspect, a.zoom, a.step, a.per_frame)
    text = json.dumps(rep, indent=1)
    if a.out:
        open(a.out, "w").write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
