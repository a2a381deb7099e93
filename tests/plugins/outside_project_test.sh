#!/usr/bin/env bash
# find_package(ropecheck) from an outside project: install this build into a scratch prefix, then
# configure, build and ctest plugins/examples/outside-project against it. Its kernel passes the
# test ropecheck_add_plugin_test() registered; built with its bug (OUTSIDE_ROPE_BROKEN), the same
# test must fail, naming the property that caught it. With PYTHON (an interpreter with numpy), the
# installed CLI also verifies the installed numpy example through the installed --python driver.
# The installed ABI 5 example (fused_cache_rope.c) is compiled by hand against the installed
# header, and the installed CLI must list its fused side.
#   tests/plugins/outside_project_test.sh BUILD_DIR SOURCE_DIR [PYTHON]
set -euo pipefail
build=$1 source=$2 python=${3:-}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/prefix" >"$scratch/install.log"
if [ -n "$python" ]; then
  share="$scratch/prefix/share/ropecheck"
  [ -f "$share/python/ropecheck_driver.py" ] || { echo "outside_project_test: no installed --python driver" >&2; exit 1; }
  "$scratch/prefix/bin/ropecheck" verify --python "$share/examples/python/numpy_rope.py:apply" --python-exe "$python" \
    --property oracle_agreement --cases 10 --out "$scratch/python-verify" >"$scratch/python-verify.log" 2>&1 || {
    cat "$scratch/python-verify.log"
    echo "outside_project_test: the installed numpy example did not pass verify --python" >&2
    exit 1
  }
fi
examples="$scratch/prefix/share/ropecheck/examples"
cc -std=c99 -shared -fPIC -O2 -I"$scratch/prefix/include" -I"$examples" "$examples/fused_cache_rope.c" \
  -o "$scratch/fused_cache_rope.so" -lm
"$scratch/prefix/bin/ropecheck" list --json --plugin "$scratch/fused_cache_rope.so" >"$scratch/fused-list.json"
grep -q '"rope_cache"' "$scratch/fused-list.json" || {
  echo "outside_project_test: the installed CLI does not list the ABI 5 example's fused side" >&2
  exit 1
}
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
echo "outside_project_test: the kernel passes, its broken build fails oracle_agreement${python:+; the installed numpy example passes verify --python}"
