#!/usr/bin/env bash
# The .deb on a fresh Debian 12: a minimal bookworm root (debootstrap --variant=minbase) of the
# package's architecture, the package installed with apt as a user would, then, inside that root:
#   1. `ropecheck --version`;
#   2. `ropecheck` with no arguments in an empty working directory: the report must appear under
#      it (reports/out/latest/) and nothing may be written under /usr;
#   3. the outside-project example (/usr/share/ropecheck/examples/outside-project) configured,
#      built and tested against the installed package (find_package(ropecheck) from /usr).
# Not part of the test suite: it downloads Debian 12 (about 100-300 MB) and takes minutes. Run as
# root, on Debian with debootstrap installed (scripts/install-deps.sh installs it):
#   cmake --build --preset default && cpack --config build/CPackConfig.cmake -B build/package
#   scripts/install-into-fresh-root.sh [--cache DIR] [--keep] build/package/ropecheck_*_amd64.deb
# The arm64 package (the aarch64 preset's, docs/packaging.md) goes into an arm64 root on an x86-64
# machine, every program of it run by QEMU's user mode: debootstrap --foreign, then its second
# stage, apt, the CLI and the outside project's native aarch64 g++ inside the root, emulated (tens
# of minutes). The kernel hands arm64 programs to qemu-aarch64-static through binfmt_misc: the
# script mounts binfmt_misc and registers qemu-user-static's entry (/usr/lib/binfmt.d/qemu-aarch64.conf,
# fix-binary: the interpreter is opened outside the root) where they are missing, and leaves them
# registered, as on a machine where systemd-binfmt did it (scripts/install-aarch64-deps.sh):
#   cpack --config build-aarch64/CPackConfig.cmake -B build-aarch64/package
#   scripts/install-into-fresh-root.sh [--cache DIR] build-aarch64/package/ropecheck_*_arm64.deb
# The root's architecture is the package's (dpkg-deb's Architecture field); --arch ARCH states it
# and must agree. --cache DIR keeps the debootstrapped root (a tarball per architecture) and apt's
# downloads in DIR for the next run; every run still starts from the untouched root. --keep leaves
# the root in place (its path is printed). ROPECHECK_DEBIAN_MIRROR overrides debootstrap's default
# mirror.
set -euo pipefail
cache="" keep=0 arch=""
while [ $# -gt 0 ]; do
  case $1 in
    --cache) cache=$(realpath -m "$2"); shift 2 ;;
    --keep) keep=1; shift ;;
    --arch) arch=$2; shift 2 ;;
    -h|--help) sed -n '/^set -euo/q; 2,$p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--cache DIR] [--keep] [--arch amd64|arm64] ropecheck_VERSION_ARCH.deb" >&2; exit 2; }
deb=$(realpath "$1")
[ -f "$deb" ] || { echo "install-into-fresh-root: no file $deb" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "install-into-fresh-root: run as root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "install-into-fresh-root: install debootstrap" >&2; exit 2; }
say() { echo "=== install-into-fresh-root: $* ($(( SECONDS ))s)"; }

# --- the root's architecture: the package's -----------------------------------------------------
deb_arch=$(dpkg-deb -f "$deb" Architecture)
[ -z "$arch" ] || [ "$arch" = "$deb_arch" ] ||
  { echo "install-into-fresh-root: --arch $arch, but $(basename "$deb") is for $deb_arch" >&2; exit 2; }
arch=$deb_arch
native_arch=$(dpkg --print-architecture)
foreign=0
if [ "$arch" != "$native_arch" ]; then
  foreign=1
  case $arch in
    arm64) qemu_name=aarch64 ;;
    *) echo "install-into-fresh-root: a $arch root on $native_arch is not supported (arm64 is)" >&2; exit 2 ;;
  esac
  # The kernel runs the root's programs through QEMU's user mode: binfmt_misc mounted, and the
  # qemu-user-static entry for the architecture registered and enabled.
  qemu=$(command -v "qemu-$qemu_name-static") ||
    { echo "install-into-fresh-root: qemu-$qemu_name-static is needed (scripts/install-aarch64-deps.sh)" >&2; exit 2; }
  binfmt=/proc/sys/fs/binfmt_misc
  if [ ! -e "$binfmt/register" ]; then
    say "mount -t binfmt_misc binfmt_misc $binfmt"
    mount -t binfmt_misc binfmt_misc "$binfmt"
  fi
  entry=$binfmt/qemu-$qemu_name
  if [ ! -e "$entry" ]; then
    conf=/usr/lib/binfmt.d/qemu-$qemu_name.conf
    [ -f "$conf" ] || { echo "install-into-fresh-root: no $conf (qemu-user-static) to register" >&2; exit 2; }
    say "registering $conf with binfmt_misc"
    grep -v '^[#;]' "$conf" | grep . > "$binfmt/register"
  fi
  [ "$(head -n1 "$entry")" = enabled ] || echo 1 > "$entry"
  [ "$(cat "$binfmt/status")" = enabled ] || echo 1 > "$binfmt/status"
  # Without fix-binary the kernel opens the interpreter inside the root: it is copied there.
  qemu_interpreter=$(sed -n 's/^interpreter //p' "$entry")
  qemu_fixed=0
  sed -n 's/^flags: //p' "$entry" | grep -q F && qemu_fixed=1
  echo "install-into-fresh-root: the root is $arch on $native_arch, its programs run by $qemu_interpreter ($(sed -n 's/^flags: /flags /p' "$entry"))"
fi

root=$(mktemp -d /var/tmp/ropecheck-fresh-root.XXXXXX)
# What runs inside the root runs in its own PID and mount namespaces (inside below), so that the
# root is removed only once nothing runs in it: stopped, this script ends that namespace first.
inner=""
inside() {  # inside COMMAND...: in new mount and PID namespaces, ended with the unshare process
  unshare -m --propagation private --pid --fork --kill-child "$@" &
  inner=$!
  wait "$inner"
  local status=$?
  inner=""
  return "$status"
}
cleanup() {
  if [ -n "$inner" ]; then kill "$inner" 2>/dev/null || true; wait "$inner" 2>/dev/null || true; fi
  if [ "$keep" -eq 1 ]; then echo "install-into-fresh-root: the root is kept in $root"; else rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# --- a fresh bookworm root ---------------------------------------------------------------------------
base_name=bookworm-minbase.tar  # amd64's, as named before there were others
[ "$arch" = amd64 ] || base_name=bookworm-minbase-$arch.tar
base=${cache:+$cache/$base_name}
if [ "$foreign" -eq 1 ] && [ "$qemu_fixed" -eq 0 ]; then
  mkdir -p "$root$(dirname "$qemu_interpreter")" && cp "$qemu" "$root$qemu_interpreter"
fi
if [ -n "$base" ] && [ -f "$base" ]; then
  say "bookworm $arch root from $base"
  tar -xpf "$base" -C "$root"
elif [ "$foreign" -eq 0 ]; then
  say "debootstrap --variant=minbase bookworm"
  debootstrap --variant=minbase bookworm "$root" ${ROPECHECK_DEBIAN_MIRROR:-} >"$root.debootstrap.log" 2>&1 || {
    tail -20 "$root.debootstrap.log"; exit 1; }
  rm -f "$root.debootstrap.log"
else
  # First stage here (downloads and unpacks), second stage inside the root under emulation (every
  # package's maintainer scripts), its mounts (proc) in a private namespace gone when it exits.
  say "debootstrap --arch=$arch --foreign --variant=minbase bookworm (first stage)"
  debootstrap --arch="$arch" --foreign --variant=minbase bookworm "$root" ${ROPECHECK_DEBIAN_MIRROR:-} \
    >"$root.debootstrap.log" 2>&1 || { tail -20 "$root.debootstrap.log"; exit 1; }
  say "debootstrap --second-stage inside the $arch root, emulated"
  inside chroot "$root" /debootstrap/debootstrap --second-stage \
    >>"$root.debootstrap.log" 2>&1 || { tail -20 "$root.debootstrap.log"; exit 1; }
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

# --- inside the root: every mount in a private namespace, gone when it exits (inside) --------------
cat >"$root/tmp/fresh-root-steps.sh" <<'STEPS'
set -euo pipefail
deb=$1
main_job_args=${2:-}
export DEBIAN_FRONTEND=noninteractive PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
say() { echo "=== in the fresh root: $* (${SECONDS}s)"; }
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
ropecheck $main_job_args >/tmp/main-job.out 2>/tmp/main-job.err || { status=$?; tail -20 /tmp/main-job.err; cat /tmp/main-job.out; echo "main job exited $status"; exit 1; }
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
say "all checks passed ($(dpkg --print-architecture), $(uname -m))"
STEPS

apt_archives=()
if [ -n "$cache" ]; then
  mkdir -p "$cache/apt-archives/partial"
  apt_archives=("$cache/apt-archives")
fi
# In an emulated root (another architecture's) the main job runs at 5 cases and without the model
# shapes: the oracle's binary128 long double makes its default an hours-long run under QEMU
# (docs/aarch64.md); what is checked here is the package, not the properties.
main_job_args="" model_shapes=""
if [ "$arch" != "$native_arch" ]; then
  main_job_args="--cases 5" model_shapes=none
fi
say "into the $arch root at $root"
# shellcheck disable=SC2016
inside bash -c '
  set -e
  root=$1 deb=$2 main_job_args=$3 model_shapes=$4 archives=${5:-}
  mount -t proc proc "$root/proc"
  mount -t tmpfs tmpfs "$root/dev/shm" 2>/dev/null || { mkdir -p "$root/dev/shm"; mount -t tmpfs tmpfs "$root/dev/shm"; }
  [ -z "$archives" ] || mount --bind "$archives" "$root/var/cache/apt/archives"
  exec chroot "$root" /usr/bin/env ${model_shapes:+ROPECHECK_MODEL_SHAPES=$model_shapes} \
    /bin/bash /tmp/fresh-root-steps.sh "$deb" "$main_job_args"' \
  fresh-root "$root" "$debname" "$main_job_args" "$model_shapes" "${apt_archives[@]}"
say "done"
