#!/usr/bin/env bash
# Builds a real code slowdown for calibrating the gate (scripts/calibrate-gate.sh, CODE_SLOW_BIN):
# this checkout's HEAD with the register pin in the AVX-512 kernel's rotate_pairs removed
# (impls/kernels/rope_kernel_avx512_body.h, `asm("" : "+v"(v))`). Without it GCC folds the load
# of x into both the multiply and the permute: two 512-bit loads per vector where one will do, so
# the fp32 kernel is slower where loads are the bottleneck (in cache; bench/README.md measured it).
# Usage: scripts/build-code-slowdown.sh [WORK_DIR]   (default /tmp/ropecheck-code-slowdown)
# Prints the path of the slowed ropecheck. Needs a full build (minutes).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/ropecheck-code-slowdown}
mkdir -p "$work"
if [ ! -d "$work/src" ]; then
  git -C "$repo" worktree add --detach "$work/src" HEAD >/dev/null
fi
body=$work/src/impls/kernels/rope_kernel_avx512_body.h
grep -q 'asm("" : "+v"(v));' "$body" || { echo "no register pin in $body: nothing to remove" >&2; exit 2; }
sed -i '/asm("" : "+v"(v));/d' "$body"
cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DROPECHECK_TORCH_PEERS=OFF >"$work/build.log" 2>&1
cmake --build "$work/build" -j "$(nproc)" --target ropecheck >>"$work/build.log" 2>&1
echo "$work/build/ropecheck"
