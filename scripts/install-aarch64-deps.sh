#!/usr/bin/env bash
# Installs what the aarch64 cross-build (the `aarch64` preset, cmake/toolchains/aarch64-linux-gnu.cmake)
# needs on a Debian 12 x86-64 machine, and what its package is checked with; idempotent (a no-op
# when all are present). Run as root, or with sudo available. Usage: scripts/install-aarch64-deps.sh
#   - the arm64 architecture for dpkg (multiarch), once;
#   - host (amd64) packages: Debian's cross compiler, QEMU's user mode (static: it also runs inside
#     an arm64 chroot), the build tools, the header-only dependencies (architecture "all", or a header
#     the same for every architecture: valgrind/callgrind.h), dpkg-dev (dpkg-shlibdeps for the .deb),
#     help2man (the man page, from the CLI run under QEMU), debootstrap (the arm64 .deb installed on a
#     fresh arm64 root: scripts/install-into-fresh-root.sh), npm and git (the arm64 ggml peer:
#     scripts/install-ggml-peer.sh --arch arm64);
#   - arm64 packages: every library the build links or compiles against, as arm64 multiarch
#     packages (their libraries under /usr/lib/aarch64-linux-gnu, where dpkg-shlibdeps also finds
#     the arm64 .deb's dependencies).
# It prints what it installs (nothing when all are present).
set -euo pipefail

host_packages=(
  g++-aarch64-linux-gnu binutils-aarch64-linux-gnu  # the cross compiler; aarch64-linux-gnu-objdump and -strip (cpack, dpkg-shlibdeps)
  qemu-user-static  # qemu-aarch64-static: ctest, the man page, the peer's version check; its binfmt entry for the arm64 root
  cmake ninja-build pkg-config dpkg-dev help2man
  libcli11-dev nlohmann-json3-dev  # header-only, architecture "all"
  valgrind  # valgrind/callgrind.h (bench/counted_region.h): one header for every architecture
  debootstrap  # scripts/install-into-fresh-root.sh: an arm64 bookworm root
  git  # scripts/install-ggml-peer.sh --arch arm64 (and npm, below)
)
arm64_packages=(
  librapidcheck-dev libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev libfmt-dev libspdlog-dev libsleef-dev
)

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive

if [ "$(dpkg --print-architecture)" != arm64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "install-aarch64-deps: dpkg --add-architecture arm64" >&2
  "${sudo_cmd[@]}" dpkg --add-architecture arm64
fi

missing=()
for p in "${host_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm as any package provides it (Debian's npm, or a nodejs that bundles it).
command -v npm >/dev/null || missing+=(npm)
for p in "${arm64_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p:arm64" 2>/dev/null | grep -q "install ok installed" || missing+=("$p:arm64")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-aarch64-deps: all ${#host_packages[@]} host and ${#arm64_packages[@]} arm64 packages present" >&2
  exit 0
fi

echo "install-aarch64-deps: installing ${missing[*]}" >&2
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-aarch64-deps: installed ${#missing[@]} packages (and their dependencies)" >&2
