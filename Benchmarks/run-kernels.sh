#!/usr/bin/env bash
# Reruns the "Scaling kernel" measurements of Benchmarks/README.md and prints the table.
#   bash run-kernels.sh [RUNS]   (RUNS: how many times to run KernelQuality and the benchmark
#                                 suites, default 3; the table shows the best run and lists all)
# Raw outputs go to Benchmarks/work/ (git-ignored). About 1.5 minutes per round after the first
# build (which takes a few minutes: the benchmark tool builds in release mode).
set -euo pipefail
cd "$(dirname "$0")"
runs="${1:-3}"
mkdir -p work
rm -f work/benchmark-run*.txt work/kernel-quality-*.csv work/kernel-quality-*.md
swift build -c release --product KernelQuality
for i in $(seq 1 "$runs"); do
    echo "round $i/$runs: KernelQuality (load $(cut -d' ' -f1-3 /proc/loadavg))"
    .build/release/KernelQuality --runs 200 --warmup 20 --csv "work/kernel-quality-$i.csv" > "work/kernel-quality-$i.md"
    echo "round $i/$runs: benchmark suites (load $(cut -d' ' -f1-3 /proc/loadavg))"
    swift package --allow-writing-to-package-directory benchmark --no-progress > "work/benchmark-run$i.txt" 2>&1
done
python3 summarize.py --compact $(for i in $(seq 1 "$runs"); do echo --quality "work/kernel-quality-$i.csv"; done) \
    work/benchmark-run*.txt | tee work/summary.md   # without --compact: every run's median too
