#!/usr/bin/env bash
# Builds a real code slowdown for calibrating the gate (scripts/calibrate-gate.sh, CODE_SLOW_BIN):
# this checkout's HEAD with one kernel made to do more work, for the fastest fp32 kernel level
# this machine gates (gate/gated_cases.h):
#   avx512  the register pin in the AVX-512 kernel's rotate_pairs removed
#           (impls/kernels/rope_kernel_avx512_body.h, `asm("" : "+v"(v))`). Without it GCC folds
#           the load of x into both the multiply and the permute: two 512-bit loads per vector
#           where one will do (+10% in cache, bench/README.md);
#   avx2    the AVX2 kernel's row-by-row full-vector loop of the interleaved layout storing
#           through its remainder path (impls/kernels/rope_kernel_avx2.cc): a masked store
#           (vmaskmovps, slow on AMD cores) for fp32, a stack buffer and a copy for fp16. Since
#           single-token calls take rotate_interleaved_heads, decode is no longer slowed by it.
# Usage: scripts/build-code-slowdown.sh [WORK_DIR] [avx512|avx2]
#        (defaults: /tmp/ropecheck-code-slowdown; avx512 where the CPU has AVX-512F, else avx2)
# Prints the path of the slowed ropecheck. Needs a full build (minutes).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/ropecheck-code-slowdown}
level=${2:-$(grep -qw avx512f /proc/cpuinfo && echo avx512 || echo avx2)}
mkdir -p "$work"
if [ ! -d "$work/src" ]; then
  git -C "$repo" worktree add --detach "$work/src" HEAD >/dev/null
fi
case $level in
  avx512)
    body=$work/src/impls/kernels/rope_kernel_avx512_body.h
    grep -q 'asm("" : "+v"(v));' "$body" || { echo "no register pin in $body: nothing to remove" >&2; exit 2; }
    sed -i '/asm("" : "+v"(v));/d' "$body" ;;
  avx2)
    body=$work/src/impls/kernels/rope_kernel_avx2.cc
    full='S::store(x + j, rotate_pairs(S::load(x + j), _mm256_loadu_ps(c + j), _mm256_loadu_ps(s + j)));'
    grep -qF "$full" "$body" || { echo "no full-vector interleaved store in $body: nothing to change" >&2; exit 2; }
    sed -i "s|S::store(x + j, rotate_pairs(S::load(x + j), _mm256_loadu_ps(c + j), _mm256_loadu_ps(s + j)));|S::store_first(x + j, rotate_pairs(S::load(x + j), _mm256_loadu_ps(c + j), _mm256_loadu_ps(s + j)), 8);|" "$body"
    grep -qF "$full" "$body" && { echo "could not change $body" >&2; exit 2; } ;;
  *) echo "level must be avx512 or avx2, got '$level'" >&2; exit 2 ;;
esac
cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DROPECHECK_TORCH_PEERS=OFF >"$work/build.log" 2>&1
cmake --build "$work/build" -j "$(nproc)" --target ropecheck >>"$work/build.log" 2>&1
echo "$work/build/ropecheck"
