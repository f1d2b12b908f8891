#!/usr/bin/env python3
"""Scores a repaired recording against the complete original it was cut from (issue 31; docs/design/repair.md,
"Measurement"). Used by the tests (RepairTests) and the benchmark against untrunc.

    repair_score.py ORIGINAL BROKEN REPAIRED  ->  JSON on stdout

Per stream of the original (packets read by ffprobe, with each packet's MD5):
  whole      packets of the original lying whole in the broken file (pos + size <= its length)
  recovered  of those, packets found in the repaired file with identical bytes, in the same order
  recall     recovered / whole
  foreign    packets of the repaired stream whose bytes match no packet of the original (must be 0)
  pts_error  the largest |pts - original pts| (seconds) over the recovered packets, first to last
  first_pts  the first recovered packet's time in the repaired file and the original's
Also: decode_errors, what `ffmpeg -v error -i REPAIRED -map 0 -f null -` printed (must be empty).
"""
import json
import os
import subprocess
import sys
from fractions import Fraction


def packets(path):
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "stream=index,time_base:packet=stream_index,pts,dts,duration,"
         "size,pos,flags", "-show_data_hash", "MD5", "-of", "json", path],
        check=True, capture_output=True, text=True).stdout
    data = json.loads(out)
    bases = {s["index"]: Fraction(s["time_base"]) for s in data.get("streams", [])}
    by_stream = {}
    for p in data.get("packets", []):
        i = p["stream_index"]
        pts = p.get("pts")
        by_stream.setdefault(i, []).append({
            "hash": p.get("data_hash"), "size": int(p["size"]), "pos": int(p.get("pos", -1) or -1),
            "pts": None if pts in (None, "N/A") else Fraction(int(pts)) * bases[i],
        })
    return by_stream


def score(original, broken, repaired):
    broken_size = os.path.getsize(broken)
    orig = packets(original)
    fixed = packets(repaired) if os.path.exists(repaired) else {}
    streams = []
    for i, ps in sorted(orig.items()):
        whole = [p for p in ps if 0 <= p["pos"] and p["pos"] + p["size"] <= broken_size]
        out = fixed.get(i, [])
        known = {p["hash"] for p in ps}
        # Identical bytes in the same order: walk both lists (a hash seen again later is matched in order).
        recovered = 0
        errors = []
        j = 0
        for p in whole:
            while j < len(out) and out[j]["hash"] != p["hash"]:
                j += 1
            if j == len(out):
                break
            recovered += 1
            if p["pts"] is not None and out[j]["pts"] is not None:
                errors.append(abs(float(out[j]["pts"] - p["pts"])))
            j += 1
        streams.append({
            "index": i, "whole": len(whole), "recovered": recovered,
            "recall": recovered / len(whole) if whole else 1.0,
            "foreign": sum(1 for p in out if p["hash"] not in known),
            "pts_error": max(errors) if errors else None,
            "first_pts": [float(out[0]["pts"]) if out and out[0]["pts"] is not None else None,
                          float(ps[0]["pts"]) if ps and ps[0]["pts"] is not None else None],
        })
    decode = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", repaired, "-map", "0", "-f", "null", "-"],
                            capture_output=True, text=True) if os.path.exists(repaired) else None
    return {
        "streams": streams,
        "decode_errors": (decode.stderr.strip() if decode else "no output"),
        "decode_status": decode.returncode if decode else None,
    }


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    print(json.dumps(score(*sys.argv[1:]), indent=1))
