#!/usr/bin/env python3
"""Turns ScalingKernels benchmark runs (text output of `swift package benchmark`) and a
KernelQuality CSV into the "Scaling kernel" table of Benchmarks/README.md.

    python3 summarize.py --quality work/kernel-quality-1.csv [--quality ...] work/benchmark-run*.txt

Several runs may be given (the machine is shared): for each measurement the run with the lowest
median is shown, and the medians of all runs are listed (small print) so the spread is visible.
"""
import argparse
import csv
import re
import sys

ROW = re.compile(r"^│ (?P<metric>[^│]+?)\s*│(?P<values>.*)│\s*$")


def parse_run(path):
    """{benchmark name: {metric: [p0, p25, p50, p75, p90, p99, p100, samples]}}"""
    results, name = {}, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line and not line.startswith(("│", "╒", "╞", "├", "╘", "=", " ")) and "│" not in line:
            name = line.strip()
            continue
        m = ROW.match(line)
        if m and name and not m.group("metric").startswith("Metric"):
            metric = m.group("metric")
            values = [v.strip() for v in m.group("values").split("│")]
            try:
                results.setdefault(name, {})[metric] = [int(v) for v in values]
            except ValueError:
                pass
    return results


def wall(entry):
    """Wall clock percentiles in microseconds."""
    for metric, values in entry.items():
        for unit, factor in (("(μs)", 1.0), ("(ns)", 1e-3), ("(ms)", 1e3)):
            if metric.startswith("Time (wall clock) " + unit):
                return [v * factor for v in values[:7]] + values[7:]
    return None


def mallocs(entry):
    for metric, values in entry.items():
        if metric.startswith("Malloc (total)"):
            return values
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quality", action="append", required=True,
                    help="KernelQuality CSV (interleaved timing + PSNR); may be repeated")
    ap.add_argument("--compact", action="store_true", help="omit the per-run medians")
    ap.add_argument("runs", nargs="+", help="text output of `swift package benchmark` runs")
    args = ap.parse_args()
    runs = [parse_run(p) for p in args.runs]
    qruns = [{(r["case"], r["kernel"]): r for r in csv.DictReader(open(p, encoding="utf-8"))} for p in args.quality]
    quality = qruns[0]
    details = {r["kernel"]: r["detail"] for r in quality.values()}
    kernels = list(dict.fromkeys(r["kernel"] for r in quality.values()))

    def interleaved(case, kernel):
        found = [q[(case, kernel)] for q in qruns if (case, kernel) in q]
        if not found:
            return "–"
        best = min(found, key=lambda r: float(r["median_ms"]))
        text = f"**{float(best['median_ms']):.2f}** ({float(best['p25_ms']):.2f}–{float(best['p75_ms']):.2f})"
        if len(found) > 1 and not args.compact:
            text += " <sub>" + "/".join(f"{float(r['median_ms']):.2f}" for r in found) + "</sub>"
        return text

    def tight(case, kernel):
        name = f"{case} {kernel}"
        found = [wall(r[name]) for r in runs if name in r and wall(r[name])]
        if not found:
            return "–"
        best = min(found, key=lambda v: v[2])
        text = f"{best[2] / 1000:.2f} ({best[1] / 1000:.2f}–{best[3] / 1000:.2f})"
        if len(found) > 1 and not args.compact:
            text += " <sub>" + "/".join(f"{v[2] / 1000:.2f}" for v in found) + "</sub>"
        return text

    def allocs(case, kernel):
        name = f"{case} {kernel}"
        found = [mallocs(r[name]) for r in runs if name in r and mallocs(r[name])]
        if not found:
            return None
        lo, hi = min(v[0] for v in found), max(v[6] for v in found)
        return str(lo) if lo == hi else f"{lo}–{hi}"

    def q(case, kernel):
        r = quality.get((case, kernel))
        return "/".join(f"{float(r['psnr_' + p]):.1f}" for p in "yuv") if r else "–"

    c1, c1f, c4, c4f = ("1080p-zoom1.65", "1080p-zoom1.65-subpixel",
                        "4k-zoom1.65-to-1080p", "4k-zoom1.65-to-1080p-subpixel")
    print("| kernel | flags / filter | 1080p zoom: ms/frame, interleaved median (p25–p75) | tight loop p50 (p25–p75) "
          "| 4K→1080p: ms/frame, interleaved median (p25–p75) | tight loop p50 (p25–p75) "
          "| PSNR Y/U/V 1080p | PSNR Y/U/V 4K→1080p | PSNR Y/U/V sub-pixel window: 1080p; 4K | mallocs/frame |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k in kernels:
        m = sorted({a for a in (allocs(c1, k), allocs(c4, k)) if a is not None}) or ["–"]
        print(f"| {k} | {details[k]} | {interleaved(c1, k)} | {tight(c1, k)} | {interleaved(c4, k)} | {tight(c4, k)} "
              f"| {q(c1, k)} | {q(c4, k)} | {q(c1f, k)}; {q(c4f, k)} | {', '.join(m)} |")
    print()
    print("Sub-pixel windows: only zimg reads the exact window; swscale and libyuv read the window rounded to whole")
    print("pixels (even origin), which the PSNR above charges them for. Speed of zimg on the sub-pixel windows:")
    print()
    print("| kernel | 1080p sub-pixel: interleaved median (p25–p75) | tight loop p50 (p25–p75) "
          "| 4K→1080p sub-pixel: interleaved median (p25–p75) | tight loop p50 (p25–p75) | mallocs/frame |")
    print("|---|---|---|---|---|---|")
    for k in kernels:
        if k.startswith("zimg"):
            m = sorted({a for a in (allocs(c1f, k), allocs(c4f, k)) if a is not None}) or ["–"]
            print(f"| {k} | {interleaved(c1f, k)} | {tight(c1f, k)} | {interleaved(c4f, k)} | {tight(c4f, k)} | {', '.join(m)} |")
    others = sorted({n for r in runs for n in r} - {f"{c} {k}" for c in (c1, c1f, c4, c4f) for k in kernels})
    if others:
        print()
        print("| other benchmark (tight loop) | µs per iteration p50 (p25–p75) | mallocs/iteration |")
        print("|---|---|---|")
        for n in others:
            found = [r[n] for r in runs if n in r and wall(r[n])]
            best = min(found, key=lambda e: wall(e)[2])
            w = wall(best)
            fmt = (lambda v: f"{v:.2f}") if w[2] < 10 else (lambda v: f"{v:.0f}")
            medians = "/".join(fmt(wall(e)[2]) for e in found)
            a = sorted({str(mallocs(e)[6]) for e in found if mallocs(e)})
            spread = "" if args.compact else f" <sub>{medians}</sub>"
            print(f"| {n} | {fmt(w[2])} ({fmt(w[1])}–{fmt(w[3])}){spread} | {', '.join(a) or '–'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
