#!/usr/bin/env python3
"""Tone mapping (issue 27 item 8): what it costs per frame against the scaler it runs beside, against the
ffmpeg CLI's own chain (zscale + tonemap), and how close its picture is to that chain's.

Usage: python3 Benchmarks/tonemap.py [--rounds N] [--binary .build/release/cropzoom] [--out Benchmarks/results]

Cost, the encoder skipped (`--null --codec none`) so the transform is what is timed, two HEVC Main 10 PQ clips
made here with the ffmpeg CLI:
  zoom: 1920x1080, 90 frames, zoomed 1.5x into 1920x1080 (an upscale: the cheapest scale there is)
    A  cropzoom, --tone-map off          (crop + scale, 10-bit to 10-bit, zimg)
    B  cropzoom, --tone-map bt2390       (crop + scale into 4:4:4 16-bit, then the mapping kernel)
    C  ffmpeg 5.1: crop, scale, zscale=t=linear, zscale=p=bt709, tonemap=hable, zscale=t=bt709, -f null
  phone: 3840x2160 (a phone's HDR recording), 60 frames, scaled to 1920x1080
    D, E, F  as A, B, C
Rounds alternate A B C D E F …; medians are quoted, with cropzoom's own busy time of its transform stage per
frame (--stats) and peak RSS (/usr/bin/time -v). The kernel alone: Benchmarks/tonemap_kernel.c, built here with
cc -O2, maps one 1080p frame of the zoom clip at each row kind this CPU has (plain C, AVX2, AVX-512), once per
round. Quality: tonemap_compare.py (Tests/tools) on the samples and, when ../shared/corpus is there, its HDR clips.
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
    clips = {}
    for name, size, seconds in (("zoom", "1920x1080", 3), ("phone", "3840x2160", 2)):
        clips[name] = os.path.join(tmp, f"pq-{name}.mkv")
        run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate=30:duration={seconds}",
             "-vf", "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=smpte2084:p=bt2020:m=bt2020nc:r=tv:npl=400,"
             "format=yuv420p10le", "-c:v", "libx265", "-preset", "ultrafast", "-crf", "24",
             "-x265-params", "log-level=error:hdr10=1:max-cll=400,200", "-color_primaries", "bt2020",
             "-color_trc", "smpte2084", "-colorspace", "bt2020nc", clips[name]])
    frames = {"A": 90, "B": 90, "C": 90, "D": 60, "E": 60, "F": 60}
    cw, ch, cx, cy = crop_for_zoom(1920, 1080, 1.5)
    chain = ("zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=hable:desat=0,"
             "zscale=t=bt709:m=bt709:r=tv,format=yuv420p")
    zoom = [a.binary, clips["zoom"], "--zoom", "1.5", "--null", "--codec", "none", "--progress", "json", "--stats"]
    phone = [a.binary, clips["phone"], "--size", "1920x1080", "--null", "--codec", "none", "--progress", "json",
             "--stats"]
    sides = {
        "A": zoom + ["--tone-map", "off"],
        "B": zoom + ["--tone-map", "bt2390"],
        "C": ["ffmpeg", "-v", "error", "-nostdin", "-i", clips["zoom"], "-vf",
              f"crop={cw}:{ch}:{cx}:{cy},scale=1920:1080:flags=bicubic,{chain}", "-f", "null", "-"],
        "D": phone + ["--tone-map", "off"],
        "E": phone + ["--tone-map", "bt2390"],
        "F": ["ffmpeg", "-v", "error", "-nostdin", "-i", clips["phone"], "-vf",
              f"scale=1920:1080:flags=bicubic,{chain}", "-f", "null", "-"],
    }
    # The kernel alone, on the zoom clip's first frame as the transform hands it over (4:4:4 16-bit).
    frame = os.path.join(tmp, "frame.yuv")
    run(["ffmpeg", "-v", "error", "-y", "-i", clips["zoom"], "-frames:v", "1", "-vf", "format=yuv444p16le",
         "-f", "rawvideo", frame])
    kernel_bin = os.path.join(tmp, "tonemap_kernel")
    kernel_cmd = ["cc", "-O2", "-I", os.path.join(ROOT, "Sources/CPlaneKernels/include"),
                  os.path.join(ROOT, "Benchmarks/tonemap_kernel.c"),
                  os.path.join(ROOT, "Sources/CPlaneKernels/tonemap.c"),
                  os.path.join(ROOT, "Sources/CPlaneKernels/cpu_features.c"), "-lm", "-o", kernel_bin]
    run(kernel_cmd)
    kernel = {}
    results = {k: {"wall": [], "rss": [], "transform_ms": []} for k in sides}
    for r in range(a.rounds):
        for k, cmd in sides.items():
            wall, _, rss, err = timed_with_stderr(cmd)
            results[k]["wall"].append(wall)
            results[k]["rss"].append(rss)
            ms = transform_ms(err, frames[k])
            if ms is not None:
                results[k]["transform_ms"].append(ms)
            print(f"round {r + 1} {k}: {wall:.2f} s, {rss:.0f} MiB" + (f", transform {ms:.2f} ms/frame" if ms else ""),
                  file=sys.stderr)
        for line in run([kernel_bin, frame, "1920", "1080", "21"]).stdout.splitlines():
            level, median, _ = line.split()
            kernel.setdefault(int(level), []).append(float(median))
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
    kernel_med = {level: statistics.median(v) for level, v in sorted(kernel.items())}
    report = {"machine": machine, "ffmpeg": ffv, "rounds": a.rounds, "frames": frames, "commands": sides,
              "kernel_command": kernel_cmd, "raw": results, "median": med, "kernel_raw": kernel,
              "kernel_median_ms": kernel_med, "quality": quality}
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tonemap.json"), "w") as f:
        json.dump(report, f, indent=1)
    lines = [
        "# Tone mapping: cost and picture (Benchmarks/tonemap.py)", "",
        f"Machine: {machine}. {ffv}. {a.rounds} rounds alternated A B C D E F; medians.", "",
        "| side | wall s | per frame ms | transform ms/frame (--stats) | peak RSS MiB |", "|---|---|---|---|---|",
    ]
    names = {"A": "A zoom 1080p: cropzoom crop+scale, --tone-map off", "B": "B zoom 1080p: cropzoom + tone map",
             "C": "C zoom 1080p: ffmpeg 5.1 crop+scale+zscale+tonemap",
             "D": "D phone 4K → 1080p: cropzoom scale, --tone-map off", "E": "E phone 4K → 1080p: cropzoom + tone map",
             "F": "F phone 4K → 1080p: ffmpeg 5.1 scale+zscale+tonemap"}
    for k, name in names.items():
        m = med[k]
        t = f"{m['transform_ms']:.2f}" if m["transform_ms"] else "–"
        lines.append(f"| {name} | {m['wall']:.2f} | {m['wall'] * 1000 / frames[k]:.1f} | {t} | {m['rss']:.0f} |")
    A, B, C, D, E, F = (med[k] for k in "ABCDEF")
    lines += [
        "",
        f"- Zoom: the mapping adds {B['transform_ms'] - A['transform_ms']:.2f} ms per 1080p frame to the transform "
        f"({(B['transform_ms'] - A['transform_ms']) / A['transform_ms']:.2f}x the crop+scale's "
        f"{A['transform_ms']:.2f} ms); cropzoom B takes {B['wall'] / C['wall']:.2f}x the ffmpeg chain C's time.",
        f"- Phone: the mapping adds {E['transform_ms'] - D['transform_ms']:.2f} ms per 1080p frame "
        f"({(E['transform_ms'] - D['transform_ms']) / D['transform_ms']:.2f}x the 4K → 1080p scale's "
        f"{D['transform_ms']:.2f} ms); cropzoom E takes {E['wall'] / F['wall']:.2f}x the ffmpeg chain F's time.",
        "", "## The kernel alone (one 1080p frame, 8-bit 4:2:0 out; median of 21 runs, median over rounds)", "",
        "| rows | ms per frame | against plain C |", "|---|---|---|",
    ]
    kinds = {0: "plain C (tables)", 1: "AVX2 + FMA (tables, gathers)", 2: "AVX-512 (polynomials, permutes)"}
    for level, v in kernel_med.items():
        lines.append(f"| {kinds[level]} | {v:.2f} | " + (f"{kernel_med[0] / v:.1f}x faster |" if level else "– |"))
    lines += [
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
    # Bar charts: the transform's busy time per frame (cropzoom) or wall time per frame (ffmpeg), and the kernel.
    bars = [("A zoom, crop+scale", A["transform_ms"], "#4a7"), ("B zoom, + tone map", B["transform_ms"], "#4a7"),
            ("C zoom, ffmpeg chain", C["wall"] * 1000 / frames["C"], "#a74"),
            ("D phone, scale", D["transform_ms"], "#4a7"), ("E phone, + tone map", E["transform_ms"], "#4a7"),
            ("F phone, ffmpeg chain", F["wall"] * 1000 / frames["F"], "#a74")]
    bars += [(f"kernel: {kinds[level].split(' (')[0]}", v, "#47a") for level, v in kernel_med.items()]
    top = max(v for _, v, _ in bars)
    height = 50 + 34 * len(bars)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="640" height="{height}" font-family="sans-serif" '
           'font-size="13">', '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="20">PQ → SDR, ms per 1080p output frame, median of '
           f'{a.rounds} (lower is better)</text>',
           '<text x="10" y="38" font-size="11">green: cropzoom transform busy time; brown: ffmpeg wall time; '
           'blue: the kernel alone</text>']
    for i, (name, v, colour) in enumerate(bars):
        y = 50 + i * 34
        w = 330 * v / top
        svg.append(f'<text x="10" y="{y + 17}">{name}</text>')
        svg.append(f'<rect x="200" y="{y}" width="{w:.1f}" height="24" fill="{colour}"/>')
        svg.append(f'<text x="{205 + w:.1f}" y="{y + 17}">{v:.1f}</text>')
    svg.append("</svg>")
    with open(os.path.join(a.out, "tonemap.svg"), "w") as f:
        f.write("\n".join(svg) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
