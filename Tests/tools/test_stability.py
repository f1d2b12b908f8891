#!/usr/bin/env python3
"""shake.py and stability.py checked against each other (issue 29's yardstick).

shake.py renders clips from a real picture (the first frame of ../shared/corpus/axm-sample_edit_list.mp4; without
the corpus, python3-skimage's photographs stacked, and shake.py says so) along a known camera path plus known shake;
stability.py must find that motion again from the pixels alone:
  - the per-frame transforms within TOL_POS_RMS px (frame centre, output px) and TOL_ANGLE_RMS degrees RMS, and the
    jitter within TOL_JITTER of the sidecar's (static and pan, with a big moving foreground object, H.264);
  - a steady pan (no shake) near zero jitter;
  - the frame-to-frame mode (no picture) the same jitter within TOL_JITTER_F2F;
  - a VFR clip with a display matrix: the frames, their times and the upright picture as the sidecar says;
  - kept area: a clip cropped to 1/1.25 of its size and scaled back shows 1/1.25^2 = 0.64 of the view;
  - the comparison itself fails on a sidecar that is off by a fraction of a pixel (it can fail).
The clips go to a temporary folder. Run with pytest or as a script (python3 Tests/tools/test_stability.py); about
30-40 s on 2 cores.
"""
import json, math, os, subprocess, sys, tempfile
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import shake, stability  # noqa: E402

TOL_POS_RMS = 0.08       # output px
TOL_POS_MAX = 0.25
TOL_ANGLE_RMS = 0.01     # degrees
TOL_JITTER = 0.02        # relative
TOL_JITTER_F2F = 0.05
STEADY_JITTER = 0.05     # px/frame^2

_tmp = tempfile.TemporaryDirectory(prefix="stability-test-")
TMP = _tmp.name
_made = {}


def make(name, *opts):
    if name not in _made:
        out = os.path.join(TMP, name)
        subprocess.run([sys.executable, os.path.join(HERE, "shake.py"), out, *opts], check=True,
                       stdout=subprocess.DEVNULL)
        _made[name] = (out, json.load(open(out + ".json")))
    return _made[name]


def measured(name, *opts, **kw):
    clip, truth = make(name, *opts)
    return stability.measure(clip, truth, per_frame=True, **kw), truth


def check_recovery(rep, truth):
    e = rep["truth_error"]
    print(f"  {os.path.basename(rep['clip'])}: pos {e['pos_rms_px']:.4f} px RMS / {e['pos_max_px']:.4f} max, "
          f"angle {e['angle_rms_deg']:.5f}° RMS / {e['angle_max_deg']:.5f} max, corners {e['corner_max_px']:.3f} px, "
          f"jitter {rep['jitter_px']:.3f} vs truth {e['truth_jitter_px']:.3f} px/f², "
          f"{rep['jitter_deg']:.4f} vs {e['truth_jitter_deg']:.4f} °/f²")
    assert e["pos_rms_px"] <= TOL_POS_RMS, e
    assert e["pos_max_px"] <= TOL_POS_MAX, e
    assert e["angle_rms_deg"] <= TOL_ANGLE_RMS, e
    assert abs(rep["jitter_px"] / e["truth_jitter_px"] - 1) <= TOL_JITTER, (rep["jitter_px"], e)
    assert abs(rep["jitter_deg"] / e["truth_jitter_deg"] - 1) <= TOL_JITTER, (rep["jitter_deg"], e)


def recovered_shake(rep, truth):
    """Per frame (dx, dy, angle) of the shake as registered: P^-1 M, in output px and degrees."""
    W, H = truth["clip"]["width"], truth["clip"]["height"]
    pw, ph = truth["picture"]["width"], truth["picture"]["height"]
    out = []
    for f, pf in zip(truth["frames"], rep["per_frame"]):
        no_shake = dict(dx=0.0, dy=0.0, angle=0.0, scale=1.0)
        P = np.vstack([shake.composite(W, H, pw, ph, f["path"], no_shake), [0, 0, 1]])
        M = np.vstack([np.array(pf["matrix"]), [0, 0, 1]])
        S = np.linalg.inv(P) @ M           # output px -> output px: the shake as a map of the frame
        c = np.array([(W - 1) / 2, (H - 1) / 2, 1])
        d = S @ c - c
        out.append((d[0], d[1], stability.params(S)[1]))
    return np.array(out)


def check_shake(rep, truth):
    got = recovered_shake(rep, truth)
    want = np.array([(f["shake"]["dx"], f["shake"]["dy"], f["shake"]["angle"]) for f in truth["frames"]])
    # the truth's shake, as a map of the frame: a rotation a about the centre plus (dx, dy)
    err = got - want
    rms = np.sqrt(np.mean(err ** 2, 0))
    print(f"  shake recovered: dx {rms[0]:.4f}, dy {rms[1]:.4f} px RMS, angle {rms[2]:.5f}° RMS "
          f"(injected: {np.sqrt(np.mean(want[:, 0] ** 2)):.2f}, {np.sqrt(np.mean(want[:, 1] ** 2)):.2f} px, "
          f"{np.sqrt(np.mean(want[:, 2] ** 2)):.3f}° RMS)")
    assert rms[0] <= TOL_POS_RMS and rms[1] <= TOL_POS_RMS and rms[2] <= TOL_ANGLE_RMS, rms


def test_static_shake_recovered():
    rep, truth = measured("static.mp4", "--seconds", "2", "--seed", "11")
    check_recovery(rep, truth)
    check_shake(rep, truth)
    assert rep["stability"] < 0.1      # all of the motion is shake at 2-8 Hz
    assert rep["kept_area"] > 0.999


def test_pan_with_object_recovered():
    rep, truth = measured("pan-object.mp4", "--seconds", "2", "--path", "pan", "--object", "--seed", "12")
    check_recovery(rep, truth)
    check_shake(rep, truth)
    # the object covers 28 % of the frame when fully in: the background must win, the object be the outliers
    assert rep["registration"]["inlier_share_min"] < 0.9


def test_zoom_recovered():
    rep, truth = measured("zoom.mp4", "--seconds", "2", "--path", "zoom", "--shake-scale", "0.003", "--seed", "13")
    check_recovery(rep, truth)


def test_steady_pan_near_zero():
    rep, truth = measured("steady-pan.mp4", "--seconds", "2", "--path", "pan", "--shake-px", "0", "--shake-deg", "0")
    e = rep["truth_error"]
    print(f"  steady pan: jitter {rep['jitter_px']:.4f} px/f², {rep['jitter_deg']:.5f} °/f² "
          f"(truth {e['truth_jitter_px']:.2e}); pos error {e['pos_rms_px']:.4f} px RMS; stability {rep['stability']:.2f}")
    assert e["truth_jitter_px"] < 1e-3         # the times ffprobe prints have 6 decimals
    assert rep["jitter_px"] <= STEADY_JITTER and rep["jitter_deg"] <= 0.005, rep


def test_frame_to_frame_mode():
    clip, truth = make("pan-object.mp4", "--seconds", "2", "--path", "pan", "--object", "--seed", "12")
    rep = stability.measure(clip, None, None)
    want = stability.measure(clip, truth)["truth_error"]["truth_jitter_px"]
    print(f"  frame-to-frame: jitter {rep['jitter_px']:.3f} vs truth {want:.3f} px/f²")
    assert rep["mode"] == "frame-to-frame"
    assert abs(rep["jitter_px"] / want - 1) <= TOL_JITTER_F2F


def test_vfr_rotated_clip():
    clip, truth = make("vfr-rot.mp4", "--seconds", "1.5", "--vfr", "--display-rotation", "-90", "--seed", "14")
    w, h, times = stability.probe(clip)
    assert (w, h) == (640, 360)
    assert len(times) == len(truth["frames"])
    gaps = np.diff(times)
    assert gaps.max() / gaps.min() > 1.5, "not VFR"
    assert np.abs(np.array(times) - [f["t"] for f in truth["frames"]]).max() < 1e-5
    audio = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_name",
                            "-of", "csv=p=0", clip], capture_output=True, text=True, check=True).stdout.split()
    assert audio == ["aac"]
    rep = stability.measure(clip, truth, per_frame=True)
    check_recovery(rep, truth)


def test_kept_area_of_a_crop():
    clip, truth = make("short.mp4", "--seconds", "1", "--seed", "15")
    crop = os.path.join(TMP, "crop125.mp4")
    subprocess.run(["nice", "-n", "15", "ffmpeg", "-v", "error", "-y", "-i", clip, "-vf",
                    "crop=512:288,scale=640:360:flags=bicubic", "-c:v", "libx264", "-crf", "16", "-an", crop],
                   check=True)
    rep = stability.measure(crop, truth)
    print(f"  crop to 1/1.25: kept area {rep['kept_area']:.4f} (min {rep['kept_area_min']:.4f}), want 0.64; "
          f"border {rep['border']:.4f}")
    assert abs(rep["kept_area"] - 0.64) < 0.005 and rep["border"] < 0.002


def test_comparison_can_fail():
    """The truth comparison flags a sidecar off by 0.3 px in a third of the frames (a wrong estimator would be)."""
    rep, truth = measured("static.mp4", "--seconds", "2", "--seed", "11")
    bad = json.loads(json.dumps(truth))
    for f in bad["frames"][::3]:
        f["matrix"][0][2] += 0.3
    Ms = [np.vstack([np.array(p["matrix"]), [0, 0, 1]]) for p in rep["per_frame"]]
    e = stability.truth_error(Ms, stability.truth_matrices(bad), 640, 360, np.array([f["t"] for f in bad["frames"]]))
    print(f"  sidecar off by 0.3 px in 1/3 of the frames: pos {e['pos_rms_px']:.3f} px RMS")
    assert e["pos_rms_px"] > TOL_POS_RMS


if __name__ == "__main__":
    passed = failed = 0
    for name, fn in sorted((k, v) for k, v in dict(globals()).items() if k.startswith("test_")):
        print(name)
        try:
            fn(); passed += 1
        except Exception as e:  # noqa: BLE001
            import traceback; traceback.print_exc(); failed += 1
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
