#!/usr/bin/env bash
# Backfills a performance history from git, as `asv run A..B` does: builds each commit of a range
# side by side (its own worktree and build tree: the recipe of scripts/ci-gate.sh), then runs
# `ropecheck bench` of every built commit in rounds (each commit once per round, the commits in a
# shuffled order, so that a slow minute of the machine falls on several commits instead of lining
# up with one), and records each run with `ropecheck history add`. A commit that does not build,
# or whose bench fails, is skipped with a message. Then `ropecheck history report --dir H` shows
# where a case got slower.
#
# Usage: scripts/history-backfill.sh --dir H [--runs N] A..B
#        scripts/history-backfill.sh --dir H [--runs N] -n COUNT     (the last COUNT commits of HEAD)
#   A..B: the first-parent commits after A up to B (anything `git rev-list` takes); --runs: bench
#   processes per commit (default 3: a step needs two runs on each side to be marked).
# Environment (all optional):
#   BACKFILL_REPO         the git repository (default: the one holding this script)
#   BACKFILL_REV          with -n: where to count back from (default HEAD)
#   BACKFILL_WORK         worktrees, build trees, binaries, runs, logs (default: a fresh temp dir)
#   BACKFILL_CMAKE_ARGS   configure arguments (default: -DCMAKE_BUILD_TYPE=Release -DROPECHECK_WERROR=OFF
#                         -DROPECHECK_TORCH_PEERS=OFF -DBUILD_TESTING=OFF: a warning a newer compiler
#                         finds in an old commit is no reason to skip it)
#   BACKFILL_BENCH_ARGS   bench arguments (default: the fp32, bf16 and fp16 kernels at every level on
#                         an in-cache prefill and a decode, 3 repetitions of 0.05 s, one thread)
#   BACKFILL_RECORDER     the ropecheck that records (it needs `history`, which older commits lack;
#                         default: build/ropecheck beside this script)
#   BACKFILL_CPU          the CPU every bench process is pinned to (default: the highest-numbered
#                         one; empty: not pinned). Pinned, the gate's A/A noise halved (gate/README.md)
#   BACKFILL_INCREMENTAL  1: build the commits one after another in one worktree and build tree
#                         (much faster for neighbouring commits; each commit's binary is still kept)
#   BACKFILL_JOBS         build jobs (default: nproc)
#   BACKFILL_SEED         seed of the rounds' order (default 1)
# Exit: 0 some run recorded; 2 bad usage, or no commit could be built and benched.
set -euo pipefail

usage() { sed -n '10,13p' "$0" >&2; exit 2; }
history=
runs=3
count=
range=
while [ $# -gt 0 ]; do
  case $1 in
    --dir) history=${2:-}; shift 2 || usage ;;
    --runs) runs=${2:-}; shift 2 || usage ;;
    -n) count=${2:-}; shift 2 || usage ;;
    -h|--help) usage ;;
    *) [ -z "$range" ] || usage; range=$1; shift ;;
  esac
done
[ -n "$history" ] || usage
[ -n "$range" ] || [ -n "$count" ] || usage
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "backfill: --runs must be a positive integer" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
repo=${BACKFILL_REPO:-$here}
work=${BACKFILL_WORK:-$(mktemp -d -t ropecheck-backfill.XXXXXX)}
recorder=$(realpath -m "${BACKFILL_RECORDER:-$here/build/ropecheck}")
read -r -a cmake_args <<< "${BACKFILL_CMAKE_ARGS:--DCMAKE_BUILD_TYPE=Release -DROPECHECK_WERROR=OFF -DROPECHECK_TORCH_PEERS=OFF -DBUILD_TESTING=OFF}"
read -r -a bench_args <<< "${BACKFILL_BENCH_ARGS:---filter ^kernel(_bf16|_fp16)?/[^/]+/(llama3_8b_gqa_prefill512|llama7b_decode_at4095)/interleaved/ --repetitions 3 --min-time 0.05 --threads 1}"
jobs=${BACKFILL_JOBS:-$(nproc)}
seed=${BACKFILL_SEED:-1}
cpu=${BACKFILL_CPU-$(( $(nproc) - 1 ))}
history=$(realpath -m "$history")

if ! "$recorder" history add --help >/dev/null 2>&1; then
  echo "backfill: $recorder cannot record (no \`history\` command): build this checkout first, or set BACKFILL_RECORDER" >&2
  exit 2
fi
if [ -n "$count" ]; then
  [[ "$count" =~ ^[1-9][0-9]*$ ]] || { echo "backfill: -n must be a positive integer" >&2; exit 2; }
  commits=$(git -C "$repo" rev-list --first-parent -n "$count" "${BACKFILL_REV:-HEAD}" | tac) || exit 2
else
  commits=$(git -C "$repo" rev-list --first-parent --reverse "$range") || exit 2
fi
[ -n "$commits" ] || { echo "backfill: no commit in ${range:-the last $count}" >&2; exit 2; }
mkdir -p "$work/logs" "$work/bin" "$work/runs"
pin=()
if [ -n "$cpu" ] && command -v taskset >/dev/null; then pin=(taskset -c "$cpu"); fi
echo "backfill: $(wc -w <<< "$commits") commit(s) of $repo into $history, $runs run(s) each; work in $work" >&2

worktrees=()
cleanup() {
  for tree in "${worktrees[@]}"; do git -C "$repo" worktree remove --force "$tree" >/dev/null 2>&1 || true; done
  return 0
}
trap cleanup EXIT

build() {  # build SHA: configure and build its ropecheck; the binary to $work/bin/SHA/ropecheck
  local sha=$1 src build log=$work/logs/build-${1:0:12}.log
  if [ "${BACKFILL_INCREMENTAL:-0}" = 1 ]; then
    src=$work/src/shared build=$work/build/shared
    if [ -d "$src" ]; then
      git -C "$src" checkout -q --detach "$sha" >"$log" 2>&1 || return 1
    else
      git -C "$repo" worktree add -q --detach "$src" "$sha" >"$log" 2>&1 || return 1
      worktrees+=("$src")
    fi
  else
    src=$work/src/${sha:0:12} build=$work/build/${sha:0:12}
    git -C "$repo" worktree add -q --detach --force "$src" "$sha" >"$log" 2>&1 || return 1
    worktrees+=("$src")
  fi
  # Configured at every commit: the build records its commit at configure time.
  cmake -S "$src" -B "$build" "${cmake_args[@]}" >>"$log" 2>&1 || return 1
  cmake --build "$build" --target ropecheck -j "$jobs" >>"$log" 2>&1 || return 1
  mkdir -p "$work/bin/$sha"
  cp "$build/ropecheck" "$work/bin/$sha/ropecheck"
}

built=()
skipped=()
for sha in $commits; do
  t0=$(date +%s)
  if build "$sha"; then
    built+=("$sha")
    echo "backfill: built ${sha:0:12} in $(( $(date +%s) - t0 )) s" >&2
  else
    skipped+=("${sha:0:12} (does not build)")
    echo "backfill: ${sha:0:12} does not build ($work/logs/build-${sha:0:12}.log): skipped" >&2
  fi
done
[ ${#built[@]} -gt 0 ] || { echo "backfill: no commit built" >&2; exit 2; }

recorded=0
declare -A failed=()
for round in $(seq 1 "$runs"); do
  # A seeded shuffle (shuf reads too few bytes of a --random-source for small lists to differ).
  order=$(printf '%s\n' "${built[@]}" | awk -v seed=$((seed * 1000 + round)) 'BEGIN { srand(seed) } { print rand() "\t" $0 }' \
            | sort -n | cut -f2)
  for sha in $order; do
    [ -z "${failed[$sha]:-}" ] || continue
    out=$work/runs/${sha:0:12}/run-$round
    log=$work/logs/bench-${sha:0:12}-$round.log
    if ! "${pin[@]}" "$work/bin/$sha/ropecheck" bench "${bench_args[@]}" --out "$out" >"$log" 2>&1; then
      failed[$sha]=1
      skipped+=("${sha:0:12} (bench failed)")
      echo "backfill: the bench of ${sha:0:12} failed ($log): skipped" >&2
      continue
    fi
    if "$recorder" history add --dir "$history" --repo "$repo" --commit "$sha" "$out" >>"$log" 2>&1; then
      recorded=$((recorded + 1))
      echo "backfill: round $round/$runs: ${sha:0:12} recorded" >&2
    else
      echo "backfill: could not record ${sha:0:12} ($log)" >&2
      tail -n 3 "$log" >&2
    fi
  done
done

echo "backfill: $recorded run(s) recorded into $history" >&2
for s in "${skipped[@]}"; do echo "backfill: skipped $s" >&2; done
echo "backfill: next: $recorder history report --dir $history --out <OUT>" >&2
[ "$recorded" -gt 0 ] || exit 2
