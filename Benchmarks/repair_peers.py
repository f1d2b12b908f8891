#!/usr/bin/env python3
"""`cropzoom repair` against untrunc (anthwlock/untrunc) on the same broken recordings (issue 31;
docs/design/repair.md, section 3 "Tests and measurement").

Each case is an ORIGINAL made by ffmpeg (testsrc2 + a 440 Hz sine, 640x360 30 fps, x264 -preset veryfast,
yuv420p, 48 kHz sound, 20 s), REFERENCEs made by the same command with other content (5 s, 1000 Hz), and
BROKEN = ORIGINAL cut at the end of its top-level mdat box (ffmpeg writes moov after mdat, so BROKEN has no index),
or, for case h, at 60 % of its bytes (a cut inside mdat, the last sample partial). References (REFS): `testsrc`
(the design's: other, simpler pictures, so smaller samples than the original's) and `hflip` (testsrc2
mirrored: other bytes, samples as large as the original's; 5 s, and `hflip-full` as long as the original). untrunc
bounds a sample's size by the sizes it saw in the reference, so the kind of reference decides much of its result;
all three are run. Case j (not in the design's list) is case i without B-frames: a like-for-like speed case.

The tools run alternately (cropzoom, untrunc, untrunc -s, cropzoom, ... for --rounds rounds) under
/usr/bin/time -v (wall seconds, user+system CPU, peak RSS), and each output is scored by the project's scorer,
Tests/tools/repair_score.py ORIGINAL BROKEN REPAIRED (recall per stream, foreign packets, pts error, first pts,
ffmpeg's decode errors). A tool that fails or crashes is a result: its exit code and last lines are recorded.

untrunc is not part of the project: build it beside it, in the ignored Benchmarks/work/untrunc (see
docs/design/repair.md, "untrunc beside the project"); this script only runs the binary given by --untrunc.

Writes Benchmarks/results/repair-peers.md and repair-peers.svg (recall per case and tool); the cases, outputs,
logs and the raw results (results.json) go to --work (default Benchmarks/work/repair).

Usage: nice -n 10 python3 Benchmarks/repair_peers.py [--rounds 3] [--cases a,b,...] [--refs testsrc,hflip,hflip-full]
       [--cropzoom .build/release/cropzoom] [--untrunc Benchmarks/work/untrunc/untrunc] [--markdown-only]
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shlex
import statistics
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SCORER = os.path.join(REPO, "Tests", "tools", "repair_score.py")
UNTRUNC_COMMIT = "d286625"
TIMEOUT = 1800  # seconds per tool run; a hang is recorded as exit code "timeout"

AAC = ["-c:a", "aac", "-b:a", "128k", "-ac", "2"]
# name: (title, container, size, seconds, video options, audio options, muxer options, cut)
# cut: "mdat" = at the end of the top-level mdat; a float = that fraction of the original's bytes.
CASES = {
    "a": ("H.264 + AAC MP4, -bf 0", "mp4", "640x360", 20, ["-bf", "0"], AAC, [], "mdat"),
    "b": ("H.264 + AAC MP4, -bf 3, b-adapt=2 (adaptive B-frames)", "mp4", "640x360", 20,
          ["-bf", "3", "-x264-params", "b-adapt=2"], AAC, [], "mdat"),
    "c": ("H.264 + AAC MP4, -bf 3, b-pyramid=normal:keyint=40", "mp4", "640x360", 20,
          ["-bf", "3", "-x264-params", "b-pyramid=normal:keyint=40"], AAC, [], "mdat"),
    "d": ("H.264 + AAC MOV, -bf 3, one-second chunks (-chunk_duration 1000000)", "mov", "640x360", 20,
          ["-bf", "3"], AAC, ["-chunk_duration", "1000000"], "mdat"),
    "e": ("H.264 + PCM s16le stereo MOV (sowt), -bf 3", "mov", "640x360", 20, ["-bf", "3"],
          ["-c:a", "pcm_s16le", "-ac", "2"], [], "mdat"),
    "f": ("H.264 + PCM s16be mono MOV (twos), -bf 0", "mov", "640x360", 20, ["-bf", "0"],
          ["-c:a", "pcm_s16be", "-ac", "1"], [], "mdat"),
    "g": ("H.264 + mono AAC MP4, -bf 3", "mp4", "640x360", 20, ["-bf", "3"],
          ["-c:a", "aac", "-b:a", "128k", "-ac", "1"], [], "mdat"),
    "h": ("case b cut mid-media: the first 60 % of the original's bytes", "mp4", "640x360", 20,
          ["-bf", "3", "-x264-params", "b-adapt=2"], AAC, [], 0.6),
    "i": ("larger, for speed: 1280x720, 120 s, H.264 -bf 3 + AAC MP4", "mp4", "1280x720", 120, ["-bf", "3"], AAC,
          [], "mdat"),
    # not in the design's list: case i without B-frames, where untrunc walks the whole file too (a like-for-like
    # speed case)
    "j": ("larger, for speed, no B-frames: 1280x720, 120 s, H.264 -bf 0 + AAC MP4", "mp4", "1280x720", 120,
          ["-bf", "0"], AAC, [], "mdat"),
    # for speed only (repair_speed.py, with the original itself as the reference): many small pictures and
    # uncompressed sound, where the walk's cost per sample shows. k is made at its rates (untrunc walks it whole with
    # that reference); l is resampled to them (30 to 25 fps, 48 to 8 kHz: the sound's chunks vary by a sample frame;
    # untrunc keeps one picture of it)
    "k": ("small pictures, for speed: 160x120 at 25 fps, 300 s, H.264 -bf 0 + PCM s16le mono 8 kHz MOV", "mov",
          "160x120", 300, ["-bf", "0"], ["-c:a", "pcm_s16le", "-ac", "1"], [], "mdat"),
    "l": ("case k resampled to its rates (from 30 fps and 48 kHz): sound chunks of varying sample frames", "mov",
          "160x120", 300, ["-bf", "0", "-r", "25"], ["-c:a", "pcm_s16le", "-ac", "1", "-ar", "8000"], [], "mdat"),
}
# The generators' picture and sample rates where a case's are not 30 fps and 48 kHz.
SOURCE_RATES = {"k": (25, 8000)}
# Cases repair_peers.py scores by default (k and l are repair_speed.py's).
SCORED = [c for c in CASES if c not in ("k", "l")]
REF_SECONDS = 5
# References: (generator, extra video filter, seconds (None: the original's), description). "testsrc" is the design's
# reference (other content made by the same command); "hflip" is the original's generator mirrored: other bytes, but
# pictures as complex as the original's, so samples as large; "hflip-full" the same as long as the original (more
# than one keyframe interval, like a complete recording from the same camera).
REFS = {
    "testsrc": ("testsrc", None, REF_SECONDS,
                "`testsrc`, 1000 Hz, 5 s: other content, simpler pictures (smaller samples than the original's)"),
    "hflip": ("testsrc2", "hflip", REF_SECONDS,
              "`testsrc2` mirrored (`-vf hflip`), 1000 Hz, 5 s: other bytes, pictures as complex as the original's"),
    "hflip-full": ("testsrc2", "hflip", None,
                   "`testsrc2` mirrored, 1000 Hz, as long as the original (20 s; 120 s for i and j): several "
                   "keyframe intervals"),
}


def tool_rows(cropzoom, untrunc):
    """(label, argv builder(broken, ref, out)) in the order they alternate."""
    return [
        ("cropzoom", lambda b, r, o: [cropzoom, "repair", b, "--reference", r, "-o", o, "-y"]),
        ("untrunc", lambda b, r, o: [untrunc, "-n", "-dst", o, r, b]),
        ("untrunc -s", lambda b, r, o: [untrunc, "-n", "-s", "-dst", o, r, b]),
    ]


def ffmpeg_cmd(case, out, ref=None):
    """The original's command, or with ref (a REFS key) the reference's: the same options, other content."""
    title, ext, size, seconds, vopts, aopts, mux, cut = CASES[case]
    src, vf, freq, dur = (REFS[ref][0], REFS[ref][1], 1000, REFS[ref][2] or seconds) if ref else \
        ("testsrc2", None, 440, seconds)
    rate, sample_rate = SOURCE_RATES.get(case, (30, 48000))
    return (["ffmpeg", "-v", "error", "-nostdin", "-y",
             "-f", "lavfi", "-i", f"{src}=size={size}:rate={rate}:duration={dur}",
             "-f", "lavfi", "-i", f"sine=frequency={freq}:sample_rate={sample_rate}:duration={dur}",
             "-map", "0:v", "-map", "1:a"] + (["-vf", vf] if vf else [])
            + ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p"] + vopts + aopts + mux + [out])


def top_level_boxes(path):
    """[(type, offset, size)] of the file's top-level boxes (32-bit size, or 1 + 64-bit size, or 0 = to the end)."""
    boxes, end = [], os.path.getsize(path)
    with open(path, "rb") as fh:
        off = 0
        while off + 8 <= end:
            fh.seek(off)
            size, kind = struct.unpack(">I4s", fh.read(8))
            if size == 1:
                size = struct.unpack(">Q", fh.read(8))[0]
            elif size == 0:
                size = end - off
            if size < 8:
                raise ValueError(f"{path}: bad box size {size} at {off}")
            boxes.append((kind.decode("latin-1"), off, size))
            off += size
    return boxes


def make_case(case, refs, work, log):
    """Makes ORIGINAL, the REFERENCEs and BROKEN for a case (each kept when already made by the same command)."""
    title, ext, size, seconds, vopts, aopts, mux, cut = CASES[case]
    d = os.path.join(work, case)
    os.makedirs(d, exist_ok=True)
    orig, broken = (os.path.join(d, f"{n}.{ext}") for n in ("original", "broken"))
    refpaths = {r: os.path.join(d, f"reference-{r}.{ext}") for r in refs}
    cmds = {"original": ffmpeg_cmd(case, orig)}
    cmds.update({f"reference {r}": ffmpeg_cmd(case, refpaths[r], r) for r in refs})
    stamp = os.path.join(d, "commands.json")
    made = json.load(open(stamp)) if os.path.exists(stamp) else {}
    for name, cmd in cmds.items():
        if made.get(name) != cmd or not os.path.exists(cmd[-1]):
            log(f"[{case}] making {name}: {shlex.join(cmd)}")
            subprocess.run(cmd, check=True)
            made[name] = cmd
            json.dump(made, open(stamp, "w"), indent=1)
    boxes = top_level_boxes(orig)
    kinds = [b[0] for b in boxes]
    mdat = next(b for b in boxes if b[0] == "mdat")
    if kinds.index("moov") < kinds.index("mdat"):
        raise SystemExit(f"[{case}] the original's moov comes before mdat: {kinds}")
    total = os.path.getsize(orig)
    length = mdat[1] + mdat[2] if cut == "mdat" else int(total * cut)
    if cut != "mdat" and not (mdat[1] + 16 < length < mdat[1] + mdat[2]):
        raise SystemExit(f"[{case}] a cut at {length} is not inside mdat {mdat}")
    with open(orig, "rb") as src, open(broken, "wb") as dst:
        dst.write(src.read(length))
    return dict(case=case, title=title, original=orig, references=refpaths, broken=broken, commands=cmds,
                boxes=boxes, original_bytes=total, broken_bytes=length,
                reference_bytes={r: os.path.getsize(p) for r, p in refpaths.items()},
                cut=("end of mdat" if cut == "mdat" else f"{cut:.0%} of the bytes (inside mdat)"))


def timed(argv, log_path):
    """Runs argv under /usr/bin/time -v: dict(exit, wall, cpu, rss_mib, tail)."""
    tfile = log_path + ".time"
    full = ["/usr/bin/time", "-v", "-o", tfile] + argv
    t0 = time.monotonic()
    with open(log_path, "w") as out:
        try:
            p = subprocess.run(full, stdout=out, stderr=subprocess.STDOUT, timeout=TIMEOUT)
            code = p.returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    elapsed = time.monotonic() - t0
    text = open(log_path, errors="replace").read()
    # untrunc redraws its progress ("12.3%  ") with carriage returns: those are left out of the tail
    tail = [l.strip() for l in re.split(r"[\r\n]", text) if l.strip() and not re.fullmatch(r"[\d.%\s]+", l)][-6:]
    res = dict(exit=code, wall=elapsed, cpu=None, rss_mib=None, tail=tail)
    try:
        tv = open(tfile).read()
    except OSError:
        return res

    def field(name):
        m = re.search(re.escape(name) + r": (.*)", tv)
        return m.group(1).strip() if m else None

    sig = re.search(r"Command terminated by signal (\d+)", tv)
    if sig:
        res["exit"] = f"signal {sig.group(1)}"
    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    if wall:
        parts = [float(x) for x in wall.split(":")]
        res["wall"] = parts[-1] + 60 * parts[-2] + (3600 * parts[-3] if len(parts) == 3 else 0)
    if field("User time (seconds)"):
        res["cpu"] = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    if field("Maximum resident set size (kbytes)"):
        res["rss_mib"] = int(field("Maximum resident set size (kbytes)")) / 1024
    return res


def md5(path):
    if not os.path.exists(path):
        return None
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def score(case, out):
    p = subprocess.run([sys.executable, SCORER, case["original"], case["broken"], out], capture_output=True,
                       text=True)
    if p.returncode != 0:
        return dict(error=(p.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(p.stdout)


def git(*args):
    return subprocess.run(["git", "-C", REPO] + list(args), capture_output=True, text=True).stdout.strip()


def tool_arguments(work, rounds=3):
    """The options repair_large.py and repair_vfr.py share: rounds, the two tools, the work folder (under
    Benchmarks/work), and --markdown-only (re-render the page from the work folder's results.json)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--cropzoom", default=os.path.join(REPO, ".build", "release", "cropzoom"))
    ap.add_argument("--untrunc", default=os.path.join(REPO, "Benchmarks", "work", "untrunc", "untrunc"))
    ap.add_argument("--work", default=os.path.join(REPO, "Benchmarks", "work", work))
    ap.add_argument("--markdown-only", action="store_true", help="re-render the page from --work's results.json")
    return ap.parse_args()


def machine(cropzoom, untrunc):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    ff = subprocess.run(["ffmpeg", "-version"], capture_output=True, text=True).stdout.splitlines()[0]
    uv = subprocess.run([untrunc, "-V"], capture_output=True, text=True)
    dirty = git("status", "--short", "--", "Sources")
    diff = subprocess.run(["git", "-C", REPO, "diff", "HEAD", "--", "Sources"], capture_output=True).stdout
    return dict(nproc=os.cpu_count(), cpu=cpu, kernel=platform.release(), date=datetime.datetime.now().isoformat(
        timespec="seconds"), load_at_start=os.getloadavg(), ffmpeg=ff, untrunc=untrunc,
        untrunc_version=(uv.stdout + uv.stderr).strip(), untrunc_commit=UNTRUNC_COMMIT, cropzoom=cropzoom,
        cropzoom_commit=git("rev-parse", "--short", "HEAD"), cropzoom_dirty=dirty,
        cropzoom_diff_md5=hashlib.md5(diff).hexdigest() if dirty else None,
        cropzoom_mtime=datetime.datetime.fromtimestamp(os.path.getmtime(cropzoom)).isoformat(timespec="seconds"),
        cropzoom_version=subprocess.run([cropzoom, "--version"], capture_output=True, text=True).stdout.strip()
        .splitlines()[0])


# ---------------------------------------------------------------- the report

def streams(sc):
    """(video, audio) stream entries of a score (the cases map video to 0 and audio to 1)."""
    by = {s["index"]: s for s in sc.get("streams", [])}
    return by.get(0), by.get(1)


def clean(sc):
    return "error" not in sc and sc.get("decode_errors") == "" and sc.get("decode_status") == 0


def passes(sc, timing=True):
    """≥ 99 % recall on every stream, 0 pts error (unless not timing), a clean decode."""
    if "error" in sc or not sc.get("streams"):
        return False
    for s in sc["streams"]:
        if s["recall"] < 0.99 or (timing and (s["pts_error"] is None or s["pts_error"] > 1e-9)):
            return False
    return clean(sc)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_recall(s):
    if s is None:
        return "—"
    return f"{100 * s['recall']:.1f} % ({s['recovered']}/{s['whole']})"


def fmt_s(x, digits=3):
    return "—" if x is None else f"{x:.{digits}f}"


def fmt_pts_err(v, a):
    return " / ".join("—" if s is None or s["pts_error"] is None else f"{s['pts_error']:.4g}" for s in (v, a))


def fmt_first(v, a):
    def one(s):
        if s is None:
            return "—"
        got, want = s["first_pts"]
        return f"{fmt_s(got)} ({fmt_s(want)})"
    return f"V {one(v)}, A {one(a)}"


def runs_of(c, ref, label):
    return [r for r in c["runs"] if r["ref"] == ref and r["tool"] == label]


def summary_of(c, ref, label):
    rs = runs_of(c, ref, label)
    return dict(wall=med([r["wall"] for r in rs]), cpu=med([r["cpu"] for r in rs]),
                rss=med([r["rss_mib"] for r in rs]), exits=sorted({str(r["exit"]) for r in rs}),
                identical=len({r["md5"] for r in rs}) == 1, n=len(rs))


def plural(n, word):
    return f"{n} {word}" + ("" if n == 1 else "s")


def ratio(a, b, digits=2):
    return fmt_s(a / b, digits) if a and b else "—"


def markdown(data):
    m = data["machine"]
    labels, refs, cases = data["tools"], data["refs"], data["cases"]
    lines = ["# `cropzoom repair` against untrunc", ""]
    # --- summary
    lines.append("**Summary.** Cases where a tool recovered ≥ 99 % of the whole packets of every stream with 0 pts "
                 "error and a clean decode, of " + f"{len(cases)}:")
    lines.append("")
    for ref in refs:
        npass = {l: sum(1 for c in cases if passes(c["scores"][ref][l])) for l in labels}
        nrec = {l: sum(1 for c in cases if passes(c["scores"][ref][l], timing=False)) for l in labels}
        lines.append(f"- reference `{ref}` ({REFS[ref][3]}): " + "; ".join(f"{l} **{npass[l]}**" for l in labels)
                     + " (≥ 99 % and a clean decode, whatever the pts error: "
                     + "; ".join(f"{l} {nrec[l]}" for l in labels) + ")")
    for big in (c for c in cases if c["case"] in ("i", "j")):
        lines += ["", f"Speed, case {big['case']} ({big['original_bytes'] / 1e6:.1f} MB), median wall (peak RSS); "
                  "a tool's lowest stream recall in brackets, since a tool that stops early also finishes early:", ""]
        for ref in refs:
            cz = summary_of(big, ref, "cropzoom")
            parts = []
            for l in labels:
                s = summary_of(big, ref, l)
                sc = big["scores"][ref][l]
                rec = min((x["recall"] for x in sc.get("streams", [])), default=0.0) if "error" not in sc else 0.0
                parts.append(f"{l} {fmt_s(s['wall'], 2)} s ({fmt_s(s['rss'], 0)} MiB) [{100 * rec:.1f} %]"
                             + ("" if l == "cropzoom" else f", cropzoom / {l} = {ratio(cz['wall'], s['wall'])}"))
            lines.append(f"- reference `{ref}`: " + "; ".join(parts))
    lines += ["", "Written by `Benchmarks/repair_peers.py` (stdlib Python + ffmpeg/ffprobe); scorer "
              "`Tests/tools/repair_score.py`. **Recall** = packets of the original lying whole in the broken file "
              "that the output holds with identical bytes in the same order (recovered/whole); **foreign** = output "
              "packets matching no original packet; **pts error** = largest |pts − original pts| over the "
              "recovered packets (s); **start** = the first packet's pts in the output (the original's in "
              "brackets); **clean** = `ffmpeg -v error -i OUT -map 0 -f null -` printed nothing and exited 0. "
              "**Wall**, **CPU** (user+system) and **peak RSS** from `/usr/bin/time -v`, medians over the rounds; "
              "**cz/row** = cropzoom's median / that row's (below 1: cropzoom faster or smaller).", ""]
    if data.get("notes"):
        lines += data["notes"] + [""]
    # --- machine
    lines += ["## Machine and versions", "",
              f"- {m['nproc']} cores (`nproc`), {m['cpu']} (`/proc/cpuinfo`), Linux {m['kernel']}; {m['date']}; "
              f"load average at start {', '.join(f'{x:.2f}' for x in m['load_at_start'])} — a shared machine (a "
              "test run of the project may have been running beside it); the script ran under `nice -n 10`",
              f"- FFmpeg: `{m['ffmpeg']}`",
              f"- untrunc: anthwlock/untrunc commit {m['untrunc_commit']}, built in the ignored "
              "`Benchmarks/work/untrunc` by its own Makefile (`make IS_RELEASE=1 VER=d286625`, default "
              "FF_VER=shared: Debian's libavformat/libavcodec/libavutil 5.1); `untrunc -V`: "
              f"`{m['untrunc_version']}`",
              f"- cropzoom: `{os.path.relpath(m['cropzoom'], REPO)}` (`--version`: {m['cropzoom_version']}; binary of "
              f"{m['cropzoom_mtime']}), git {m['cropzoom_commit']}"
              + (f" plus the uncommitted changes then under Sources (`git diff HEAD -- Sources` md5 "
                 f"{m['cropzoom_diff_md5']}: {', '.join(l.split()[-1] for l in m['cropzoom_dirty'].splitlines())})"
                 if m["cropzoom_dirty"] else ""),
              f"- rounds: {data['rounds']}; within each round and reference the tools alternate "
              f"{' → '.join(labels)}", ""]
    # --- commands
    lines += ["## Commands", "", "Per case (files in `Benchmarks/work/repair/CASE/`): ORIGINAL, one REFERENCE per "
              "kind, and BROKEN = ORIGINAL's first bytes up to the cut in the table below (top-level boxes parsed: "
              "32-bit size, or 1 + 64-bit size).", ""]
    lines += ["References:", ""] + [f"- `{r}`: {REFS[r][3]}" for r in refs] + ["", "```sh"]
    for c in cases:
        lines.append(f"# {c['case']}: {c['title']}")
        for name, cmd in c["commands"].items():
            lines.append(shlex.join(cmd).replace(data["work"] + "/", ""))
    lines += ["```", "", "Tools, each under `/usr/bin/time -v -o LOG.time` (OUT keeps the case's extension):", "",
              "```sh"]
    lines += list(data["tool_commands"].values())
    lines += ["python3 Tests/tools/repair_score.py ORIGINAL BROKEN OUT   # each tool's round-1 output", "```", ""]
    # --- cases
    lines += ["## Cases", "", "| case | cut | original → broken | references |", "|---|---|---|---|"]
    for c in cases:
        kinds = " ".join(b[0] for b in c["boxes"])
        lines.append(f"| {c['case']}: {c['title']} | {c['cut']} | {c['original_bytes']:,} B ({kinds}) → "
                     f"{c['broken_bytes']:,} B | "
                     + ", ".join(f"{r} {n:,} B" for r, n in c["reference_bytes"].items()) + " |")
    lines += ["", "## Results", ""]
    for c in cases:
        lines += [f"### {c['case']}: {c['title']}", ""]
        lines.append("| reference | tool | exit | video recall | audio recall | foreign V/A | max pts error V/A (s) "
                     "| start (s) | clean decode | wall (s) | CPU (s) | peak RSS (MiB) | wall cz/row | RSS cz/row |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        notes = []
        for ref in refs:
            cz = summary_of(c, ref, "cropzoom")
            for l in labels:
                sc = c["scores"][ref][l]
                s = summary_of(c, ref, l)
                v, a = streams(sc)
                if "error" in sc:
                    row = [ref, l, ", ".join(s["exits"]), f"not scored: {sc['error']}", "", "", "", "", ""]
                else:
                    dec = "yes" if clean(sc) else ("no output" if sc.get("decode_errors") == "no output" else
                                                   f"**no** ({plural(len(sc['decode_errors'].splitlines()), 'line')})")
                    row = [ref, l, ", ".join(s["exits"]), fmt_recall(v), fmt_recall(a),
                           f"{v['foreign'] if v else '—'} / {a['foreign'] if a else '—'}", fmt_pts_err(v, a),
                           fmt_first(v, a), dec]
                row += [fmt_s(s["wall"], 2), fmt_s(s["cpu"], 2), fmt_s(s["rss"], 0)]
                row += ["1", "1"] if l == "cropzoom" else [ratio(cz["wall"], s["wall"]), ratio(cz["rss"], s["rss"])]
                lines.append("| " + " | ".join(row) + " |")
                if not s["identical"]:
                    notes.append(f"{ref}, {l}: the outputs of the {s['n']} rounds differ (md5)")
                if sc.get("decode_errors") not in ("", None, "no output"):
                    first = sc["decode_errors"].splitlines()
                    notes.append(f"{ref}, {l}: ffmpeg's decode printed {plural(len(first), 'line')}, the first: "
                                 f"`{first[0][:150]}`")
        lines.append("")
        if notes:
            lines += ["- " + n for n in notes] + [""]
        lines += ["<details><summary>the last lines each tool printed (round 1)</summary>", "", "```"]
        for ref in refs:
            for l in labels:
                r = runs_of(c, ref, l)[0]
                lines.append(f"== reference {ref}, {l}: exit {r['exit']}")
                lines += [t[-240:] for t in r["tail"]]
        lines += ["```", "", "</details>", ""]
    lines += ["## Chart", "", "![recall per case, reference and tool](repair-peers.svg)", ""]
    return "\n".join(lines)


def svg_chart(data):
    """Bars: per case, per reference and tool, the lower of the two streams' recall (%)."""
    labels, refs, cases = data["tools"], data["refs"], data["cases"]
    colors = {"cropzoom": "#1f77b4", "untrunc": "#ff7f0e", "untrunc -s": "#2ca02c"}
    W, top, bottom, left, panel_h, gap = 900, 30, 30, 46, 200, 50
    H = top + len(refs) * (panel_h + gap) + bottom
    group = (W - left - 20) / max(1, len(cases))
    bw = group * 0.8 / len(labels)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" '
           'font-size="11">', f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="13">cropzoom repair vs untrunc: recall per case '
           '(the lower of video and audio, % of the packets lying whole in the broken file)</text>']
    for ri, ref in enumerate(refs):
        y0 = top + ri * (panel_h + gap) + 30
        out.append(f'<text x="{left}" y="{y0 - 16}" font-weight="bold">reference {ref}</text>')
        for pct in range(0, 101, 25):
            y = y0 + panel_h * (1 - pct / 100)
            out.append(f'<line x1="{left}" x2="{W - 20}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{pct}</text>')
        for ci, c in enumerate(cases):
            x0 = left + ci * group + group * 0.1
            for ti, l in enumerate(labels):
                sc = c["scores"][ref][l]
                rec = 0.0 if "error" in sc else min((s["recall"] for s in sc.get("streams", [])), default=0.0)
                h = panel_h * rec
                x = x0 + ti * bw
                out.append(f'<rect x="{x:.1f}" y="{y0 + panel_h - h:.1f}" width="{bw - 1:.1f}" height="{h:.1f}" '
                           f'fill="{colors.get(l, "#888")}"><title>{c["case"]}, {ref}, {l}: {100 * rec:.1f} %'
                           '</title></rect>')
                if passes(sc):
                    out.append(f'<text x="{x + bw / 2:.1f}" y="{y0 + panel_h - h - 2:.1f}" text-anchor="middle" '
                               'font-size="9">✓</text>')
            out.append(f'<text x="{x0 + group * 0.4:.1f}" y="{y0 + panel_h + 13}" text-anchor="middle">'
                       f'{c["case"]}</text>')
    lx = left
    for l in labels:
        out.append(f'<rect x="{lx}" y="{H - 16}" width="10" height="10" fill="{colors.get(l, "#888")}"/>')
        out.append(f'<text x="{lx + 14}" y="{H - 7}">{l}</text>')
        lx += 100
    out.append(f'<text x="{lx}" y="{H - 7}">✓ = ≥ 99 % on every stream, 0 pts error, clean decode</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cases", default=",".join(SCORED))
    ap.add_argument("--refs", default=",".join(REFS), help="reference kinds: " + ", ".join(REFS))
    ap.add_argument("--work", default=os.path.join(HERE, "work", "repair"))
    ap.add_argument("--results", default=os.path.join(HERE, "results", "repair-peers"))
    ap.add_argument("--cropzoom", default=os.path.join(REPO, ".build", "release", "cropzoom"))
    ap.add_argument("--untrunc", default=os.path.join(HERE, "work", "untrunc", "untrunc"))
    ap.add_argument("--markdown-only", action="store_true", help="rewrite the .md and .svg from WORK/results.json")
    args = ap.parse_args()
    args.work = os.path.abspath(args.work)
    raw = os.path.join(args.work, "results.json")
    if args.markdown_only:
        data = json.load(open(raw))
    else:
        for b in (args.cropzoom, args.untrunc):
            if not os.access(b, os.X_OK):
                sys.exit(f"repair_peers.py: {b} is not an executable (see --cropzoom / --untrunc)")
        os.makedirs(args.work, exist_ok=True)
        log = lambda s: print(s, file=sys.stderr, flush=True)
        refs = args.refs.split(",")
        rows = tool_rows(os.path.abspath(args.cropzoom), os.path.abspath(args.untrunc))
        data = dict(machine=machine(os.path.abspath(args.cropzoom), os.path.abspath(args.untrunc)),
                    rounds=args.rounds, tools=[l for l, _ in rows], refs=refs, work=args.work, cases=[],
                    tool_commands={l: shlex.join(f("BROKEN", "REFERENCE", "OUT")).replace(REPO + "/", "")
                                   for l, f in rows})
        for case in args.cases.split(","):
            c = make_case(case, refs, args.work, log)
            ext = os.path.splitext(c["original"])[1]
            c["runs"], c["scores"] = [], {}
            for ref in refs:
                for rnd in range(1, args.rounds + 1):
                    for label, build in rows:
                        tag = f"{ref}-{label.replace(' ', '').replace('-', '_')}-r{rnd}"
                        out = os.path.join(args.work, case, f"out-{tag}{ext}")
                        if os.path.exists(out):
                            os.remove(out)
                        r = timed(build(c["broken"], c["references"][ref], out),
                                  os.path.join(args.work, case, f"log-{tag}.txt"))
                        r.update(ref=ref, tool=label, round=rnd, out=out, md5=md5(out),
                                 out_bytes=os.path.getsize(out) if os.path.exists(out) else None)
                        c["runs"].append(r)
                        log(f"[{case}] {ref} r{rnd} {label}: exit {r['exit']}, {r['wall']:.2f} s, "
                            f"{r['rss_mib'] or 0:.0f} MiB, out {r['out_bytes']}")
                c["scores"][ref] = {}
                for label, _ in rows:
                    sc = score(c, runs_of(c, ref, label)[0]["out"])
                    c["scores"][ref][label] = sc
                    log(f"[{case}] {ref} {label}: " + json.dumps(
                        [(s["index"], round(s["recall"], 4), s["foreign"], s["pts_error"])
                         for s in sc.get("streams", [])]) + f" decode: {sc.get('decode_errors', '')[:80]!r}")
            data["cases"].append(c)
            json.dump(data, open(raw, "w"), indent=1)  # after every case, so a partial run can be read
    notes_file = os.path.join(args.work, "notes.md")
    data["notes"] = open(notes_file).read().strip().splitlines() if os.path.exists(notes_file) else []
    write_pages(args.results, markdown(data), svg_chart(data))


def write_pages(results, md, svg):
    """Writes RESULTS.md and RESULTS.svg (the benchmark scripts' last step)."""
    os.makedirs(os.path.dirname(results), exist_ok=True)
    with open(results + ".md", "w") as fh:
        fh.write(md)
    with open(results + ".svg", "w") as fh:
        fh.write(svg)
    print(f"wrote {results}.md and .svg", file=sys.stderr)


if __name__ == "__main__":
    main()
