#!/usr/bin/env bash
# Every test, from a fresh Debian 12 machine: install what is missing, then build and run ctest:
# the normal build (also as on a scalar-only CPU), and the ASan + UBSan build.
# Exit status is non-zero if anything fails. `.ci/run` runs exactly this.
#   scripts/test.sh              # both builds
#   ROPECHECK_PRESETS=default scripts/test.sh   # one build only, while iterating
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)
for preset in ${ROPECHECK_PRESETS:-default asan}; do
  echo "=== ${preset}: configure, build, test ===" >&2
  cmake --preset "${preset}" >/dev/null
  cmake --build --preset "${preset}" -j"${jobs}"
  ctest --preset "${preset}" -j"${jobs}"
  if [ "${preset}" = default ]; then
    # Again as on a CPU without AVX2/AVX-512: the portable level must carry the whole suite alone.
    echo "=== ${preset}: ctest as on a scalar-only CPU (ROPECHECK_ISA=scalar) ===" >&2
    ROPECHECK_ISA=scalar ctest --preset "${preset}" -j"${jobs}"
  fi
done
