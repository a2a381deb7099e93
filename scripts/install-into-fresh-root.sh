#!/usr/bin/env bash
# The .deb on a fresh Debian 12: a minimal bookworm root (debootstrap --variant=minbase), the
# package installed with apt as a user would, then, inside that root:
#   1. `ropecheck --version`;
#   2. `ropecheck` with no arguments in an empty working directory: the report must appear under
#      it (reports/out/latest/) and nothing may be written under /usr;
#   3. the outside-project example (/usr/share/ropecheck/examples/outside-project) configured,
#      built and tested against the installed package (find_package(ropecheck) from /usr).
# Not part of the test suite: it downloads Debian 12 (about 100-300 MB) and takes minutes. Run as
# root, on Debian with debootstrap installed (scripts/install-deps.sh installs it):
#   cmake --build --preset default && cpack --config build/CPackConfig.cmake -B build/package
#   scripts/install-into-fresh-root.sh [--cache DIR] [--keep] build/package/ropecheck_*_amd64.deb
# --cache DIR keeps the debootstrapped root (a tarball) and apt's downloads in DIR for the next run;
# every run still starts from the untouched root. --keep leaves the root in place (its path is
# printed). ROPECHECK_DEBIAN_MIRROR overrides debootstrap's default mirror.
set -euo pipefail
cache="" keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --cache) cache=$(realpath -m "$2"); shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--cache DIR] [--keep] ropecheck_VERSION_amd64.deb" >&2; exit 2; }
deb=$(realpath "$1")
[ -f "$deb" ] || { echo "install-into-fresh-root: no file $deb" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "install-into-fresh-root: run as root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "install-into-fresh-root: install debootstrap" >&2; exit 2; }
say() { echo "=== install-into-fresh-root: $* ($(( SECONDS ))s)"; }

root=$(mktemp -d /var/tmp/ropecheck-fresh-root.XXXXXX)
cleanup() {
  if [ "$keep" -eq 1 ]; then echo "install-into-fresh-root: the root is kept in $root"; else rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT

# --- a fresh bookworm root ---------------------------------------------------------------------------
base=${cache:+$cache/bookworm-minbase.tar}
if [ -n "$base" ] && [ -f "$base" ]; then
  say "bookworm root from $base"
  tar -xpf "$base" -C "$root"
else
  say "debootstrap --variant=minbase bookworm"
  debootstrap --variant=minbase bookworm "$root" ${ROPECHECK_DEBIAN_MIRROR:-} >"$root.debootstrap.log" 2>&1 || {
    tail -20 "$root.debootstrap.log"; exit 1; }
  rm -f "$root.debootstrap.log"
  if [ -n "$base" ]; then
    mkdir -p "$cache"
    tar -cpf "$base.part" -C "$root" . && mv "$base.part" "$base"
  fi
fi
chmod 755 "$root"  # mktemp's 0700 would keep apt's unprivileged downloader (_apt) out of /
cp /etc/resolv.conf "$root/etc/resolv.conf"
install -m 644 "$deb" "$root/tmp/"
debname=$(basename "$deb")

# --- inside the root: every mount in a private namespace, gone when it exits ----------------------
cat >"$root/tmp/fresh-root-steps.sh" <<'STEPS'
set -euo pipefail
deb=$1
export DEBIAN_FRONTEND=noninteractive PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
say() { echo "=== in the fresh root: $*"; }
cd /tmp
say "apt-get install ./$deb"
apt-get update -qq
apt-get install -y -qq "./$deb" >/tmp/apt-install.log 2>&1 || { cat /tmp/apt-install.log; exit 1; }
echo "installed: $(grep -c '^Setting up' /tmp/apt-install.log) packages, ropecheck $(dpkg-query -W -f='${Version}' ropecheck)"
echo "Depends: $(dpkg-query -W -f='${Depends}' ropecheck)"

say "ropecheck --version"
command -v ropecheck
ropecheck --version

say "ropecheck (the main job) in an empty working directory"
touch /tmp/before-main-job
sleep 1
mkdir /tmp/job && cd /tmp/job
start=$(date +%s)
ropecheck >/tmp/main-job.out 2>/tmp/main-job.err || { status=$?; tail -20 /tmp/main-job.err; cat /tmp/main-job.out; echo "main job exited $status"; exit 1; }
echo "main job: $(( $(date +%s) - start )) s; its summary:"
cat /tmp/main-job.out   # its stdout is the summary alone
for file in report.html report.md verify.json accuracy.json bench.json; do
  [ -f "/tmp/job/reports/out/latest/$file" ] || { echo "no reports/out/latest/$file under the working directory"; exit 1; }
done
echo "written under the working directory: $(find /tmp/job -type f | wc -l) files in /tmp/job/reports/out/latest"
written=$(find /usr /etc /opt /var/lib -xdev -newer /tmp/before-main-job -not -type d 2>/dev/null | head -20)
[ -z "$written" ] || { echo "the main job wrote outside its working directory:"; echo "$written"; exit 1; }
echo "nothing written under /usr, /etc, /opt or /var/lib"

say "the outside-project example against the installed package"
apt-get install -y -qq --no-install-recommends build-essential cmake >/tmp/apt-build.log 2>&1 || { cat /tmp/apt-build.log; exit 1; }
cp -r /usr/share/ropecheck/examples/outside-project /tmp/outside-project
cmake -S /tmp/outside-project -B /tmp/outside-project/build >/tmp/outside.log
grep '^ropecheck_DIR' /tmp/outside-project/build/CMakeCache.txt
cmake --build /tmp/outside-project/build >>/tmp/outside.log
ctest --test-dir /tmp/outside-project/build --output-on-failure | grep -E 'Test +#|tests passed'
say "all checks passed"
STEPS

apt_archives=()
if [ -n "$cache" ]; then
  mkdir -p "$cache/apt-archives/partial"
  apt_archives=("$cache/apt-archives")
fi
say "into the root at $root"
# shellcheck disable=SC2016
unshare -m --propagation private bash -c '
  set -e
  root=$1 deb=$2 archives=${3:-}
  mount -t proc proc "$root/proc"
  mount -t tmpfs tmpfs "$root/dev/shm" 2>/dev/null || { mkdir -p "$root/dev/shm"; mount -t tmpfs tmpfs "$root/dev/shm"; }
  [ -z "$archives" ] || mount --bind "$archives" "$root/var/cache/apt/archives"
  exec chroot "$root" /bin/bash /tmp/fresh-root-steps.sh "$deb"' fresh-root "$root" "$debname" "${apt_archives[@]}"
say "done"
