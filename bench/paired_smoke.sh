#!/usr/bin/env bash
# Paired smoke run: an older commit and this checkout, one notebook at a time, back to back, on one machine.
#
# Why: a smoke notebook's time moves with the machine's load, so "slower than before" is only read from
# two runs made side by side.  Each run starts with an empty LLM cache (every reader call is made) and
# warm embedding vectors (each side keeps its own cache folder, warmed by an untimed first pass when
# --warm is given), then `temporag results diff` says whether any number moved.
#
#   bench/paired_smoke.sh OLD_REV OUT_DIR [--warm] [NOTEBOOK ...]
#
# OUT_DIR/{old,new}/<notebook> link to the runs, OUT_DIR/times.tsv the seconds, OUT_DIR/diff-<nb>.txt
# the diffs.  The old side runs from a git worktree of OLD_REV with this checkout's venv (PYTHONPATH), and
# its cache is TEMPORAG_CACHE_OLD (default: a copy of TEMPORAG_CACHE made on first use, so a cache format
# the old code does not know is rebuilt there, never in yours).  Both sides run the same venv, the same
# llama.cpp build and the same reader weights.
set -euo pipefail
old_rev=${1:?usage: bench/paired_smoke.sh OLD_REV OUT_DIR [--warm] [NOTEBOOK ...]}
out=${2:?usage: bench/paired_smoke.sh OLD_REV OUT_DIR [--warm] [NOTEBOOK ...]}
shift 2
warm=0
if [[ "${1:-}" == "--warm" ]]; then warm=1; shift; fi
notebooks=("$@")
[[ ${#notebooks[@]} -gt 0 ]] || notebooks=(00_tour tecqa star_rag timer4 ia_rag sar leaderboard)

repo=$(cd "$(dirname "$0")/.." && pwd)
bin="${TEMPORAG_VENV:-$repo/.venv}/bin"  # TEMPORAG_VENV: another checkout's venv (a worktree has none)
new_cache=${TEMPORAG_CACHE:-$HOME/.cache/temporag}
old_cache=${TEMPORAG_CACHE_OLD:-$HOME/.cache/temporag-paired-old}
worktree="$out/old-tree"
mkdir -p "$out"
out=$(cd "$out" && pwd)
worktree="$out/old-tree"
if [[ ! -d "$worktree" ]]; then
    git -C "$repo" worktree add --detach "$worktree" "$old_rev" >/dev/null
fi
if [[ ! -d "$old_cache" ]]; then
    mkdir -p "$old_cache"
    cp -a "$new_cache/." "$old_cache/"
fi
export TEMPORAG_DATA=${TEMPORAG_DATA:-$(cd "$repo/../shared/data" && pwd)}

run_side() {  # side notebook cache tree
    local side=$1 nb=$2 cache=$3 tree=$4
    rm -rf "$cache/llm.sqlite" "$cache/llm.sqlite.inflight"  # the answers and the in-flight marks
    (cd "$tree" && TEMPORAG_CACHE="$cache" PYTHONPATH="$tree/lib" \
        "$bin/temporag" reproduce --profile smoke -n "$nb" --force --runs-dir "$out/$side") \
        >"$out/$side-$nb.log" 2>&1 || true
    local dir  # where the run published (00_tour publishes to smoke/tour)
    dir=$(grep -o "→ $out/$side/smoke/[^ ]*" "$out/$side-$nb.log" | tail -1 | cut -d' ' -f2)
    ln -sfn "${dir:-$out/$side/smoke/$nb}" "$out/$side/$nb"
    python3 - "$out/$side/$nb/_run.json" <<'EOF'
import json, sys
try:
    stamp = json.load(open(sys.argv[1]))
    print(f"{stamp.get('seconds', float('nan')):.1f}\t{stamp.get('status', '?')}")
except OSError:
    print("nan\tmissing")
EOF
}

if [[ $warm == 1 ]]; then  # untimed: fills each side's vectors and built structures
    for nb in "${notebooks[@]}"; do
        run_side old "$nb" "$old_cache" "$worktree" >/dev/null
        run_side new "$nb" "$new_cache" "$repo" >/dev/null
    done
fi
printf "notebook\told_s\told_status\tnew_s\tnew_status\n" >"$out/times.tsv"
for nb in "${notebooks[@]}"; do
    old=$(run_side old "$nb" "$old_cache" "$worktree")
    new=$(run_side new "$nb" "$new_cache" "$repo")
    printf "%s\t%s\t%s\n" "$nb" "$old" "$new" | tee -a "$out/times.tsv"
    "$bin/temporag" results diff "$out/old/$nb/results.json" "$out/new/$nb/results.json" \
        >"$out/diff-$nb.txt" 2>&1 || true
done
column -t "$out/times.tsv"
