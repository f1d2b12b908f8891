#!/usr/bin/env bash
# Installs cropzoom under PREFIX (default /usr/local): the binary in bin/, the face plugin `--follow` opens (built
# beside the binary, libCropZoomFaces.so) in lib/cropzoom/, the samples `cropzoom bench` looks for in
# share/cropzoom/samples, the man page in share/man/man1, and the bash, zsh and fish completions where those shells
# look for them. Builds a release binary first (swift build -c release), or installs CROPZOOM_INSTALL_BINARY when
# that names one (the tests install the debug build). Run scripts/setup.sh first on a fresh machine.
#
#   bash scripts/install.sh                 # /usr/local (as root)
#   bash scripts/install.sh ~/.local        # for one user: add ~/.local/bin to PATH
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="${1:-/usr/local}"
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac

binary="${CROPZOOM_INSTALL_BINARY:-}"
if [ -z "$binary" ]; then
    swift build --package-path "$root" -c release --product cropzoom >&2
    swift build --package-path "$root" -c release --product CropZoomFaces >&2
    binary="$(swift build --package-path "$root" -c release --show-bin-path)/cropzoom"
fi
[ -x "$binary" ] || { echo "install: $binary: not an executable" >&2; exit 1; }
plugin="$(dirname "$binary")/libCropZoomFaces.so"
[ -f "$plugin" ] || { echo "install: $plugin: missing (swift build --product CropZoomFaces)" >&2; exit 1; }

install -d "$prefix/bin" "$prefix/lib/cropzoom" "$prefix/share/cropzoom/samples" "$prefix/share/man/man1" \
    "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
    "$prefix/share/fish/vendor_completions.d"
# A new file renamed into place: a running cropzoom keeps its binary.
install -m 755 "$binary" "$prefix/bin/.cropzoom.new"
mv -f "$prefix/bin/.cropzoom.new" "$prefix/bin/cropzoom"
install -m 755 "$plugin" "$prefix/lib/cropzoom/.libCropZoomFaces.so.new"
mv -f "$prefix/lib/cropzoom/.libCropZoomFaces.so.new" "$prefix/lib/cropzoom/libCropZoomFaces.so"
install -m 644 "$root/samples/bench-720p.mp4" "$root/samples/README.md" "$prefix/share/cropzoom/samples/"
"$prefix/bin/cropzoom" --generate-completion-script bash > "$prefix/share/bash-completion/completions/cropzoom"
"$prefix/bin/cropzoom" --generate-completion-script zsh > "$prefix/share/zsh/site-functions/_cropzoom"
"$prefix/bin/cropzoom" --generate-completion-script fish > "$prefix/share/fish/vendor_completions.d/cropzoom.fish"
"$prefix/bin/cropzoom" --generate-manual > "$prefix/share/man/man1/cropzoom.1"
echo "installed $("$prefix/bin/cropzoom" --version | head -1) in $prefix"
