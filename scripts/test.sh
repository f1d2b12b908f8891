#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (unit tests and end-to-end tests against the
# ffmpeg/ffprobe CLIs, plus ../shared/corpus when it is present).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
# The checked-in style (.swift-format: 4 spaces, 120 columns), as swift format applies it.
swift format lint --strict --recursive Sources Tests Examples Benchmarks/Sources Package.swift
swift build --build-tests
swift test --skip-build "$@"
