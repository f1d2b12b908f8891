#!/usr/bin/env python3
"""Makes a ground-truth clip for measuring auto-reframing (issue 30): a real face moving over a real background.

The background is one frame of a real clip (default: the first frame of ../shared/corpus/axm-sample_edit_list.mp4,
the iPhone shot of buildings that Tests/tools/shake.py uses; without the corpus, shake.py's stack of
python3-skimage's photographs; any image or clip with --background), a 16:9 region of it scaled to the output size.
The subject is a real face photo that ships in a Debian package: python3-skimage's astronaut.png (head and shoulders
cut out as a rectangle, --face-width px wide). It moves along a scripted path:

    hold 1.5 s at 30 % of the width, drift to 45 % over 2 s, hold 1 s, a fast move to 72 % in 0.6 s (its peak speed
    two thirds of the width a second), hold until the cut at 7 s (the background jumps to another region of the
    picture and the face to 25 %), hold to the end

with a slow vertical sway of a few px. --scene chooses what else is in the picture:

    main        the face alone (the default);
    distractor  the face, and a cup (python3-skimage's coffee.png) sweeping across the lower part of the picture at
                a quarter of its width a second the whole time: something that moves and is not the subject;
    two         the face, and a second, smaller face (the same photo mirrored, 110 px wide) further right, drifting
                slowly: the dominant face is the subject;
    motion      no face: the cup moves along the face's path: the region that moves is the subject.

The sidecar (OUT.json) holds per frame the time, the face's box (x, y, w, h in
output px, top-left origin), whether a cut comes before this frame, and the ideal window of each aspect asked
(--aspects 9:16,1:1): the largest window of that shape inside the frame, centred on the face, moved the least to stay
inside. Frames are composed in numpy and piped to the ffmpeg CLI as rgb24 (H.264 CRF 16, a 440 Hz AAC tone).

Usage: reframe.py OUT.mp4 [--size 1280x720] [--fps 30] [--seconds 10] [--face-width 200] [--aspects 9:16,1:1]
       [--background SRC] [--face PNG] [--codec h264|ffv1] [--no-audio] [--scene main|distractor|two|motion]
       [--display-rotation -90|90|180]

--display-rotation codes the frames turned the other way and sets the MP4/MOV track's display matrix (as a phone
does; FFmpeg 5.1 has no -display_rotation, so shake.py's tkhd patch): players, and the sidecar, see the upright
frames.
"""
import argparse, json, math, os, subprocess, sys, tempfile
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import shake  # noqa: E402  (corpus_dir, load_picture, read_ppm, bilinear)

FACE = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
# The astronaut's head and shoulders in astronaut.png (512x512): her face is at about (177, 66, 95, 95).
FACE_CUT = (135, 20, 185, 230)   # x, y, w, h
CUP = os.path.join(os.path.dirname(FACE), "coffee.png")
# The cup in coffee.png (600x400).
CUP_CUT = (150, 40, 300, 250)


def smoothstep(u):
    u = min(1.0, max(0.0, u))
    return u * u * (3 - 2 * u)


CUT = 7.0   # s


def face_x(t):
    """The face's centre as a share of the width at time t (the scripted path), and whether t is after the cut."""
    keys = [(0.0, 0.30), (1.5, 0.30), (3.5, 0.45), (4.5, 0.45), (5.1, 0.72), (7.0, 0.72)]
    if t >= CUT:
        return 0.25, True
    for (t0, x0), (t1, x1) in zip(keys, keys[1:]):
        if t0 <= t < t1:
            return x0 + (x1 - x0) * smoothstep((t - t0) / (t1 - t0)), False
    return keys[-1][1], False


def ideal_window(W, H, box, aspect):
    """The largest window of `aspect` (w/h) inside W x H, centred on the box's centre, moved the least to fit."""
    ww, wh = (W, round(W / aspect)) if W / H <= aspect else (round(H * aspect), H)
    cx, cy = box[0] + box[2] / 2, box[1] + box[3] / 2
    x = min(max(cx - ww / 2, 0), W - ww)
    y = min(max(cy - wh / 2, 0), H - wh)
    return [round(x, 3), round(y, 3), ww, wh]


def background(src, W, H, which):
    """A 16:9 region of the picture scaled to W x H: the upper part before the cut, the lower after."""
    pic = shake.load_picture(src, 0).astype(np.float32)
    ph, pw = pic.shape[:2]
    rh = pw * H / W
    top = 0.15 * (ph - rh) if which == 0 else 0.85 * (ph - rh)
    X, Y = np.meshgrid((np.arange(W) + 0.5) * pw / W - 0.5, top + (np.arange(H) + 0.5) * rh / H - 0.5)
    return shake.bilinear(pic, X, Y)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--fps", type=float, default=30)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--face-width", type=int, default=200)
    ap.add_argument("--aspects", default="9:16,1:1")
    ap.add_argument("--background", default=None)
    ap.add_argument("--face", default=FACE)
    ap.add_argument("--codec", choices=["h264", "ffv1"], default="h264")
    ap.add_argument("--no-audio", action="store_true")
    ap.add_argument("--scene", choices=["main", "distractor", "two", "motion"], default="main")
    ap.add_argument("--display-rotation", type=int, choices=[0, -90, 90, 180], default=0)
    a = ap.parse_args()
    W, H = map(int, a.size.split("x"))
    src = a.background or shake.picture_or_fallback("reframe.py")
    if not os.path.isfile(a.face):
        sys.exit(f"reframe.py: {a.face}: no face picture (apt-get install python3-skimage)")
    def cut_out(path, cut, width):
        pic = shake.load_picture(path, 0)
        x0, y0, w0, h0 = cut
        pic = pic[y0:y0 + h0, x0:x0 + w0].astype(np.float32)
        h = round(width * h0 / w0)
        X, Y = np.meshgrid((np.arange(width) + 0.5) * w0 / width - 0.5, (np.arange(h) + 0.5) * h0 / h - 0.5)
        return shake.bilinear(pic, X, Y)

    face = cut_out(a.face, FACE_CUT, a.face_width)
    cup = cut_out(CUP, CUP_CUT, a.face_width) if a.scene in ("distractor", "motion") else None
    second = cut_out(a.face, FACE_CUT, 110)[:, ::-1] if a.scene == "two" else None
    subject = cup if a.scene == "motion" else face
    fh, fw = subject.shape[:2]
    backs = [background(src, W, H, 0), background(src, W, H, 1)]
    aspects = []
    for s in a.aspects.split(","):
        n, d = s.split(":")
        aspects.append((s, int(n) / int(d)))
    n = round(a.seconds * a.fps)
    frames, records, was_cut = [], [], False
    for i in range(n):
        t = i / a.fps
        share, cut = face_x(t)
        cx = share * W
        cy = 0.45 * H + 6 * math.sin(2 * math.pi * 0.4 * t)
        bx, by = int(round(cx - fw / 2)), int(round(cy - fh / 2))
        img = backs[1 if cut else 0].copy()
        others = []
        if a.scene == "distractor":
            # Sweeps right to left and back along the bottom, a quarter of the width a second.
            ch, cw = cup.shape[:2]
            span = W - cw
            u = (0.25 * W * t) % (2 * span)
            ox = int(round(span - u if u < span else u - span))
            oy = H - ch - 10
            img[oy:oy + ch, ox:ox + cw] = cup
            others.append([ox, oy, cw, ch])
        if a.scene == "two":
            sh, sw = second.shape[:2]
            share2 = (0.60 if cut else 0.88) - 0.01 * (t - (CUT if cut else 0))
            ox, oy = int(round(share2 * W - sw / 2)), int(round(0.30 * H))
            img[oy:oy + sh, ox:ox + sw] = second
            others.append([ox, oy, sw, sh])
        img[by:by + fh, bx:bx + fw] = subject
        frame = np.clip(img + 0.5, 0, 255).astype(np.uint8)
        if a.display_rotation == -90:      # shown turned clockwise: coded turned counter-clockwise
            frame = np.rot90(frame, 1)
        elif a.display_rotation == 90:
            frame = np.rot90(frame, -1)
        elif a.display_rotation == 180:
            frame = frame[::-1, ::-1]
        frames.append(np.ascontiguousarray(frame))
        box = [bx, by, fw, fh]
        records.append({"i": i, "t": round(t, 6), "face": box, "others": others, "cut": cut and not was_cut,
                        "ideal": {s: ideal_window(W, H, box, r) for s, r in aspects}})
        was_cut = cut
    ext = os.path.splitext(a.out)[1].lower()
    with tempfile.TemporaryDirectory() as tmp:
        cw_, ch_ = (H, W) if a.display_rotation in (-90, 90) else (W, H)
        cmd = ["nice", "-n", "15", "ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
               "-s", f"{cw_}x{ch_}", "-framerate", str(a.fps), "-i", "-"]
        if not a.no_audio:
            cmd += ["-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=48000:duration={n / a.fps:.6f}"]
        cmd += ["-map", "0:v"] + ([] if a.no_audio else ["-map", "1:a"]) + ["-vf", "format=yuv420p"]
        cmd += (["-c:v", "libx264", "-preset", "veryfast", "-crf", "16", "-threads", "1"] if a.codec == "h264"
                else ["-c:v", "ffv1", "-level", "3", "-threads", "1"])
        if not a.no_audio:
            cmd += ["-c:a", "aac", "-b:a", "96k"] if ext in (".mp4", ".mov") else ["-c:a", "flac"]
        tmp_out = os.path.join(tmp, "out" + ext)
        proc = subprocess.Popen(cmd + [tmp_out], stdin=subprocess.PIPE)
        for f in frames:
            proc.stdin.write(f.tobytes())
        proc.stdin.close()
        if proc.wait() != 0:
            sys.exit(f"reframe.py: ffmpeg failed: {' '.join(cmd)}")
        if a.display_rotation:
            if ext not in (".mp4", ".mov"):
                sys.exit("reframe.py: --display-rotation needs an .mp4/.mov output (the tkhd matrix is patched)")
            shake.patch_rotation(tmp_out, a.display_rotation, cw_, ch_)
        os.replace(tmp_out, a.out)
    sidecar = {"clip": {"width": W, "height": H, "fps": a.fps, "frames": n, "scene": a.scene,
                        "background": os.path.basename(src),
                        "face": os.path.basename(a.face), "face_cut": FACE_CUT, "face_size": [fw, fh]},
               "conventions": "boxes and windows [x, y, w, h] in output px, top-left origin; 'face': the subject's "
                              "box (the cup's in the motion scene); 'others': what else is in the picture; 'cut': "
                              "the background "
                              "and the face jump before this frame; 'ideal': the largest window of that aspect, "
                              "centred on the face, moved the least to stay inside",
               "frames": records}
    with open(a.out + ".json", "w") as fh_:
        json.dump(sidecar, fh_, indent=1)
    print(f"reframe.py: {a.out}: {n} frames {W}x{H}, cut at frame "
          f"{next((r['i'] for r in records if r['cut']), None)}", file=sys.stderr)


if __name__ == "__main__":
    main()
