#!/usr/bin/env bash
# Every test, from a fresh Debian 12 machine: install what is missing, then build and run ctest
# twice — the normal build, and the AddressSanitizer + UndefinedBehaviorSanitizer build.
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
done
