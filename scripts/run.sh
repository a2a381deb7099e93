#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: install what is missing, build (Release with
# debug info), run `ropecheck` (verify every implementation, the mutant kill matrix) into
# reports/out/latest/. Extra arguments go to ropecheck. Exit status is ropecheck's.
#   scripts/run.sh            # the main job
#   scripts/run.sh list       # any subcommand
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)"
exec build/ropecheck "$@"
