#!/usr/bin/env bash
# Builds cropzoom and its tests with a sanitizer and runs the tests that drive every engine path: the serial and
# threaded engines, warps, zoom-out and keyframes, trims, the library API (cancellation), batch (cancellation,
# signals), write errors and signals, live capture, and the unit tests of the queues, the scheduler and the pools.
#
#   bash scripts/sanitize.sh thread     # ThreadSanitizer
#   bash scripts/sanitize.sh address    # AddressSanitizer with LeakSanitizer
#
# Each sanitizer builds in its own folder (.build-thread, .build-address); the end-to-end tests run the sanitized
# cropzoom (CROPZOOM_TEST_BINARY). A report from any process (the test runner or a cropzoom it started) lands in
# .build-KIND/reports/ and fails the run; the reports are printed. Suppressions, each with its reason, are in
# scripts/sanitizers/. Documented in Benchmarks/RELIABILITY.md.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-thread}
case "$kind" in thread | address) ;; *)
    echo "usage: sanitize.sh thread|address" >&2
    exit 2
    ;;
esac
source scripts/setup.sh
scratch=".build-$kind"
reports="$PWD/$scratch/reports"
swift build --build-tests --sanitize="$kind" --scratch-path "$scratch"
rm -rf "$reports"
mkdir -p "$reports"
export CROPZOOM_TEST_BINARY="$PWD/$scratch/debug/cropzoom"
export TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 log_path=$reports/tsan \
suppressions=$PWD/scripts/sanitizers/tsan.supp"
export ASAN_OPTIONS="detect_leaks=1 exitcode=66 log_path=$reports/asan detect_stack_use_after_return=0"
export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp print_suppressions=0"
subset="${CROPZOOM_SANITIZE_FILTER:-CropZoomCoreTests|CropZoomKitTests|EngineTests|LibraryAPITests|BatchTests\
|OutputSafetyTests|AtomicOutputTests|AnimatedZoomTests|WarpTests|ZoomOutTests|TrimTests|LiveTests|PipeTests}"
status=0
swift test --skip-build --scratch-path "$scratch" --filter "$subset" || status=$?
found=$(find "$reports" -type f | wc -l)
if [ "$found" -gt 0 ]; then
    echo "sanitize: $kind: $found report(s):" >&2
    for f in "$reports"/*; do
        echo "== $f" >&2
        head -60 "$f" >&2
    done
    exit 1
fi
echo "sanitize: $kind: no report (tests exit $status)" >&2
exit "$status"
