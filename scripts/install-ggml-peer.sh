#!/usr/bin/env bash
# Installs the optional ggml peer's library (plugins/peers/ggml): llama.cpp's prebuilt CPU ggml
# libraries and, from the very same release, ggml's public headers, into a versioned prefix
# outside the repository. Nothing of llama.cpp enters the repository: both come from two pinned
# npm tarballs of node-llama-cpp, checked against their sha256 here:
#   @node-llama-cpp/linux-x64  the prebuilt libggml*.so (one CPU backend per x86 level, picked at
#                              run time by ggml's backend loader)
#   node-llama-cpp             llama/gitRelease.bundle: a git bundle of that release's source,
#                              cloned here only to take ggml/include/*.h
# The header version (ggml/CMakeLists.txt) must equal what the library's ggml_version() returns,
# and the library's ggml_commit() the pinned one; both are written to the prefix's manifest,
# which CMake and the report read.
#   scripts/install-ggml-peer.sh                 # into /opt/ropecheck-peers/ggml-0.25.1
#   scripts/install-ggml-peer.sh PREFIX          # anywhere else (then cmake -DROPECHECK_GGML_ROOT=PREFIX)
# Needs npm, git and a C compiler; run as root or with sudo for /opt. Idempotent: an intact
# prefix is left as it is. Exit 0 installed or present, 1 a download or a check failed.
set -euo pipefail

readonly NODE_LLAMA_CPP_VERSION=3.22.1
readonly BINARIES_SHA256=0d953e1503d5ab4608d8ed5b739132308c81ac05ffeb760d2a7f30e08a9f90e0
readonly SOURCE_SHA256=a0d9dd80eacd2ab1cfe71aee57ac8a806487fd70b3d2a38fbec637752d9e5c5f
readonly GGML_VERSION=0.25.1
readonly GGML_COMMIT=0ad4a86   # what the pinned library's ggml_commit() returns
readonly LIBGGML=libggml.v0.5.0.so  # the release's name for libggml (node-llama-cpp's "v0.5.0")

prefix=${1:-/opt/ropecheck-peers/ggml-${GGML_VERSION}}
manifest=$prefix/share/ropecheck/ggml-peer.txt

if [ -f "$manifest" ] && grep -qx "ggml_version=${GGML_VERSION}" "$manifest" &&
   [ -f "$prefix/lib/$LIBGGML" ] && [ -f "$prefix/include/ggml.h" ]; then
  echo "install-ggml-peer: ggml ${GGML_VERSION} already in $prefix" >&2
  exit 0
fi
for tool in npm git cc sha256sum; do
  command -v "$tool" >/dev/null || { echo "install-ggml-peer: '$tool' is needed (Debian 12: apt-get install npm git gcc)" >&2; exit 1; }
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
echo "install-ggml-peer: fetching node-llama-cpp ${NODE_LLAMA_CPP_VERSION} (prebuilt libraries and source bundle)" >&2
binaries=$(fetch @node-llama-cpp/linux-x64 "$BINARIES_SHA256")
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
cp binaries/package/bins/linux-x64/libggml*.so "$stage/lib/"   # libggml, -base, every libggml-cpu-<level>
for header in ggml.h ggml-backend.h ggml-cpu.h ggml-alloc.h; do
  cp "llama.cpp/ggml/include/$header" "$stage/include/"
done
cp llama.cpp/LICENSE "$stage/share/ropecheck/llama.cpp-LICENSE"  # MIT: shipped with the binaries

# The library must say the same version as the headers (and the pinned commit): one tiny program
# compiled against the staged headers, run against the staged libraries.
cat > version.c <<'EOF'
#include <stdio.h>
#include "ggml.h"
int main(void) { printf("%s %s\n", ggml_version(), ggml_commit()); return 0; }
EOF
cc -I"$stage/include" version.c -L"$stage/lib" -l:"$LIBGGML" -lggml-base -Wl,-rpath,"$stage/lib" -o version
read -r library_version library_commit < <(./version)
if [ "$library_version" != "$GGML_VERSION" ] || [ "$library_commit" != "$GGML_COMMIT" ]; then
  echo "install-ggml-peer: the library says ggml $library_version ($library_commit); headers and pin say $GGML_VERSION ($GGML_COMMIT)" >&2
  exit 1
fi

# Which CPU backends the release ships, and which of them need AVX-512 (ggml's loader scores
# each against this CPU and loads the best that runs here).
variants=$(cd "$stage/lib" && ls libggml-cpu-*.so | sed 's/^libggml-cpu-\(.*\)\.so$/\1/' | paste -sd' ')
avx512=$(cd "$stage/lib" && for f in libggml-cpu-*.so; do
  if { objdump -d --no-show-raw-insn "$f" 2>/dev/null || true; } | grep -q '%zmm'; then echo "${f#libggml-cpu-}"; fi
  done | sed 's/\.so$//' | paste -sd' ')
cat > "$stage/share/ropecheck/ggml-peer.txt" <<EOF
ggml_version=${library_version}
ggml_commit=${library_commit}
llama_cpp_release=${release_tag}
llama_cpp_bundle_commit=${bundle_commit}
source=npm @node-llama-cpp/linux-x64@${NODE_LLAMA_CPP_VERSION} sha256:${BINARIES_SHA256}; npm node-llama-cpp@${NODE_LLAMA_CPP_VERSION} sha256:${SOURCE_SHA256} (llama/gitRelease.bundle: ggml/include)
library=${LIBGGML}
cpu_variants=${variants}
cpu_variants_with_avx512=${avx512}
EOF

sudo_cmd=()
parent=$(dirname "$prefix")
mkdir -p "$parent" 2>/dev/null || true
[ -w "$parent" ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" mkdir -p "$prefix"
"${sudo_cmd[@]}" cp -r "$stage/." "$prefix/"
echo "install-ggml-peer: ggml ${library_version} (${library_commit}, llama.cpp ${release_tag}) in $prefix; CPU backends: ${variants} (AVX-512: ${avx512:-none})" >&2
