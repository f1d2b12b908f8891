#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (unit tests and end-to-end tests against the
# ffmpeg/ffprobe CLIs, plus ../shared/corpus when it is present).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
# The Slurm tests start the project's private single-node cluster (scripts/slurm.sh); it is stopped at the end
# unless it was already running before the tests.
if ! bash scripts/slurm.sh status >/dev/null 2>&1; then
    trap 'bash scripts/slurm.sh stop >/dev/null 2>&1 || true' EXIT
fi
# The checked-in style (.swift-format: 4 spaces, 120 columns), as swift format applies it.
swift format lint --strict --recursive Sources Tests Examples Benchmarks/Sources Benchmarks/Soak Package.swift
swift build --build-tests
swift test --skip-build "$@"
# The mutation harness, a short run (Benchmarks/RELIABILITY.md: what it checks, how to run it for hours). Seeded
# by the commit: a run is reproducible, and each commit tries other files. Skipped when the tests were filtered.
if [ $# -eq 0 ]; then
    # Every Swift snippet of README.md and docs/, compiled in a package that depends on this checkout by path.
    bash scripts/snippets.sh
    # The checked-in man page (docs/man/cropzoom.1) is what the commands' definitions generate now: regenerated from
    # the build above into a temporary folder and compared (about 1 s); `bash scripts/manpage.sh` updates it.
    bash scripts/manpage.sh --check
    seed=$((16#$(git rev-parse --short=7 HEAD 2>/dev/null || echo 1)))
    python3 Tests/fuzz/harness.py --binary .build/debug/cropzoom --budget "${CROPZOOM_FUZZ_SECONDS:-90}" \
        --seed "$seed" --out .build/fuzz-out
    # valgrind's memcheck on a finished, a cancelled and a failed transcode: nothing lost (about 2 minutes).
    bash scripts/leaks.sh
    # ThreadSanitizer on cropzoom itself, driven by the end-to-end suites of every engine path (about 5 minutes;
    # scripts/sanitize.sh without --binary also runs the in-process tests sanitized: Benchmarks/RELIABILITY.md).
    bash scripts/sanitize.sh thread --binary
    # AddressSanitizer (with LeakSanitizer) on cropzoom, the same suites (about 3 minutes).
    bash scripts/sanitize.sh address --binary
fi
