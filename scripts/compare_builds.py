#!/usr/bin/env python3
"""Runs two cropzoom binaries over a matrix of cases and thread counts and compares the outputs.

Called by scripts/compare-builds.sh, which builds the two binaries; it can be run alone on any
two binaries:

    python3 scripts/compare_builds.py --old OLD/cropzoom --new NEW/cropzoom [--threads 1,2,default]
        [--cases REGEX] [--work DIR] [--keep]

Every case runs with each binary at each thread setting ("default" passes no --threads), always
with a lossless encoder (--codec ffv1 into Matroska; x264 at --crf 0 where MP4 is needed), so the
decoded frames are the transform's own output. One output is the SAME as another when:

- both runs exit with the same status (and, when it is 0:)
- the decoded video is the same: `ffmpeg -f framemd5` (every frame's pts, duration, size and MD5,
  in the stream's own time base, no frame dropped or doubled);
- every packet of every other stream (audio, subtitles) is the same: pts, dts, duration, flags,
  size, side data and the MD5 of its payload (`ffprobe -show_packets -show_data_hash md5`);
- the stream parameters are the same (`ffprobe -show_streams`: size, pixel format, sample aspect,
  colour, display-matrix side data, time base, start, duration, tags, audio layout and
  extradata …) and the container's (format, start time, duration, tags), leaving out what only
  describes the video encoder's bitstream (bit rate, extradata) and the `encoder` tags.

For each case and thread setting it prints one line: SAME when the new output equals the old one
at that setting and both equal their own --threads 1 output (the first setting); DIFFERENT
(what) otherwise. Said besides, not judged: whether the old and new files are byte-identical and
whether the video packets are, and whether cropzoom's messages differ (timings left out).

A case that passes has its outputs deleted; a failing one keeps them under --work, with
commands.sh (its command lines) and differences.txt (every differing field). Exit status 0 only
when every line is SAME.
"""
import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The matrix: (name, input, arguments, output extension). Inputs are samples/ files, or
# "@interlaced" (made by make_interlaced below). Every case also gets -y and its thread setting;
# `--codec ffv1` is part of the arguments so that each command line reads as it runs.
FFV1 = ["--codec", "ffv1"]
CASES = [
    # Static geometry: the separable path (swscale for 8-bit), crop + scale, quarter turn + mirror.
    ("static-zoom", "std-h264-aac.mp4", FFV1 + ["--zoom", "1.65", "--center", "0.6,0.4"], "mkv"),
    ("static-crop-size", "std-h264-aac.mp4", FFV1 + ["--crop", "320:180:100:60", "--size", "480x270"], "mkv"),
    ("static-zimg-lanczos", "std-h264-aac.mp4", FFV1 + ["--zoom", "1.3", "--kernel", "zimg", "--scaler", "lanczos"],
     "mkv"),
    ("quarter-turn-flip", "std-h264-aac.mp4", FFV1 + ["--crop", "360:360", "--rotate", "90", "--flip", "horizontal"],
     "mkv"),
    # Keyframed (animated) windows: cropzoom's own resampler, per-frame windows.
    ("keyframed-zoom", "std-h264-aac.mp4",
     FFV1 + ["--zoom", "0s:1, 1.5s:1.8", "--center", "0s:0.5,0.5, 2s:0.62,0.4", "--ease", "smooth"], "mkv"),
    ("crop-keyframes", "std-h264-aac.mp4", FFV1 + ["--crop", "0s:640:360:0:0, 2s:320:180:300:160"], "mkv"),
    # Warps: a rotation by a non-right angle, a keyframed one with --background cover, a matrix.
    ("warp-rotate", "std-h264-aac.mp4", FFV1 + ["--rotate", "7.5"], "mkv"),
    ("warp-rotate-keyframed-cover", "std-h264-aac.mp4",
     FFV1 + ["--rotate", "0s:-5, 2s:10", "--background", "cover"], "mkv"),
    ("warp-transform", "std-h264-aac.mp4", FFV1 + ["--transform", "0.8,0.1,-0.1,0.8,80,20"], "mkv"),
    # Zoom-out: over the blurred picture (static), over repeated edges (keyframed).
    ("zoom-out-blur", "std-h264-aac.mp4", FFV1 + ["--zoom", "0.6", "--background", "blur"], "mkv"),
    ("zoom-out-keyframed-edge", "std-h264-aac.mp4",
     FFV1 + ["--zoom", "0s:1.4, 2s:0.5", "--background", "edge"], "mkv"),
    # Trim: cut to the frame, copied audio cut at packets, everything shifted by --start.
    ("trim", "std-h264-aac.mp4", FFV1 + ["--zoom", "1.3", "--start", "0.5", "--end", "1.5"], "mkv"),
    # Inputs: 10-bit HEVC (zimg static, float resampler keyframed), 4:4:4 odd size, VP9 + Opus,
    # two audio tracks, PCM, full-range MJPEG, a display matrix, VFR, MPEG-TS with a start offset.
    ("hevc10-zoom", "hevc10.mkv", FFV1 + ["--zoom", "1.5"], "mkv"),
    ("hevc10-pan", "hevc10.mkv", FFV1 + ["--zoom", "1.5", "--center", "0s:0.3,0.5, 2s:0.7,0.5"], "mkv"),
    ("odd-444", "odd-444.mkv", FFV1 + ["--zoom", "1.4", "--center", "0.3,0.7"], "mkv"),
    ("vp9-opus", "vp9-opus.webm", FFV1 + ["--zoom", "1.5"], "mkv"),
    ("two-audio", "two-audio.mp4", FFV1 + ["--zoom", "1.2"], "mkv"),
    ("pcm-audio", "pcm.mov", FFV1 + ["--zoom", "1.3"], "mkv"),
    ("mjpeg-full-range", "mjpeg-full.mov", FFV1 + ["--zoom", "1.5"], "mkv"),
    ("rotate90-upright", "rotate90.mp4", FFV1 + ["--zoom", "1.5"], "mkv"),
    # --orientation ignore keeps the display matrix, which only MP4/MOV store; neither holds FFV1,
    # so this one is x264 lossless (its bitstream depends on threads, its decoded frames do not).
    ("rotate90-keep-matrix", "rotate90.mp4",
     ["--codec", "libx264", "--crf", "0", "--preset", "ultrafast", "--zoom", "1.5", "--orientation", "ignore"], "mp4"),
    ("vfr", "vfr-h264.mp4", FFV1 + ["--zoom", "1.5"], "mkv"),
    ("ts-start-offset", "start-offset.ts", FFV1 + ["--zoom", "1.5"], "mkv"),
    ("ts-trim-keep-start-time", "start-offset.ts", FFV1 + ["--zoom", "1.5", "--start", "0.5", "--keep-start-time"],
     "mkv"),
    # Deinterlacing: forced on a progressive clip, and auto on an interlaced one (made here).
    ("deinterlace-on", "std-h264-aac.mp4", FFV1 + ["--zoom", "1.2", "--deinterlace", "on"], "mkv"),
    ("deinterlace-auto-25i", "@interlaced", FFV1 + ["--zoom", "1.2"], "mkv"),
    # Audio re-encoded (to AAC) instead of copied.
    ("audio-reencoded", "std-h264-aac.mp4", FFV1 + ["--zoom", "1.1", "--audio", "aac"], "mkv"),
    # A longer 720p run (90 frames) so that the threaded engine's queues and pool fill up.
    ("720p-keyframed", "bench-720p.mp4", FFV1 + ["--zoom", "0s:1.2, 3s:1.6", "--end", "3"], "mkv"),
]

# Stream fields that describe the video encoder's bitstream rather than the pictures (x264's
# differs with its thread count), and tags naming the encoder: not part of the verdict.
VIDEO_BITSTREAM_FIELDS = {"bit_rate", "max_bit_rate", "extradata_size", "extradata_hash"}
IGNORED_TAGS = {"encoder", "ENCODER"}
# Container fields that follow from the bytes written (and the path).
IGNORED_FORMAT_FIELDS = {"filename", "size", "bit_rate", "probe_score"}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, **kw)


def make_interlaced(path):
    """A 1 s 25i H.264 clip (top field first, coded interlaced) woven from moving 50p, with a tone."""
    if os.path.exists(path):
        return
    src = path + ".src.mkv"
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
                    "testsrc2=size=320x240:rate=50:duration=1", "-c:v", "ffv1", src], check=True)
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-f", "lavfi", "-i",
                    "sine=frequency=440:sample_rate=48000:duration=1", "-vf", "interlace=scan=tff",
                    "-c:v", "libx264", "-qp", "0", "-flags", "+ilme+ildct", "-threads", "1",
                    "-c:a", "aac", path], check=True)
    os.remove(src)


# Matroska: the muxer makes up a random SegmentUID, TrackUIDs (and the Tags' references to them)
# for every file unless told to be bit-exact, which cropzoom does not; the CRC-32 elements of the
# masters holding them change with them. For the byte-for-byte statement these payloads are
# zeroed outside the clusters (whose bytes are compared in full).
MKV_MASTERS = {0x18538067, 0x114D9B74, 0x4DBB, 0x1549A966, 0x1654AE6B, 0xAE, 0x1254C367, 0x7373, 0x63C0,
               0x1043A770, 0x45B9, 0xB6, 0x1941A469, 0x61A7}
MKV_RANDOM = {0x73A4, 0x73C5, 0x63C5, 0x73C4, 0x45BC, 0x46AE, 0x63C4, 0x63C9, 0x63C6, 0xBF, 0x4461}


def ebml_vint(data, pos, keep_marker):
    """An EBML variable-length integer at pos: (value, length); value None when malformed/unknown."""
    first = data[pos]
    length = 9 - first.bit_length() if first else 9
    if length > 8 or pos + length > len(data):
        return None, 1
    value = first if keep_marker else first & (0xFF >> length)
    for b in data[pos + 1:pos + length]:
        value = value << 8 | b
    if not keep_marker and value == (1 << (7 * length)) - 1:
        return None, length  # unknown size
    return value, length


def mask_matroska(data):
    """The file with the random UIDs and the CRC-32s outside clusters zeroed (see MKV_RANDOM)."""
    data = bytearray(data)

    def walk(pos, end):
        while pos < end:
            eid, n = ebml_vint(data, pos, True)
            size, m = ebml_vint(data, pos + n, False) if eid is not None else (None, 0)
            if eid is None or pos + n >= len(data):
                return
            body = pos + n + m
            if size is None:  # unknown size: only the Segment may be; read on to the end
                size = end - body
            if eid in MKV_MASTERS:
                walk(body, min(body + size, end))
            elif eid in MKV_RANDOM:
                data[body:body + size] = bytes(min(size, len(data) - body))
            pos = body + size

    walk(0, len(data))
    return bytes(data)


def strip_tags(d):
    d = dict(d)
    if "tags" in d:
        d["tags"] = {k: v for k, v in d["tags"].items() if k not in IGNORED_TAGS}
    return d


def signature(path):
    """What is compared of one output file (see the module's docstring)."""
    probe = run(["ffprobe", "-v", "error", "-show_format", "-show_streams", "-show_packets",
                 "-show_data_hash", "md5", "-of", "json", path], check=True)
    info = json.loads(probe.stdout)
    streams, bitstream = [], []
    kinds = {}
    for s in info.get("streams", []):
        s = strip_tags(s)
        kinds[s["index"]] = s["codec_type"]
        if s["codec_type"] == "video":
            bitstream.append({k: s.pop(k) for k in VIDEO_BITSTREAM_FIELDS if k in s})
        streams.append(s)
    fmt = {k: v for k, v in strip_tags(info.get("format", {})).items() if k not in IGNORED_FORMAT_FIELDS}
    packets, video_packets = {}, {}
    for p in info.get("packets", []):
        key = (p.get("pts"), p.get("dts"), p.get("duration"), p.get("flags"), p.get("size"), p.get("data_hash"),
               json.dumps(p.get("side_data_list"), sort_keys=True))
        i = p["stream_index"]
        (video_packets if kinds.get(i) == "video" else packets).setdefault(i, []).append(key)
    # Decoded frames: the coded pixels (no autorotate), every frame as it comes (passthrough),
    # timestamps as stored (copyts) in the stream's own time base (enc_time_base -1).
    fm = run(["ffmpeg", "-v", "error", "-nostdin", "-noautorotate", "-copyts", "-i", path, "-map", "0:v?",
              "-fps_mode", "passthrough", "-enc_time_base", "-1", "-f", "framemd5", "-"], check=True)
    lines = fm.stdout.decode().splitlines()
    frame_header = [ln for ln in lines if ln.startswith("#") and not ln.startswith(("#software", "#version"))]
    frames = [tuple(f.strip() for f in ln.split(",")) for ln in lines if ln and not ln.startswith("#")]
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith((".mkv", ".webm")):
        data = mask_matroska(data)
    sha = hashlib.sha256(data).hexdigest()
    return {"streams": streams, "format": fmt, "packets": packets, "frame_header": frame_header, "frames": frames,
            "video_bitstream": (bitstream, video_packets), "sha256": sha}


def describe_frames(a, b):
    if a == b:
        return []
    if len(a) != len(b):
        return [f"video: {len(a)} vs {len(b)} frames"]
    bad = [i for i in range(len(a)) if a[i] != b[i]]
    i = bad[0]
    # framemd5 columns: stream, dts, pts, duration, size, hash.
    what = [name for name, j in (("pts", 2), ("dts", 1), ("duration", 3), ("size", 4), ("pixels", 5))
            if a[i][j] != b[i][j]]
    return [f"video: {len(bad)} of {len(a)} frames differ (first: frame {i} at pts {a[i][2]}: {', '.join(what)})"]


def describe_packets(a, b):
    out = []
    for idx in sorted(set(a) | set(b)):
        pa, pb = a.get(idx, []), b.get(idx, [])
        if pa == pb:
            continue
        if len(pa) != len(pb):
            out.append(f"stream #{idx}: {len(pa)} vs {len(pb)} packets")
            continue
        bad = [i for i in range(len(pa)) if pa[i] != pb[i]]
        i = bad[0]
        names = ("pts", "dts", "duration", "flags", "size", "payload", "side data")
        what = [n for n, x, y in zip(names, pa[i], pb[i]) if x != y]
        out.append(f"stream #{idx}: {len(bad)} of {len(pa)} packets differ (first: packet {i}: {', '.join(what)})")
    return out


def flat(d, prefix=""):
    """{"tags": {"DURATION": …}} → {"tags.DURATION": …}; lists as JSON text."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flat(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v if isinstance(v, (str, int, float)) else json.dumps(v, sort_keys=True)
    return out


def describe_dict(a, b, prefix, full):
    """The differing fields: all of them with values (full), or the first with its values and the
    other fields' names."""
    a, b = flat(a), flat(b)
    keys = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    if not keys:
        return []
    if full:
        return [f"{prefix}{k}: {a.get(k)} vs {b.get(k)}" for k in keys]
    more = f" (and {', '.join(keys[1:])})" if keys[1:] else ""
    return [f"{prefix}{keys[0]} {a.get(keys[0])} vs {b.get(keys[0])}{more}"]


def differences(a, b, full=False):
    """What differs between two results (exit status, signature); [] when SAME."""
    if a["status"] != b["status"]:
        return [f"exit status {a['status']} vs {b['status']}"]
    if a["status"] != 0:
        return []
    sa, sb = a["sig"], b["sig"]
    out = []
    if len(sa["streams"]) != len(sb["streams"]):
        out.append(f"{len(sa['streams'])} vs {len(sb['streams'])} streams")
    else:
        for x, y in zip(sa["streams"], sb["streams"]):
            out += describe_dict(x, y, f"stream #{x['index']} ", full)
    out += describe_dict(sa["format"], sb["format"], "format ", full)
    if sa["frame_header"] != sb["frame_header"]:
        out.append("video: framemd5 header (" + "; ".join(set(sa["frame_header"]) ^ set(sb["frame_header"])) + ")")
    out += describe_frames(sa["frames"], sb["frames"])
    out += describe_packets(sa["packets"], sb["packets"])
    return out


TIMING = re.compile(r", [0-9.]+ s \([^)]*\)$")


def messages(stderr):
    """cropzoom's stderr without the run's timing (the summary line ends '…, 0.30 s (198 fps, 6.6x)')."""
    return [TIMING.sub("", ln) for ln in stderr.decode(errors="replace").splitlines()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", help="the old cropzoom binary")
    ap.add_argument("--new", help="the new cropzoom binary")
    ap.add_argument("--samples", default=os.path.join(ROOT, "samples"))
    ap.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "cz-compare", "runs",
                                                   time.strftime("%Y%m%d-%H%M%S")))
    ap.add_argument("--threads", default="1,2,default",
                    help="thread settings, comma-separated; 'default' passes no --threads (default: 1,2,default)")
    ap.add_argument("--cases", default="", help="only the cases whose name matches this regular expression")
    ap.add_argument("--keep", action="store_true", help="keep every output, not only the failing cases'")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    args = ap.parse_args()

    cases = [c for c in CASES if re.search(args.cases, c[0])]
    if args.list:
        for name, inp, cargs, ext in cases:
            print(f"{name:30} {inp} {shlex.join(cargs)} -> .{ext}")
        return 0
    if not cases:
        sys.exit(f"compare: no case matches --cases {args.cases!r}")
    if not (args.old and args.new):
        ap.error("--old and --new are required")
    settings = [t.strip() for t in args.threads.split(",") if t.strip()]
    binaries = {"old": os.path.abspath(args.old), "new": os.path.abspath(args.new)}
    os.makedirs(args.work, exist_ok=True)
    print(f"each run: cd {args.work}/CASE/{{old,new}}-threads-{{{','.join(settings)}}} && $BIN …, "
          "BIN the old or the new binary", flush=True)
    started = time.monotonic()
    width = max(len(c[0]) for c in cases)
    lines = {"SAME": 0, "DIFFERENT": 0}
    identical, video_identical, across, runs, kept = 0, 0, 0, 0, []

    for n, (name, inp, cargs, ext) in enumerate(cases, 1):
        if inp == "@interlaced":
            src = os.path.join(args.work, "interlaced-25i.mkv")
            make_interlaced(src)
        else:
            src = os.path.join(args.samples, inp)
        casedir = os.path.join(args.work, name)
        os.makedirs(casedir, exist_ok=True)
        shown = shlex.join([src, "-o", f"out.{ext}"] + cargs + ["-y"])
        print(f"[{n}/{len(cases)}] {name}: $BIN {shown} [--threads N]", flush=True)
        results, commands = {}, []
        for t in settings:
            for which, binary in binaries.items():
                run_dir = os.path.join(casedir, f"{which}-threads-{t}")
                os.makedirs(run_dir, exist_ok=True)
                # The same output name in every run (each in its own folder), so that messages naming it
                # compare equal.
                cmd = [binary, src, "-o", f"out.{ext}"] + cargs + ["-y"] + ([] if t == "default" else ["--threads", t])
                commands.append(f"(cd {shlex.quote(run_dir)} && {shlex.join(cmd)})")
                p = run(cmd, cwd=run_dir, stdin=subprocess.DEVNULL)
                runs += 1
                with open(os.path.join(run_dir, "stderr.txt"), "wb") as f:
                    f.write(p.stderr)
                r = {"status": p.returncode, "messages": messages(p.stderr)}
                if p.returncode == 0:
                    r["sig"] = signature(os.path.join(run_dir, f"out.{ext}"))
                results[which, t] = r
        case_ok = True
        ref = settings[0]
        full_report = []
        for t in settings:
            old, new = results["old", t], results["new", t]
            # The comparisons behind this line: old with new, and each with its own first setting.
            pairs = [("old vs new", old, new)]
            if t != ref:
                pairs += [(f"new {label(t)} vs {label(ref)}", results["new", ref], new),
                          (f"old {label(t)} vs {label(ref)}", results["old", ref], old)]
            # Comparisons that found the same differences are named together.
            grouped = {}
            for what, x, y in pairs:
                found = differences(x, y)
                if found:
                    grouped.setdefault(tuple(found), []).append(what)
                    full_report.append(f"{label(t)}, {what}:\n" + "".join(f"  {d}\n" for d in differences(x, y, True)))
            problems = [f"{', '.join(whats)}: {'; '.join(found)}" for found, whats in grouped.items()]
            if old["status"] != 0 and not problems:
                # The same failure in both builds: the case itself is broken; say so, do not pass it.
                first = (old["messages"] or ["(no message)"])[-1]
                problems.append(f"both runs failed with exit status {old['status']}: {first}")
            notes = []
            if old["status"] == 0 and new["status"] == 0:
                if old["sig"]["sha256"] == new["sig"]["sha256"]:
                    identical += 1
                    notes.append("old and new files byte-identical")
                else:
                    vb = old["sig"]["video_bitstream"] == new["sig"]["video_bitstream"]
                    video_identical += vb
                    notes.append("old and new files differ in bytes" + ("" if vb else ", video bitstream too"))
                ref_new = results["new", ref]
                if t != ref and ref_new["status"] == 0:
                    same_bytes = ref_new["sig"]["sha256"] == new["sig"]["sha256"]
                    across += same_bytes
                    notes.append(f"{'same bytes as' if same_bytes else 'other bytes than'} {label(ref)}")
            if old["messages"] != new["messages"]:
                notes.append("messages differ: see stderr.txt")
            verdict = "DIFFERENT" if problems else "SAME"
            lines[verdict] += 1
            case_ok &= not problems
            detail = "; ".join(problems) if problems else "; ".join(notes)
            print(f"  {name:{width}}  {label(t):12} {verdict}" + (f" ({detail})" if detail else ""), flush=True)
        with open(os.path.join(casedir, "commands.sh"), "w") as f:
            f.write("# " + name + ": old, new at each thread setting\n" + "\n".join(commands) + "\n")
        with open(os.path.join(casedir, "differences.txt"), "w") as f:
            f.write("".join(full_report) or "none\n")
        if case_ok and not args.keep:
            shutil.rmtree(casedir)
        else:
            kept.append(casedir)

    elapsed = time.monotonic() - started
    total = sum(lines.values())
    print()
    print(f"summary: {lines['SAME']} of {total} SAME, {lines['DIFFERENT']} DIFFERENT "
          f"({len(cases)} cases x {len(settings)} thread settings, {runs} runs, {elapsed:.0f} s)")
    print(f"  old and new files byte-identical at {identical} of {total}"
          + (f" (of the rest, video bitstream identical at {video_identical})" if identical < total else "")
          + f"; new files byte-identical to {label(settings[0])}'s at {across} of {total - len(cases)}"
          + " (Matroska's random UIDs aside)")
    if kept:
        print("  outputs kept for inspection:")
        for d in kept:
            print(f"    {d}")
    else:
        # Only what this run made: the interlaced input, then the folder if nothing else is in it.
        if os.path.exists(os.path.join(args.work, "interlaced-25i.mkv")):
            os.remove(os.path.join(args.work, "interlaced-25i.mkv"))
        try:
            os.rmdir(args.work)
        except OSError:
            pass
    return 0 if lines["DIFFERENT"] == 0 else 1


def label(t):
    return "default" if t == "default" else f"--threads {t}"


if __name__ == "__main__":
    sys.exit(main())
