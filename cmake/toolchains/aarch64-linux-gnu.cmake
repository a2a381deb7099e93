# Cross-building ropecheck for aarch64 Linux on a Debian 12 x86-64 machine (docs/aarch64.md):
# Debian's cross compiler (g++-aarch64-linux-gnu) and the project's dependencies as arm64
# packages through multiarch (scripts/install-aarch64-deps.sh installs both). The binaries run
# here under QEMU's user mode: CMAKE_CROSSCOMPILING_EMULATOR makes ctest (and every build step
# that runs a built program, such as the man page) start them through qemu-aarch64-static, whose
# CPU and SVE vector length come from QEMU_CPU (scripts/test-aarch64.sh sets it per run).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Libraries and packages only from the arm64 side of the multiarch tree; programs (cmake's own
# helpers, pkg-config) from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
find_program(ROPECHECK_QEMU_AARCH64 qemu-aarch64-static REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${ROPECHECK_QEMU_AARCH64})
