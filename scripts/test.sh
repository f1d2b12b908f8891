#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (unit tests and end-to-end tests against the
# ffmpeg/ffprobe CLIs, plus ../shared/corpus when it is present).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
swift build --build-tests
swift test --skip-build "$@"
