#!/usr/bin/env bash
# cmake/ReconfigureWhenInstalled.cmake: after an optional peer is installed below a folder that
# did not exist at configure time, a plain `cmake --build` configures again (and a build with
# nothing installed does not). Usage: reconfigure_when_installed_test.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
source_dir=$1 scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch/root"
peer_file=$scratch/root/opt/peer-1.0/share/peer.txt  # nothing below root/ exists yet
configures() { grep -c configured "$scratch/build/configures.txt"; }
expect() {  # expect N WHAT
  local got; got=$(configures)
  [ "$got" -eq "$1" ] || { echo "FAIL: $2: $got configures, expected $1" >&2; exit 1; }
}

cmake -S "$source_dir/tests/plugins/reconfigure_project" -B "$scratch/build" -G Ninja \
      -DROPECHECK_SOURCE_DIR="$source_dir" -DWATCHED_FILE="$peer_file" >/dev/null
expect 1 "first configure"
cmake --build "$scratch/build" >/dev/null
expect 1 "a build with nothing installed"

sleep 1  # file times: the install must be visibly newer than the configure's outputs
mkdir -p "$(dirname "$peer_file")"
echo "version=1.0" >"$peer_file"
cmake --build "$scratch/build" >/dev/null
expect 2 "the build after the install"
cmake --build "$scratch/build" >/dev/null
expect 2 "the build after that"

sleep 1
echo "version=1.1" >"$peer_file"  # reinstalled in place: the file itself is watched now
cmake --build "$scratch/build" >/dev/null
expect 3 "the build after a reinstall"
echo "PASS: installing the peer made the next build configure again"
