#!/usr/bin/env bash
# Compiles every Swift snippet of README.md and docs/ in a package that depends on this checkout by path, as a user's
# package would (scripts/snippets.py writes it under .build/snippets; the first build compiles CropZoomKit, later
# ones reuse it). Exit 1 when a snippet does not compile or warns, with the compiler's lines; scripts/test.sh runs it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$root/.build/snippets"
mkdir -p "$work"
python3 "$root/scripts/snippets.py" "$root" "$work"
if ! swift build --package-path "$work/app" --scratch-path "$work/build" >"$work/build.log" 2>&1; then
    grep -E "error:|warning:" "$work/build.log" | sort -u >&2 || tail -20 "$work/build.log" >&2
    echo "snippets: a Swift snippet of the docs does not compile (targets above name the file and line)" >&2
    exit 1
fi
echo "snippets: every Swift snippet of the docs compiles"
