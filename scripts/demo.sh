#!/usr/bin/env bash
# Sets up, builds cropzoom (release) and zooms the bundled sample 1.65x, as the camera app that
# inspired it did. Prints where the result is.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
# (The static Swift runtime's own link-time notes, from swift_static/, are not ours to show.)
swift build -c release --product cropzoom 2>&1 | grep -E "error|warning: |Compiling|Build" | grep -vF "/swift_static/" | tail -3 >&2 || true
# The face plugin `--follow` opens (OpenCV), beside the binary.
swift build -c release --product CropZoomFaces 2>&1 | grep -E "error|warning: |Build" | tail -1 >&2 || true
mkdir -p out
.build/release/cropzoom samples/std-h264-aac.mp4 -o out/std-h264-aac-zoom.mp4 --zoom 1.65 -y "$@"
echo "result: $(pwd)/out/std-h264-aac-zoom.mp4"
