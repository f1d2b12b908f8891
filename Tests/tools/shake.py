#!/usr/bin/env python3
"""Makes a ground-truth shaky clip from a real picture, for measuring video stabilisation (issue 29).

One frame of a real clip (default: the first frame of `../shared/corpus/axm-sample_edit_list.mp4`, an iPhone shot of
buildings and roof pipes, 1080x1920 upright; without the corpus, three of python3-skimage's photographs stacked into a
1080x2390 portrait picture; any image or clip with --picture) is the *source picture*. Each output frame is a window
of it, warped by a similarity transform: the intended camera path (static, a slow pan or a slow
zoom) composed with injected hand shake (sums of sinusoids at 2-8 Hz with seeded random phases, in translation,
rotation and optionally scale). Frames are sampled bilinearly in numpy and piped to the ffmpeg CLI as rgb24.

Geometry (the sidecar's "conventions" say the same). Output pixel (x, y), pixel centres at integers, top-left 0;
centred u = x - (W-1)/2, v = y - (H-1)/2. Source-picture pixel (X, Y), same convention. For frame i

    [X, Y] = c + s R(theta) (k R(a) [u, v] + [dx, dy])

where the intended path is (c = picture centre + (path.dx, path.dy) in source px, s = path.scale in source px per
output px, theta = path.angle) and the shake is (dx, dy in output px, a = shake.angle, k = shake.scale). Angles are
in degrees, positive = counter-clockwise as seen on screen... with y pointing down, R(a) = [[cos, -sin], [sin, cos]]
turns the window clockwise on the picture, so the content turns counter-clockwise in the frame. "matrix" is the
composite 2x3 map from (x, y) (not centred) to (X, Y).

Options give a big moving textured foreground rectangle (the background must win), VFR frame times (written as
pts; the sidecar holds the times ffprobe reads back), a display-matrix rotation (MP4/MOV: the tkhd matrix is
patched, as FFmpeg 5.1 has no -display_rotation; the sidecar describes the upright, displayed frames) and a sine
audio track (440 Hz), so that frames, times and audio can be checked after a stabiliser.

Usage: shake.py OUT.{mp4,mkv} [--size 640x360] [--fps 30] [--seconds 3] [--seed 1] [--path static|pan|zoom]
       [--shake-px 3] [--shake-deg 0.3] [--shake-scale 0] [--object] [--vfr] [--display-rotation -90|90|180]
       [--codec h264|ffv1] [--no-audio] [--picture SRC] [--picture-time 0]
Writes OUT, OUT.json (the ground truth) and OUT.picture.png (the source picture, rgb24, as used).
"""
import argparse, hashlib, json, math, os, shutil, struct, subprocess, sys, tempfile
from fractions import Fraction
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_PICTURE = "axm-sample_edit_list.mp4"


def corpus_dir():
    """../shared/corpus beside the checkout (where the Swift tests look too), or None (also when
    CROPZOOM_TEST_NO_CORPUS=1 asks for a run as without it)."""
    if os.environ.get("CROPZOOM_TEST_NO_CORPUS") == "1":
        return None
    d = os.path.join(os.path.dirname(REPO), "shared", "corpus")
    return d if os.path.isfile(os.path.join(d, "INDEX.md")) else None


def default_picture():
    d = corpus_dir()
    if d and os.path.isfile(os.path.join(d, DEFAULT_PICTURE)):
        return os.path.join(d, DEFAULT_PICTURE)
    return None


# Without the corpus: three of python3-skimage's photographs (a rocket on its pad at dusk, a motorcycle in a workshop,
# the Hubble deep field), each scaled to 1080 px wide and stacked into one 1080x2390 portrait picture, like the corpus
# frame (1080x1920 portrait). No cup and no face in it: reframe.py puts those on it.
SKIMAGE_DATA = "/usr/lib/python3/dist-packages/skimage/data"
FALLBACK_PHOTOS = ("rocket.jpg", "motorcycle_left.png", "hubble_deep_field.jpg")
_fallback_dir = None


def fallback_picture():
    """The stacked photographs (made once a process with the ffmpeg CLI, in a temporary folder); their path."""
    global _fallback_dir
    if _fallback_dir is None:
        _fallback_dir = tempfile.TemporaryDirectory(prefix="shake-picture-")
    out = os.path.join(_fallback_dir.name, "skimage-photos-1080x2390.png")
    if not os.path.isfile(out):
        photos = [os.path.join(SKIMAGE_DATA, n) for n in FALLBACK_PHOTOS]
        for p in photos:
            if not os.path.isfile(p):
                sys.exit(f"shake.py: {p}: missing (apt-get install python3-skimage)")
        scaled = [f"[{i}:v]scale=1080:-2:flags=lanczos,format=rgb24[p{i}]" for i in range(len(photos))]
        stack = "".join(f"[p{i}]" for i in range(len(photos))) + f"vstack=inputs={len(photos)}"
        subprocess.run(["ffmpeg", "-v", "error", "-y", *sum((["-i", p] for p in photos), []), "-filter_complex",
                        ";".join(scaled + [stack]), "-frames:v", "1", out], check=True)
    return out


def picture_or_fallback(tool):
    """The corpus frame, or (said on stderr) the stacked photographs when the corpus is absent."""
    src = default_picture()
    if src:
        return src
    names = ", ".join(FALLBACK_PHOTOS)
    print(f"{tool}: corpus absent: the picture is python3-skimage's photographs stacked ({names})", file=sys.stderr)
    return fallback_picture()


def read_ppm(data):
    """(H, W, 3) uint8 from a binary P6 PPM."""
    parts, pos = [], 0
    while len(parts) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        parts.append(data[pos:end]); pos = end
    assert parts[0] == b"P6" and int(parts[3]) == 255, parts
    w, h = int(parts[1]), int(parts[2])
    return np.frombuffer(data[pos + 1:pos + 1 + w * h * 3], np.uint8).reshape(h, w, 3)


def load_picture(src, t):
    """One upright frame (the ffmpeg CLI applies the display matrix) of a clip or an image, as rgb24."""
    out = subprocess.run(["nice", "-n", "15", "ffmpeg", "-v", "error", "-ss", str(t), "-i", src, "-frames:v", "1",
                          "-f", "image2pipe", "-c:v", "ppm", "-pix_fmt", "rgb24", "-"],
                         check=True, capture_output=True).stdout
    return read_ppm(out)


def bilinear(img, X, Y):
    """img (h, w[, c]) float32 sampled at (X, Y) (pixel centres at integers); outside -> edge value."""
    h, w = img.shape[:2]
    X = np.clip(X, 0, w - 1.0001); Y = np.clip(Y, 0, h - 1.0001)
    x0 = np.floor(X).astype(np.int32); y0 = np.floor(Y).astype(np.int32)
    fx = (X - x0).astype(np.float32); fy = (Y - y0).astype(np.float32)
    if img.ndim == 3:
        fx = fx[..., None]; fy = fy[..., None]
    a = img[y0, x0]; b = img[y0, x0 + 1]; c = img[y0 + 1, x0]; d = img[y0 + 1, x0 + 1]
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def rot(deg):
    r = math.radians(deg)
    return np.array([[math.cos(r), -math.sin(r)], [math.sin(r), math.cos(r)]])


def composite(W, H, pw, ph, path, shake):
    """2x3 matrix: output pixel (x, y) -> source picture (X, Y)."""
    S = shake["scale"] * rot(shake["angle"])
    P = path["scale"] * rot(path["angle"])
    A = P @ S
    c = np.array([(pw - 1) / 2 + path["dx"], (ph - 1) / 2 + path["dy"]])
    t = c + P @ np.array([shake["dx"], shake["dy"]])
    # centred coordinates: u = x - (W-1)/2
    off = np.array([(W - 1) / 2, (H - 1) / 2])
    t = t - A @ off
    return np.hstack([A, t[:, None]])


class Shake:
    """Sums of sinusoids at 2-8 Hz, seeded: each channel has 4 components of random frequency, phase and weight,
    scaled so that the channel's RMS over a long time is the amplitude asked for."""

    def __init__(self, rng, px, deg, scale, n=4):
        self.ch = {}
        for name, amp in (("dx", px), ("dy", px), ("angle", deg), ("scale", scale)):
            f = rng.uniform(2.0, 8.0, n); ph = rng.uniform(0, 2 * math.pi, n); wt = rng.uniform(0.5, 1.0, n)
            wt *= amp * math.sqrt(2) / math.sqrt(np.sum(wt ** 2))    # RMS of sum = sqrt(sum(w^2)/2)
            self.ch[name] = [dict(freq=float(a), phase=float(b), amp=float(c)) for a, b, c in zip(f, ph, wt)]

    def at(self, t):
        v = {k: sum(c["amp"] * math.sin(2 * math.pi * c["freq"] * t + c["phase"]) for c in comps)
             for k, comps in self.ch.items()}
        v["scale"] = math.exp(v["scale"])
        return v


def path_at(kind, u, pan_px, zoom_to, base_scale):
    """Intended path at u = t / duration in [0, 1]: a static window, a linear pan, or a linear zoom in."""
    if kind == "static":
        return dict(dx=0.0, dy=0.0, angle=0.0, scale=base_scale)
    if kind == "pan":
        return dict(dx=pan_px * (u - 0.5), dy=0.0, angle=0.0, scale=base_scale)
    if kind == "zoom":
        return dict(dx=0.0, dy=0.0, angle=0.0, scale=base_scale * (1 + (zoom_to - 1) * u))
    raise ValueError(kind)


def frame_times(args, rng, tick):
    """Frame times in seconds, integers of tick. CFR: n/fps. VFR: durations uniform in [0.5, 1.5]/fps."""
    fps = Fraction(args.fps)
    if not args.vfr:
        n = int(round(args.seconds * fps))
        return [Fraction(i) / fps for i in range(n)]
    ts, t = [], Fraction(0)
    while t < args.seconds:
        ts.append(t)
        d = Fraction(round(rng.uniform(0.5, 1.5) / float(fps) / tick)) * tick
        t += d
    return ts


def patch_rotation(path, rotation, cw, ch):
    """Sets the video track's tkhd matrix so that ffprobe reports `rotation` (-90: shown turned 90 deg clockwise).
    cw, ch: coded size."""
    data = bytearray(open(path, "rb").read())

    def boxes(start, end):
        pos = start
        while pos + 8 <= end:
            size, kind = struct.unpack(">I4s", data[pos:pos + 8]); header = 8
            if size == 1:
                size, header = struct.unpack(">Q", data[pos + 8:pos + 16])[0], 16
            elif size == 0:
                size = end - pos
            yield kind, pos + header, pos + size
            pos += size

    def child(kind, s, e):
        return next((b for b in boxes(s, e) if b[0] == kind), None)

    m = {-90: (0, 1, 0, -1, 0, 0, ch, 0), 90: (0, -1, 0, 1, 0, 0, 0, cw), 180: (-1, 0, 0, 0, -1, 0, cw, ch)}[rotation]
    a, b, u, c, d, v, x, y = m
    moov = child(b"moov", 0, len(data)); patched = 0
    for kind, s, e in boxes(moov[1], moov[2]):
        if kind != b"trak":
            continue
        mdia = child(b"mdia", s, e); hdlr = child(b"hdlr", mdia[1], mdia[2])
        if data[hdlr[1] + 8:hdlr[1] + 12] != b"vide":
            continue
        tkhd = child(b"tkhd", s, e)[1]
        matrix = tkhd + 4 + (32 if data[tkhd] == 1 else 20) + 8 + 8
        struct.pack_into(">9i", data, matrix, a << 16, b << 16, u, c << 16, d << 16, v, x << 16, y << 16, 1 << 30)
        patched += 1
    assert patched == 1, f"patched {patched} video tracks"
    open(path, "wb").write(data)


def probe_frames(path):
    """(times of the decoded video frames, rotation side data or 0, (w, h) as coded)."""
    out = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
         "frame=pts_time,best_effort_timestamp_time:stream=width,height:stream_side_data=rotation", "-of", "json", path],
        check=True, capture_output=True, text=True).stdout)
    st = out["streams"][0]
    rotation = 0
    for sd in st.get("side_data_list", []):
        if "rotation" in sd:
            rotation = int(sd["rotation"])
    ts = [float(f.get("pts_time", f.get("best_effort_timestamp_time"))) for f in out["frames"]]
    return ts, rotation, (st["width"], st["height"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--size", default="640x360")
    ap.add_argument("--fps", default="30")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--path", choices=["static", "pan", "zoom"], default="static")
    ap.add_argument("--pan-px", type=float, default=240.0, help="pan length over the clip, source px")
    ap.add_argument("--zoom-to", type=float, default=0.8, help="zoom path: window scale at the end / at the start")
    ap.add_argument("--scale", type=float, default=1.0, help="source px per output px of the intended path")
    ap.add_argument("--center", default=None, help="window centre X,Y in the picture (default: a textured spot)")
    ap.add_argument("--shake-px", type=float, default=3.0, help="RMS shake per axis, output px")
    ap.add_argument("--shake-deg", type=float, default=0.3, help="RMS shake rotation, degrees")
    ap.add_argument("--shake-scale", type=float, default=0.0, help="RMS shake of log scale")
    ap.add_argument("--object", action="store_true", help="a big textured rectangle crossing the frame")
    ap.add_argument("--vfr", action="store_true")
    ap.add_argument("--display-rotation", type=int, choices=[0, -90, 90, 180], default=0)
    ap.add_argument("--codec", choices=["h264", "ffv1"], default="h264")
    ap.add_argument("--crf", type=int, default=16)
    ap.add_argument("--no-audio", action="store_true")
    ap.add_argument("--picture", default=None, help="clip or image to take the source picture from")
    ap.add_argument("--picture-time", type=float, default=0.0)
    args = ap.parse_args()

    src = args.picture or picture_or_fallback("shake.py")
    W, H = map(int, args.size.split("x"))
    ext = os.path.splitext(args.out)[1].lower()
    if args.display_rotation and ext not in (".mp4", ".mov"):
        sys.exit("shake.py: --display-rotation needs an .mp4/.mov output (the tkhd matrix is patched)")
    if args.codec == "ffv1" and ext != ".mkv":
        sys.exit("shake.py: FFV1 goes in .mkv (FFmpeg 5.1's MP4 muxer has no tag for it)")
    rng = np.random.default_rng(args.seed)

    pic8 = load_picture(src, args.picture_time)
    ph, pw = pic8.shape[:2]
    pic = pic8.astype(np.float32)
    if args.center:
        cx, cy = map(float, args.center.split(","))
    elif os.path.basename(src) == DEFAULT_PICTURE and (pw, ph) == (1080, 1920):
        cx, cy = 540.0, 900.0          # the building's facade and the roof pipes
    else:
        cx, cy = (pw - 1) / 2, (ph - 1) / 2
    base = dict(cx=cx - (pw - 1) / 2, cy=cy - (ph - 1) / 2)

    tick = Fraction(1, 90000) if ext in (".mp4", ".mov") else Fraction(1, 1000)
    times = frame_times(args, rng, tick)
    duration = float(times[-1] + (Fraction(1) / Fraction(args.fps)))
    shake = Shake(rng, args.shake_px, args.shake_deg, args.shake_scale)

    # the foreground object: a flipped patch of the picture from elsewhere (real texture, moving against the
    # background), 40% of the width and 70% of the height, crossing from left to right without the shake
    obj = None
    if args.object:
        ow, oh = int(W * 0.4) // 2 * 2, int(H * 0.7) // 2 * 2
        sx, sy = min(int(pw * 0.1), pw - ow), min(int(ph * 0.78), ph - oh)
        obj = pic[sy:sy + oh, sx:sx + ow][::-1, ::-1].copy()
        obj[:4] = obj[-4:] = obj[:, :4] = obj[:, -4:] = 255.0
    oy0 = (H - (obj.shape[0] if obj is not None else 0)) // 3

    ys, xs = np.mgrid[0:H, 0:W].astype(np.float64)
    frames, records = [], []
    for i, tq in enumerate(times):
        t = float(tq)
        p = path_at(args.path, t / duration, args.pan_px, args.zoom_to, args.scale)
        p["dx"] += base["cx"]; p["dy"] += base["cy"]
        s = shake.at(t)
        M = composite(W, H, pw, ph, p, s)
        X = M[0, 0] * xs + M[0, 1] * ys + M[0, 2]
        Y = M[1, 0] * xs + M[1, 1] * ys + M[1, 2]
        assert X.min() >= 0 and Y.min() >= 0 and X.max() <= pw - 1 and Y.max() <= ph - 1, \
            f"frame {i}: the window leaves the picture ({X.min():.0f}..{X.max():.0f}, {Y.min():.0f}..{Y.max():.0f})"
        f = bilinear(pic, X, Y)
        rec = dict(i=i, t=t, path=p, shake=s, matrix=M.tolist())
        if obj is not None:
            ox = int(round(-obj.shape[1] + (W + obj.shape[1]) * t / duration))
            x0, x1 = max(ox, 0), min(ox + obj.shape[1], W)
            if x1 > x0:
                f[oy0:oy0 + obj.shape[0], x0:x1] = obj[:, x0 - ox:x1 - ox]
            rec["object"] = [ox, oy0, obj.shape[1], obj.shape[0]]
        frame = np.clip(np.rint(f), 0, 255).astype(np.uint8)
        if args.display_rotation == -90:      # shown turned clockwise: code it turned counter-clockwise
            frame = np.rot90(frame, 1)
        elif args.display_rotation == 90:
            frame = np.rot90(frame, -1)
        elif args.display_rotation == 180:
            frame = frame[::-1, ::-1]
        frames.append(np.ascontiguousarray(frame))
        records.append(rec)

    ch_, cw_ = frames[0].shape[:2]
    with tempfile.TemporaryDirectory() as tmp:
        cmd = ["nice", "-n", "15", "ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
               "-s", f"{cw_}x{ch_}", "-framerate", str(Fraction(args.fps)), "-i", "-"]
        if not args.no_audio:
            cmd += ["-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={duration:.6f}"]
        vf = []
        if args.vfr:
            ticks = [int(tq / tick) for tq in times]
            expr = str(ticks[0]) + "".join(f"+gte(N\\,{k})*{ticks[k] - ticks[k - 1]}" for k in range(1, len(ticks)))
            vf = [f"settb={tick.numerator}/{tick.denominator}", f"setpts={expr}"]
        vf.append("format=yuv420p")
        cmd += ["-map", "0:v"] + ([] if args.no_audio else ["-map", "1:a"])
        cmd += ["-vf", ",".join(vf), "-fps_mode", "passthrough" if args.vfr else "cfr"]
        if args.vfr:     # else the encoder's time base is 1/fps and the times are rounded to it
            cmd += ["-enc_time_base:v", f"{tick.numerator}:{tick.denominator}"]
        if args.codec == "h264":
            cmd += ["-c:v", "libx264", "-preset", "veryfast", "-crf", str(args.crf), "-threads", "1"]
        else:
            cmd += ["-c:v", "ffv1", "-level", "3", "-threads", "1"]
        if ext in (".mp4", ".mov"):
            cmd += ["-video_track_timescale", "90000"]
        if not args.no_audio:
            cmd += ["-c:a", "aac", "-b:a", "96k"] if ext in (".mp4", ".mov") else ["-c:a", "flac"]
        tmp_out = os.path.join(tmp, "out" + ext)
        cmd.append(tmp_out)
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE)
        for f in frames:
            proc.stdin.write(f.tobytes())
        proc.stdin.close()
        if proc.wait() != 0:
            sys.exit(f"shake.py: ffmpeg failed: {' '.join(cmd)}")
        if args.display_rotation:
            patch_rotation(tmp_out, args.display_rotation, cw_, ch_)
        shutil.move(tmp_out, args.out)

    # what a reader sees: as many frames, at the intended times, the rotation asked for
    got, rotation, coded = probe_frames(args.out)
    assert len(got) == len(times), f"{len(got)} frames decoded, {len(times)} written"
    err = max(abs(a - float(b)) for a, b in zip(got, times))
    assert err <= float(tick) / 2 + 1e-6, f"frame times off by {err} s"
    assert rotation == args.display_rotation, (rotation, args.display_rotation)
    for r, tq in zip(records, got):
        r["t"] = tq

    pic_png = args.out + ".picture.png"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{pw}x{ph}",
                    "-i", "-", "-frames:v", "1", pic_png], input=pic8.tobytes(), check=True)
    truth = dict(
        version=1,
        tool="Tests/tools/shake.py",
        argv=sys.argv[1:],
        conventions=("[X,Y] = c + s R(path.angle) (k R(shake.angle) [u,v] + [shake.dx, shake.dy]); u = x-(W-1)/2, "
                     "v = y-(H-1)/2; c = picture centre + [path.dx, path.dy] (source px); s = path.scale (source px "
                     "per output px); shake dx, dy in output px; k = shake.scale; angles in degrees, "
                     "R(a) = [[cos a, -sin a], [sin a, cos a]] with y down; matrix: (x, y, 1) -> (X, Y); frames "
                     "as displayed (after the display matrix)"),
        picture=dict(source=os.path.abspath(src), time=args.picture_time, width=pw, height=ph,
                     png=os.path.abspath(pic_png), sha256=hashlib.sha256(pic8.tobytes()).hexdigest()),
        clip=dict(path=os.path.abspath(args.out), width=W, height=H, coded=list(coded), fps=str(Fraction(args.fps)),
                  vfr=args.vfr, frames=len(records), duration=duration, display_rotation=args.display_rotation,
                  codec=args.codec, audio=None if args.no_audio else dict(sine_hz=440, sample_rate=48000)),
        path=dict(kind=args.path, pan_px=args.pan_px, zoom_to=args.zoom_to, scale=args.scale, center=[cx, cy]),
        shake=dict(seed=args.seed, px=args.shake_px, deg=args.shake_deg, log_scale=args.shake_scale,
                   components=shake.ch),
        object=None if obj is None else dict(width=obj.shape[1], height=obj.shape[0], y=oy0,
                                            note="output-frame rectangle [x, y, w, h] per frame; not shaken"),
        frames=records,
    )
    with open(args.out + ".json", "w") as fh:
        json.dump(truth, fh, indent=1)
    print(f"shake.py: {args.out}: {len(records)} frames {W}x{H}, path {args.path}, shake {args.shake_px} px / "
          f"{args.shake_deg} deg RMS, seed {args.seed}{', object' if obj is not None else ''}"
          f"{', VFR' if args.vfr else ''}{f', rotation {args.display_rotation}' if args.display_rotation else ''}")


if __name__ == "__main__":
    main()
