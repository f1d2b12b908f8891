#!/usr/bin/env bash
# Builds cropzoom and its tests with a sanitizer and runs the tests that drive every engine path: the serial and
# threaded engines, warps, zoom-out and keyframes, trims, the library API (cancellation), batch (cancellation,
# signals), write errors and signals, live capture, and the unit tests of the queues, the scheduler and the pools.
#
#   bash scripts/sanitize.sh thread     # ThreadSanitizer
#   bash scripts/sanitize.sh address    # AddressSanitizer with LeakSanitizer
#   bash scripts/sanitize.sh thread --binary   # CI: only cropzoom sanitized, run by the plain test build
#
# With --binary only the cropzoom executable is built with the sanitizer, and the end-to-end suites that drive every
# engine path (CROPZOOM_SANITIZE_FILTER, default below) run it from the plain test build (.build, already built by
# scripts/test.sh): a few minutes instead of a sanitized build of every test target. The in-process tests (library
# API, queues, pools) run sanitized only without --binary.
#
# Each sanitizer builds in its own folder (.build-thread, .build-address); the end-to-end tests run the sanitized
# cropzoom (CROPZOOM_TEST_BINARY). A report from any process (the test runner or a cropzoom it started) lands in
# .build-KIND/reports/ and fails the run; the reports are printed. Suppressions, each with its reason, are in
# scripts/sanitizers/. Documented in Benchmarks/RELIABILITY.md.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-thread}
mode=${2:-all}
case "$kind:$mode" in thread:all | address:all | thread:--binary | address:--binary) ;; *)
    echo "usage: sanitize.sh thread|address [--binary]" >&2
    exit 2
    ;;
esac
source scripts/setup.sh
scratch=".build-$kind"
reports="$PWD/$scratch/reports"
if [ "$mode" = --binary ]; then
    swift build --product cropzoom --sanitize="$kind" --scratch-path "$scratch"
    swift build --build-tests
else
    swift build --build-tests --sanitize="$kind" --scratch-path "$scratch"
fi
rm -rf "$reports"
mkdir -p "$reports"
export CROPZOOM_TEST_BINARY="$PWD/$scratch/debug/cropzoom"
export TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 log_path=$reports/tsan \
suppressions=$PWD/scripts/sanitizers/tsan.supp"
# fast_unwind_on_malloc=0: whole allocation stacks through FFmpeg's libraries (built without frame pointers), so a
# suppression can name the library a leak comes from.
export ASAN_OPTIONS="detect_leaks=1 exitcode=66 log_path=$reports/asan detect_stack_use_after_return=0 \
fast_unwind_on_malloc=0"
export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp print_suppressions=0"
if [ "$mode" = --binary ]; then
    # StabilizeTests: the analysis pass's reader and estimator threads (their queue, pool and results), and the live
    # stabiliser's thread between the decoder and the workers (a device source: UDP is left out under TSan, below).
    # RepairWorkflowTests: a repair's writer thread (BackgroundRemux) with its pool, a full disk and a transcode.
    subset="${CROPZOOM_SANITIZE_FILTER:-EngineTests|TrimTests|WarpTests|ZoomOutTests|AtomicOutputTests|PipeTests\
|StabilizeTests.containers|StabilizeTests.progressPhases|StabilizeTests.whileRecordingDevice|RepairWorkflowTests}"
    tests=.build
else
    subset="${CROPZOOM_SANITIZE_FILTER:-CropZoomCoreTests|CropZoomKitTests|EngineTests|LibraryAPITests|BatchTests\
|OutputSafetyTests|AtomicOutputTests|AnimatedZoomTests|WarpTests|ZoomOutTests|TrimTests|LiveTests|PipeTests}"
    tests=$scratch
fi
# Left out: the tests that make a write fail with a file-size limit (ulimit -f). Under it ThreadSanitizer's own
# shadow-memory access faults (SIGBUS in a dispatch worker's start, before any cropzoom code runs); the full-disk
# test (a small tmpfs: ENOSPC) is the same failure path and runs instead.
# Also left out under ThreadSanitizer: the live tests that read UDP. FFmpeg's UDP input reads on a thread of its
# own that it ends with pthread_cancel while that thread waits in recvfrom; TSan cannot follow a thread cancelled
# inside one of its interceptors and kills the process ("thread T6 finished with ignores enabled", created in
# avformat_open_input) — FFmpeg's design, not a race. The live engine is still run by the TCP, RTMP, RTP, HLS,
# fragment, recovery and device tests.
skip_default=NONE
[ "$kind" = thread ] && skip_default="stageErrorStopsAll|AtomicOutputTests.writeError|networkAtNormalLoad\
|liveMP4OfADTS|udpUnderOverload|liveReencodedAudio|interruptKeepsTheRecording|LiveTests.refusals"
skip="${CROPZOOM_SANITIZE_SKIP:-$skip_default}"
subset="$subset|FaultTests.fullDisk"
status=0
swift test --skip-build --scratch-path "$tests" --filter "$subset" --skip "$skip" || status=$?
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
