#!/usr/bin/env bash
# Runs cropzoom under valgrind's memcheck three ways — a transcode that finishes (the threaded engine), one
# cancelled by SIGINT mid-run, one that fails mid-run on a write error (a file-size limit: EFBIG) — and fails when
# any run loses memory (definitely or indirectly lost), reads or writes memory it should not, or ends with another
# exit code than the one expected (0, 130, 1). Suppressions, each with its reason: scripts/sanitizers/valgrind.supp.
# Documented in Benchmarks/RELIABILITY.md.
#
#   bash scripts/leaks.sh            # uses .build/debug/cropzoom (built when missing)
#
# valgrind 3.19 (Debian 12) cannot read the DWARF 5 that Swift's compiler writes, so it runs a copy of the binary
# without its debug sections (symbols kept: stacks still name functions).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
[ -x .build/debug/cropzoom ] || swift build --product cropzoom
work=$(mktemp -d /tmp/cropzoom-leaks.XXXXXX)
trap 'rm -rf "$work"' EXIT
strip --strip-debug -o "$work/cropzoom" .build/debug/cropzoom
vg=(valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
    --error-exitcode=99 --suppressions="$PWD/scripts/sanitizers/valgrind.supp" --child-silent-after-fork=yes)
failures=0

check() { # name expected-exit actual-exit log
    local name=$1 want=$2 got=$3 log=$4
    local lost errors
    lost=$(grep -E "definitely lost|indirectly lost" "$log" | sed 's/==[0-9]*==//' | tr -s ' ' | paste -sd';' -)
    errors=$(grep -E "ERROR SUMMARY" "$log" | sed 's/==[0-9]*==//' | tr -s ' ')
    [ -n "$lost" ] || lost=" no leaks possible (every block freed)"
    echo "leaks: $name: exit $got (expected $want);$lost;$errors"
    if [ "$got" != "$want" ]; then
        failures=$((failures + 1))
        echo "leaks: $name: FAILED — log follows" >&2
        sed -n '1,200p' "$log" >&2
    fi
}

# 1. A transcode that finishes, on the threaded engine.
set +e
"${vg[@]}" --log-file="$work/done.log" "$work/cropzoom" samples/std-h264-aac.mp4 -o "$work/done.mp4" --zoom 1.5 \
    --progress none
rc=$?
set -e
check "finished transcode" 0 "$rc" "$work/done.log"

# 2. Cancelled by SIGINT once its temporary output has data (mid-run).
mkdir -p "$work/cancel"
"${vg[@]}" --log-file="$work/cancel.log" "$work/cropzoom" samples/bench-720p.mp4 -o "$work/cancel/out.mp4" \
    --zoom 1.5 --progress none &
pid=$!
for _ in $(seq 600); do
    if [ -n "$(find "$work/cancel" -name '.out.mp4.cropzoom-tmp-*' -size +0 2>/dev/null)" ]; then break; fi
    sleep 0.1
done
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
check "cancelled transcode (SIGINT)" 130 "$rc" "$work/cancel.log"
[ -z "$(ls -A "$work/cancel")" ] || { echo "leaks: the cancelled run left $(ls -A "$work/cancel")" >&2; failures=$((failures + 1)); }

# 3. Fails mid-run: the output may not grow past 64 KiB (RLIMIT_FSIZE), so a write fails with EFBIG.
set +e
(ulimit -f 64 && exec "${vg[@]}" --log-file="$work/fail.log" "$work/cropzoom" samples/bench-720p.mp4 \
    -o "$work/fail.mp4" --zoom 1.5 --progress none)
rc=$?
set -e
check "failed transcode (write error)" 1 "$rc" "$work/fail.log"

if [ "$failures" -gt 0 ]; then
    echo "leaks: $failures case(s) failed" >&2
    exit 1
fi
echo "leaks: clean"
