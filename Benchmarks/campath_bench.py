#!/usr/bin/env python3
"""L1 camera path (Sources/CCameraPath) harness for issue 29: quality without rendering, and the solver benchmark.

Build the two libraries first (same source, two LP backends):
    cc -std=c11 -O2 -Wall -Wextra -fPIC -shared -ISources/CCameraPath/include Sources/CCameraPath/campath.c \
       -DCZ_PATH_CLP -o /tmp/libcampath_clp.so -lClp -lCoinUtils -lm
    cc -std=c11 -O2 -Wall -Wextra -fPIC -shared -DCZ_PATH_GLPK -ISources/CCameraPath/include \
       Sources/CCameraPath/campath.c -o /tmp/libcampath_glpk.so -lglpk -lm
(the built-in solver alone: no -D, no library but -lm.)

Clips: python3 Tests/tools/shake.py DIR/static.mkv --codec ffv1 --no-audio --path static --seed 21 --seconds 4
(pan 22, zoom 23, object = --path static --object --seed 24: the seeds of Benchmarks/stabilize_peers.py).

    campath_bench.py quality --lib L --clips DIR [--max-crop 1.1 --epsilon 0.005 --crop Z]
        per clip: true F_t from the sidecar (+ 0.03 px Gaussian noise, seeded), cz_path_choose (or a fixed
        crop), the output's apparent camera P_t = M_t B_t measured like Tests/tools/stability.py (jitter px/f^2
        of the frame centre in output px, deg/f^2, kept area = mean scale(B)^2).
        --crops static=Z1,pan=Z2,...: a fixed crop per clip (e.g. the peers' kept areas: z = 1/sqrt(kept)).
    campath_bench.py solve --lib L --clips DIR --n N [--crop 1.05 --window W]
        one solve of N frames (the clips' motions concatenated, repeated) at a fixed crop; prints JSON
        (objective, time). Run under /usr/bin/time -v for peak memory (the `bench` command does).
    campath_bench.py bench --libs clp=L1,glpk=L2,own=L2@1 --clips DIR --sizes 300,900,9000 [--reps 3]
        (NAME=LIB@1: the LP library the .so was built with, backend 1; NAME=LIB or LIB@0: the built-in barrier)
        median of reps, solvers alternating, each solve a fresh process under /usr/bin/time -v.
"""
import argparse, ctypes, json, math, os, statistics, subprocess, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "tools"))
import stability  # noqa: E402  (trajectory, jitter: the same measurement as the peers')


class Problem(ctypes.Structure):
    _fields_ = [("n", ctypes.c_int), ("motion", ctypes.POINTER(ctypes.c_double)),
                ("valid", ctypes.POINTER(ctypes.c_ubyte)), ("duration", ctypes.POINTER(ctypes.c_double)),
                ("width", ctypes.c_double), ("height", ctypes.c_double), ("crop", ctypes.c_double),
                ("w1", ctypes.c_double), ("w2", ctypes.c_double), ("w3", ctypes.c_double),
                ("affine_weight", ctypes.c_double), ("hold", ctypes.c_double), ("mode", ctypes.c_int),
                ("window", ctypes.c_int), ("overlap", ctypes.c_int), ("backend", ctypes.c_int), ("smooth2", ctypes.c_double),
                ("area_weight", ctypes.c_double), ("zoom_weight", ctypes.c_double),
                ("zoom_rate", ctypes.c_double)]


class Stats(ctypes.Structure):
    _fields_ = [("objective", ctypes.c_double), ("hold_cost", ctypes.c_double), ("violation", ctypes.c_double),
                ("kept", ctypes.c_double), ("lp_objective", ctypes.c_double), ("rows", ctypes.c_int),
                ("cols", ctypes.c_int), ("nonzeros", ctypes.c_int), ("windows", ctypes.c_int),
                ("solver_status", ctypes.c_int), ("iterations", ctypes.c_int)]


def load(lib):
    L = ctypes.CDLL(lib)
    P = ctypes.POINTER
    L.cz_path_defaults.argtypes = [P(Problem)]
    L.cz_path_solve.argtypes = [P(Problem), P(ctypes.c_double), P(Stats)]
    L.cz_path_choose.argtypes = [P(Problem), ctypes.c_double, ctypes.c_double, P(ctypes.c_double), P(Stats),
                                 P(ctypes.c_double)]
    L.cz_path_cost.argtypes = [P(Problem), P(ctypes.c_double), P(ctypes.c_double), P(ctypes.c_double)]
    L.cz_path_cost.restype = ctypes.c_double
    return L


def sidecar(clip):
    with open(clip + ".json") as f:
        js = json.load(f)
    W, H = js["clip"]["width"], js["clip"]["height"]
    Ms = [np.vstack([np.array(fr["matrix"]), [0, 0, 1]]) for fr in js["frames"]]
    times = np.array([fr["t"] for fr in js["frames"]])
    return W, H, Ms, times


def sim_params(M):
    return np.array([(M[0, 0] + M[1, 1]) / 2, (M[1, 0] - M[0, 1]) / 2, M[0, 2], M[1, 2]])


def sim_matrix(p):
    a, b, x, y = p
    return np.array([[a, -b, x], [b, a, y], [0, 0, 1.0]])


def centring(W, H):
    """C: pixel (centres at integers) -> the contract's centred coords (u = x + 0.5 - W/2)."""
    return np.array([[1, 0, -(W - 1) / 2], [0, 1, -(H - 1) / 2], [0, 0, 1.0]])


def motions(W, H, Ms, noise=0.03, seed=1):
    C = centring(W, H); Ci = np.linalg.inv(C)
    r = 0.5 * math.hypot(W, H)
    rng = np.random.default_rng(seed)
    F = np.zeros((len(Ms), 4)); F[0] = [1, 0, 0, 0]
    for t in range(1, len(Ms)):
        F[t] = sim_params(C @ np.linalg.inv(Ms[t - 1]) @ Ms[t] @ Ci)
        F[t] += rng.normal(0, noise, 4) * np.array([1 / r, 1 / r, 1, 1])
    return F


def evaluate(W, H, Ms, times, B):
    """The output's apparent camera P_t = M_t C^-1 B_t C, measured as stability.py measures a clip."""
    C = centring(W, H); Ci = np.linalg.inv(C)
    Ps = [Ms[t] @ Ci @ sim_matrix(B[t]) @ C for t in range(len(Ms))]
    pos, ang, logs = stability.trajectory(Ps, W, H)
    scale = float(np.median(np.exp(logs)))
    j = stability.jitter(times, pos / scale, ang, logs)
    kept = float(np.mean(B[:, 0] ** 2 + B[:, 1] ** 2))
    return j["jitter_px"], j["jitter_deg"], kept


def breathing(zoom, times, swing=0.002):
    """The zoom's reversals (turning points with a swing of at least `swing`, relative, on each side) and its
    steepest change per second: a zoom that breathes reverses often; one slowly varying does not."""
    z = np.log(np.asarray(zoom))
    turns, last, direction = 0, z[0], 0
    for v in z[1:]:
        if direction >= 0 and v < last - swing:
            turns += direction > 0
            direction, last = -1, v
        elif direction <= 0 and v > last + swing:
            turns += direction < 0
            direction, last = 1, v
        elif (direction > 0 and v > last) or (direction < 0 and v < last):
            last = v
    rate = float(np.max(np.abs(np.diff(z)) / np.diff(times))) if len(z) > 1 else 0.0
    return turns, rate


def problem(L, F, W, H, crop=1.0, window=0, dur=None):
    p = Problem(); L.cz_path_defaults(ctypes.byref(p))
    arr = np.ascontiguousarray(F, dtype=np.float64)
    p.n = len(F); p.motion = arr.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    p.width, p.height, p.crop, p.window = W, H, crop, window
    keep = [arr]
    if dur is not None:
        d = np.ascontiguousarray(dur, dtype=np.float64); keep.append(d)
        p.duration = d.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    return p, keep


CLIPS = ("static", "pan", "zoom", "object")


def cmd_quality(a):
    L = load(a.lib)
    rows = []
    for name in CLIPS:
        W, H, Ms, times = sidecar(os.path.join(a.clips, name + "." + a.ext))
        F = motions(W, H, Ms, a.noise, a.seed)
        crop = dict(kv.split("=") for kv in a.crops.split(","))[name] if a.crops else a.crop
        crop = float(crop) if crop else 0.0
        p, keep = problem(L, F, W, H, crop or 1.0)
        p.hold = a.hold; p.mode = a.mode; p.affine_weight = a.affine_weight
        p.smooth2 = a.smooth2; p.area_weight = a.area_weight; p.zoom_weight = a.zoom_weight
        p.zoom_rate = a.zoom_rate
        B = np.zeros((len(F), 4)); st = Stats(); z = ctypes.c_double(crop)
        t0 = time.perf_counter()
        if a.below_rule:   # the crop rule's zoom first, then the zoom free below it
            p.area_weight = 0
            L.cz_path_choose(ctypes.byref(p), a.max_crop, a.epsilon,
                             B.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), ctypes.byref(st), ctypes.byref(z))
            p.crop = z.value; p.area_weight = a.area_weight; crop = z.value
        if crop:
            rc = L.cz_path_solve(ctypes.byref(p), B.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), ctypes.byref(st))
        else:
            rc = L.cz_path_choose(ctypes.byref(p), a.max_crop, a.epsilon,
                                  B.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), ctypes.byref(st), ctypes.byref(z))
        dt = time.perf_counter() - t0
        raw = np.tile([1.0, 0, 0, 0], (len(F), 1))
        jr = evaluate(W, H, Ms, times, raw)
        jp, jd, kept = evaluate(W, H, Ms, times, B)
        rows.append(dict(clip=name, rc=rc, crop=z.value, input_px=jr[0], input_deg=jr[1], jitter_px=jp,
                         jitter_deg=jd, kept=kept, kept_min=float(np.min(B[:, 0] ** 2 + B[:, 1] ** 2)),
                         zoom_min=float(np.min(1 / np.hypot(B[:, 0], B[:, 1]))),
                         zoom_max=float(np.max(1 / np.hypot(B[:, 0], B[:, 1]))),
                         reversals=breathing(1 / np.hypot(B[:, 0], B[:, 1]), times)[0],
                         zoom_rate=breathing(1 / np.hypot(B[:, 0], B[:, 1]), times)[1],
                         violation=st.violation, objective=st.objective, seconds=dt))
    print(json.dumps(rows, indent=1) if a.json else "\n".join(
        f"{r['clip']:7s} rc={r['rc']} z={r['crop']:.4f} input {r['input_px']:.3f} px/f2 {r['input_deg']:.4f} deg/f2"
        f" -> {r['jitter_px']:.4f} px/f2 {r['jitter_deg']:.4f} deg/f2 kept {r['kept']:.3f} (min {r['kept_min']:.3f})"
        f" zoom {r['zoom_min']:.4f}..{r['zoom_max']:.4f} rev {r['reversals']} rate {r['zoom_rate']:.3f}/s"
        f" viol {r['violation']:.2g} S {r['objective']:.1f} {r['seconds']:.2f}s" for r in rows))


def long_motions(clips, n, noise, seed):
    Fs = []
    for name in CLIPS:
        W, H, Ms, times = sidecar(os.path.join(clips, name + ".mkv"))
        Fs.append(motions(W, H, Ms, noise, seed)[1:])
    cat = np.vstack(Fs)
    F = np.vstack([[1, 0, 0, 0], np.vstack([cat] * (n // len(cat) + 1))[:n - 1]])
    return W, H, F


def cmd_solve(a):
    L = load(a.lib)
    W, H, F = long_motions(a.clips, a.n, a.noise, a.seed)
    p, keep = problem(L, F, W, H, a.crop, a.window)
    p.backend = a.backend
    B = np.zeros((len(F), 4)); st = Stats()
    t0 = time.perf_counter()
    rc = L.cz_path_solve(ctypes.byref(p), B.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), ctypes.byref(st))
    dt = time.perf_counter() - t0
    print(json.dumps(dict(lib=a.lib, backend=a.backend, n=a.n, crop=a.crop, window=a.window, rc=rc, seconds=dt,
                          objective=st.objective, lp_objective=st.lp_objective, violation=st.violation,
                          rows=st.rows, cols=st.cols, nonzeros=st.nonzeros, windows=st.windows,
                          status=st.solver_status, iterations=st.iterations, B_sha=__import__("hashlib").sha256(B.tobytes()).hexdigest()[:16])))


def cmd_bench(a):
    libs = dict(kv.split("=", 1) for kv in a.libs.split(","))
    out = []
    for n in [int(s) for s in a.sizes.split(",")]:
        for window in [int(s) for s in a.windows.split(",")]:
            for rep in range(a.reps):
                order = list(libs.items()) if rep % 2 == 0 else list(libs.items())[::-1]
                for name, lib in order:
                    lib, _, be = lib.partition("@")
                    cmd = ["nice", "-n", "10", "/usr/bin/time", "-v", sys.executable, os.path.abspath(__file__),
                           "solve", "--lib", lib, "--backend", be or "0", "--clips", a.clips, "--n", str(n), "--crop", str(a.crop),
                           "--window", str(window)]
                    pr = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
                    if pr.returncode != 0:
                        print(pr.stderr[-2000:], file=sys.stderr); continue
                    r = json.loads(pr.stdout.strip().splitlines()[-1])
                    for line in pr.stderr.splitlines():
                        if "Maximum resident set size" in line:
                            r["rss_mib"] = int(line.split(":")[1]) / 1024
                    r["solver"] = name; r["rep"] = rep
                    print(json.dumps(r), flush=True)
                    out.append(r)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)


def cmd_report(a):
    """Markdown table of bench JSON files: medians, objective agreement, determinism."""
    rows = []
    for path in a.files:
        with open(path) as f:
            rows += json.load(f)
    ref = {}
    for r in rows:   # the reference objective per N: the whole (unwindowed) LP, else the smallest value seen
        if r["window"] == 0:
            ref[r["n"]] = min(ref.get(r["n"], math.inf), r["objective"])
    groups = {}
    for r in rows:
        groups.setdefault((r["n"], r["window"], r["solver"]), []).append(r)
    print("| N | window | solver | time s (median of %s) | runs | peak RSS MiB | objective | vs whole LP | distinct outputs |" % a.reps)
    print("| ---: | ---: | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for (n, w, name), g in sorted(groups.items()):
        t = statistics.median(x["seconds"] for x in g)
        rss = statistics.median(x.get("rss_mib", math.nan) for x in g)
        obj = g[0]["objective"]
        rel = obj / ref[n] - 1 if n in ref else math.nan
        print(f"| {n} | {w or 'whole'} | {name} | {t:.3f} | {', '.join('%.2f' % x['seconds'] for x in g)} | {rss:.1f} | "
              f"{obj:.6f} | {rel:+.2e} | {len(set(x['B_sha'] for x in g))} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = ap.add_subparsers(dest="cmd", required=True)
    r = sp.add_parser("report")
    r.add_argument("files", nargs="+")
    r.add_argument("--reps", default="3")
    for name in ("quality", "solve", "bench"):
        s = sp.add_parser(name)
        s.add_argument("--clips", required=True)
        s.add_argument("--noise", type=float, default=0.03)
        s.add_argument("--seed", type=int, default=1)
        s.add_argument("--crop", type=float, default=0.0 if name == "quality" else 1.05)
        if name != "bench":
            s.add_argument("--lib", required=True)
    q = sp.choices["quality"]
    q.add_argument("--max-crop", type=float, default=1.1)
    q.add_argument("--epsilon", type=float, default=0.005)
    q.add_argument("--hold", type=float, default=0.0)
    q.add_argument("--mode", type=int, default=0)
    q.add_argument("--affine-weight", type=float, default=0.0)
    q.add_argument("--json", action="store_true")
    q.add_argument("--ext", default="mkv", help="the clips' extension (their sidecars are CLIP.EXT.json)")
    q.add_argument("--smooth2", type=float, default=0.0, help="the squared second differences' weight (3000 built in)")
    q.add_argument("--area-weight", type=float, default=0.0,
                   help="> 0: the zoom free per frame, this reward per px of kept half diagonal (with --crop)")
    q.add_argument("--zoom-weight", type=float, default=0.0, help="with --area-weight: the zoom's changes' weight")
    q.add_argument("--zoom-rate", type=float, default=0.0, help="with --area-weight: the zoom's speed bound, per s")
    q.add_argument("--below-rule", action="store_true", help="the zoom free below the crop rule's choice")
    q.add_argument("--crops", help="per clip fixed crops, e.g. static=1.038,pan=1.051 (instead of choosing)")
    s = sp.choices["solve"]
    s.add_argument("--n", type=int, required=True)
    s.add_argument("--window", type=int, default=0)
    s.add_argument("--backend", type=int, default=0, help="0 the built-in barrier, 1 the LP library built in")
    b = sp.choices["bench"]
    b.add_argument("--libs", required=True)
    b.add_argument("--sizes", default="300,900,9000")
    b.add_argument("--windows", default="0")
    b.add_argument("--reps", type=int, default=3)
    b.add_argument("--timeout", type=float, default=1200)
    b.add_argument("--out")
    a = ap.parse_args()
    dict(quality=cmd_quality, solve=cmd_solve, bench=cmd_bench, report=cmd_report)[a.cmd](a)


if __name__ == "__main__":
    main()
