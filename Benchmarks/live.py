#!/usr/bin/env python3
"""Live capture on this machine: what cropzoom records from a real-time stream, and what the ffmpeg 5.1 CLI
records from the same stream under the same overload.

A sender (the ffmpeg CLI with `-re`) streams an MPEG-TS clip over UDP on loopback; the recorder runs while it
streams. Each run is counted with ffprobe against what was sent: video frames kept, dropped (cropzoom's own count)
and lost, audio packets recorded (and whether the audio is byte-identical, compared as ADTS), how long after the
stream's end the recording ended, and peak RSS (`/usr/bin/time -v`).

1. Capacity: cropzoom (`--zoom 1.5`, audio copied) at each x264 preset on 720p30 and 1080p30 (and 1080p60):
   the highest preset recorded with 0 drops.
2. Overload: 1080p30 into x264 `slow` (faster than 2 cores can encode), cropzoom against ffmpeg 5.1 with its best
   flags for a live UDP input (`fifo_size`, `overrun_nonfatal`, `-thread_queue_size`), alternated.
3. Memory: peak RSS of a 60 s capture against a 10 s one (lavfi paced by `realtime`, 1080p30, veryfast).

Usage: python3 Benchmarks/live.py [--rounds 3] [--quick] [--out Benchmarks/results/issue15-live-N.md]
Needs a release build (swift build -c release --product cropzoom).
"""
import argparse, json, os, platform, re, shutil, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "Benchmarks", "work")
CZ = os.path.join(ROOT, ".build", "release", "cropzoom")


def sh(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True)


def clip(size, rate, seconds):
    path = os.path.join(WORK, f"live-{size}-{rate}-{seconds}s.ts")
    if not os.path.exists(path):
        sh(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={size}:rate={rate}",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", str(seconds),
            "-c:v", "libx264", "-preset", "veryfast", "-g", str(rate), "-bf", "2", "-c:a", "aac", "-shortest",
            "-f", "mpegts", path])
    return path


def port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def count(path, kind):
    out = sh(["ffprobe", "-v", "error", "-select_streams", kind, "-count_packets",
              "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path]).stdout
    found = re.findall(r"\d+", out)  # an MPEG-TS lists its streams twice (in its program and alone)
    return int(found[0]) if found else 0


def frames(path):
    out = sh(["ffprobe", "-v", "error", "-select_streams", "v", "-count_frames",
              "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path]).stdout
    found = re.findall(r"\d+", out)  # an MPEG-TS lists its streams twice (in its program and alone)
    return int(found[0]) if found else 0


def adts(path):
    out = path + ".aac"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", path, "-map", "0:a", "-c", "copy", "-f", "adts", out],
                   capture_output=True)
    try:
        with open(out, "rb") as f:
            return f.read()
    except OSError:
        return b""


def record(recorder, source, seconds_timeout=120):
    """Streams `source` in real time to a fresh UDP port while `recorder(url, out)` records it."""
    p = port()
    out = os.path.join(tempfile.mkdtemp(prefix="cz-live-"), "rec.mkv")
    cmd = ["/usr/bin/time", "-v"] + recorder(p, out)
    rec = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    sh(["ffmpeg", "-v", "error", "-re", "-i", source, "-c", "copy", "-f", "mpegts",
        f"udp://127.0.0.1:{p}?pkt_size=1316"])
    stream_end = time.monotonic()
    try:
        _, err = rec.communicate(timeout=seconds_timeout)
    except subprocess.TimeoutExpired:
        rec.kill()
        _, err = rec.communicate()
    ended = time.monotonic() - stream_end
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    done = {}
    for line in err.splitlines():
        if line.startswith("{") and '"event":"done"' in line:
            done = json.loads(line)
    return out, ended, int(rss.group(1)) / 1024 if rss else 0, done, rec.returncode, cmd


def cropzoom(preset, extra=()):
    # Ends 2 s after the stream (no data for --live-timeout); the "ended" column includes those 2 s.
    return lambda p, out: [CZ, f"udp://127.0.0.1:{p}", "-o", out, "--zoom", "1.5", "--preset", preset,
                           "--live-timeout", "2", "--progress", "json", *extra]


def ffmpeg51(preset, size):
    w, h = (int(x) for x in size.split("x"))
    cw, ch = int(w / 1.5) // 2 * 2, int(h / 1.5) // 2 * 2
    crop = f"crop={cw}:{ch}:{(w - cw) // 2}:{(h - ch) // 2},scale={w}:{h}:flags=bicubic"
    # ffmpeg's best flags for a live UDP input: a large receive FIFO that does not fail when it overruns, a long
    # demuxer thread queue; -timeout (µs) ends the recording 2 s after the stream, like cropzoom's --live-timeout.
    return lambda p, out: ["/usr/bin/ffmpeg", "-v", "error", "-thread_queue_size", "4096",
                           "-i", f"udp://127.0.0.1:{p}?fifo_size=1000000&overrun_nonfatal=1&timeout=2000000",
                           "-vf", crop, "-c:v", "libx264", "-preset", preset, "-c:a", "copy", "-y", out]


def row(name, out, sent, ended, rss, done, rc, sent_audio):
    kept = frames(out) if os.path.exists(out) else 0
    audio = count(out, "a") if os.path.exists(out) else 0
    dropped = done.get("frames_dropped")
    return {
        "name": name, "sent_frames": sent, "kept_frames": kept, "dropped": dropped,
        "lost_frames": sent - kept - (dropped or 0), "sent_audio": sent_audio, "audio": audio,
        "audio_identical": None, "ended_after_s": round(ended, 2), "rss_mib": round(rss), "exit": rc,
    }


def chart(results):
    """An SVG of the overload rounds: per run, a bar of the frames sent split into kept, dropped (counted) and lost
    (not counted), and how long after the stream's end the recorder ended."""
    runs = results["overload"]
    w, bar, gap, top = 820, 26, 14, 40
    h = top + len(runs) * (bar + gap) + 60
    scale = 360 / max(1, max(r["sent_frames"] for r in runs))
    tscale = 200 / max(1.0, max(r["ended_after_s"] for r in runs))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           '<text x="10" y="20" font-size="14">Overload: 1080p30 UDP into x264 slow (2 cores)</text>',
           '<text x="150" y="36">frames sent: kept / dropped (counted) / lost</text>',
           '<text x="610" y="36">ended after the stream (s)</text>']
    for i, r in enumerate(runs):
        y = top + i * (bar + gap) + 10
        out.append(f'<text x="10" y="{y + 17}">{r["name"]} #{r["round"]}</text>')
        x = 150
        dropped = r["dropped"] or 0
        lost = max(0, r["sent_frames"] - r["kept_frames"] - dropped)
        for n, color in [(r["kept_frames"], "#4a90d9"), (dropped, "#f5a623"), (lost, "#d0021b")]:
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{n * scale:.1f}" height="{bar}" fill="{color}"/>')
            x += n * scale
        out.append(f'<text x="{x + 4:.1f}" y="{y + 17}">{r["kept_frames"]}/{dropped}/{lost}</text>')
        width = r["ended_after_s"] * tscale * 0.6
        out.append(f'<rect x="610" y="{y}" width="{width:.1f}" height="{bar}" fill="#7b7b7b"/>')
        out.append(f'<text x="{614 + r["ended_after_s"] * tscale * 0.6:.1f}" y="{y + 17}">{r["ended_after_s"]}</text>')
    y = h - 20
    for k, (label, color) in enumerate([("kept", "#4a90d9"), ("dropped, counted", "#f5a623"), ("lost", "#d0021b")]):
        out.append(f'<rect x="{150 + k * 140}" y="{y - 11}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{166 + k * 140}" y="{y}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="capacity on 720p only, 1 overload round, no memory")
    ap.add_argument("--out", default=os.path.join(ROOT, "Benchmarks", "results-live.md"))
    a = ap.parse_args()
    os.makedirs(WORK, exist_ok=True)
    if not os.path.exists(CZ):
        sys.exit(f"{CZ} is missing: swift build -c release --product cropzoom")
    lines = ["# Live capture", "",
             f"Written by `python3 Benchmarks/live.py {' '.join(sys.argv[1:])}` on "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", "",
             f"- machine: {os.cpu_count()} cores, {platform.platform()}",
             f"- sender: `ffmpeg -re -i CLIP -c copy -f mpegts udp://127.0.0.1:PORT?pkt_size=1316` (Debian ffmpeg 5.1)",
             "- counted with ffprobe against the clip sent; `ended` is how long after the sender finished the "
             "recorder exited (both stop 2 s after the last data).", ""]
    results = {"capacity": [], "overload": [], "memory": []}

    # 1. Capacity.
    lines += ["## Capacity: cropzoom --zoom 1.5, x264, audio copied", "",
              "| input | preset | kept / sent | dropped | lost | audio | ended s | RSS MiB |",
              "|---|---|---|---|---|---|---|---|"]
    inputs = [("1280x720", 30)] if a.quick else [("1280x720", 30), ("1920x1080", 30), ("1920x1080", 60)]
    for size, rate in inputs:
        src = clip(size, rate, 10)
        sent, sent_audio = count(src, "v"), count(src, "a")
        for preset in ["ultrafast", "veryfast", "fast", "medium"]:
            out, ended, rss, done, rc, _ = record(cropzoom(preset), src)
            r = row(f"{size}@{rate} {preset}", out, sent, ended, rss, done, rc, sent_audio)
            r.update(size=size, rate=rate, preset=preset)
            results["capacity"].append(r)
            lines.append(f"| {size} {rate} fps | {preset} | {r['kept_frames']} / {sent} | {r['dropped']} | "
                         f"{r['lost_frames']} | {r['audio']} / {sent_audio} | {r['ended_after_s']} | {r['rss_mib']} |")
            print(lines[-1], flush=True)
    lines.append("")

    # 2. Overload against ffmpeg 5.1, alternated (30 s: long enough for a backlog to show).
    src = clip("1920x1080", 30, 30)
    sent, sent_audio = count(src, "v"), count(src, "a")
    sent_adts = adts(src)
    lines += ["## Overload: 1080p30 into x264 slow, cropzoom and ffmpeg 5.1 alternated", "",
              "| recorder | round | kept / sent | dropped (counted) | lost (uncounted) | audio packets | "
              "audio identical | ended s | RSS MiB |", "|---|---|---|---|---|---|---|---|---|"]
    commands = {}
    for rnd in range(1 if a.quick else a.rounds):
        recorders = [("cropzoom", cropzoom("slow", ["--max-latency", "0.5"])),
                     ("ffmpeg 5.1", ffmpeg51("slow", "1920x1080"))]
        for name, rec in recorders:
            out, ended, rss, done, rc, cmd = record(rec, src)
            commands[name] = " ".join(cmd[2:])
            r = row(name, out, sent, ended, rss, done, rc, sent_audio)
            r["audio_identical"] = adts(out) == sent_adts if os.path.exists(out) else False
            r["round"] = rnd + 1
            results["overload"].append(r)
            lines.append(f"| {name} | {rnd + 1} | {r['kept_frames']} / {sent} | {r['dropped']} | "
                         f"{r['lost_frames'] if r['dropped'] is not None else sent - r['kept_frames']} | "
                         f"{r['audio']} / {sent_audio} | {r['audio_identical']} | {r['ended_after_s']} | "
                         f"{r['rss_mib']} |")
            print(lines[-1], flush=True)
    lines += ["", "Commands (PORT and OUT vary):", ""] + [f"- {k}: `{v}`" for k, v in commands.items()] + [""]

    # 3. Memory: 10 s against 60 s.
    if not a.quick:
        lines += ["## Memory: peak RSS, 10 s and 60 s captures (lavfi 1080p30 paced by realtime, veryfast)", "",
                  "| seconds | frames | peak RSS MiB |", "|---|---|---|"]
        for seconds in [10, 60]:
            out = os.path.join(tempfile.mkdtemp(prefix="cz-live-"), "mem.mkv")
            p = subprocess.run(["/usr/bin/time", "-v", CZ, "testsrc2=size=1920x1080:rate=30,realtime",
                                "--input-format", "lavfi", "-o", out, "--duration", str(seconds), "--preset",
                                "veryfast", "--zoom", "1.5", "--progress", "none"], capture_output=True, text=True)
            rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
            results["memory"].append({"seconds": seconds, "frames": frames(out), "rss_mib": round(rss)})
            lines.append(f"| {seconds} | {results['memory'][-1]['frames']} | {round(rss)} |")
            print(lines[-1], flush=True)
        m = results["memory"]
        lines += ["", f"60 s / 10 s peak RSS: **{m[1]['rss_mib'] / max(1, m[0]['rss_mib']):.3f}**", ""]

    svg = os.path.splitext(a.out)[0] + ".svg"
    with open(svg, "w") as f:
        f.write(chart(results))
    lines.append(f"![overload: frames kept, dropped and lost; how long after the stream each recorder ended]"
                 f"({os.path.basename(svg)})")
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.splitext(a.out)[0] + ".json", "w") as f:
        json.dump(results, f, indent=1)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
