#!/usr/bin/env python3
"""Tone mapping (issue 27 item 8): what it costs per frame against the scaler it runs beside, against the
ffmpeg CLI's own chain (zscale + tonemap), and how close its picture is to that chain's.

Usage: python3 Benchmarks/tonemap.py [--rounds N] [--binary .build/release/cropzoom] [--out Benchmarks/results]

Cost: a 1920x1080 HEVC Main 10 PQ clip (3 s, 90 frames, made here with the ffmpeg CLI), zoomed 1.5x into a
1920x1080 output, the encoder skipped (`--null --codec none`) so the transform is what is timed:
  A  cropzoom, --tone-map off          (crop + scale, 10-bit to 10-bit, zimg)
  B  cropzoom, --tone-map bt2390       (crop + scale into 4:4:4 16-bit, then the mapping kernel)
  C  ffmpeg 5.1: crop, scale, zscale=t=linear, zscale=p=bt709, tonemap=hable, zscale=t=bt709, -f null
Rounds alternate A B C A B C …; medians are quoted, with cropzoom's own busy time of its transform stage per
frame (--stats) and peak RSS (/usr/bin/time -v). Quality: tonemap_compare.py (Tests/tools) on the samples and,
when ../shared/corpus is there, its HDR clips.
"""
import argparse, json, os, platform, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
from compare import crop_for_zoom, timed_with_stderr  # noqa: E402


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def transform_ms(stderr, frames):
    for line in stderr.splitlines():
        if line.startswith("{") and '"stats"' in line:
            return json.loads(line)["busy_seconds"]["transform"] * 1000 / frames
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--binary", default=os.path.join(ROOT, ".build/release/cropzoom"))
    ap.add_argument("--out", default=os.path.join(ROOT, "Benchmarks/results"))
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="cz-tonemap-")
    clip = os.path.join(tmp, "pq-1080p.mkv")
    run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30:duration=3", "-vf",
         "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=smpte2084:p=bt2020:m=bt2020nc:r=tv:npl=400,"
         "format=yuv420p10le", "-c:v", "libx265", "-preset", "ultrafast", "-crf", "24",
         "-x265-params", "log-level=error:hdr10=1:max-cll=400,200", "-color_primaries", "bt2020",
         "-color_trc", "smpte2084", "-colorspace", "bt2020nc", clip])
    frames = 90
    cw, ch, cx, cy = crop_for_zoom(1920, 1080, 1.5)
    common = [a.binary, clip, "--zoom", "1.5", "--null", "--codec", "none", "--progress", "json", "--stats"]
    sides = {
        "A": common + ["--tone-map", "off"],
        "B": common + ["--tone-map", "bt2390"],
        "C": ["ffmpeg", "-v", "error", "-nostdin", "-i", clip, "-vf",
              f"crop={cw}:{ch}:{cx}:{cy},scale=1920:1080:flags=bicubic,zscale=t=linear:npl=100,format=gbrpf32le,"
              "zscale=p=bt709,tonemap=tonemap=hable:desat=0,zscale=t=bt709:m=bt709:r=tv,format=yuv420p",
              "-f", "null", "-"],
    }
    results = {k: {"wall": [], "rss": [], "transform_ms": []} for k in sides}
    for r in range(a.rounds):
        for k, cmd in sides.items():
            wall, _, rss, err = timed_with_stderr(cmd)
            results[k]["wall"].append(wall)
            results[k]["rss"].append(rss)
            ms = transform_ms(err, frames)
            if ms is not None:
                results[k]["transform_ms"].append(ms)
            print(f"round {r + 1} {k}: {wall:.2f} s, {rss:.0f} MiB" + (f", transform {ms:.2f} ms/frame" if ms else ""),
                  file=sys.stderr)
    med = {k: {m: (statistics.median(v) if v else None) for m, v in d.items()} for k, d in results.items()}
    # Quality against FFmpeg's chain.
    tool = os.path.join(ROOT, "Tests/tools/tonemap_compare.py")
    inputs = [os.path.join(ROOT, "samples", s) for s in ("hdr-pq.mkv", "hdr-hlg.mp4")]
    corpus = os.path.join(os.path.dirname(ROOT), "shared", "corpus")
    for n in ("axm-hdr10-av1.mp4", "axm-hlg10-color-test.mp4", "axm-dolbyVision-hdr.MOV"):
        if os.path.exists(os.path.join(corpus, n)):
            inputs.append(os.path.join(corpus, n))
    quality = []
    for path in inputs:
        for curve in ("hable", "bt2390"):
            out = os.path.join(tmp, f"{os.path.basename(path)}.{curve}.mkv")
            run([a.binary, path, "-o", out, "-y", "--codec", "h264", "--crf", "12", "--tone-map", curve, "--quiet"])
            q = json.loads(run(["python3", tool, out, path, "hable"]).stdout)
            quality.append({"input": os.path.basename(path), "curve": curve, **{k: q[k] for k in (
                "psnr", "mean_luma", "reference_mean_luma", "luma_ratio", "colourfulness",
                "reference_colourfulness", "colourfulness_ratio")}})
    machine = f"{platform.node()}, {os.cpu_count()} CPUs, {platform.platform()}"
    ffv = run(["ffmpeg", "-version"]).stdout.splitlines()[0]
    report = {"machine": machine, "ffmpeg": ffv, "rounds": a.rounds, "frames": frames, "commands": sides,
              "raw": results, "median": med, "quality": quality}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tonemap.json"), "w") as f:
        json.dump(report, f, indent=1)
    A, B, C = med["A"], med["B"], med["C"]
    lines = [
        "# Tone mapping: cost and picture (Benchmarks/tonemap.py)", "",
        f"Machine: {machine}. {ffv}. {a.rounds} rounds alternated A B C; medians.", "",
        "| side | wall s | per frame ms | transform ms/frame (--stats) | peak RSS MiB |", "|---|---|---|---|---|",
    ]
    for k, name in (("A", "A cropzoom, crop+scale, --tone-map off"), ("B", "B cropzoom, crop+scale+tone map"),
                    ("C", "C ffmpeg 5.1, crop+scale+zscale+tonemap")):
        m = med[k]
        t = f"{m['transform_ms']:.2f}" if m["transform_ms"] else "–"
        lines.append(f"| {name} | {m['wall']:.2f} | {m['wall'] * 1000 / frames:.1f} | {t} | {m['rss']:.0f} |")
    lines += [
        "",
        f"- The mapping adds {B['transform_ms'] - A['transform_ms']:.2f} ms per 1080p frame to the transform "
        f"({B['transform_ms'] / A['transform_ms']:.2f}x the crop+scale alone); whole run B/A "
        f"{B['wall'] / A['wall']:.2f}x, cropzoom B against the ffmpeg chain C {B['wall'] / C['wall']:.2f}x "
        f"(C/B: {C['wall'] / B['wall']:.1f}x faster).",
        "", "## Picture against zscale + tonemap=hable (desat=0)", "",
        "| input | cropzoom curve | PSNR dB | mean luma (ref) | ratio | colourfulness (ref) | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for q in quality:
        lines.append(f"| {q['input']} | {q['curve']} | {q['psnr']} | {q['mean_luma']} ({q['reference_mean_luma']}) | "
                     f"{q['luma_ratio']} | {q['colourfulness']} ({q['reference_colourfulness']}) | "
                     f"{q['colourfulness_ratio']} |")
    with open(os.path.join(a.out, "tonemap.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    # A bar chart of the per-frame cost.
    bars = [("A crop+scale", A["wall"] * 1000 / frames), ("B + tone map", B["wall"] * 1000 / frames),
            ("C ffmpeg zscale+tonemap", C["wall"] * 1000 / frames)]
    top = max(v for _, v in bars)
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="560" height="170" font-family="sans-serif" font-size="13">',
           '<text x="10" y="20">1080p PQ, zoom 1.5, no encoder: wall ms per frame (median of '
           f'{a.rounds}, lower is better)</text>']
    for i, (name, v) in enumerate(bars):
        y = 40 + i * 40
        w = 300 * v / top
        svg.append(f'<text x="10" y="{y + 17}">{name}</text>')
        svg.append(f'<rect x="200" y="{y}" width="{w:.1f}" height="26" fill="{"#4a7" if i < 2 else "#a74"}"/>')
        svg.append(f'<text x="{205 + w:.1f}" y="{y + 17}">{v:.1f}</text>')
    svg.append("</svg>")
    with open(os.path.join(a.out, "tonemap.svg"), "w") as f:
        f.write("\n".join(svg) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
