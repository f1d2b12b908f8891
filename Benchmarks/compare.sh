#!/usr/bin/env bash
# End-to-end comparison with the ffmpeg CLI: builds cropzoom (release), installs the peers when
# missing (Debian ffmpeg 5.1; ffmpeg 9 via pip install imageio-ffmpeg) and writes
# Benchmarks/results.md. Arguments go to compare.py (e.g. --rounds 5 --rows A,B).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
command -v /usr/bin/time >/dev/null 2>&1 || { apt-get install -y -qq time >/dev/null; }
python3 -c "import imageio_ffmpeg" 2>/dev/null || pip install -q imageio-ffmpeg || echo "compare: ffmpeg 9 (imageio-ffmpeg) not available; comparing with ffmpeg 5.1 only" >&2
swift build -c release --product cropzoom 2>&1 | tail -1 >&2
exec python3 Benchmarks/compare.py "$@"
