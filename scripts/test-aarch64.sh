#!/usr/bin/env bash
# The aarch64 leg, on an x86-64 Debian 12 machine (docs/aarch64.md): cross-build ropecheck for
# aarch64 and run it under QEMU's user mode, as SLEEF, XNNPACK and simde test their ARM code.
#   1. installs what is missing (scripts/install-aarch64-deps.sh) and lets the kernel start aarch64
#      programs through qemu-aarch64 (binfmt_misc), so that a test's child processes run too;
#   2. the uncontracted build (the aarch64 default) and its ctest suite under emulation at QEMU's
#      default CPU (max: NEON, and SVE at 512 bits), 25 RapidCheck cases per property (below);
#   3. again at SVE 128 and 256 bits (QEMU_CPU=max,sve-default-vector-length=16|32): every test
#      that runs an SVE implementation, its mutant's kill among them; and as on a CPU without SVE
#      (ROPECHECK_ISA=neon): the tests whose results follow the dispatched level;
#   4. the contracted build (ROPECHECK_FP_CONTRACT=fast: a*b + c as one FMA, as GCC does on
#      aarch64 unless told): the properties room, the same properties on every implementation and
#      every mutant's required kills.
# 25 cases (the sanitizer leg's), not 100: under emulation the oracle's long double (binary128 in
# software on aarch64) makes a property case about 27 times as slow as on x86-64 (docs/aarch64.md).
# Timings under emulation are the emulator's: bench refuses them, and where this leg's tests time
# anything (ROPECHECK_EMULATED_TIMINGS=1, the aarch64 test preset's) every result is marked.
# Run as root (binfmt, packages). Exit status non-zero if anything fails.
#   scripts/test-aarch64.sh            the whole leg (about an hour on 2 cores: docs/aarch64.md)
#   scripts/test-aarch64.sh --levels   what CI runs (.ci/run): the tests of every NEON and SVE
#                                      implementation and mutant at 512, 256 and 128 bits, the
#                                      dispatched level as without SVE, and the contracted build's
#                                      property tests of the same implementations (not the rest of
#                                      the suite, whose code is the scalar one x86-64 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
levels_only=0
case "${1:-}" in
  "") ;;
  --levels) levels_only=1 ;;
  *) echo "usage: scripts/test-aarch64.sh [--levels]" >&2; exit 2 ;;
esac

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
# Where the kernel refuses (a container without binfmt_misc), the tests still start the CLI through
# the emulator themselves (ROPECHECK_TEST_EMULATOR, tests/support/test_process.h): a warning only.
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  { mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc; } &&
    /lib/systemd/systemd-binfmt /usr/lib/binfmt.d/qemu-aarch64.conf ||
    echo "test-aarch64: warning: no binfmt_misc entry for qemu-aarch64 (tests start the CLI through qemu themselves)" >&2
fi

build() {  # build PRESET [TARGET...]
  local preset=$1; shift
  cmake --preset "$preset" >/dev/null && cmake --build --preset "$preset" -j"${jobs}" ${1:+--target "$@"}
}

# The ggml peer's aarch64 build (pinned, checksum-checked), verified under emulation beside the own
# kernels in the whole leg, as the x86-64 legs verify its x86-64 build.
[ "$levels_only" -eq 1 ] || scripts/install-ggml-peer.sh --arch arm64
# The tests of an aarch64 level's implementation or mutant: their names hold the level
# (kernel_sve, attention_blas/neon, MutantKill.IsKilled/mutant_sve_tail_predicate_dropped, ...),
# and the outside NEON kernel's (NeonRopePlugin).
readonly level_tests='[/_.](neon|sve)|NeonRope'

leg "configure and build (uncontracted)" build aarch64
if [ "$levels_only" -eq 1 ]; then
  # (not the main job as on a NEON-only CPU, CliMainJobAtLevel_neon: a whole main job, the suite's)
  leg "the NEON and SVE tests (SVE 512 bits)" ctest --preset aarch64 -j"${jobs}" -R "$level_tests" -E '^CliMainJob'
else
  leg "ctest under qemu-aarch64 (SVE 512 bits)" ctest --preset aarch64 -j"${jobs}"
fi
for vl_bytes in 16 32; do
  leg "the SVE tests at $((vl_bytes * 8)) bits" env QEMU_CPU="max,sve-default-vector-length=${vl_bytes}" \
    ctest --preset aarch64 -j"${jobs}" -R '[/_.]sve'
done
leg "as on a CPU without SVE (ROPECHECK_ISA=neon)" env ROPECHECK_ISA=neon \
  ctest --preset aarch64 -j"${jobs}" -R 'IsaDispatch|KernelLevel|Attention|attention_|Softmax'
leg "configure and build (contracted: ROPECHECK_FP_CONTRACT=fast)" build aarch64-contracted properties_tests ropecheck
if [ "$levels_only" -eq 1 ]; then
  leg "the NEON and SVE property tests, contracted" ctest --preset aarch64-contracted -j"${jobs}" -L properties \
    -R "$level_tests"
else
  leg "the properties room, contracted" ctest --preset aarch64-contracted -j"${jobs}" -L properties
fi
