#!/usr/bin/env python3
"""Measures how steady a clip is, from its pixels (issue 29: the yardstick for --stabilize and its peers).

Each frame (luma, as displayed: the ffmpeg CLI applies the display matrix) is registered with a similarity transform
(scale, rotation, translation; plus a gain and an offset for the brightness) to the *source picture* when one is
given (--picture PNG, or the picture named by a shake.py sidecar given with --truth), else to the previous frame, and
the frame-to-frame transforms are chained. The registration is numpy only: a scale sweep with phase correlation for
the first frame (when there is no hint), then Gauss-Newton on a 3-level pyramid (the gradient is the mean of the
frame's and the warped picture's, as in ESM), with Tukey weights so that a moving foreground object or a black
border does not pull the estimate; each frame starts from the previous frame's estimate.

The trajectory is the frame centre's position in the picture (or in frame 0) in *output px* (source px divided by
the clip's median scale, so that a stabiliser that zooms in is judged on what the viewer sees), the angle (degrees)
and the log scale. From it:
  jitter_px      RMS of the second difference of the translation, px/frame^2 (with uneven frame times: the second
                 divided difference times the mean frame interval squared); jitter_deg likewise for the angle, and
                 jitter_log_scale for the log scale
  stability      share of the energy of the frame-to-frame motion (the trajectory's first difference, resampled to
                 the mean frame rate, mean removed) at 0 < f <= 2 Hz, for the translation (x and y energies summed)
                 and the rotation; `stability` is the smaller of the two (the score of Liu et al. 2013 and later
                 papers uses the lowest few FFT bins; a fixed cutoff in Hz keeps clips of any length comparable)
  kept_area      with --truth: per frame, the area of (output frame ∩ input frame) / area of the input frame, both
                 as quadrilaterals in the picture (the input frame is the sidecar's matrix): mean and min
  border         with --truth: share of the output frame that is not the input frame's picture (black or filled
                 border), mean and max
  distortion     the smallest ratio (over frames) of the singular values of an affine fit started from the similarity
                 (1 = no shear nor anisotropic scale)
  truth_error    with --truth of this very clip: the error of the registered transforms against the sidecar's
                 (frame-centre position in output px, angle, corners) and the jitter the sidecar's transforms give

Validation (Tests/tools/test_stability.py): against shake.py's sidecars the registered transforms are within about
0.02 px RMS (frame centre, output px) and 0.002 degrees RMS, the jitter within 0.5 %; a steady pan reads 0.002
px/frame^2. The frame-to-frame mode has nothing to hold on to but the frames: with a big object crossing a static
shot it read 8 % low (Benchmarks/results/stabilize-peers.md); prefer the picture.

Usage: stability.py CLIP [--truth SIDECAR.json] [--picture PNG] [--per-frame] [--out REPORT.json]
Prints one JSON object (or writes it to --out) and a one-line summary on stderr.
"""
import argparse, json, math, os, subprocess, sys
import numpy as np

# ---------------------------------------------------------------------------------------------------- decoding


def probe(path):
    out = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
         "stream=width,height:stream_side_data=rotation:frame=pts_time,best_effort_timestamp_time", "-of", "json",
         path], check=True, capture_output=True, text=True).stdout)
    st = out["streams"][0]
    w, h = st["width"], st["height"]
    for sd in st.get("side_data_list", []):
        if abs(int(sd.get("rotation", 0))) == 90:
            w, h = h, w
    times = [float(f.get("pts_time", f.get("best_effort_timestamp_time"))) for f in out["frames"]]
    return w, h, times


def decode_gray(path):
    """(frames (n, h, w) float32 luma as displayed, times in s)."""
    w, h, times = probe(path)
    raw = subprocess.run(["nice", "-n", "15", "ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0",
                          "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray", "-"],
                         check=True, capture_output=True).stdout
    frames = np.frombuffer(raw, np.uint8).reshape(-1, h, w).astype(np.float32)
    assert len(frames) == len(times), f"{len(frames)} frames decoded, {len(times)} times"
    return frames, np.array(times)


def load_picture_gray(png):
    w, h = map(int, subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=width,height", "-of",
                                    "csv=p=0", png], check=True, capture_output=True, text=True).stdout.split(","))
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", png, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         check=True, capture_output=True).stdout
    rgb = np.frombuffer(raw, np.uint8).reshape(h, w, 3).astype(np.float32)
    # the BT.601 luma the encoder's rgb24 -> yuv420p conversion uses, in full range; the per-frame gain and
    # offset of the registration absorb the limited range of the decoded Y
    return rgb @ np.array([0.299, 0.587, 0.114], np.float32)


# ------------------------------------------------------------------------------------------------- image tools


def smooth_down(a):
    """[1 2 1]/4 blur then every second pixel (pixel centres: x_half = (x + 0.5) / 2 - 0.5)."""
    p = np.pad(a, 1, mode="edge")
    b = (p[:, :-2] + 2 * p[:, 1:-1] + p[:, 2:]) / 4
    b = (b[:-2] + 2 * b[1:-1] + b[2:]) / 4
    h, w = b.shape
    return (b[0:h - 1:2, 0:w - 1:2] + b[1::2, 0:w - 1:2] + b[0:h - 1:2, 1::2] + b[1::2, 1::2]) / 4


def pyramid(a, levels):
    p = [a]
    for _ in range(levels - 1):
        p.append(smooth_down(p[-1]))
    return p


def level_map(level):
    """3x3: full-resolution pixel coordinates -> coordinates at a pyramid level."""
    f = 0.5 ** level
    return np.array([[f, 0, 0.5 * f - 0.5], [0, f, 0.5 * f - 0.5], [0, 0, 1.0]])


def to_level(M, level):
    L = level_map(level)
    return L @ M @ np.linalg.inv(L)


def sample(img, X, Y):
    """Bilinear; returns (values, valid mask)."""
    h, w = img.shape
    valid = (X >= 0) & (Y >= 0) & (X <= w - 1) & (Y <= h - 1)
    X = np.clip(X, 0, w - 1.001); Y = np.clip(Y, 0, h - 1.001)
    x0 = X.astype(np.int32); y0 = Y.astype(np.int32)
    fx = X - x0; fy = Y - y0
    i = y0 * w + x0
    flat = img.ravel()
    top = flat[i] * (1 - fx) + flat[i + 1] * fx
    bot = flat[i + w] * (1 - fx) + flat[i + w + 1] * fx
    return top * (1 - fy) + bot * fy, valid


def sim(a, b, tx, ty):
    return np.array([[a, -b, tx], [b, a, ty], [0, 0, 1.0]])


def params(M):
    """(centre-free) scale, angle in degrees of a 3x3 similarity-ish matrix."""
    a, b = (M[0, 0] + M[1, 1]) / 2, (M[1, 0] - M[0, 1]) / 2
    return math.hypot(a, b), math.degrees(math.atan2(b, a))


# ------------------------------------------------------------------------------------------------- registration


class Registrar:
    """Registers frames (h, w) to a reference image: M (3x3) maps frame pixel (x, y, 1) to reference (X, Y, 1)."""

    LEVELS = 3
    ITERS = (12, 6, 4)          # per level, finest first
    MARGIN = 6                  # px at full resolution left out at the frame's edges
    # at full resolution every second pixel of every second row, with the frame's own gradient (at the coarser
    # levels: every pixel, and the mean of the frame's and the warped picture's gradients)
    STRIDE = (2, 1, 1)

    def __init__(self, ref, h, w, affine=False):
        self.ref = pyramid(ref.astype(np.float32), self.LEVELS)
        self.h, self.w = h, w
        self.grids = []
        for l in range(self.LEVELS):
            hl, wl = self.ref_size_frame(l)
            k = self.STRIDE[l]
            ys, xs = np.mgrid[0:hl:k, 0:wl:k].astype(np.float32)
            m = max(1, self.MARGIN >> l)
            inner = (xs >= m) & (ys >= m) & (xs < wl - m) & (ys < hl - m)
            cx, cy = (wl - 1) / 2, (hl - 1) / 2
            self.grids.append((xs, ys, xs - cx, ys - cy, inner, (cx, cy)))

    def ref_size_frame(self, l):
        h, w = self.h, self.w
        for _ in range(l):
            h, w = h // 2, w // 2
        return h, w

    def _warp(self, l, Ml):
        xs, ys = self.grids[l][0], self.grids[l][1]
        X = Ml[0, 0] * xs + Ml[0, 1] * ys + Ml[0, 2]
        Y = Ml[1, 0] * xs + Ml[1, 1] * ys + Ml[1, 2]
        return sample(self.ref[l], X, Y)

    def refine(self, frame_pyr, M, levels=None, affine=False, iters=None):
        """Gauss-Newton from M, coarse to fine: minimises sum w (g P(M(x)) + o - I(x))^2 over the geometry, the gain
        g and the offset o, with Tukey weights w. Returns (M, robust residual scale at the finest level, inlier
        share)."""
        levels = list(range(self.LEVELS - 1, -1, -1)) if levels is None else levels
        sigma = inl = float("nan")
        g = o = None
        for l in levels:
            I = frame_pyr[l]
            k = self.STRIDE[l]
            xs, ys, u, v, inner, (cx, cy) = self.grids[l]
            gIy, gIx = np.gradient(I)
            I, gIx, gIy = I[::k, ::k], gIx[::k, ::k], gIy[::k, ::k]
            assert I.shape == xs.shape, (I.shape, xs.shape)
            C = np.array([[1, 0, cx], [0, 1, cy], [0, 0, 1.0]]); Ci = np.linalg.inv(C)
            Ml = to_level(M, l)
            for it in range((iters or self.ITERS)[l]):
                Wp, valid = self._warp(l, Ml)
                ok = valid & inner
                Wk, Ik = Wp[ok], I[ok]
                if g is None:       # the brightness difference first, so that outliers are judged after it
                    g, o = map(float, np.linalg.lstsq(np.stack([Wk, np.ones_like(Wk)], 1).astype(np.float64), Ik,
                                                      rcond=None)[0])
                if k == 1:
                    gy, gx = np.gradient(Wp)
                    gx = (0.5 * (g * gx + gIx))[ok]; gy = (0.5 * (g * gy + gIy))[ok]
                else:
                    gx, gy = gIx[ok], gIy[ok]
                uk, vk = u[ok], v[ok]
                if affine:
                    cols = [gx * uk, gx * vk, gy * uk, gy * vk, gx, gy]
                else:
                    cols = [gx * uk + gy * vk, -gx * vk + gy * uk, gx, gy]
                J = np.stack(cols + [Wk, np.ones_like(Wk)], 1)
                r = g * Wk + o - Ik
                rs = r[::5]
                sigma = 1.4826 * float(np.median(np.abs(rs - np.median(rs)))) + 1e-3
                c = 4.685 * sigma
                wgt = np.maximum(1 - (r / c) ** 2, 0) ** 2
                inl = float(np.mean(wgt > 0))
                JW = J * wgt[:, None]
                d = -np.linalg.solve((JW.T @ J).astype(np.float64) + 1e-9 * np.eye(J.shape[1]),
                                     (JW.T @ r).astype(np.float64))
                g = float(g + d[-2]); o = float(o + d[-1])
                # the geometric increment, in centred frame coordinates, composed on the right
                if affine:
                    D = np.array([[1 + d[0], d[1], d[4]], [d[2], 1 + d[3], d[5]], [0, 0, 1.0]])
                    step = max(np.abs(d[:4]).max() * max(cx, cy), np.abs(d[4:6]).max())
                else:
                    D = sim(1 + d[0], d[1], d[2], d[3])
                    step = max(np.abs(d[:2]).max() * max(cx, cy), np.abs(d[2:4]).max())
                Ml = Ml @ (C @ D @ Ci)
                if step < 0.005 * 4 ** l:        # level px: 0.005 at full resolution
                    break
            M = np.linalg.inv(level_map(l)) @ Ml @ level_map(l)
        return M, sigma, inl

    def init_search(self, frame_pyr, hint=None, scales=None):
        """First frame: a scale sweep, each with phase correlation at the coarsest level (or around the hint's centre
        when there is one), then the best two refined; returns M."""
        l = self.LEVELS - 1
        ref = self.ref[l]; I = frame_pyr[l]
        hl, wl = I.shape
        base = 1.0 if hint is None else params(hint)[0]
        scales = scales or [base * f for f in (1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 1.05, 1.1)]
        cands = []
        R = np.fft.rfft2(ref - ref.mean())
        for s in scales:
            # the frame resampled to the reference's scale: template pixel (x, y) = frame (x/s, y/s)
            th, tw = int(hl * s), int(wl * s)
            if th >= ref.shape[0] or tw >= ref.shape[1]:
                continue
            ty, tx = np.mgrid[0:th, 0:tw].astype(np.float32)
            T, _ = sample(I, (tx + 0.5) / s - 0.5, (ty + 0.5) / s - 0.5)
            win = np.outer(np.hanning(th), np.hanning(tw)).astype(np.float32)
            T = (T - T.mean()) * win
            P = np.zeros_like(ref); P[:th, :tw] = T
            X = R * np.conj(np.fft.rfft2(P))
            corr = np.fft.irfft2(X / (np.abs(X) + 1e-6), s=ref.shape)
            if hint is not None:
                # only offsets that put the frame centre within 40 px (level px) of the hint's
                Hl = to_level(hint, l)
                hx = Hl[0, 0] * (wl - 1) / 2 + Hl[0, 1] * (hl - 1) / 2 + Hl[0, 2] - (tw - 1) / 2
                hy = Hl[1, 0] * (wl - 1) / 2 + Hl[1, 1] * (hl - 1) / 2 + Hl[1, 2] - (th - 1) / 2
                yy, xx = np.mgrid[0:ref.shape[0], 0:ref.shape[1]]
                corr = np.where((np.abs(xx - hx) < 40) & (np.abs(yy - hy) < 40), corr, -1)
            k = int(np.argmax(corr)); oy, ox = divmod(k, ref.shape[1])
            Ml = np.array([[s, 0, ox + 0.5 * s - 0.5], [0, s, oy + 0.5 * s - 0.5], [0, 0, 1.0]])
            cands.append((float(corr.flat[k]), np.linalg.inv(level_map(l)) @ Ml @ level_map(l)))
        cands.sort(key=lambda c: -c[0])
        best = None
        for _, M0 in cands[:3]:
            M, sigma, inl = self.refine(frame_pyr, M0)
            if best is None or sigma / max(inl, 1e-3) < best[1]:
                best = (M, sigma / max(inl, 1e-3))
        return best[0]


def register_all(frames, ref=None, hint=None, affine=False, log=None):
    """Per frame a 3x3 map frame -> reference (the picture), or -> frame 0 by chaining when ref is None; plus the
    robust residual scale and the inlier share of each, and (affine) the singular value ratios."""
    n, h, w = frames.shape
    Ms, stats, ratios = [], [], []
    if ref is not None:
        reg = Registrar(ref, h, w)
        M = None
        for i in range(n):
            fp = pyramid(frames[i], Registrar.LEVELS)
            if M is None:
                M = reg.init_search(fp, hint)
            else:
                # constant-velocity prediction from the last two frames
                Mp = M @ (np.linalg.inv(Ms[-2]) @ M) if len(Ms) >= 2 else M
                M = Mp
            M, sigma, inl = reg.refine(fp, M)
            Ms.append(M); stats.append((sigma, inl))
            if affine:
                Ma, _, _ = reg.refine(fp, M, levels=[1], affine=True, iters=(0, 4, 0))
                s = np.linalg.svd(Ma[:2, :2], compute_uv=False); ratios.append(float(s[1] / s[0]))
            if log and i % 30 == 0:
                log(f"frame {i}: sigma {sigma:.2f} inliers {inl:.2f}")
    else:
        Ms.append(np.eye(3)); stats.append((0.0, 1.0)); ratios.append(1.0)
        prev = frames[0]; F = np.eye(3)
        for i in range(1, n):
            reg = Registrar(prev, h, w)
            fp = pyramid(frames[i], Registrar.LEVELS)
            F, sigma, inl = reg.refine(fp, F)          # frame i -> frame i-1, started from the last motion
            Ms.append(Ms[-1] @ F); stats.append((sigma, inl))
            if affine:
                Fa, _, _ = reg.refine(fp, F, levels=[1], affine=True, iters=(0, 4, 0))
                s = np.linalg.svd(Fa[:2, :2], compute_uv=False); ratios.append(float(s[1] / s[0]))
            prev = frames[i]
    return Ms, stats, ratios


# ------------------------------------------------------------------------------------------------------ metrics


def trajectory(Ms, w, h):
    """Per frame: the frame centre in reference px, angle in degrees, log scale."""
    c = np.array([(w - 1) / 2, (h - 1) / 2, 1.0])
    pos = np.array([(M @ c)[:2] for M in Ms])
    sa = np.array([params(M) for M in Ms])
    return pos, sa[:, 1], np.log(sa[:, 0])


def second_diff(times, x):
    """Second divided differences, times the mean interval squared (= the plain second difference when CFR)."""
    t = np.asarray(times, float); x = np.asarray(x, float)
    if len(t) < 3:
        return np.zeros((0,) + x.shape[1:])
    d1 = np.diff(x, axis=0) / np.diff(t).reshape((-1,) + (1,) * (x.ndim - 1))
    acc = 2 * np.diff(d1, axis=0) / (t[2:] - t[:-2]).reshape((-1,) + (1,) * (x.ndim - 1))
    return acc * np.mean(np.diff(t)) ** 2


def jitter(times, pos, ang, logs):
    a = second_diff(times, pos); r = second_diff(times, ang); z = second_diff(times, logs)
    rms = lambda v: float(np.sqrt(np.mean(v ** 2))) if v.size else 0.0
    return dict(jitter_px=rms(np.linalg.norm(a, axis=1)), jitter_deg=rms(r), jitter_log_scale=rms(z),
                jitter_px_max=float(np.linalg.norm(a, axis=1).max()) if a.size else 0.0)


def stability_scores(times, pos, ang, cutoff=2.0):
    t = np.asarray(times, float)
    fps = (len(t) - 1) / (t[-1] - t[0])
    tu = t[0] + np.arange(len(t)) / fps
    res = {}
    energies = {}
    for name, x in (("x", pos[:, 0]), ("y", pos[:, 1]), ("angle", ang)):
        xu = np.interp(tu, t, x)
        v = np.diff(xu); v = v - v.mean()
        P = np.abs(np.fft.rfft(v)) ** 2
        f = np.fft.rfftfreq(len(v), 1 / fps)
        lo, tot = P[(f > 0) & (f <= cutoff)].sum(), P[f > 0].sum()
        energies[name] = (lo, tot)
    lo = energies["x"][0] + energies["y"][0]; tot = energies["x"][1] + energies["y"][1]
    res["stability_translation"] = float(lo / tot) if tot > 0 else 1.0
    lo, tot = energies["angle"]
    res["stability_rotation"] = float(lo / tot) if tot > 0 else 1.0
    res["stability"] = min(res["stability_translation"], res["stability_rotation"])
    res["stability_cutoff_hz"] = cutoff
    return res


def quad(M, w, h):
    cs = np.array([[-0.5, -0.5, 1], [w - 0.5, -0.5, 1], [w - 0.5, h - 0.5, 1], [-0.5, h - 0.5, 1]]).T
    return (M @ cs)[:2].T


def poly_area(p):
    if len(p) < 3:
        return 0.0
    x, y = np.asarray(p).T
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def clip_poly(subject, clipper):
    """Sutherland-Hodgman: subject polygon clipped by a convex polygon (both as lists of points)."""
    def inside(p, a, b, sgn):
        return sgn * ((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])) >= 0

    def inter(p, q, a, b):
        x1, y1 = p; x2, y2 = q; x3, y3 = a; x4, y4 = b
        den = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4)
        t = ((x1 - x3) * (y3 - y4) - (y1 - y3) * (x3 - x4)) / den
        return (x1 + t * (x2 - x1), y1 + t * (y2 - y1))

    cx, cy = np.asarray(clipper).T
    sgn = 1 if (np.dot(cx, np.roll(cy, -1)) - np.dot(cy, np.roll(cx, -1))) > 0 else -1
    out = [tuple(p) for p in subject]
    for i in range(len(clipper)):
        a, b = clipper[i], clipper[(i + 1) % len(clipper)]
        inp, out = out, []
        for j in range(len(inp)):
            p, q = inp[j], inp[(j + 1) % len(inp)]
            if inside(q, a, b, sgn):
                if not inside(p, a, b, sgn):
                    out.append(inter(p, q, a, b))
                out.append(q)
            elif inside(p, a, b, sgn):
                out.append(inter(p, q, a, b))
        if not out:
            break
    return out


def kept(Ms_out, w, h, Ms_in, wi, hi):
    kept_, border = [], []
    for Mo, Mi in zip(Ms_out, Ms_in):
        qo, qi = quad(Mo, w, h), quad(Mi, wi, hi)
        inter = poly_area(clip_poly(qo, qi))
        kept_.append(inter / poly_area(qi)); border.append(1 - inter / poly_area(qo))
    return np.array(kept_), np.array(border)


def truth_matrices(truth):
    return [np.vstack([np.array(f["matrix"]), [0, 0, 1.0]]) for f in truth["frames"]]


# --------------------------------------------------------------------------------------------------------- main


def measure(clip, truth=None, picture=None, affine=True, per_frame=False, log=None):
    frames, times = decode_gray(clip)
    n, h, w = frames.shape
    ref = hint = None
    if truth is not None and picture is None:
        picture = truth["picture"]["png"]
    if picture:
        ref = load_picture_gray(picture)
        if truth is not None:
            # the sidecar's intended path at frame 0 (no shake) as the first frame's neighbourhood
            f0 = truth["frames"][0]
            p = f0["path"]; ph, pw = ref.shape
            s = p["scale"]; a = math.radians(p["angle"])
            A = s * np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
            c = np.array([(pw - 1) / 2 + p["dx"], (ph - 1) / 2 + p["dy"]])
            t = c - A @ np.array([(w - 1) / 2, (h - 1) / 2])
            hint = np.vstack([np.hstack([A, t[:, None]]), [0, 0, 1]])
    Ms, stats, ratios = register_all(frames, ref, hint, affine=affine, log=log)
    pos, ang, logs = trajectory(Ms, w, h)
    scale = float(np.median(np.exp(logs)))
    pos_out = pos / scale                      # output px at the clip's median scale
    rep = dict(clip=os.path.abspath(clip), frames=n, width=w, height=h,
               duration=float(times[-1] - times[0]), mean_fps=float((n - 1) / (times[-1] - times[0])),
               mode="picture" if ref is not None else "frame-to-frame",
               median_scale=scale)
    rep.update(jitter(times, pos_out, ang, logs))
    rep["jitter_source_px"] = jitter(times, pos, ang, logs)["jitter_px"]
    rep.update(stability_scores(times, pos_out, ang))
    sig = np.array([s[0] for s in stats]); inl = np.array([s[1] for s in stats])
    rep["registration"] = dict(residual_sigma_median=float(np.median(sig)), residual_sigma_max=float(sig.max()),
                               inlier_share_min=float(inl.min()), inlier_share_median=float(np.median(inl)))
    if affine:
        rep["distortion"] = float(min(ratios))
    if truth is not None and ref is not None:
        Mi = truth_matrices(truth)
        wi, hi = truth["clip"]["width"], truth["clip"]["height"]
        if len(Mi) == n:
            k, b = kept(Ms, w, h, Mi, wi, hi)
            rep.update(kept_area=float(k.mean()), kept_area_min=float(k.min()),
                       border=float(b.mean()), border_max=float(b.max()))
        else:
            rep["kept_area_note"] = f"{n} frames here, {len(Mi)} in the sidecar: not matched"
        if os.path.abspath(truth["clip"]["path"]) == os.path.abspath(clip) and len(Mi) == n:
            rep["truth_error"] = truth_error(Ms, Mi, w, h, times)
    if per_frame:
        rep["per_frame"] = [dict(t=float(t), x=float(p[0]), y=float(p[1]), angle=float(a), log_scale=float(z),
                                 matrix=M[:2].tolist()) for t, p, a, z, M in zip(times, pos_out, ang, logs, Ms)]
    return rep


def truth_error(Ms, Mi, w, h, times):
    pe, te = trajectory(Ms, w, h), trajectory(Mi, w, h)
    s = np.exp(te[2])[:, None]
    dpos = (pe[0] - te[0]) / s                                   # output px
    dang = pe[1] - te[1]
    dcorner = np.array([np.abs(quad(a, w, h) - quad(b, w, h)).max() for a, b in zip(Ms, Mi)]) / s[:, 0]
    jt = jitter(times, te[0] / float(np.median(np.exp(te[2]))), te[1], te[2])
    return dict(pos_rms_px=float(np.sqrt(np.mean(np.sum(dpos ** 2, 1)))),
                pos_max_px=float(np.linalg.norm(dpos, axis=1).max()),
                angle_rms_deg=float(np.sqrt(np.mean(dang ** 2))), angle_max_deg=float(np.abs(dang).max()),
                corner_max_px=float(dcorner.max()),
                log_scale_max=float(np.abs(pe[2] - te[2]).max()),
                truth_jitter_px=jt["jitter_px"], truth_jitter_deg=jt["jitter_deg"])


def summary(rep):
    s = (f"{os.path.basename(rep['clip'])}: {rep['frames']} frames, jitter {rep['jitter_px']:.3f} px/f² "
         f"{rep['jitter_deg']:.4f} °/f², stability {rep['stability']:.2f}")
    if "kept_area" in rep:
        s += f", kept area {rep['kept_area']:.3f} (min {rep['kept_area_min']:.3f})"
    if "distortion" in rep:
        s += f", distortion {rep['distortion']:.4f}"
    if "truth_error" in rep:
        e = rep["truth_error"]
        s += (f"; vs truth: pos {e['pos_rms_px']:.3f} px RMS ({e['pos_max_px']:.3f} max), angle "
              f"{e['angle_rms_deg']:.4f}° RMS, truth jitter {e['truth_jitter_px']:.3f}")
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("clip")
    ap.add_argument("--truth", help="shake.py sidecar of the clip (or of the clip that was stabilised)")
    ap.add_argument("--picture", help="the source picture (PNG); default: the sidecar's")
    ap.add_argument("--no-picture", action="store_true", help="frame-to-frame even with a sidecar")
    ap.add_argument("--no-distortion", action="store_true")
    ap.add_argument("--per-frame", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    truth = json.load(open(args.truth)) if args.truth else None
    if args.no_picture:
        rep = measure(args.clip, None, None, not args.no_distortion, args.per_frame)
        if truth is not None:
            rep["note"] = "frame-to-frame: the sidecar is not used"
    else:
        rep = measure(args.clip, truth, args.picture, not args.no_distortion, args.per_frame)
    text = json.dumps(rep, indent=1)
    if args.out:
        open(args.out, "w").write(text + "\n")
    else:
        print(text)
    print(summary(rep), file=sys.stderr)


if __name__ == "__main__":
    main()
