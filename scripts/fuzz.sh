#!/usr/bin/env bash
# In-process fuzzing with libFuzzer: builds CropZoomFuzz (Tests/fuzz/libfuzzer) with libFuzzer and AddressSanitizer
# (LeakSanitizer included) and runs it for SECONDS (default 300). Each input is read from memory, planned and its
# first 10 frames transcoded on the serial engine to the null output: the job path the command line takes
# (CropZoomKit's FuzzTarget).
#
#   bash scripts/fuzz.sh 1800                     # 30 minutes
#   bash scripts/fuzz.sh 0                        # build only
#   .build-fuzz/debug/CropZoomFuzz CRASH-FILE     # replay one input under the sanitizer
#   .build/debug/CropZoomFuzz FILE|FOLDER…        # the plain build replays without libFuzzer (the tests run it)
#
# It builds in .build-fuzz; the corpus grows in .build-fuzz/corpus across runs, seeded from samples/ (made by
# samples/generate.sh when missing) and Tests/fuzz/libfuzzer-regressions/; what libFuzzer finds (crash-*, leak-*,
# timeout-*, oom-*) goes to .build-fuzz/artifacts/, emptied first, and the log to .build-fuzz/fuzz.log. Prints the
# executions, the coverage and the corpus; exits 1 when an artifact was written. Input size limit: -max_len
# (CROPZOOM_FUZZ_MAX_LEN, default 300000 bytes). Recorded in Benchmarks/RELIABILITY.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
source scripts/setup.sh
scratch=.build-fuzz
corpus="$scratch/corpus"
artifacts="$scratch/artifacts"
log="$scratch/fuzz.log"
max_len=${CROPZOOM_FUZZ_MAX_LEN:-300000}

# The C targets get libFuzzer's coverage instrumentation without its main (-fsanitize=fuzzer-no-link); the Swift
# modules -sanitize=fuzzer, which also links libFuzzer. CropZoomFuzz's own entry starts libFuzzer's driver.
swift build --product CropZoomFuzz --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DCZ_LIBFUZZER -Xcc -fsanitize=fuzzer-no-link,address \
    2>&1 | grep -v "Cannot export local symbol '__asan" # gold's notes on ASan's register-spill helpers
fuzzer="$scratch/debug/CropZoomFuzz"
[ "$seconds" = 0 ] && exit 0

[ -f samples/std-h264-aac.mp4 ] || bash samples/generate.sh
mkdir -p "$corpus"
rm -rf "$artifacts"
mkdir -p "$artifacts"
for f in samples/*.mp4 samples/*.mkv samples/*.mov samples/*.ts samples/*.webm samples/*.m4a \
    Tests/fuzz/libfuzzer-regressions/*; do
    [ -f "$f" ] && cp -n "$f" "$corpus/seed-$(basename "$f")"
done

# A Swift trap goes straight to libFuzzer's handler: Swift's own backtracer, reading other threads' stacks, is
# itself reported by AddressSanitizer (stack-buffer-underflow in memserver_read), which hides the real report.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="detect_leaks=1 detect_stack_use_after_return=0 ${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp print_suppressions=0 ${LSAN_OPTIONS:-}"
echo "fuzz: $fuzzer for $seconds s, corpus $corpus ($(find "$corpus" -type f | wc -l) files)" >&2
status=0
"$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len="$max_len" -print_final_stats=1 \
    -dict=Tests/fuzz/libfuzzer.dict -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1 || status=$?

echo "fuzz: libFuzzer exit $status; log $log" >&2
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$log" | tail -2 >&2 || true
grep -E '^stat::' "$log" >&2 || true
echo "fuzz: corpus $(find "$corpus" -type f | wc -l) files, $(du -sh "$corpus" | cut -f1)" >&2
found=$(find "$artifacts" -type f | wc -l)
if [ "$found" -gt 0 ] || [ "$status" -ne 0 ]; then
    echo "fuzz: $found artifact(s) in $artifacts:" >&2
    ls -l "$artifacts" >&2
    grep -E -A30 '^==[0-9]+==ERROR|^SUMMARY|deadly signal|Fatal error' "$log" | head -80 >&2 || true
    exit 1
fi
echo "fuzz: nothing found" >&2
