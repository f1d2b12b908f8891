#!/usr/bin/python3
"""Accuracy and speed of the inter-frame motion estimate (issue 29, `--stabilize`): cropzoom's C kernel
(Sources/CPlaneKernels/motion.c, loaded through ctypes) against OpenCV 4.6 (goodFeaturesToTrack +
calcOpticalFlowPyrLK + estimateAffinePartial2D with RANSAC + a least-squares refit on the inliers), on shake.py clips
whose sidecars give the true motion.

Per clip: RMS and max error (px, full resolution) at the four frame corners (+-W/2, +-H/2) of the estimated F_t
(frame t -> frame t-1, centred coordinates, stabilize-contract.md) against the truth inv(M_{t-1}) o M_t from the
sidecar (shake.py's pixel centres are at integers: its u = x - (W-1)/2 is the contract's x + 0.5 - W/2), and the time
per frame (prepare + estimate, one thread, CPU time of that thread). Clips without a sidecar (black, a fade's end) report the statuses.

Run with Debian's python3 (it has python3-opencv and numpy):
  /usr/bin/python3 Benchmarks/motion_accuracy.py CLIP.mkv [...] [--runs 3] [--max-width 960] [--no-opencv]
      [--opencv-scale 1] [--json OUT.json]
Each clip is decoded once (ffmpeg -v error -i X -f rawvideo -pix_fmt gray -); runs alternate own / OpenCV and the
times reported are the medians over runs.
"""
import argparse, ctypes, json, os, statistics, subprocess, sys, tempfile, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
KERNELS = os.path.join(REPO, "Sources", "CPlaneKernels")
# CPU time of the calling thread (both estimators run on it: OpenCV with setNumThreads(1)): the machine is shared, and
# wall time would count the other jobs' share of the cores
CLOCK = time.thread_time


# MARK: the kernel through ctypes

class Geometry(ctypes.Structure):
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int), ("factor", ctypes.c_int),
                ("analysis_width", ctypes.c_int), ("analysis_height", ctypes.c_int),
                ("cx", ctypes.c_double), ("cy", ctypes.c_double), ("levels", ctypes.c_int),
                ("cell", ctypes.c_int), ("per_cell", ctypes.c_int), ("gradient_floor", ctypes.c_float),
                ("search", ctypes.c_int), ("smooth", ctypes.c_int), ("sigma_max", ctypes.c_float),
                ("photometric_levels", ctypes.c_int), ("similarity_levels", ctypes.c_int)]


class Stats(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("points", ctypes.c_int), ("inliers", ctypes.c_int),
                ("inlier_share", ctypes.c_double), ("residual", ctypes.c_double), ("gain", ctypes.c_double),
                ("offset", ctypes.c_double), ("iterations", ctypes.c_int)]


def build_kernel(tmp, cflags=("-O2",)):
    """cc -O2 -shared -fPIC of motion.c (and cpu_features.c) into tmp; the loaded library."""
    so = os.path.join(tmp, "libczmotion.so")
    cmd = ["cc", "-std=c11", *cflags, "-shared", "-fPIC", "-Wall", "-Wextra", "-I", os.path.join(KERNELS, "include"),
           os.path.join(KERNELS, "motion.c"), os.path.join(KERNELS, "cpu_features.c"), "-lm", "-o", so]
    subprocess.run(["nice", "-n", "10", *cmd], check=True)
    lib = ctypes.CDLL(so)
    P, I, D = ctypes.c_void_p, ctypes.c_int, ctypes.c_double
    lib.cz_motion_factor.argtypes = [I, I]
    lib.cz_motion_geometry_init.argtypes = [ctypes.POINTER(Geometry), I, I, I]
    lib.cz_motion_frame_new.argtypes = [ctypes.POINTER(Geometry)]; lib.cz_motion_frame_new.restype = P
    lib.cz_motion_frame_free.argtypes = [P]
    lib.cz_motion_frame_prepare_luma.argtypes = [P, ctypes.c_char_p, ctypes.c_ssize_t, I, I]
    lib.cz_motion_new.argtypes = [ctypes.POINTER(Geometry)]; lib.cz_motion_new.restype = P
    lib.cz_motion_free.argtypes = [P]
    lib.cz_motion_estimate.argtypes = [P, P, P, ctypes.POINTER(D * 4), ctypes.POINTER(Stats)]
    return lib, " ".join(cmd)


# MARK: clips and truth

def probe(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                          "-of", "csv=p=0", path], check=True, capture_output=True, text=True).stdout
    w, h = out.strip().split("\n")[0].split(",")[:2]
    return int(w), int(h)


def decode(path):
    w, h = probe(path)
    raw = subprocess.run(["nice", "-n", "10", "ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt",
                          "gray", "-"], check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, h, w)


def truth(path, w, h):
    """The true F_t (t >= 1) as (a, b, tx, ty) in the contract's centred coordinates, or None."""
    side = path + ".json"
    if not os.path.isfile(side):
        return None
    frames = json.load(open(side))["frames"]
    C = np.array([[1, 0, -(w - 1) / 2], [0, 1, -(h - 1) / 2], [0, 0, 1.0]])
    Ci = np.linalg.inv(C)
    Ms = [np.vstack([np.array(f["matrix"], float), [0, 0, 1]]) for f in frames]
    out = [None]
    for t in range(1, len(Ms)):
        F = C @ np.linalg.inv(Ms[t - 1]) @ Ms[t] @ Ci
        out.append((F[0, 0], F[1, 0], F[0, 2], F[1, 2], F))
    return out


def corner_errors(est, tru, w, h):
    """Distances (px) at the four corners between two similarities (a, b, tx, ty)."""
    errs = []
    for u, v in ((-w / 2, -h / 2), (w / 2, -h / 2), (-w / 2, h / 2), (w / 2, h / 2)):
        pe = (est[0] * u - est[1] * v + est[2], est[1] * u + est[0] * v + est[3])
        pt = (tru[0] * u - tru[1] * v + tru[2], tru[1] * u + tru[0] * v + tru[3])
        errs.append(np.hypot(pe[0] - pt[0], pe[1] - pt[1]))
    return errs


# MARK: the estimators

def run_own(lib, frames, max_width, tune=None):
    n, h, w = frames.shape
    g = Geometry()
    k = lib.cz_motion_factor(w, max_width)
    assert lib.cz_motion_geometry_init(ctypes.byref(g), w, h, k) == 0
    for name, value in (tune or {}).items():
        setattr(g, name, type(getattr(g, name))(value))
    ctx = lib.cz_motion_new(ctypes.byref(g))
    prep = [lib.cz_motion_frame_new(ctypes.byref(g)) for _ in range(2)]
    out = (ctypes.c_double * 4)()
    st = Stats()
    res, t_prep, t_est = [None], 0.0, 0.0
    for i in range(n):
        buf = frames[i].tobytes()
        cur, prev = prep[i % 2], prep[(i + 1) % 2]
        t0 = CLOCK()
        lib.cz_motion_frame_prepare_luma(cur, buf, w, 1, 8)
        t1 = CLOCK()
        t_prep += t1 - t0
        if i == 0:
            continue
        status = lib.cz_motion_estimate(ctx, prev, cur, ctypes.byref(out), ctypes.byref(st))
        t_est += CLOCK() - t1
        a, b, tx, ty = out
        res.append(dict(status=status, F=(a, b, tx * k, ty * k), points=st.points, inlier_share=st.inlier_share,
                        residual=st.residual, iterations=st.iterations))
    for p in prep:
        lib.cz_motion_frame_free(p)
    lib.cz_motion_free(ctx)
    return res, dict(factor=k, analysis=f"{g.analysis_width}x{g.analysis_height}", levels=g.levels,
                     ms_prepare=1e3 * t_prep / n, ms_estimate=1e3 * t_est / max(1, n - 1),
                     ms_frame=1e3 * (t_prep + t_est) / n)


def run_opencv(cv2, frames, scale=1):
    """goodFeaturesToTrack on each frame once (at 1/scale), LK from frame t-1's features to frame t, RANSAC
    similarity (estimateAffinePartial2D, threshold 1 px at the analysed size), then a least-squares similarity on the
    inliers. Frames whose LK gives fewer than 8 points: identity, flagged (status 1)."""
    n, h, w = frames.shape
    cv2.setNumThreads(1)
    sw, sh = w // scale, h // scale
    c = np.array([(sw - 1) / 2, (sh - 1) / 2])
    lk = dict(winSize=(21, 21), maxLevel=3, criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 0.01))
    res, t_all = [None], 0.0
    prev_img = prev_pts = None
    for i in range(n):
        t0 = CLOCK()
        img = frames[i] if scale == 1 else cv2.resize(frames[i], (sw, sh), interpolation=cv2.INTER_AREA)
        pts = cv2.goodFeaturesToTrack(img, maxCorners=500, qualityLevel=0.01, minDistance=max(8, sw // 64),
                                      blockSize=3)
        if i > 0:
            status, F = 1, (1.0, 0.0, 0.0, 0.0)
            if prev_pts is not None and len(prev_pts) >= 8:
                nxt, ok, _ = cv2.calcOpticalFlowPyrLK(prev_img, img, prev_pts, None, **lk)
                ok = ok.ravel() == 1
                p0, p1 = prev_pts[ok].reshape(-1, 2), nxt[ok].reshape(-1, 2)
                if len(p0) >= 8:
                    M, inl = cv2.estimateAffinePartial2D(p1, p0, method=cv2.RANSAC, ransacReprojThreshold=1.0,
                                                         maxIters=2000, confidence=0.99, refineIters=10)
                    if M is not None:
                        m = inl.ravel() == 1
                        # the refit: least squares for (a, b, tx, ty) on the inliers, centred coordinates
                        s, d = p1[m] - c, p0[m] - c
                        A = np.zeros((2 * len(s), 4)); r = np.zeros(2 * len(s))
                        A[0::2] = np.stack([s[:, 0], -s[:, 1], np.ones(len(s)), np.zeros(len(s))], 1)
                        A[1::2] = np.stack([s[:, 1], s[:, 0], np.zeros(len(s)), np.ones(len(s))], 1)
                        r[0::2], r[1::2] = d[:, 0], d[:, 1]
                        a, b, tx, ty = np.linalg.lstsq(A, r, rcond=None)[0]
                        status, F = 0, (a, b, tx * scale, ty * scale)
            res.append(dict(status=status, F=F))
        t_all += CLOCK() - t0
        prev_img, prev_pts = img, pts
    return res, dict(ms_frame=1e3 * t_all / n, analysis=f"{sw}x{sh}")


def check_determinism(tmp, clip, max_width):
    """The same F_t bytes from the SSE2 build and the plain C one (-U__SSE2__), and from two threads with their own
    contexts taking the pairs in opposite orders (frames prepared once, shared)."""
    import threading
    frames = decode(clip)
    n, h, w = frames.shape
    outs = []
    for flags in (("-O2",), ("-O2", "-U__SSE2__")):
        sub = os.path.join(tmp, "plain" if len(flags) > 1 else "sse2")
        os.makedirs(sub, exist_ok=True)
        lib, _ = build_kernel(sub, flags)
        g = Geometry()
        assert lib.cz_motion_geometry_init(ctypes.byref(g), w, h, lib.cz_motion_factor(w, max_width)) == 0
        prep = [lib.cz_motion_frame_new(ctypes.byref(g)) for _ in range(n)]
        bufs = [frames[i].tobytes() for i in range(n)]
        for i in range(n):
            lib.cz_motion_frame_prepare_luma(prep[i], bufs[i], w, 1, 8)
        results = {}

        def worker(order):
            ctx = lib.cz_motion_new(ctypes.byref(g))
            out = (ctypes.c_double * 4)()
            st = Stats()
            for t in order:
                lib.cz_motion_estimate(ctx, prep[t - 1], prep[t], ctypes.byref(out), ctypes.byref(st))
                key = (t, order[0])
                results[key] = bytes(out) + bytes(st)
            lib.cz_motion_free(ctx)
        orders = [list(range(1, n)), list(range(n - 1, 0, -1))]
        threads = [threading.Thread(target=worker, args=(o,)) for o in orders]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        same_threads = all(results[(t, 1)] == results[(t, n - 1)] for t in range(1, n))
        outs.append([results[(t, 1)] for t in range(1, n)])
        print(f"# determinism {os.path.basename(clip)} {'plain C' if len(flags) > 1 else 'SSE2'}: two threads, "
              f"opposite orders: {'same bytes' if same_threads else 'DIFFERENT'}", flush=True)
        for p_ in prep:
            lib.cz_motion_frame_free(p_)
    print(f"# determinism {os.path.basename(clip)}: SSE2 vs plain C: "
          f"{'same bytes' if outs[0] == outs[1] else 'DIFFERENT'} ({n - 1} pairs)", flush=True)


def score(res, tru, w, h):
    errs, flagged = [], 0
    for t in range(1, len(res)):
        if res[t]["status"] != 0:
            flagged += 1
            continue        # the identity, flagged: not an estimate (counted apart)
        if tru is None:
            continue
        errs.extend(corner_errors(res[t]["F"], tru[t], w, h))
    e = np.array(errs)
    return dict(rms=float(np.sqrt(np.mean(e ** 2))) if len(e) else None, max=float(e.max()) if len(e) else None,
                flagged=flagged, pairs=len(res) - 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("clips", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-width", type=int, default=None, help="analysis plane's largest width (kernel default)")
    ap.add_argument("--no-opencv", action="store_true")
    ap.add_argument("--opencv-scale", type=int, default=1, help="OpenCV on frames downscaled by this factor")
    ap.add_argument("--json", default=None)
    ap.add_argument("--check", action="store_true", help="determinism checks on the first clip, then stop")
    ap.add_argument("--tune", default="", help="geometry fields to override, e.g. per_cell=2,cell=8")
    args = ap.parse_args()
    cv2 = None
    if not args.no_opencv:
        import cv2
    with tempfile.TemporaryDirectory() as tmp:
        if args.check:
            check_determinism(tmp, args.clips[0], args.max_width or 960)
            return
        lib, cmd = build_kernel(tmp)
        max_width = args.max_width or 960
        tune = {kv.split("=")[0]: float(kv.split("=")[1]) for kv in args.tune.split(",") if kv}
        print(f"# kernel: {cmd}\n# analysis max width {max_width}; OpenCV {cv2.__version__ if cv2 else '-'} "
              f"at 1/{args.opencv_scale}; medians of {args.runs} runs", flush=True)
        rows = []
        for clip in args.clips:
            frames = decode(clip)
            n, h, w = frames.shape
            tru = truth(clip, w, h)
            own_t, cv_t, own_res, cv_res = [], [], None, None
            for r in range(args.runs):
                own_res, info = run_own(lib, frames, max_width, tune)
                own_t.append(info["ms_frame"])
                if cv2:
                    cv_res, cvinfo = run_opencv(cv2, frames, args.opencv_scale)
                    cv_t.append(cvinfo["ms_frame"])
            s = score(own_res, tru, w, h)
            row = dict(clip=os.path.basename(clip), size=f"{w}x{h}", frames=n, own=dict(
                s, ms=statistics.median(own_t), ms_runs=own_t, analysis=info["analysis"], levels=info["levels"],
                ms_prepare=info["ms_prepare"], ms_estimate=info["ms_estimate"],
                inlier_share=float(np.median([x["inlier_share"] for x in own_res[1:]])),
                points=int(np.median([x["points"] for x in own_res[1:]]))))
            line = (f"{row['clip']:<18} {row['size']:>9} own[{info['analysis']}] rms {fmt(s['rms'])} max "
                    f"{fmt(s['max'])} flagged {s['flagged']}/{s['pairs']} {row['own']['ms']:.2f} ms/f "
                    f"(inl {row['own']['inlier_share']:.2f}, pts {row['own']['points']})")
            if cv2:
                c = score(cv_res, tru, w, h)
                row["opencv"] = dict(c, ms=statistics.median(cv_t), ms_runs=cv_t, analysis=cvinfo["analysis"])
                line += (f" | opencv[{cvinfo['analysis']}] rms {fmt(c['rms'])} max {fmt(c['max'])} flagged "
                         f"{c['flagged']}/{c['pairs']} {row['opencv']['ms']:.2f} ms/f")
            if tru is None or (s["flagged"] and tru is not None):
                line += " | own status per pair: " + "".join(str(x["status"]) for x in own_res[1:])
            print(line, flush=True)
            rows.append(row)
        if args.json:
            json.dump(dict(kernel_build=cmd, max_width=max_width, runs=args.runs, rows=rows), open(args.json, "w"),
                      indent=1)


def fmt(x):
    return "-" if x is None else f"{x:.4f}"


if __name__ == "__main__":
    main()
