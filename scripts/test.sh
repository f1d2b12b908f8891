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
# The C boundary: no raw pointer and no C module outside the wrapper targets (docs/architecture.md).
bash scripts/c-boundary.sh
swift build --build-tests
swift test --skip-build "$@"
# The mutation harness, a short run (Benchmarks/RELIABILITY.md: what it checks, how to run it for hours). Seeded
# by the commit: a run is reproducible, and each commit tries other files. Skipped when the tests were filtered.
if [ $# -eq 0 ]; then
    # Every Swift snippet of README.md, docs/ and the DocC articles, compiled in a package that depends on this
    # checkout by path.
    bash scripts/snippets.sh
    # The checked-in man page (docs/man/cropzoom.1) is what the commands' definitions generate now: regenerated from
    # the build above into a temporary folder and compared (about 1 s); `bash scripts/manpage.sh` updates it.
    bash scripts/manpage.sh --check
    # The stabilisation yardsticks the StabilizeTests measure with (Tests/tools/shake.py and stability.py) checked
    # against each other: the motion found again from the pixels, and a check that can fail (about 40 s).
    python3 Tests/tools/test_stability.py
    # The reframing yardstick (issue 30, ahead of the feature): reframe_measure.py finds ffmpeg crops' windows again from
    # the pixels (fixed, panning, shaking; and a check that can fail; about 20 s).
    python3 Tests/tools/test_reframe.py
    # The library's documentation builds: the DocC catalog (Sources/CropZoomKit/CropZoomKit.docc: the landing page and
    # the article on running a job) and every doc comment, with warnings as errors, so a link to a symbol that is gone
    # fails here (the doc comments had three such links; fixed). CropZoomCore is built with it as combined
    # documentation: the configuration, settings, reports and errors CropZoomKit re-exports are its types, and the
    # plugin's symbol graph of CropZoomKit alone leaves a re-exported module out (its links would not resolve). It
    # must stay short: about 8 s on this 2-core machine once the plugin's tools are built (20 s the first time).
    docc_start=$SECONDS
    swift package generate-documentation --target CropZoomKit --target CropZoomCore \
        --enable-experimental-combined-documentation --warnings-as-errors >.build/docc.log 2>&1 \
        || { grep -E "error|warning" .build/docc.log >&2; echo "docc: the documentation does not build" >&2; exit 1; }
    echo "docc: CropZoomKit's documentation builds ($((SECONDS - docc_start)) s; .build/plugins/Swift-DocC/outputs)"
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
