#!/usr/bin/env bash
# find_package(ropecheck) from an outside project: install this build into a scratch prefix, then
# configure, build and ctest plugins/examples/outside-project against it. Its kernel passes the
# test ropecheck_add_plugin_test() registered; built with its bug (OUTSIDE_ROPE_BROKEN), the same
# test must fail, naming the property that caught it.
#   tests/plugins/outside_project_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/prefix" >"$scratch/install.log"
for variant in good broken; do
  broken=OFF
  [ "$variant" = broken ] && broken=ON
  cmake -S "$source/plugins/examples/outside-project" -B "$scratch/$variant" \
    -DCMAKE_PREFIX_PATH="$scratch/prefix" -DOUTSIDE_ROPE_BROKEN=$broken >"$scratch/$variant.log"
  cmake --build "$scratch/$variant" >>"$scratch/$variant.log"
done
ctest --test-dir "$scratch/good" --output-on-failure
if ctest --test-dir "$scratch/broken" --output-on-failure >"$scratch/broken-ctest.log" 2>&1; then
  cat "$scratch/broken-ctest.log"
  echo "outside_project_test: the broken kernel's registered test passed" >&2
  exit 1
fi
grep -q "FAILED.*oracle_agreement" "$scratch/broken-ctest.log" || {
  cat "$scratch/broken-ctest.log"
  echo "outside_project_test: the broken kernel failed, but not oracle_agreement" >&2
  exit 1
}
echo "outside_project_test: the kernel passes, its broken build fails oracle_agreement"
