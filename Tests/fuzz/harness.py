#!/usr/bin/env python3
"""The mutation harness: cropzoom on seeded mutations of real clips, each run checked.

    python3 Tests/fuzz/harness.py --binary .build/release/cropzoom --count 10000 --jobs 2 --seed 1
    python3 Tests/fuzz/harness.py --binary .build/debug/cropzoom --budget 150            # CI's short run
    python3 Tests/fuzz/harness.py --binary B --replay Tests/fuzz/regressions             # the saved cases

Case N of a run with seed S mutates source N mod len(sources) (the sources in sorted order: the samples, then
../shared/corpus when it is there) with the mutation seed S * 1_000_003 + N (mutate.py), and runs one command on
it, picked by the same seed: a transcode (zoom, one of several option sets, MP4 or Matroska out), a probe, or a
transcode through standard input. Each run is checked:

- it ended by itself within --timeout seconds (else: hang; it is killed)
- no signal and no trap (else: crash; Swift traps are SIGILL/SIGTRAP, FFmpeg's aborts SIGABRT)
- the exit code is 0, 1 or 3 (bad input is 3, a failure while processing 1; never 2, which means bad usage)
- a failure prints exactly one error line, `cropzoom: error: …`, naming the input (or `stdin`), or the output
  when writing it failed
- a failure leaves nothing in the output folder; a success leaves exactly the output, which ffprobe opens with
  as many video packets as the `done` event says frames were written (no silent failure)
- the peak RSS stays under --max-rss MiB

A case that fails a check is written to --out (the mutated file when it comes from samples/, else the recipe
alone: corpus files are not copied) with its recipe `{source, seed, mutation, command, problem}`;
`--save-regressions` also copies the recipes to Tests/fuzz/regressions/, where the test suite replays them: the
recipe rebuilds the same file from the source and the seed (mutate.py is deterministic; a replay whose
mutation differs from the recorded one fails, so changing a mutator means recording its cases again).
The summary (JSON and Markdown) counts files tried, each outcome, each problem, by mutation kind.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import mutate  # noqa: E402

MEDIA = (".mp4", ".mov", ".mkv", ".webm", ".ts", ".m4a", ".MOV")

# Option sets a transcode gets (chosen by the case's seed): the engines, the kernels and the geometry paths.
OPTION_SETS = [
    ["--zoom", "1.5"],
    ["--zoom", "1.5", "--threads", "1"],
    ["--size", "320x-2", "--kernel", "swscale"],
    ["--rotate", "90", "--zoom", "1.2"],
    ["--zoom", "2", "--center", "0.3,0.7", "--audio", "aac"],
    ["--rotate", "5", "--background", "blur", "--size", "320x180"],
    ["--zoom", "0s:1, 1s:1.5"],
    ["--crop", "64:64", "--codec", "libx264", "--pix-fmt", "yuv444p"],
]


def sources(include_corpus):
    found = sorted(os.path.join(REPO, "samples", f) for f in os.listdir(os.path.join(REPO, "samples"))
                   if f.endswith(MEDIA))
    corpus = os.path.join(os.path.dirname(REPO), "shared", "corpus")
    if include_corpus and os.path.isdir(corpus):
        found += sorted(os.path.join(corpus, f) for f in os.listdir(corpus) if f.endswith(MEDIA))
    return found


def relative(path):
    """`samples/x.mp4` or `corpus/x.mp4`, as recipes name sources."""
    parts = path.split(os.sep)
    return "/".join(parts[-2:])


def resolve(name):
    folder, file = name.split("/", 1)
    if folder == "samples":
        return os.path.join(REPO, "samples", file)
    return os.path.join(os.path.dirname(REPO), "shared", "corpus", file)


def command_for(seed, ext):
    """The command a case runs, by its seed: (kind, arguments after the binary, output name or None)."""
    import random

    rng = random.Random(seed ^ 0x5EED)
    roll = rng.random()
    if roll < 0.15:
        return "probe", ["probe", "--json"], None
    out = "out.mkv" if rng.random() < 0.4 else "out.mp4"
    options = rng.choice(OPTION_SETS)
    if roll < 0.25:
        return "stdin", ["-", "-o", out, "--preset", "ultrafast", "--progress", "json"] + options, out
    return "transcode", ["IN", "-o", out, "--preset", "ultrafast", "--progress", "json"] + options, out


def run_case(binary, source, seed, workdir, timeout, max_rss):
    """Runs one case; returns its record (problem None when every check passed)."""
    data = open(source, "rb").read()
    mutated, note = mutate.mutate(data, seed)
    ext = os.path.splitext(source)[1]
    case_dir = tempfile.mkdtemp(prefix="case-", dir=workdir)
    infile = os.path.join(case_dir, "in" + ext)
    with open(infile, "wb") as f:
        f.write(mutated)
    outdir = os.path.join(case_dir, "out")
    os.mkdir(outdir)
    kind, args, out = command_for(seed, ext)
    argv = [binary] + [infile if a == "IN" else a for a in args]
    if kind == "probe":
        argv.append(infile)
    stdin = open(infile, "rb") if kind == "stdin" else subprocess.DEVNULL
    record = {"source": relative(source), "seed": seed, "mutation": note, "kind": kind,
              "command": " ".join(args), "problem": None}
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=outdir, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
    timer.start()
    streams = {}
    readers = [threading.Thread(target=lambda k=k, s=s: streams.__setitem__(k, s.read()))
               for k, s in (("out", proc.stdout), ("err", proc.stderr))]
    for t in readers:
        t.start()
    # wait4: this child's own exit status and peak RSS.
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    timer.cancel()
    for t in readers:
        t.join()
    proc.stdout.close()
    proc.stderr.close()
    if stdin is not subprocess.DEVNULL:
        stdin.close()
    stdout, stderr = streams["out"], streams["err"]
    elapsed = time.monotonic() - started
    record["rss_mib"] = round(usage.ru_maxrss / 1024, 1)
    record["seconds"] = round(elapsed, 3)
    record["exit"] = proc.returncode
    err = stderr.decode("utf-8", "replace")
    problems = []
    if elapsed >= timeout:
        problems.append(f"hang: killed after {timeout} s")
    elif proc.returncode < 0:
        problems.append(f"crash: signal {-proc.returncode}")
    elif proc.returncode not in (0, 1, 3):
        problems.append(f"exit code {proc.returncode}: {err.strip().splitlines()[-1:] if err.strip() else ''}")
    left = sorted(os.listdir(outdir))
    if proc.returncode != 0 and not problems:
        # --progress json's own error event is a JSON line; the one-line message is the rest.
        errors = [line for line in err.splitlines() if "error" in line.lower() and not line.startswith("{")]
        name = "stdin" if kind == "stdin" else infile
        if len(errors) != 1 or not errors[0].startswith("cropzoom: error: "):
            problems.append(f"{len(errors)} error lines: {errors[:3]}")
        elif name not in errors[0] and (out is None or out not in errors[0]):
            problems.append(f"the error names neither the input nor the output: {errors[0]}")
        if left:
            problems.append(f"left behind after a failure: {left}")
    elif proc.returncode == 0 and out is not None:
        if left != [out]:
            problems.append(f"the output folder holds {left}, not [{out}]")
        else:
            frames = None
            for line in err.splitlines():
                if line.startswith("{") and '"done"' in line:
                    try:
                        frames = json.loads(line).get("frames_out")
                    except ValueError:
                        pass
            probe = subprocess.run(
                ["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets", "-show_entries",
                 "stream=nb_read_packets", "-of", "csv=p=0", os.path.join(outdir, out)],
                capture_output=True, text=True, timeout=120)
            packets = probe.stdout.strip().split(",")[0]
            if probe.returncode != 0 or not packets.isdigit():
                problems.append(f"exit 0 but ffprobe cannot read the output: {probe.stderr.strip()[:200]}")
            elif frames is None:
                problems.append("exit 0 without a done event")
            elif int(packets) != frames:
                problems.append(f"done says {frames} frames, the file holds {packets} video packets")
    elif proc.returncode == 0 and kind == "probe":
        try:
            json.loads(stdout)
        except ValueError:
            problems.append("probe exit 0 without JSON")
    if record["rss_mib"] > max_rss:
        problems.append(f"peak RSS {record['rss_mib']} MiB over {max_rss}")
    record["problem"] = "; ".join(problems) or None
    record["_dir"] = case_dir
    record["_file"] = infile
    return record


def save(rec, out, regressions):
    """Keeps a failing case: its recipe, and the mutated file when it comes from the samples."""
    key = hashlib.sha1(f"{rec['source']}:{rec['seed']}".encode()).hexdigest()[:10]
    targets = [out] + ([regressions] if regressions else [])
    for folder in targets:
        os.makedirs(folder, exist_ok=True)
        recipe = {k: v for k, v in rec.items() if not k.startswith("_")}
        with open(os.path.join(folder, f"case-{key}.json"), "w") as f:
            json.dump(recipe, f, indent=1)
        if folder == out and rec["source"].startswith("samples/") and rec.get("_file") and os.path.exists(rec["_file"]):
            shutil.copy(rec["_file"], os.path.join(folder, f"case-{key}{os.path.splitext(rec['_file'])[1]}"))


def summarize(records, args, elapsed, label):
    by_kind = {}
    for r in records:
        kind = r.get("mutation", "?").split(" ")[0]
        entry = by_kind.setdefault(kind, {"files": 0, "problems": 0})
        entry["files"] += 1
        entry["problems"] += 1 if r.get("problem") else 0
    problems = [r for r in records if r.get("problem")]

    def count(word):
        return sum(1 for r in problems if r["problem"].startswith(word))

    summary = {
        "label": label,
        "binary": args.binary,
        "seed": args.seed,
        "files": len(records),
        "seconds": round(elapsed, 1),
        "exit_codes": {str(c): sum(1 for r in records if r.get("exit") == c)
                       for c in sorted({r.get("exit") for r in records if r.get("exit") is not None})},
        "commands": {k: sum(1 for r in records if r.get("kind") == k) for k in ("transcode", "stdin", "probe")},
        "crashes": count("crash"),
        "hangs": count("hang"),
        "left_behind": sum(1 for r in problems if "left behind" in r["problem"] or "output folder holds" in
                           r["problem"]),
        "silent_failures": sum(1 for r in problems if "done says" in r["problem"] or "ffprobe cannot" in
                               r["problem"]),
        "problems": len(problems),
        "max_rss_mib": max((r.get("rss_mib", 0) for r in records), default=0),
        "by_mutation": by_kind,
        "slowest": [{k: r.get(k) for k in ("source", "seed", "mutation", "command", "seconds", "exit")}
                    for r in sorted(records, key=lambda r: -r.get("seconds", 0))[:5]],
        "failing": [{k: v for k, v in r.items() if not k.startswith("_")} for r in problems][:50],
    }
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=0, help="cases to run (0: until --budget)")
    ap.add_argument("--budget", type=float, default=0, help="seconds to run for (0: --count cases)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--max-rss", type=float, default=2048, help="MiB")
    ap.add_argument("--no-corpus", action="store_true")
    ap.add_argument("--out", default="fuzz-out")
    ap.add_argument("--save-regressions", action="store_true")
    ap.add_argument("--replay", help="a folder of saved recipes (case-*.json) to run again")
    ap.add_argument("--summary", help="write the summary JSON here")
    args = ap.parse_args()
    if not args.count and not args.budget and not args.replay:
        ap.error("give --count, --budget or --replay")
    binary = os.path.abspath(args.binary)
    args.binary = binary
    workdir = tempfile.mkdtemp(prefix="cz-fuzz-")
    regressions = os.path.join(HERE, "regressions") if args.save_regressions else None

    if args.replay:
        cases = []
        skipped = []
        for name in sorted(os.listdir(args.replay)):
            if not name.endswith(".json"):
                continue
            recipe = json.load(open(os.path.join(args.replay, name)))
            path = resolve(recipe["source"])
            if not os.path.exists(path):
                skipped.append(f"{name}: {recipe['source']} is absent (../shared/corpus not here)")
                continue
            cases.append((path, recipe["seed"], recipe.get("mutation"), recipe.get("expect_exit")))
        for line in skipped:
            print("replay: skipped", line)
        if not cases:
            print("replay: no case to run")
    else:
        found = sources(not args.no_corpus)
        cases = None
        print(f"fuzz: {len(found)} sources ({'with' if any('/corpus/' in f for f in found) else 'without'} "
              f"../shared/corpus), seed {args.seed}, binary {binary}", flush=True)

    records = []
    started = time.monotonic()
    lock = threading.Lock()

    def next_case(n):
        if cases is not None:
            return cases[n] if n < len(cases) else None
        if args.count and n >= args.count:
            return None
        if args.budget and time.monotonic() - started > args.budget:
            return None
        return found[n % len(found)], args.seed * 1_000_003 + n, None, None

    counter = iter(range(10**9))

    def work():
        while True:
            with lock:
                n = next(counter)
            case = next_case(n)
            if case is None:
                return
            try:
                rec = run_case(binary, case[0], case[1], workdir, args.timeout, args.max_rss)
                if case[3] is not None and rec.get("exit") != case[3] and not rec.get("problem"):
                    rec["problem"] = f"exit {rec.get('exit')}, where the fixed build exits {case[3]}"
                if case[2] is not None and rec.get("mutation") != case[2]:
                    rec["problem"] = (f"the recipe no longer rebuilds its file (mutate.py changed): it was "
                                      f"'{case[2]}', now '{rec.get('mutation')}'")
            except Exception as e:  # noqa: BLE001 (a harness fault is reported as a problem, not lost)
                rec = {"source": relative(case[0]), "seed": case[1], "problem": f"harness: {e!r}"}
            with lock:
                records.append(rec)
                if rec.get("problem"):
                    save(rec, args.out, regressions)
                    print(f"PROBLEM {rec['source']} seed {rec['seed']} ({rec.get('mutation')}; "
                          f"{rec.get('command')}): {rec['problem']}", flush=True)
                if len(records) % 250 == 0:
                    print(f"fuzz: {len(records)} files, {sum(1 for r in records if r.get('problem'))} problems, "
                          f"{time.monotonic() - started:.0f} s", flush=True)
            if rec.get("_dir"):
                shutil.rmtree(rec["_dir"], ignore_errors=True)

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for f in [pool.submit(work) for _ in range(args.jobs)]:
            f.result()
    shutil.rmtree(workdir, ignore_errors=True)

    summary = summarize(records, args, time.monotonic() - started, "replay" if args.replay else "mutations")
    text = json.dumps(summary, indent=1)
    if args.summary:
        with open(args.summary, "w") as f:
            f.write(text)
    print(f"fuzz: {summary['files']} files in {summary['seconds']} s: {summary['crashes']} crashes, "
          f"{summary['hangs']} hangs, {summary['left_behind']} left behind, {summary['silent_failures']} silent "
          f"failures, {summary['problems']} problems in all; exit codes {summary['exit_codes']}; "
          f"peak RSS {summary['max_rss_mib']} MiB")
    sys.exit(1 if summary["problems"] else 0)


if __name__ == "__main__":
    main()
