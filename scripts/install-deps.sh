#!/usr/bin/env bash
# Installs the Debian 12 packages ropecheck builds and tests with; idempotent (a no-op when all
# are present). Run as root, or with sudo available. Usage: scripts/install-deps.sh
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  librapidcheck-dev libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev libfmt-dev libspdlog-dev libcli11-dev nlohmann-json3-dev libsleef-dev
  python3 python3-jsonschema gnuplot-nox
  valgrind  # the counted measure (`ropecheck count`, `gate --measure counted`): callgrind, and valgrind/callgrind.h for the bench's client requests
  python3-numpy python3-mpmath  # tests/vectors: the NumPy port example, the scaled vectors recomputed in high precision
  chromium  # tests/reports/browser_check.py: the report and history pages loaded in headless chromium over the DevTools protocol (~110 MB of archives with chromium-common)
  libxml2-utils  # xmllint: the tests validate JUnit XML against tests/support/junit.xsd
  help2man  # the man page, generated from the CLI's --help (cmake/man_page.cmake); dpkg-shlibdeps for the .deb comes with build-essential (dpkg-dev)
  debootstrap  # scripts/install-into-fresh-root.sh: the .deb installed on a fresh Debian 12 root
  libtorch-dev  # PyTorch peers (peers/torch): ~160 packages, ~125 MB of archives; optional for the build
  python3-torch  # --python: the PyTorch example (plugins/examples/python/torch_rope.py) beside the libtorch peers; its tests skip without it
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present" >&2
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
