#!/usr/bin/env bash
# Installs what cropzoom needs on a Debian machine when it is missing:
#   FFmpeg 5.1's development packages (libavformat, libavcodec, libavutil, libswscale,
#   libswresample, libavdevice for capture devices), zimg's (the scaling kernel), pkg-config,
#   and the ffmpeg/ffprobe CLIs the tests use as an oracle; for the live-capture tests an X server
#   (xvfb, x11-apps' xclock) and a sound server (pulseaudio, pulseaudio-utils); OpenCV's face detector and its
#   cascades for --follow (libopencv-objdetect-dev, opencv-data).
# Idempotent and quiet when everything is there. Needs root (or sudo) only to install.
set -euo pipefail

need=()
for lib in libavformat libavcodec libavutil libswscale libswresample libavdevice; do
    pkg-config --exists "$lib" 2>/dev/null || need+=("${lib}-dev")
done
pkg-config --exists zimg 2>/dev/null || need+=(libzimg-dev)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1 || need+=(ffmpeg)
# --follow finds faces with OpenCV's cascade detector (its headers and libraries) and Debian's trained cascades.
[ -f /usr/include/opencv4/opencv2/objdetect.hpp ] || need+=(libopencv-objdetect-dev)
[ -f /usr/share/opencv4/haarcascades/haarcascade_frontalface_alt2.xml ] || need+=(opencv-data)
# The reframing tests make their ground truth from a real face photo that ships with scikit-image.
[ -f /usr/lib/python3/dist-packages/skimage/data/astronaut.png ] || need+=(python3-skimage)
# The tests watch processes (pgrep: batch children end with their parent) and pin CPUs (taskset).
command -v pgrep >/dev/null 2>&1 || need+=(procps)
command -v taskset >/dev/null 2>&1 || need+=(util-linux)
# The live-capture tests start a desktop: an X server with a clock on it, and a sound server.
command -v Xvfb >/dev/null 2>&1 || need+=(xvfb)
command -v xclock >/dev/null 2>&1 || need+=(x11-apps)
command -v pulseaudio >/dev/null 2>&1 || need+=(pulseaudio)
command -v pacat >/dev/null 2>&1 && command -v pactl >/dev/null 2>&1 || need+=(pulseaudio-utils)
# The completion tests run the scripts in the real shells.
command -v zsh >/dev/null 2>&1 || need+=(zsh)
command -v fish >/dev/null 2>&1 || need+=(fish)
# The HTTP input test asks python3's http.server for headers with curl.
command -v curl >/dev/null 2>&1 || need+=(curl)
# scripts/leaks.sh runs transcodes under valgrind's memcheck.
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)

if ((${#need[@]})); then
    echo "setup: installing ${need[*]}" >&2
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "setup: need root or sudo to install ${need[*]}" >&2; exit 1; }
        SUDO=sudo
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
    for d in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
        [ -x "$d/swift" ] && export PATH="$d:$PATH"
    done
fi
command -v swift >/dev/null 2>&1 || { echo "setup: the Swift toolchain (6.x) is not on PATH" >&2; exit 1; }

# The tests' own measuring tools (Tests/tools/*.py) use numpy.
if ! python3 -c "import numpy" >/dev/null 2>&1; then
    echo "setup: installing numpy for the test tools" >&2
    pip install -q numpy 2>/dev/null || pip3 install -q numpy 2>/dev/null \
        || { ${SUDO:-} apt-get install -y -qq --no-install-recommends python3-numpy >/dev/null; }
fi
