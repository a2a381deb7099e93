#!/usr/bin/env bash
# Every test, from a fresh Debian 12 machine: install what is missing, then build and run ctest in
# three legs (docs/architecture.md, "Tests"):
#   default  -O2 build, every test, 100 RapidCheck cases per property;
#   scalar   the same build as on a CPU without AVX2/AVX-512 (ROPECHECK_ISA=scalar): the rooms whose
#            results depend on the kernel level (impls, properties, plugins, vectors, bench), less
#            the runs that the cap cannot change (below);
#   asan     ASan + UBSan build (-O1, test code -O0), every test and every property, 25 cases per
#            property, in gtest shards, but the end-to-end runs of whole commands and scripts (the
#            main job, the CI recipe, the installed package, the Python checks of a command's
#            output), whose parts each run under ASan in their own rooms' tests (tests/CMakeLists.txt).
# The sanitizer build does not wait for the default leg: it compiles beside it at idle priority
# (SCHED_IDLE), on the CPU time the default build and its tests leave unused (a link, the last
# long compile, a test waiting on a child process or a watchdog), and takes the CPUs whole once
# they are done. The legs' results are the same as one after the other.
# Exit status is non-zero if anything fails. `.ci/run` runs exactly this.
#   scripts/test.sh                              # all three legs
#   ROPECHECK_PRESETS=default scripts/test.sh    # one build only, while iterating
#   ctest --preset default -L properties         # one room's tests (labels = rooms)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
presets=${ROPECHECK_PRESETS:-default asan}
leg() {  # leg NAME COMMAND...: runs one leg and says how long it took
  local name=$1 start=$SECONDS; shift
  echo "=== ${name} ===" >&2
  "$@"
  echo "=== ${name}: $((SECONDS - start)) s ===" >&2
}
build() {  # build PRESET: configure and build one preset
  cmake --preset "$1" >/dev/null && cmake --build --preset "$1" -j"${jobs}"
}

# The sanitizer build in the background when the default leg runs first; its output in a log that
# is printed if it fails.
background_preset=""
if [[ " ${presets} " == *" default "* && " ${presets} " == *" asan "* ]]; then
  background_preset=asan
  mkdir -p build-asan
  background_log=build-asan/test-sh-build.log
  background_start=$SECONDS
  idle=(chrt --idle 0)
  "${idle[@]}" true 2>/dev/null || idle=(nice -n 19)
  # In a process group of its own (job control), so that an early exit (a failed default leg)
  # stops the whole build; not a session of its own (setsid), which the kernel would schedule as
  # a group of its own, as much CPU as the default leg's whatever its priority (autogroup).
  set -m
  "${idle[@]}" bash -c "$(declare -f build); jobs=${jobs}; build asan" >"${background_log}" 2>&1 &
  background_pid=$!
  set +m
  trap 'kill -- -${background_pid} 2>/dev/null || true' EXIT
  echo "=== asan: configure and build, beside the default leg at idle priority (log: ${background_log}) ===" >&2
fi

for preset in ${presets}; do
  if [ "${preset}" = "${background_preset}" ]; then
    waited=$SECONDS
    if ! wait "${background_pid}"; then
      tail -n 60 "${background_log}" >&2
      echo "=== ${preset}: configure and build FAILED (whole log: ${background_log}) ===" >&2
      exit 1
    fi
    trap - EXIT
    echo "=== ${preset}: configure and build: $((SECONDS - background_start)) s since it started, $((SECONDS - waited)) s of it after the default leg ===" >&2
  else
    leg "${preset}: configure and build" build "${preset}"
  fi
  leg "${preset}: ctest" ctest --preset "${preset}" -j"${jobs}"
  if [ "${preset}" = default ]; then
    # Again as on a CPU without AVX2/AVX-512: the portable level must carry the suite alone. Left
    # out: the runs this cap cannot change, which would repeat the default leg bit for bit (same
    # seed, same code): a property on a scalar-level implementation, a mutant that is not built on
    # attention (the two attention mutants use the dispatched kernel), the framework peers' and the
    # Python functions' own verification, which runs their code, not ropecheck's kernels, the
    # build machinery (reconfiguring, the outside project's install route) and the plugin probe's
    # threads, which no kernel level touches, the path mutants (built on kernel/scalar, and
    # plugins), the multi-axis and the backward example plugins and their bugs (their own code, no
    # kernel level), and the every-shape run of the kernels, whose levels the cap leaves as they
    # were or skips.
    leg "${preset}: ctest as on a scalar-only CPU (ROPECHECK_ISA=scalar)" \
      env ROPECHECK_ISA=scalar ctest --preset "${preset}" -j"${jobs}" -L 'impls|properties|plugins|vectors|bench' \
        -E 'RopeProperty[.]Holds/.*_scalar__|MutantKill[.]IsKilled/mutant_(attention_factor|[b-z])|TorchPeers(Verify|Scan|Threads)[.]|GgmlPeerVerify[.]|Python[A-Za-z]*[.]|ProbeTeam[.]|reconfigure_when_installed|outside_project|PathMutants?[.]|(Mrope|Backward)(PortBug|Plugin)|verify_every_kernel_at_every_model_shape'
  fi
done
