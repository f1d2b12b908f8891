#!/usr/bin/env bash
# Proves that two builds of cropzoom write the same output, at every thread count.
#
#   scripts/compare-builds.sh OLD_REV [NEW_REV] [--threads 1,2,default] [--cases REGEX] [--keep] [--list]
#
# OLD_REV (and NEW_REV when given) is any git revision of this repository: it is checked out in a
# throw-away worktree under ${TMPDIR:-/tmp}/cz-compare/build-<sha> and built there (release,
# product cropzoom); a finished build of the same sha is reused. Without NEW_REV the new side is
# this working tree, uncommitted changes included, built in place (.build/release).
#
# Both binaries then run every case of scripts/compare_builds.py (static, keyframed, warped and
# zoomed-out geometry, trims, 10-bit, 4:4:4, VP9, two audio tracks, rotation metadata, VFR, MPEG-TS
# with a start offset, deinterlacing …) with a lossless encoder at --threads 1, --threads 2 and
# the default, and compare decoded frames (framemd5), every audio packet and the stream
# parameters. One line per case and thread setting, SAME or DIFFERENT (what), then a summary.
# Exit status 0 only if every line is SAME; a failing case's outputs are kept (paths printed).
# The options after the revisions go to compare_builds.py (--help there).
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${TMPDIR:-/tmp}/cz-compare

# --list only lists the cases: nothing to build.
for a in "$@"; do [[ $a == --list ]] && exec python3 "$ROOT/scripts/compare_builds.py" --list; done

# Revisions first, then options for the comparison.
revs=()
while (($#)) && [[ $1 != -* ]]; do
    revs+=("$1")
    shift
done
[[ ${1:-} == -h || ${1:-} == --help ]] && usage
((${#revs[@]} >= 1 && ${#revs[@]} <= 2)) || usage

cd "$ROOT"
source scripts/setup.sh
mkdir -p "$CACHE"

# The swift build lines worth seeing (the static runtime's own link-time notes are not ours).
build_log_tail() { grep -E "error|warning: |Build" "$1" | grep -vF "/swift_static/" | tail -5 >&2 || true; }

# resolve REV: its commit's sha, resolved once (a branch may move while a build runs).
resolve() {
    git rev-parse --verify --quiet "$1^{commit}" || { echo "compare: no such revision: $1" >&2; exit 2; }
}

# build_rev SHA NAME: prints the path of the cropzoom binary built from SHA, in its own worktree.
build_rev() {
    local sha=$1 name=$2 dir log
    dir=$CACHE/build-${sha:0:12}
    log=$CACHE/build-${sha:0:12}.log
    if [[ -f $dir/.cz-compare-built && -x $dir/.build/release/cropzoom ]]; then
        echo "compare: reusing the build of $name (${sha:0:12}) in $dir" >&2
    else
        # A worktree left by an interrupted run is built on; anything else there is replaced.
        if [[ $(git -C "$dir" rev-parse HEAD 2>/dev/null || true) != "$sha" ]]; then
            rm -rf "$dir"
            git worktree prune
            git worktree add --detach --quiet "$dir" "$sha"
        fi
        echo "compare: building $name (${sha:0:12}) in $dir (log: $log)" >&2
        if ! (cd "$dir" && swift build -c release --product cropzoom >"$log" 2>&1); then
            build_log_tail "$log"
            echo "compare: the build of $name failed (log: $log)" >&2
            exit 2
        fi
        touch "$dir/.cz-compare-built"
    fi
    echo "$dir/.build/release/cropzoom"
}

# build_tree: prints the path of the cropzoom binary built from this working tree, in place.
build_tree() {
    local log=$CACHE/build-worktree.log
    echo "compare: building the working tree $ROOT (log: $log)" >&2
    if ! swift build -c release --product cropzoom >"$log" 2>&1; then
        build_log_tail "$log"
        echo "compare: the build of the working tree failed (log: $log)" >&2
        exit 2
    fi
    echo "$(swift build -c release --show-bin-path)/cropzoom"
}

describe_tree() {
    local sha changes
    sha=$(git rev-parse HEAD)
    changes=$(git status --porcelain --untracked-files=normal | wc -l)
    if ((changes)); then echo "$sha + $changes uncommitted change(s)"; else echo "$sha (clean)"; fi
}

started=$SECONDS
old_sha=$(resolve "${revs[0]}")
new_sha=""
if ((${#revs[@]} == 2)); then new_sha=$(resolve "${revs[1]}"); fi
old_bin=$(build_rev "$old_sha" "${revs[0]}")
old_desc="${revs[0]} = $old_sha"
if ((${#revs[@]} == 2)); then
    new_bin=$(build_rev "$new_sha" "${revs[1]}")
    new_desc="${revs[1]} = $new_sha"
else
    new_desc="working tree $ROOT at $(describe_tree)"
    new_bin=$(build_tree)
fi
built=$SECONDS

echo "old: $old_bin"
echo "     $old_desc"
echo "new: $new_bin"
echo "     $new_desc"
echo "builds: $((built - started)) s"
echo

status=0
python3 scripts/compare_builds.py --old "$old_bin" --new "$new_bin" --samples "$ROOT/samples" "$@" || status=$?
echo "total: $((SECONDS - started)) s (builds $((built - started)) s, comparison $((SECONDS - built)) s)"
exit "$status"
