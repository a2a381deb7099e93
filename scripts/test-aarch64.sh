#!/usr/bin/env bash
# The aarch64 leg, on an x86-64 Debian 12 machine (docs/aarch64.md): cross-build ropecheck for
# aarch64 and run it under QEMU's user mode, as SLEEF, XNNPACK and simde test their ARM code.
#   1. installs what is missing (scripts/install-aarch64-deps.sh) and lets the kernel start aarch64
#      programs through qemu-aarch64 (binfmt_misc), so that a test's child processes run too;
#   2. the uncontracted build (the aarch64 default): the ctest suite under emulation, at QEMU's
#      default CPU (every aarch64 level: neon, and sve at 512 bits);
#   3. verify with the mutants at each SVE vector length, 128, 256 and 512 bits, and as on a CPU
#      without SVE (ROPECHECK_ISA=neon): every real implementation PASSED, every mutant killed;
#   4. the contracted build (ROPECHECK_FP_CONTRACT=fast: a*b + c as one FMA, as GCC does on
#      aarch64 unless told): the same verify, on the same properties.
# Timings under emulation are the emulator's: bench refuses them, and where this leg's tests time
# anything (ROPECHECK_EMULATED_TIMINGS=1) every result is marked emulated.
# Run as root (binfmt, packages). Exit status non-zero if anything fails.
#   scripts/test-aarch64.sh
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 0 ] || { echo "usage: scripts/test-aarch64.sh" >&2; exit 2; }

scripts/install-aarch64-deps.sh
jobs=$(nproc)
leg() {  # leg NAME COMMAND...: runs one step and says how long it took
  local name=$1 start=$SECONDS; shift
  echo "=== aarch64: ${name} ===" >&2
  "$@"
  echo "=== aarch64: ${name}: $((SECONDS - start)) s ===" >&2
}

# The kernel starts an aarch64 ELF through qemu-aarch64 (Debian's qemu-user-static ships the
# entry): tests spawn the CLI and plugin workers, which must run emulated like their parent.
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  /lib/systemd/systemd-binfmt /usr/lib/binfmt.d/qemu-aarch64.conf
fi

verify_every_level() {  # verify_every_level BUILD_DIR NAME: verify --mutants at every level and SVE length
  local cli=$1/ropecheck name=$2 status=0
  for vl_bytes in 16 32 64; do
    echo "--- ${name}: SVE at $((vl_bytes * 8)) bits" >&2
    QEMU_CPU="max,sve-default-vector-length=${vl_bytes}" "$cli" verify --mutants --out "$1/verify-sve$((vl_bytes * 8))" \
      >"$1/verify-sve$((vl_bytes * 8)).txt" || status=1
    tail -n 4 "$1/verify-sve$((vl_bytes * 8)).txt" >&2
  done
  echo "--- ${name}: as on a CPU without SVE (ROPECHECK_ISA=neon)" >&2
  ROPECHECK_ISA=neon "$cli" verify --mutants --out "$1/verify-neon" >"$1/verify-neon.txt" || status=1
  tail -n 4 "$1/verify-neon.txt" >&2
  return $status
}

build() {  # build PRESET [TARGET...]
  local preset=$1; shift
  cmake --preset "$preset" >/dev/null && cmake --build --preset "$preset" -j"${jobs}" ${1:+--target "$@"}
}

leg "configure and build (uncontracted)" build aarch64
leg "ctest under qemu-aarch64" ctest --preset aarch64 -j"${jobs}"
leg "verify at every level and SVE length (uncontracted)" verify_every_level build-aarch64 uncontracted
leg "configure and build (contracted: ROPECHECK_FP_CONTRACT=fast)" build aarch64-contracted ropecheck
leg "verify at every level and SVE length (contracted)" verify_every_level build-aarch64-contracted contracted
