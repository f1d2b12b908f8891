#!/usr/bin/env bash
# Alternates the FramePoolAndTransform micro-benchmarks of two trees (A B A B), wall clock and mallocs.
set -euo pipefail
old=$1; new=$2; rounds=${3:-3}; filter=${4:-'transform 1080p-zoom1.65 bicubic zimg|transform 1080p rotate 7.5|transform 1080p-zoom1.65-ramp animated|transform 4k-zoom1.65-to-1080p bicubic zimg'}
for r in $(seq 1 $rounds); do
  for side in old new; do
    dir=$old; [ $side = new ] && dir=$new
    (cd $dir/Benchmarks && swift package --allow-writing-to-package-directory benchmark --target FramePoolAndTransform \
      --filter "$filter" --format markdown --metric wallClock --metric mallocCountTotal 2>/dev/null) \
      | awk -v s=$side -v r=$r '/^### /{name=substr($0,5)} /Time \(wall clock\)|Malloc/{gsub(/ +/," "); print s, r, name, "|", $0}'
  done
done
