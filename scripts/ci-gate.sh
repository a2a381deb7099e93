#!/usr/bin/env bash
# The CI recipe for the regression gate (gate/README.md): build the base revision and the change
# from git into two build trees, run `ropecheck verify` on the change, then `ropecheck gate`
# between the two builds. Exit: 0 passed; 1 verify failed or the gate found a REGRESSION;
# 2 bad usage, a build failed or the gate could not judge; 3 the gate was INCONCLUSIVE and
# --fail-on-inconclusive was given (without it INCONCLUSIVE is reported and exits 0).
#
# Usage: scripts/ci-gate.sh [--fail-on-inconclusive] BASE_REV [CHANGE_REV]
#   BASE_REV, CHANGE_REV: anything `git rev-parse` takes (CHANGE_REV defaults to HEAD).
# Environment (all optional):
#   CI_GATE_REPO        the git repository (default: the one holding this script)
#   CI_GATE_WORK        work folder: worktrees, build trees, results (default: a fresh temp dir)
#   CI_GATE_CMAKE_ARGS  extra cmake configure arguments (default: -DROPECHECK_TORCH_PEERS=OFF)
#   CI_GATE_BINARY      the CLI inside a build tree (default: ropecheck)
#   CI_GATE_VERIFY_ARGS extra `verify` arguments
#   CI_GATE_ARGS        extra `gate` arguments (default: --max-seconds 280: rounds are added while
#                       a case is INCONCLUSIVE, the whole gate staying under 5 minutes)
#   CI_GATE_MEASURE     counted (the default where Valgrind is on PATH and both builds can count:
#                       the cases that fit the simulated last level judged on counted cycles at
#                       --threshold 1, the others timed) or timed (every case timed, threshold 5)
# Results: $CI_GATE_WORK/results/{verify.junit.xml,gate.junit.xml,gate.md,gate/gate.json}.
set -euo pipefail

fail_on_inconclusive=0
if [ "${1:-}" = "--fail-on-inconclusive" ]; then fail_on_inconclusive=1; shift; fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  sed -n '8,9p' "$0" >&2
  exit 2
fi
repo=${CI_GATE_REPO:-$(cd "$(dirname "$0")/.." && pwd)}
work=${CI_GATE_WORK:-$(mktemp -d -t ropecheck-ci-gate.XXXXXX)}
binary=${CI_GATE_BINARY:-ropecheck}
read -r -a cmake_args <<< "${CI_GATE_CMAKE_ARGS:--DROPECHECK_TORCH_PEERS=OFF}"
read -r -a verify_args <<< "${CI_GATE_VERIFY_ARGS:-}"
read -r -a gate_args <<< "${CI_GATE_ARGS:---max-seconds 280}"

base=$(git -C "$repo" rev-parse --verify "$1^{commit}") || exit 2
change=$(git -C "$repo" rev-parse --verify "${2:-HEAD}^{commit}") || exit 2
mkdir -p "$work/results"
results=$work/results

cleanup() {
  for side in base change; do
    [ -d "$work/src-$side" ] && git -C "$repo" worktree remove --force "$work/src-$side" >/dev/null 2>&1
  done
  return 0
}
trap cleanup EXIT

build() {  # build SIDE REV: a worktree at REV, configured and built into $work/build-SIDE
  local side=$1 rev=$2
  echo "ci-gate: building $side ($rev)" >&2
  git -C "$repo" worktree add --detach --force "$work/src-$side" "$rev" >/dev/null 2>&1 || return 2
  cmake -S "$work/src-$side" -B "$work/build-$side" -DCMAKE_BUILD_TYPE=Release \
    "${cmake_args[@]}" >"$results/build-$side.log" 2>&1 || return 2
  cmake --build "$work/build-$side" --target ropecheck -j "$(nproc)" >>"$results/build-$side.log" 2>&1 \
    || return 2
}
build base "$base" || { echo "ci-gate: the base build failed ($results/build-base.log)" >&2; exit 2; }
build change "$change" || { echo "ci-gate: the change's build failed ($results/build-change.log)" >&2; exit 2; }
old=$work/build-base/$binary
new=$work/build-change/$binary

echo "ci-gate: verify on the change" >&2
verify_code=0
"$new" verify --out "$results/verify" --junit "$results/verify.junit.xml" "${verify_args[@]}" \
  || verify_code=$?
if [ "$verify_code" -ne 0 ]; then
  echo "ci-gate: verify failed (exit $verify_code); no gate run" >&2
  exit "$verify_code"
fi

# Counted where it can be: Valgrind present and both builds with a counted mode (a base from before
# it has none: then every case is timed, and the output says so).
measure=${CI_GATE_MEASURE:-}
if [ -z "$measure" ]; then
  measure=timed
  if command -v valgrind >/dev/null && "$old" bench --help 2>/dev/null | grep -q -- --counted-calls; then
    measure=counted
  else
    echo "ci-gate: timing every case: $(command -v valgrind >/dev/null || echo 'no valgrind on PATH (Debian package valgrind)')$(command -v valgrind >/dev/null && echo 'the base build has no counted mode')" >&2
  fi
fi
measure_args=()
[ "$measure" = counted ] && measure_args=(--measure counted)
echo "ci-gate: gate $base -> $change ($measure)" >&2
gate_code=0
"$new" gate --base "$old" --current "$new" --out "$results/gate" \
  --junit "$results/gate.junit.xml" --markdown "$results/gate.md" "${measure_args[@]}" "${gate_args[@]}" || gate_code=$?
case $gate_code in
  0) echo "ci-gate: PASS" >&2; exit 0 ;;
  1) echo "ci-gate: REGRESSION" >&2; exit 1 ;;
  3) if [ "$fail_on_inconclusive" -eq 1 ]; then
       echo "ci-gate: INCONCLUSIVE (failing: --fail-on-inconclusive)" >&2; exit 3
     fi
     echo "ci-gate: INCONCLUSIVE (not failing; see $results/gate.md)" >&2; exit 0 ;;
  *) echo "ci-gate: the gate could not judge (exit $gate_code)" >&2; exit 2 ;;
esac
