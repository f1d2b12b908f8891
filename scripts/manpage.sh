#!/usr/bin/env bash
# The man page, docs/man/cropzoom.1, is generated from the commands' own definitions (`cropzoom --generate-manual`:
# each command's help as swift-argument-parser prints it, Sources/cropzoom/Output/ManualPage.swift) and checked in, so
# that it can be read without a build (`man -l docs/man/cropzoom.1`) and a change of the commands shows in review.
#
#   bash scripts/manpage.sh            # writes docs/man/cropzoom.1 from the debug build (swift build first)
#   bash scripts/manpage.sh --check    # regenerates it in a temporary folder; exit 1 when it differs (CI)
#
# CROPZOOM_BINARY names another binary (default .build/debug/cropzoom). scripts/install.sh generates the installed
# page the same way, from the binary it installs.
#
# Why not swift-argument-parser's generate-manual plugin (`swift package generate-manual`, 1.8.2)? It builds and
# runs here, offline, but its page drops every non-ASCII character of the help (its escaping keeps `isASCII`
# characters only: "(≥ 0.1" becomes "( 0.1", "1 ≤ I ≤ N" becomes "1  I  N", "1…N" becomes "1N"; 166 characters),
# and `man -l` warns on it ("mdoc warning: Empty input line", for the blank lines of the commands' discussions).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
binary="${CROPZOOM_BINARY:-$root/.build/debug/cropzoom}"
page="$root/docs/man/cropzoom.1"
[ -x "$binary" ] || { echo "manpage: $binary: not built (swift build)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$binary" --generate-manual > "$tmp/cropzoom.1"
if [ "${1:-}" = "--check" ]; then
    if ! diff -u "$page" "$tmp/cropzoom.1" > "$tmp/diff"; then
        head -40 "$tmp/diff" >&2
        echo "manpage: docs/man/cropzoom.1 differs from what the commands' definitions generate (above): run" \
            "bash scripts/manpage.sh and commit the page" >&2
        exit 1
    fi
    echo "manpage: docs/man/cropzoom.1 is current"
else
    mkdir -p "$(dirname "$page")"
    cp "$tmp/cropzoom.1" "$page"
    echo "manpage: wrote docs/man/cropzoom.1"
fi
