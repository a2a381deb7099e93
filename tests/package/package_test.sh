#!/usr/bin/env bash
# The Debian package, built from this build tree and inspected as a user would get it: cpack into a
# scratch folder, then the .deb's control fields (dpkg-deb -f) and file list (dpkg-deb -c), then the
# package unpacked (dpkg-deb -x) and run from there by installed_test.sh: the CLI, the man page and
# the outside-project example built against the unpacked CMake package, not this build tree.
# Where it can (as root, with unshare), installed_test.sh runs with the source and build trees
# hidden under empty mounts, so that a path into them compiled into the CLI would fail it.
#   tests/package/package_test.sh BUILD_DIR SOURCE_DIR VERSION
# Installing into a fresh Debian 12 root with apt: scripts/install-into-fresh-root.sh (docs/packaging.md).
set -euo pipefail
build=$(realpath "$1") source=$(realpath "$2") version=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "package_test: $*" >&2; exit 1; }

cpack --config "$build/CPackConfig.cmake" -B "$scratch/cpack" >"$scratch/cpack.log" 2>&1 || {
  cat "$scratch/cpack.log"; fail "cpack failed"; }
deb=$scratch/cpack/ropecheck_${version}_amd64.deb
[ -f "$deb" ] || { ls "$scratch/cpack"; fail "no ropecheck_${version}_amd64.deb"; }
echo "package_test: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB"

# --- control fields --------------------------------------------------------------------------------
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = ropecheck ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version), project() says $version"
[ "$(field Architecture)" = amd64 ] || fail "Architecture: $(field Architecture)"
[ -n "$(field Maintainer)" ] || fail "no Maintainer"
depends=$(field Depends)
echo "package_test: Depends: $depends"
# shlibdeps found the shared libraries the CLI links; gnuplot is the one added by hand (the report).
for needed in libc6 libstdc++6 libopenblas libspdlog libfmt libsleef libbenchmark gnuplot; do
  [[ "$depends" == *"$needed"* ]] || fail "Depends lacks $needed"
done
# The optional peers are not packaged: neither they nor their frameworks are dependencies.
for peer in torch ggml; do
  [[ "$depends" != *"$peer"* ]] || fail "Depends names $peer: $depends"
done

# --- file list ---------------------------------------------------------------------------------------
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$scratch/files"
for expected in /usr/bin/ropecheck /usr/include/ropecheck/plugin.h /usr/include/ropecheck/attention_plugin.h \
    /usr/lib/cmake/ropecheck/ropecheckConfig.cmake /usr/lib/cmake/ropecheck/ropecheckConfigVersion.cmake \
    /usr/lib/cmake/ropecheck/ropecheckTargets.cmake /usr/lib/cmake/ropecheck/ropecheckAddPluginTest.cmake \
    /usr/share/man/man1/ropecheck.1.gz /usr/share/doc/ropecheck/copyright /usr/share/doc/ropecheck/README.md \
    /usr/share/doc/ropecheck/docs/porting.md /usr/share/ropecheck/examples/good_rope.c \
    /usr/share/ropecheck/examples/neon_rope.c \
    /usr/share/ropecheck/examples/outside-project/CMakeLists.txt; do
  grep -qx "$expected" "$scratch/files" || fail "the package lacks $expected"
done
if grep -v '^/usr/' "$scratch/files" | grep -v '^/$'; then fail "files outside /usr (above)"; fi
# No peer (plugins/peers/: libtorch, ggml) and no built plugin; the PyTorch *example*
# (examples/python/torch_rope.py) is source a user runs, not a peer.
if grep -E '\.so$|peers/|ggml' "$scratch/files"; then fail "a plugin library or a peer is packaged (above)"; fi
echo "package_test: $(grep -cv '/$' "$scratch/files") files, all under /usr"

# --- unpacked: the binary as shipped ------------------------------------------------------------------
root=$scratch/root
dpkg-deb -x "$deb" "$root"
cli=$root/usr/bin/ropecheck
if readelf -S "$cli" | grep -q '\.debug_'; then fail "the packaged CLI is not stripped"; fi
# A path into the trees it was built from, compiled into the CLI, would be a file the installed CLI
# cannot find.
for tree in "$source" "$build"; do
  if grep -qF "$tree" "$cli"; then fail "the packaged CLI names $tree: $(grep -aoF "$tree[^\"]*" "$cli" | head -3)"; fi
done
commit=unknown
if git -C "$source" rev-parse --show-toplevel >/dev/null 2>&1 &&
   [ "$(realpath "$(git -C "$source" rev-parse --show-toplevel)")" = "$source" ]; then
  commit=$(git -C "$source" rev-parse --short=12 HEAD)
fi

# --- run from the unpacked tree, the build and source trees hidden where that can be done -------------
cp "$source/tests/package/installed_test.sh" "$scratch/installed_test.sh"
args=("$scratch/installed_test.sh" "$root" "$version" "$commit" "$scratch/work")
if [ "$(id -u)" -eq 0 ] && unshare -m --propagation private true 2>/dev/null; then
  echo "package_test: running the unpacked package with $source and $build hidden"
  cd "$scratch"
  # shellcheck disable=SC2016
  unshare -m --propagation private bash -c '
    for tree in "$2" "$1"; do mount -t tmpfs -o ro,size=4k hidden "$tree" || exit 1; done
    shift 2; exec bash "$@"' hide "$source" "$build" "${args[@]}"
else
  echo "package_test: not root or no unshare: running the unpacked package with the trees in view"
  cd "$scratch"
  bash "${args[@]}"
fi
