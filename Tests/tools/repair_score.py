#!/usr/bin/env python3
"""Scores a repaired recording against the complete original it was cut from (issue 31; docs/design/repair.md,
"Measurement"). Used by the tests (RepairTests) and the benchmark against untrunc.

    repair_score.py [--vfr] ORIGINAL BROKEN REPAIRED  ->  JSON on stdout

Per stream of the original that has packets (read by ffprobe, with each packet's MD5), against the repaired file's
stream of the same type and rank among those with packets (a repair writes no track it found nothing of — an empty
track of the original, a metadata track it steps over —, so the indexes may differ; where none is left, nothing):
  whole      packets of the original lying whole in the broken file (pos + size <= its length)
  recovered  of those, packets found in the repaired file with identical bytes, in the same order (a packet missing
             from it, lost to damage, is passed over)
  recall     recovered / whole
  foreign    packets of the repaired stream whose bytes match no packet of the original (must be 0)
  silent     packets of zeros that match none either: silence filling the time of damaged uncompressed sound
  pts_error  the largest |pts - original pts| (seconds) over the recovered packets, first to last
  pts_error_median  the median of those
  first_pts  the first recovered packet's time in the repaired file and the original's
Also: decode_errors, what `ffmpeg -v error -i REPAIRED -map 0 -f null -` printed (must be empty). With --vfr (a
recording whose frame rate changed), `-fps_mode vfr` before `-f null`: without it the CLI re-times the null output at
the stream's nominal rate (its SPS's, the reference's), and pictures closer than that are reported as a muxer error
that no decoder made. Duplicate or wrong times are still caught by pts_error.
"""
import bisect
import hashlib
import json
import os
import subprocess
import sys
from fractions import Fraction


def packets(path):
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries",
         "stream=index,codec_type,time_base:packet=stream_index,pts,dts,duration,size,pos,flags,data_hash",
         "-show_data_hash", "MD5", "-of", "json", path],
        check=True, capture_output=True, text=True).stdout
    data = json.loads(out)
    bases = {s["index"]: Fraction(s["time_base"]) for s in data.get("streams", [])}
    types = {s["index"]: s.get("codec_type", "?") for s in data.get("streams", [])}
    by_stream = {}
    for p in data.get("packets", []):
        i = p["stream_index"]
        pts = p.get("pts")
        if not p.get("data_hash"):
            sys.exit(f"{path}: ffprobe gave no data_hash for a packet: bytes cannot be compared")
        by_stream.setdefault(i, []).append({
            "hash": p.get("data_hash"), "size": int(p["size"]), "pos": int(p.get("pos", -1) or -1),
            "pts": None if pts in (None, "N/A") else Fraction(int(pts)) * bases[i],
        })
    return by_stream, types


def paired(orig, orig_types, fixed, fixed_types):
    """Each original stream with packets -> the repaired stream of the same type and rank among those with packets."""
    pairs = {}
    for kind in set(orig_types.values()):
        mine = sorted(i for i in orig if orig_types[i] == kind)
        theirs = sorted(i for i in fixed if fixed_types.get(i) == kind)
        pairs.update(zip(mine, theirs))
    return pairs


def silence(size):
    """The hash of `size` zero bytes: uncompressed silence, what a repair fills a damaged stretch of PCM with."""
    return "MD5:" + hashlib.md5(bytes(size)).hexdigest()


def score(original, broken, repaired, vfr=False):
    broken_size = os.path.getsize(broken)
    orig, orig_types = packets(original)
    fixed, fixed_types = packets(repaired) if os.path.exists(repaired) else ({}, {})
    pairs = paired(orig, orig_types, fixed, fixed_types)
    streams = []
    for i, ps in sorted(orig.items()):
        whole = [p for p in ps if 0 <= p["pos"] and p["pos"] + p["size"] <= broken_size]
        out = fixed.get(pairs[i], []) if i in pairs else []
        known = {p["hash"] for p in ps}
        # Identical bytes in the same order: walk both lists (a hash seen again later is matched in order).
        recovered = 0
        errors = []
        # Where each hash occurs in the repaired stream: a packet is matched at its hash's first place after the
        # previous match (a packet missing from the repaired file, lost to damage, is passed over).
        places = {}
        for k, q in enumerate(out):
            places.setdefault(q["hash"], []).append(k)
        j = 0
        for p in whole:
            at = places.get(p["hash"], [])
            n = bisect.bisect_left(at, j)
            if n == len(at):
                continue
            k = at[n]
            recovered += 1
            if p["pts"] is not None and out[k]["pts"] is not None:
                errors.append(abs(float(out[k]["pts"] - p["pts"])))
            j = k + 1
        streams.append({
            "index": i, "whole": len(whole), "recovered": recovered,
            "recall": recovered / len(whole) if whole else 1.0,
            "foreign": sum(1 for p in out if p["hash"] not in known and p["hash"] != silence(p["size"])),
            "silent": sum(1 for p in out if p["hash"] not in known and p["hash"] == silence(p["size"])),
            "pts_error": max(errors) if errors else None,
            "pts_error_median": sorted(errors)[len(errors) // 2] if errors else None,
            "first_pts": [float(out[0]["pts"]) if out and out[0]["pts"] is not None else None,
                          float(ps[0]["pts"]) if ps and ps[0]["pts"] is not None else None],
        })
    rate = ["-fps_mode", "vfr"] if vfr else []
    decode = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", repaired, "-map", "0", *rate, "-f", "null", "-"],
                            capture_output=True, text=True) if os.path.exists(repaired) else None
    return {
        "streams": streams,
        "decode_errors": (decode.stderr.strip() if decode else "no output"),
        "decode_status": decode.returncode if decode else None,
    }


if __name__ == "__main__":
    args = sys.argv[1:]
    vfr = args[:1] == ["--vfr"]
    if vfr:
        args = args[1:]
    if len(args) != 3:
        sys.exit(__doc__)
    print(json.dumps(score(*args, vfr=vfr), indent=1))
