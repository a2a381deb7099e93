#!/usr/bin/env bash
# The tests, from a fresh Debian 12 machine: install what is missing, then build and run ctest
# (docs/architecture.md, "Tests").
#   scripts/test.sh                 the README's test command, two legs on the -O2 build:
#     default  every test, 100 RapidCheck cases per property;
#     scalar   the same build as on a CPU without AVX2/AVX-512 (ROPECHECK_ISA=scalar): the rooms
#              whose results depend on the kernel level (impls, properties, plugins, vectors,
#              bench), less the runs that the cap cannot change (below).
#   scripts/test.sh --sanitizers    the ASan + UBSan build (-O1, test code -O0): every test and
#              every property, 25 cases per property, in gtest shards, but the end-to-end runs of
#              whole commands and scripts (the main job, the CI recipe, the installed package, the
#              Python checks of a command's output), whose parts each run under ASan in their own
#              rooms' tests (tests/CMakeLists.txt).
# Two commands, as C++ projects with sanitizer builds keep them: the sanitizer build alone is
# longer than the rest of the tests, and a contributor runs the first before every push. `.ci/run`
# runs both, one after the other: CI is the full gate.
# Exit status is non-zero if anything fails. While iterating, one room's tests:
#   ctest --preset default -L properties         # labels = rooms
set -euo pipefail
cd "$(dirname "$0")/.."

legs=default
case "${1:-}" in
  "") ;;
  --sanitizers) legs=asan ;;
  *) echo "usage: scripts/test.sh [--sanitizers]" >&2; exit 2 ;;
esac

scripts/install-deps.sh
jobs=$(nproc)
leg() {  # leg NAME COMMAND...: runs one leg and says how long it took
  local name=$1 start=$SECONDS; shift
  echo "=== ${name} ===" >&2
  "$@"
  echo "=== ${name}: $((SECONDS - start)) s ===" >&2
}
build() {  # build PRESET: configure and build one preset
  cmake --preset "$1" >/dev/null && cmake --build --preset "$1" -j"${jobs}"
}

leg "${legs}: configure and build" build "${legs}"
leg "${legs}: ctest" ctest --preset "${legs}" -j"${jobs}"
if [ "${legs}" = default ]; then
  # Again as on a CPU without AVX2/AVX-512: the portable level must carry the suite alone. Left
  # out: the runs this cap cannot change, which would repeat the default leg bit for bit (same
  # seed, same code): a property on a scalar-level implementation, a mutant that is not built on
  # attention (the two attention mutants use the dispatched kernel), the framework peers' and the
  # Python functions' own verification, which runs their code, not ropecheck's kernels, the
  # build machinery (reconfiguring, the outside project's install route) and the plugin probe's
  # threads, which no kernel level touches, the path mutants (built on kernel/scalar, and
  # plugins), the multi-axis and the backward example plugins and their bugs (their own code, no
  # kernel level), and the every-shape run of the kernels, whose levels the cap leaves as they
  # were or skips. The main job as on a scalar-only CPU is the default leg's CliMainJobAtLevel.
  leg "${legs}: ctest as on a scalar-only CPU (ROPECHECK_ISA=scalar)" \
    env ROPECHECK_ISA=scalar ctest --preset "${legs}" -j"${jobs}" -L 'impls|properties|plugins|vectors|bench' \
      -E 'RopeProperty[.]Holds/.*_scalar__|MutantKill[.]IsKilled/mutant_(attention_factor|[b-z])|TorchPeers(Verify|Scan|Threads)[.]|GgmlPeerVerify[.]|Python[A-Za-z]*[.]|ProbeTeam[.]|reconfigure_when_installed|outside_project|PathMutants?[.]|(Mrope|Backward)(PortBug|Plugin)|verify_every_kernel_at_every_model_shape'
fi
