#!/usr/bin/env bash
# The C boundary (docs/architecture.md, "The C boundary"): outside the wrapper targets (CropZoomFFmpeg,
# CropZoomSystem) and the C targets, nothing in Sources/ spells a raw pointer or imports a C module. Prints what
# breaks it and exits 1, else exits 0.
set -uo pipefail
cd "$(dirname "$0")/.."
wrappers='^Sources/\(CropZoomFFmpeg\|CropZoomSystem\|CFFmpeg\|CCropZoomSystem\|CPlaneKernels\|CCameraPath\)/'
# One exception, no C in it: repair's AAC frame reader takes the bytes as an UnsafeRawBufferPointer and loads 64-bit
# words from them (Swift only; it reads within the buffer's count).
pure='^Sources/CropZoomCore/Repair/AACSyntax\.swift:'
pointers=$(grep -rn "\.pointee\|Unsafe.*Pointer" Sources/ | grep -v "$wrappers" | grep -v "$pure")
imports=$(grep -rln "^import C[A-Z]\|^@_exported import C[A-Z][A-Z]" Sources/ | grep -v "^Sources/\(CropZoomFFmpeg\|CropZoomSystem\)/")
if [ -n "$pointers$imports" ]; then
    echo "c-boundary: outside the wrapper targets:" >&2
    [ -n "$pointers" ] && echo "$pointers" >&2
    [ -n "$imports" ] && echo "$imports (imports a C module)" >&2
    exit 1
fi
