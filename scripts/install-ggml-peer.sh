#!/usr/bin/env bash
# Installs the optional ggml peer's library (plugins/peers/ggml): llama.cpp's prebuilt CPU ggml
# libraries and, from the very same release, ggml's public headers, into a versioned prefix
# outside the repository. Nothing of llama.cpp enters the repository: both come from two pinned
# npm tarballs of node-llama-cpp, checked against their sha256 here:
#   @node-llama-cpp/linux-x64    the prebuilt libggml*.so for x86-64 (one CPU backend per x86
#   @node-llama-cpp/linux-arm64  level) or for aarch64 (one per Arm level, armv8.0 to armv9.2),
#                                picked at run time by ggml's backend loader
#   node-llama-cpp               llama/gitRelease.bundle: a git bundle of that release's source,
#                                cloned here only to take ggml/include/*.h
# The header version (ggml/CMakeLists.txt) must equal what the library's ggml_version() returns,
# and the library's ggml_commit() the pinned one; both are written to the prefix's manifest,
# which CMake and the report read, with the architecture. An arm64 library on an x86-64 machine
# is asked by a small program cross-compiled with aarch64-linux-gnu-gcc and run under
# qemu-aarch64-static (both from scripts/install-aarch64-deps.sh).
#   scripts/install-ggml-peer.sh                    # this machine's architecture, into
#                                                   # /opt/ropecheck-peers/ggml-0.25.1 (x86-64) or
#                                                   # /opt/ropecheck-peers/ggml-0.25.1-arm64 (aarch64)
#   scripts/install-ggml-peer.sh --arch arm64       # aarch64's, for the aarch64 preset's cross-build
#   scripts/install-ggml-peer.sh [--arch A] PREFIX  # anywhere else (then cmake -DROPECHECK_GGML_ROOT=PREFIX)
# A build looks in the default prefix of the architecture it builds for, and skips a prefix whose
# manifest names another. Needs npm, git and a C compiler; run as root or with sudo for /opt.
# Idempotent: an intact prefix is left as it is. Exit 0 installed or present, 1 a download or a
# check failed, 2 a usage error.
set -euo pipefail

readonly NODE_LLAMA_CPP_VERSION=3.22.1
readonly SOURCE_SHA256=a0d9dd80eacd2ab1cfe71aee57ac8a806487fd70b3d2a38fbec637752d9e5c5f
readonly GGML_VERSION=0.25.1
readonly GGML_COMMIT=0ad4a86   # what the pinned library's ggml_commit() returns
readonly LIBGGML=libggml.v0.5.0.so  # the release's name for libggml (node-llama-cpp's "v0.5.0")

case $(uname -m) in
  x86_64) machine_arch=x64 ;;
  aarch64|arm64) machine_arch=arm64 ;;
  *) machine_arch=$(uname -m) ;;
esac
arch=$machine_arch
while [ $# -gt 0 ]; do
  case $1 in
    --arch) [ $# -ge 2 ] || { echo "install-ggml-peer: --arch needs x64 or arm64" >&2; exit 2; }
            arch=$2; shift 2 ;;
    --arch=*) arch=${1#--arch=}; shift ;;
    -h|--help) sed -n '/^set -euo/q; 2,$p' "$0"; exit 0 ;;
    -*) echo "install-ggml-peer: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
case $arch in
  x64|amd64|x86_64) arch=x64 ;;
  arm64|aarch64) arch=arm64 ;;
  *) echo "install-ggml-peer: --arch $arch: x64 (amd64) or arm64 (aarch64)" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "usage: $0 [--arch x64|arm64] [PREFIX]" >&2; exit 2; }

# Per architecture: node-llama-cpp's package of the prebuilt libraries, its pinned sha256, and the
# default prefix (x86-64's as it was before there was an arm64 one).
case $arch in
  x64)
    binaries_package=@node-llama-cpp/linux-x64
    binaries_sha256=0d953e1503d5ab4608d8ed5b739132308c81ac05ffeb760d2a7f30e08a9f90e0
    default_prefix=/opt/ropecheck-peers/ggml-${GGML_VERSION} ;;
  arm64)
    binaries_package=@node-llama-cpp/linux-arm64
    binaries_sha256=39c76b998e35ed2f236c01472fc79eda0fc558b1c8b535023c2d7ded8c327cc4
    default_prefix=/opt/ropecheck-peers/ggml-${GGML_VERSION}-arm64 ;;
esac
# How the version program is compiled and run: natively, or the arm64 one under QEMU on x86-64.
compiler=(cc) runner=()
if [ "$arch" != "$machine_arch" ]; then
  if [ "$arch" = arm64 ] && [ "$machine_arch" = x64 ]; then
    compiler=(aarch64-linux-gnu-gcc) runner=(qemu-aarch64-static)
  else
    echo "install-ggml-peer: the $arch peer on a $machine_arch machine is not supported" >&2; exit 2
  fi
fi

prefix=${1:-$default_prefix}
manifest=$prefix/share/ropecheck/ggml-peer.txt
# A manifest without an arch line was written before there was an arm64 peer: x64's.
manifest_arch() { local a; a=$(sed -n 's/^arch=//p' "$1"); echo "${a:-x64}"; }

if [ -f "$manifest" ] && [ "$(manifest_arch "$manifest")" != "$arch" ]; then
  echo "install-ggml-peer: $prefix holds the $(manifest_arch "$manifest") peer; give the $arch one another prefix" >&2
  exit 1
fi
if [ -f "$manifest" ] && grep -qx "ggml_version=${GGML_VERSION}" "$manifest" &&
   [ -f "$prefix/lib/$LIBGGML" ] && [ -f "$prefix/include/ggml.h" ]; then
  echo "install-ggml-peer: ggml ${GGML_VERSION} ($arch) already in $prefix" >&2
  exit 0
fi
for tool in npm git "${compiler[0]}" sha256sum ${runner[0]:+"${runner[0]}"}; do
  command -v "$tool" >/dev/null || {
    echo "install-ggml-peer: '$tool' is needed (Debian 12: apt-get install npm git gcc;" \
         "for --arch arm64 on x86-64: scripts/install-aarch64-deps.sh)" >&2
    exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

fetch() {  # fetch PACKAGE SHA256 -> the tarball's file name
  local file
  file=$(npm pack --silent "$1@${NODE_LLAMA_CPP_VERSION}" 2>/dev/null | tail -n1)
  [ -f "$file" ] || { echo "install-ggml-peer: npm pack $1@${NODE_LLAMA_CPP_VERSION} failed" >&2; exit 1; }
  echo "$2  $file" | sha256sum --check --quiet >&2 ||
    { echo "install-ggml-peer: $file does not have the pinned sha256 $2" >&2; exit 1; }
  echo "$file"
}
echo "install-ggml-peer: fetching node-llama-cpp ${NODE_LLAMA_CPP_VERSION} ($binaries_package's prebuilt libraries, and the source bundle)" >&2
binaries=$(fetch "$binaries_package" "$binaries_sha256")
source_tgz=$(fetch node-llama-cpp "$SOURCE_SHA256")

mkdir binaries source
tar -xzf "$binaries" -C binaries
tar -xzf "$source_tgz" -C source package/llama/gitRelease.bundle package/llama/llama.cpp.info.json
release_tag=$(sed -n 's/.*"tag": *"\([^"]*\)".*/\1/p' source/package/llama/llama.cpp.info.json)
git clone --quiet source/package/llama/gitRelease.bundle llama.cpp 2>/dev/null
bundle_commit=$(git -C llama.cpp rev-parse HEAD)
header_version=$(sed -n 's/^set(GGML_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\))/\2/p' llama.cpp/ggml/CMakeLists.txt | paste -sd.)
[ "$header_version" = "$GGML_VERSION" ] ||
  { echo "install-ggml-peer: the bundle's headers are ggml $header_version, expected $GGML_VERSION" >&2; exit 1; }

stage=$work/prefix
mkdir -p "$stage/lib" "$stage/include" "$stage/share/ropecheck"
cp "binaries/package/bins/linux-$arch"/libggml*.so "$stage/lib/"   # libggml, -base, every libggml-cpu-<level>
for header in ggml.h ggml-backend.h ggml-cpu.h ggml-alloc.h; do
  cp "llama.cpp/ggml/include/$header" "$stage/include/"
done
cp llama.cpp/LICENSE "$stage/share/ropecheck/llama.cpp-LICENSE"  # MIT: shipped with the binaries

# The library must say the same version as the headers (and the pinned commit): one tiny program
# compiled against the staged headers, run against the staged libraries. Under QEMU, its libc and
# libstdc++ are the arm64 multiarch packages' (/lib/aarch64-linux-gnu) or, without them, the cross
# compiler's (/usr/aarch64-linux-gnu).
cat > version.c <<'EOF'
#include <stdio.h>
#include "ggml.h"
int main(void) { printf("%s %s\n", ggml_version(), ggml_commit()); return 0; }
EOF
"${compiler[@]}" -I"$stage/include" version.c -L"$stage/lib" -l:"$LIBGGML" -lggml-base -Wl,-rpath,"$stage/lib" -o version
if [ ${#runner[@]} -gt 0 ] && [ ! -e /lib/ld-linux-aarch64.so.1 ]; then
  export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
fi
version_output=$(${runner[@]+"${runner[@]}"} ./version) ||
  { echo "install-ggml-peer: the version program did not run${runner[0]:+ under ${runner[0]}}" >&2; exit 1; }
read -r library_version library_commit <<<"$version_output"
if [ "$library_version" != "$GGML_VERSION" ] || [ "$library_commit" != "$GGML_COMMIT" ]; then
  echo "install-ggml-peer: the library says ggml $library_version ($library_commit); headers and pin say $GGML_VERSION ($GGML_COMMIT)" >&2
  exit 1
fi

# Which CPU backends the release ships (ggml's loader scores each against this CPU and loads the
# best that runs here), and for x86-64 which of them need AVX-512.
variants=$(cd "$stage/lib" && ls libggml-cpu-*.so | sed 's/^libggml-cpu-\(.*\)\.so$/\1/' | paste -sd' ')
avx512=""
if [ "$arch" = x64 ]; then
  avx512=$(cd "$stage/lib" && for f in libggml-cpu-*.so; do
    if { objdump -d --no-show-raw-insn "$f" 2>/dev/null || true; } | grep -q '%zmm'; then echo "${f#libggml-cpu-}"; fi
    done | sed 's/\.so$//' | paste -sd' ')
fi
{
  echo "ggml_version=${library_version}"
  echo "ggml_commit=${library_commit}"
  echo "arch=${arch}"
  echo "llama_cpp_release=${release_tag}"
  echo "llama_cpp_bundle_commit=${bundle_commit}"
  echo "source=npm ${binaries_package}@${NODE_LLAMA_CPP_VERSION} sha256:${binaries_sha256}; npm node-llama-cpp@${NODE_LLAMA_CPP_VERSION} sha256:${SOURCE_SHA256} (llama/gitRelease.bundle: ggml/include)"
  echo "library=${LIBGGML}"
  echo "cpu_variants=${variants}"
  if [ "$arch" = x64 ]; then echo "cpu_variants_with_avx512=${avx512}"; fi
} > "$stage/share/ropecheck/ggml-peer.txt"

sudo_cmd=()
parent=$(dirname "$prefix")
mkdir -p "$parent" 2>/dev/null || true
[ -w "$parent" ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" mkdir -p "$prefix"
"${sudo_cmd[@]}" cp -r "$stage/." "$prefix/"
echo "install-ggml-peer: ggml ${library_version} (${library_commit}, llama.cpp ${release_tag}, ${arch}) in $prefix; CPU backends: ${variants}${avx512:+ (AVX-512: ${avx512})}" >&2
