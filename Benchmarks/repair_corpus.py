#!/usr/bin/env python3
"""`cropzoom repair` against untrunc on the real-world corpus (issue 31; docs/design/repair.md, "Session 18").

Every MP4/MOV/3GP of ../shared/corpus that has media data (`mdat`) and an index (`moov`) and is not fragmented is
broken the way a crashed writer breaks it — its `moov` box taken out, every other top-level box kept where it was —
and repaired by each tool with the complete file as the reference (the best reference there can be: what is lost is
what the walk, not the reference, loses). Each output is scored against the complete file by
Tests/tools/repair_score.py (per sound and picture track: packets back with identical bytes in order, packets
matching none, the largest pts error; a clean decode), and timed (wall, one run each: these are small files and the
point is what comes back).

The corpus's files are phone and camera recordings, and files made to test players (edit lists, VFR, many tracks,
odd boxes): see its INDEX.md. Nothing of it is copied into the repository.

Usage: python3 Benchmarks/repair_corpus.py [--corpus ../shared/corpus] [--cropzoom .build/release/cropzoom]
       [--untrunc Benchmarks/work/untrunc/untrunc]
Writes Benchmarks/results/repair-corpus.md; scratch files go to Benchmarks/work/repair-corpus/.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

from repair_peers import HERE, REPO, machine, top_level_boxes

SCORE = os.path.join(REPO, "Tests", "tools", "repair_score.py")

# Why a file's times cannot all be exact, where the media data does not hold them (printed under the table when the
# file is in the run; measured by this script, looked into in docs/design/repair.md, "Session 10" and "Session 18").
NOTES = {
    "axm-mv_with_2_top_shots.mp4": "the 53 pictures of a VFR phone recording (10 durations) at the reference's "
    "rate; the two stills at their times (1.774 s off before this session: the stills' track's last duration, 0, "
    "was taken for its duration)",
    "axm-sample_edit_list.mp4": "an editor's rewrite (sound stored before pictures from before it): no sound clock, "
    "the pictures at the reference's 30 fps, off by the seven pictures the phone took at 15 fps",
    "mbn-cursed-vfr.mp4": "no sound, so no clock: the pictures of an extreme VFR file at the reference's rate "
    "(untrunc the same, where it finds them)",
    "axm-sample_empty_track.mp4": "the writer gave the first sound frame (23 bytes) 67 ms where its frames last "
    "23.2 ms: the repair times each frame by its 1024 samples, so the sound after it is 44 ms early",
    "axm-hlg10-color-test.mp4": "a phone's VFR within a frame: the reference's rate",
    "axm-portrait_4k60.mp4": "a phone's VFR within a frame (4 durations from 16.1 to 17.2 ms): the reference's rate",
}


def media_streams(path):
    """Indexes of the sound and picture streams of `path`, by ffprobe."""
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=index,codec_type", "-of", "json", path],
                         capture_output=True, text=True).stdout
    return [s["index"] for s in json.loads(out or "{}").get("streams", [])
            if s.get("codec_type") in ("video", "audio")]


def run_tool(command, output):
    if os.path.exists(output):
        os.remove(output)
    start = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.monotonic() - start
    # The line that says why (untrunc's crash handler prints a debugger's backtrace after its assertion).
    lines = [line for line in run.stderr.strip().splitlines() if line.strip()]
    telling = [line for line in lines if "rror" in line or "Assertion" in line]
    said = (telling or lines or [""])[-1]
    return run.returncode, wall, said


def score(original, broken, repaired, media):
    if not os.path.exists(repaired):
        return None
    out = subprocess.run(["python3", SCORE, original, broken, repaired], capture_output=True, text=True).stdout
    try:
        sc = json.loads(out)
    except json.JSONDecodeError:
        return None
    by = {s["index"]: s for s in sc.get("streams", [])}
    tracks = [by.get(i) for i in media]
    return dict(
        recovered=sum(t["recovered"] for t in tracks if t), whole=sum(t["whole"] for t in tracks if t),
        foreign=sum(t["foreign"] for t in tracks if t),
        lowest=min((t["recovered"] / t["whole"] if t and t["whole"] else 1.0) for t in tracks) if tracks else 1.0,
        pts_error=max((t["pts_error"] or 0.0) for t in tracks if t) if tracks else 0.0,
        clean=sc.get("decode_errors") == "" and sc.get("decode_status") == 0)


def cell(code, sc, wall):
    if sc is None:
        return f"exit {code}: nothing written"
    verdict = "clean" if sc["clean"] else "decode errors"
    return (f"{sc['recovered']}/{sc['whole']} ({100 * sc['lowest']:.0f} % lowest track), {sc['foreign']} foreign, "
            f"pts error {sc['pts_error']:.3f} s, {verdict}; exit {code}, {wall:.2f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=os.path.join(REPO, "..", "shared", "corpus"))
    ap.add_argument("--cropzoom", default=os.path.join(REPO, ".build", "release", "cropzoom"))
    ap.add_argument("--untrunc", default=os.path.join(HERE, "work", "untrunc", "untrunc"))
    args = ap.parse_args()
    args.corpus = os.path.normpath(args.corpus)
    if not os.path.isdir(args.corpus):
        sys.exit(f"repair_corpus.py: {args.corpus}: no corpus here (it sits beside the clone as ../shared/corpus)")
    for tool in (args.cropzoom, args.untrunc):
        if not os.access(tool, os.X_OK):
            sys.exit(f"repair_corpus.py: {tool}: not an executable (build it first; see docs/design/repair.md)")
    work = os.path.join(HERE, "work", "repair-corpus")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rows, skipped = [], []
    for path in sorted(glob.glob(os.path.join(args.corpus, "*"))):
        name = os.path.basename(path)
        ext = os.path.splitext(name)[1].lower()
        if ext not in (".mp4", ".mov", ".m4v", ".3gp"):
            continue
        try:
            boxes = top_level_boxes(path)
        except ValueError as error:
            skipped.append((name, str(error).split(": ", 1)[-1]))
            continue
        data = open(path, "rb").read()
        kinds = [b[0] for b in boxes]
        if "moof" in kinds or "moov" not in kinds or "mdat" not in kinds:
            skipped.append((name, "fragmented" if "moof" in kinds else "boxes " + ", ".join(kinds[:4])))
            continue
        broken = os.path.join(work, "broken" + ext)
        with open(broken, "wb") as f:
            for kind, at, size in boxes:
                if kind != "moov":
                    f.write(data[at:at + size])
        media = media_streams(path)
        row = dict(name=name, tracks=len(media))
        for label, command in (
            ("cropzoom", lambda o: [args.cropzoom, "repair", broken, "--reference", path, "-o", o]),
            ("untrunc", lambda o: [args.untrunc, "-n", "-dst", o, path, broken]),
        ):
            output = os.path.join(work, f"{label}{ext}")
            code, wall, said = run_tool(command(output), output)
            row[label] = (code, score(path, broken, output, media), wall, said)
        rows.append(row)
        print(name, "|", cell(*row["cropzoom"][:3]), "|", cell(*row["untrunc"][:3]), flush=True)

    def complete(r, label):
        sc = r[label][1]
        return sc is not None and sc["lowest"] >= 0.99 and sc["foreign"] == 0 and sc["clean"]

    m = machine(args.cropzoom, args.untrunc)
    lines = [
        "# `cropzoom repair` against untrunc on the real-world corpus",
        "",
        f"{m['date']}: cropzoom {m['cropzoom_commit']}{' (sources changed)' if m['cropzoom_dirty'] else ''}, "
        f"untrunc {m['untrunc_commit']}; {m['nproc']} cores ({m['cpu']}), Linux {m['kernel']}; {m['ffmpeg']}. "
        "Written by `Benchmarks/repair_corpus.py`.",
        "",
        "Each MP4/MOV of `../shared/corpus` with media data and an index, not fragmented, had its `moov` box taken "
        "out (every other top-level box kept) and was repaired by each tool with the complete file as the reference: "
        "`cropzoom repair BROKEN --reference FILE -o OUT` and `untrunc -n -dst OUT FILE BROKEN`. Scored against the "
        "complete file by `Tests/tools/repair_score.py` over its sound and picture tracks: packets back with "
        "identical bytes in order / packets lying whole in the broken file (and the lowest track's share), packets "
        "matching none (foreign), the largest pts error, and whether `ffmpeg -v error` decodes the output without a "
        "word; then the tool's exit status and wall time (one run).",
        "",
        f"**Complete** (every sound and picture track ≥ 99 %, nothing foreign, a clean decode): cropzoom "
        f"{sum(complete(r, 'cropzoom') for r in rows)} of {len(rows)}, untrunc "
        f"{sum(complete(r, 'untrunc') for r in rows)} of {len(rows)}.",
        "",
        "| file | tracks | cropzoom | untrunc |",
        "|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| `{r['name']}` | {r['tracks']} | {cell(*r['cropzoom'][:3])} | {cell(*r['untrunc'][:3])} |")
    notes = [(r["name"], NOTES[r["name"]]) for r in rows if r["name"] in NOTES]
    if notes:
        lines += ["", "cropzoom's pts errors above one tick, and why (the times are not in the media data):", ""]
        lines += [f"- `{n}`: {why}" for n, why in notes]
    lines += ["", "What each tool said where it wrote nothing or exited with an error:", ""]
    for r in rows:
        for label in ("cropzoom", "untrunc"):
            code, sc, _, said = r[label]
            if code != 0 or sc is None:
                lines.append(f"- `{r['name']}`, {label} (exit {code}): `{said[:300]}`")
    lines += ["", "Left out (no index to take away, or fragmented: repair copies a cut fragmented file's whole "
              "fragments without a reference, tested in RepairWorkflowTests):", ""]
    lines += [f"- `{n}`: {why}" for n, why in skipped]
    out = os.path.join(HERE, "results", "repair-corpus.md")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
