#!/usr/bin/env python3
"""The live (causal) camera path of `--stabilize` with a live source (issue 29 item 3), simulated without rendering.

Each frame's correction is chosen when the frame leaves the look-ahead: the window [k-3, k+L] (L frames of
look-ahead) is solved by CCameraPath's `cz_path_solve_after` with the frames already shown fixed, and frame k's
row kept — what `LiveStabilizer` does per frame. The motions are the clips' true ones (Tests/tools/shake.py
sidecars, + 0.03 px noise as campath_bench.py), so this measures the path alone: jitter of the output's apparent
camera (Tests/tools/stability.py's measure), kept area, the solve's time per frame; the offline path
(`cz_path_choose`, the file's) beside it.

    cc -std=c11 -O2 -fPIC -shared -ISources/CCameraPath/include Sources/CCameraPath/campath.c -o /tmp/libcampath.so -lm
    python3 Benchmarks/campath_live.py --lib /tmp/libcampath.so --clips Benchmarks/work/stabilize \
        --lookahead 15 --crop 1.1 [--hold 10] [--ext mp4]
"""
import argparse, ctypes, json, os, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import campath_bench as cb  # noqa: E402

P = ctypes.POINTER
D = ctypes.c_double


def load(lib):
    L = cb.load(lib)
    L.cz_path_workspace_new.argtypes = [ctypes.c_int]
    L.cz_path_workspace_new.restype = ctypes.c_void_p
    L.cz_path_workspace_free.argtypes = [ctypes.c_void_p]
    L.cz_path_solve_after.argtypes = [P(cb.Problem), ctypes.c_int, P(D), ctypes.c_void_p, P(cb.Stats)]
    return L


def live_path(L, F, W, H, crop, lookahead, hold, tripod, smooth2, aw, durations, area=0.0, rate=0.0):
    n = len(F)
    B = np.tile([1 / crop, 0, 0, 0], (n, 1)).astype(np.float64)
    cap = lookahead + 4
    ws = L.cz_path_workspace_new(cap)
    win = np.zeros((cap, 4)); mot = np.zeros((cap, 4)); dur = np.zeros(cap)
    seconds = []
    for k in range(n):
        s = max(0, k - 3)
        a = min(n, k + lookahead + 1)
        m = a - s
        mot[:m] = F[s:a]; dur[:m] = durations[s:a]
        win[:m] = B[s:a]
        p = cb.Problem(); L.cz_path_defaults(ctypes.byref(p))
        p.n = m; p.motion = mot.ctypes.data_as(P(D)); p.duration = dur.ctypes.data_as(P(D))
        p.width, p.height, p.crop = W, H, crop
        p.hold = hold; p.mode = 1 if tripod else 0; p.affine_weight = aw; p.smooth2 = smooth2
        p.area_weight = area; p.zoom_rate = rate
        t0 = time.perf_counter()
        rc = L.cz_path_solve_after(ctypes.byref(p), k - s, win.ctypes.data_as(P(D)), ws, None)
        seconds.append(time.perf_counter() - t0)
        if rc != 0:
            raise SystemExit(f"solve failed at {k}: {rc}")
        B[k] = win[k - s]
    L.cz_path_workspace_free(ws)
    return B, seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--clips", required=True)
    ap.add_argument("--ext", default="mp4")
    ap.add_argument("--lookahead", type=int, default=15)
    ap.add_argument("--crop", type=float, default=1.1)
    ap.add_argument("--hold", type=float, default=0)
    ap.add_argument("--tripod", action="store_true")
    ap.add_argument("--smooth2", type=float, default=3000)
    ap.add_argument("--affine-weight", type=float, default=1.2)
    ap.add_argument("--noise", type=float, default=0.03)
    ap.add_argument("--area-weight", type=float, default=0.0, help="> 0: the zoom per frame (cropzoom: 20)")
    ap.add_argument("--zoom-rate", type=float, default=0.0, help="with --area-weight: its speed bound (cropzoom: 0.03)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    L = load(a.lib)
    rows = []
    for name in cb.CLIPS:
        W, H, Ms, times = cb.sidecar(os.path.join(a.clips, f"{name}.{a.ext}"))
        F = cb.motions(W, H, Ms, a.noise, 1)
        dur = np.append(np.diff(times), np.diff(times)[-1])
        B, secs = live_path(L, F, W, H, a.crop, a.lookahead, a.hold, a.tripod, a.smooth2, a.affine_weight, dur,
                            a.area_weight, a.zoom_rate)
        raw = np.tile([1.0, 0, 0, 0], (len(F), 1))
        jr = cb.evaluate(W, H, Ms, times, raw)
        jp, jd, kept = cb.evaluate(W, H, Ms, times, B)
        # the file's path at the same crop, for comparison
        p, keep = cb.problem(L, F, W, H, a.crop, dur=dur)
        p.hold = a.hold; p.mode = 1 if a.tripod else 0; p.affine_weight = a.affine_weight; p.smooth2 = a.smooth2
        p.area_weight = a.area_weight; p.zoom_rate = a.zoom_rate
        Bo = np.zeros((len(F), 4))
        L.cz_path_solve(ctypes.byref(p), Bo.ctypes.data_as(P(D)), None)
        jo = cb.evaluate(W, H, Ms, times, Bo)
        zoom = 1 / np.hypot(B[:, 0], B[:, 1])
        rows.append(dict(clip=name, input_px=jr[0], input_deg=jr[1], live_px=jp, live_deg=jd, file_px=jo[0],
                         file_deg=jo[1], kept=kept, file_kept=jo[2], zoom_min=float(zoom.min()),
                         zoom_max=float(zoom.max()), zoom_rate=cb.breathing(zoom, times)[1], ms_median=1000 * float(np.median(secs)),
                         ms_max=1000 * float(np.max(secs))))
    if a.json:
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            print(f"{r['clip']:7s} input {r['input_px']:.3f} px/f2 {r['input_deg']:.4f} deg/f2 -> live "
                  f"{r['live_px']:.3f} {r['live_deg']:.4f} (file {r['file_px']:.3f} {r['file_deg']:.4f}) kept "
                  f"{r['kept']:.3f} (file {r['file_kept']:.3f}) zoom {r['zoom_min']:.3f}-{r['zoom_max']:.3f} "
                  f"{r['zoom_rate']:.3f}/s; solve {r['ms_median']:.2f} ms median, {r['ms_max']:.2f} max")


if __name__ == "__main__":
    main()
