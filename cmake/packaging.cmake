# The Debian package: `cpack --config build/CPackConfig.cmake` -> ropecheck_<version>_amd64.deb;
# from the aarch64 preset's build-aarch64/, ropecheck_<version>_arm64.deb (docs/packaging.md). Included by the top-level CMakeLists.txt after every install() rule.
#
# What it holds (under /usr): bin/ropecheck; include/ropecheck/plugin.h and attention_plugin.h; lib/cmake/ropecheck/
# (find_package(ropecheck), ropecheck_add_plugin_test); share/ropecheck/examples/ (the example
# plugins' sources, the outside-project example); share/man/man1/ropecheck.1.gz (generated from
# the CLI's own --help: cmake/man_page.cmake); share/doc/ropecheck/ (README, docs/, copyright).
# The peers (PyTorch, ggml) are optional outside code built for this tree's own tests and main
# job: they have no install() rule, so they are not in the package and libtorch or the prebuilt
# ggml never become its dependencies (the installed main job finds no peers and skips them).
#
# The version is project()'s; the binary is the build's own (the default preset: -O2, NDEBUG),
# stripped of its line tables here (CPACK_STRIP_FILES).

set(ROPECHECK_PACKAGE_MAINTAINER "ropecheck maintainers <maintainers@ropecheck.invalid>" CACHE STRING
    "The Maintainer field of the .deb")

# --- what the package installs besides the CLI, the header and the CMake package -------------------
# Example plugins: sources to read and copy (plugin.h is on the include path once installed:
# `cc -shared -fPIC -O2 good_rope.c -o good_rope.so -lm`), and the outside project, which builds
# against the installed package as it stands. Under share/ropecheck/, not share/doc/: minimal
# Debian images drop /usr/share/doc/* at install time (dpkg path-exclude), and these are meant to be
# built, not only read. neon_rope.c (an aarch64 NEON kernel, for ARM porters) is shipped as source
# in every package, though only an aarch64 build compiles it.
install(FILES plugins/examples/example_rope.h plugins/examples/example_scaling.h plugins/examples/good_rope.c
              plugins/examples/broken_rope.c plugins/examples/fp16_rope.c plugins/examples/scaled_rope.c
              plugins/examples/recurrence_rope.c plugins/examples/mrope_rope.c plugins/examples/backward_rope.c
              plugins/examples/fused_cache_rope.c plugins/examples/neon_rope.c
              plugins/examples/example_attention.c
        DESTINATION ${CMAKE_INSTALL_DATADIR}/ropecheck/examples)
install(DIRECTORY plugins/examples/outside-project DESTINATION ${CMAKE_INSTALL_DATADIR}/ropecheck/examples
        PATTERN "build*" EXCLUDE)  # a build of it made in place
# The Python contract's driver (`verify --python MODULE:FUNCTION` runs it in the user's
# interpreter): every plugins/python/*.py, to share/ropecheck/python/, where the installed CLI
# finds it relative to itself (<bindir>/../share/ropecheck/python/, plugins/CMakeLists.txt); and
# the example Python functions beside the example plugins.
install(DIRECTORY plugins/python/ DESTINATION ${CMAKE_INSTALL_DATADIR}/ropecheck/python
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(DIRECTORY plugins/examples/python/ DESTINATION ${CMAKE_INSTALL_DATADIR}/ropecheck/examples/python
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)

# Documentation, with the relative links of the README kept working (docs/, the rooms' READMEs).
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md" PATTERN "*.png")
foreach(room core impls plugins vectors bench properties reports gate history cli)
  install(FILES ${room}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/${room} OPTIONAL)
endforeach()
install(FILES cmake/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
# A native package's changelog.gz (Debian policy 12.7): one entry for this version, dated when the
# build was configured; the history itself is the git log (`ropecheck --version` names the commit).
string(TIMESTAMP ROPECHECK_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(cmake/debian/changelog.in ${CMAKE_BINARY_DIR}/generated/debian/changelog @ONLY)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/generated/debian/changelog.gz
                   COMMAND gzip -9nc ${CMAKE_BINARY_DIR}/generated/debian/changelog
                           > ${CMAKE_BINARY_DIR}/generated/debian/changelog.gz
                   DEPENDS ${CMAKE_BINARY_DIR}/generated/debian/changelog VERBATIM)
add_custom_target(ropecheck_changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/generated/debian/changelog.gz)
install(FILES ${CMAKE_BINARY_DIR}/generated/debian/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The man page (cmake/man_page.cmake): help2man on the built CLI's --help and every subcommand's.
find_program(ROPECHECK_HELP2MAN help2man)
if(ROPECHECK_HELP2MAN AND NOT ROPECHECK_SANITIZE)
  set(man ${CMAKE_BINARY_DIR}/man/ropecheck.1.gz)
  # A cross-build's CLI runs through its emulator (qemu-aarch64): help2man is given a script that
  # starts it so (cmake/toolchains/).
  set(man_cli $<TARGET_FILE:ropecheck>)
  if(CMAKE_CROSSCOMPILING_EMULATOR)
    set(man_cli ${CMAKE_BINARY_DIR}/man/ropecheck-emulated)
    file(GENERATE OUTPUT ${man_cli}
         CONTENT "#!/bin/sh\nexec ${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:ropecheck> \"$@\"\n"
         FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
  endif()
  add_custom_command(OUTPUT ${man}
                     COMMAND ${CMAKE_COMMAND} -DCLI=${man_cli} -DHELP2MAN=${ROPECHECK_HELP2MAN}
                             -DOUT=${man} -DVERSION=${PROJECT_VERSION} -P ${CMAKE_SOURCE_DIR}/cmake/man_page.cmake
                     DEPENDS ropecheck ${CMAKE_SOURCE_DIR}/cmake/man_page.cmake VERBATIM)
  add_custom_target(ropecheck_man_page ALL DEPENDS ${man})
  install(FILES ${man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "ropecheck: no man page (help2man not found, or the sanitizer build); "
                 "scripts/install-deps.sh installs help2man")
endif()

# --- the .deb ---------------------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_PACKAGE_NAME ropecheck)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "property-based verification and benchmarking of transformer RoPE implementations")
set(CPACK_PACKAGE_DESCRIPTION  # lines under 80 columns (Debian policy, lintian)
    "ropecheck cross-checks implementations of rotary positional encodings (RoPE)\n"
    "by properties against a float64 oracle, proves each property can fail with\n"
    "deliberately broken implementations, and benchmarks kernels against the\n"
    "machine's own limits measured in the same run. An outside kernel is verified\n"
    "through a C plugin ABI (ropecheck/plugin.h), and a CMake project registers\n"
    "that verification as one of its tests: find_package(ropecheck) and\n"
    "ropecheck_add_plugin_test().")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "${ROPECHECK_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # ropecheck_<version>_<architecture>.deb
# The Debian architecture is the target's: cpack's default (dpkg --print-architecture) is the build
# machine's, right for the native build only. A cross-build (the aarch64 preset) names it from the
# toolchain's GNU triplet, and dpkg-shlibdeps runs as for a cross package: DEB_HOST_ARCH in cpack's
# environment (cmake/cpack_project_config.cmake) makes it read the binary with the target's objdump
# (aarch64-linux-gnu-objdump) and look for its libraries in the target's multiarch directories
# (/usr/lib/aarch64-linux-gnu), where the arm64 packages of scripts/install-aarch64-deps.sh put
# them and their shlibs/symbols files; Depends is then found, not written by hand.
set(CPACK_ROPECHECK_DEB_HOST_ARCH "")
if(CMAKE_CROSSCOMPILING)
  set(triplet ${CMAKE_LIBRARY_ARCHITECTURE})
  if(NOT triplet)
    set(triplet ${CMAKE_SYSTEM_PROCESSOR}-linux-gnu)
  endif()
  execute_process(COMMAND dpkg-architecture -t${triplet} -qDEB_HOST_ARCH
                  OUTPUT_VARIABLE CPACK_ROPECHECK_DEB_HOST_ARCH OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET RESULT_VARIABLE arch_result)
  if(NOT arch_result EQUAL 0 OR NOT CPACK_ROPECHECK_DEB_HOST_ARCH)
    message(FATAL_ERROR "ropecheck: no Debian architecture for the target ${triplet} "
                        "(dpkg-architecture, from dpkg-dev: scripts/install-aarch64-deps.sh)")
  endif()
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${CPACK_ROPECHECK_DEB_HOST_ARCH})
endif()
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The shared libraries the CLI links (OpenBLAS, spdlog, fmt, SLEEF, Google Benchmark, libstdc++),
# found by dpkg-shlibdeps (dpkg-dev) on the staged binary.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What shlibdeps cannot see: the report (and so the main job) renders its plots by running gnuplot.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "gnuplot-nox | gnuplot")
# The CMake package needs cmake and a compiler for the outside project only; the CLI runs without.
# ropecheckConfig.cmake finds no dependency (the plugin ABI is one C header): nothing -dev.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "cmake, gcc | c-compiler")
# `history add` and the main job's ROPECHECK_HISTORY read the commit of the user's checkout;
# `--python` runs the user's interpreter, which needs numpy; `count` and `gate --measure counted`
# run Valgrind.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "git, python3-numpy, valgrind")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Only an optimised, uninstrumented build is shipped: cpack refuses the others
# (cmake/cpack_project_config.cmake).
set(CPACK_ROPECHECK_REFUSE "")
if(ROPECHECK_SANITIZE)
  set(CPACK_ROPECHECK_REFUSE "the sanitizer build (its CLI needs the ASan runtime)")
elseif(CMAKE_BUILD_TYPE STREQUAL "Debug" OR NOT CMAKE_BUILD_TYPE)
  set(CPACK_ROPECHECK_REFUSE "an unoptimised build (CMAKE_BUILD_TYPE '${CMAKE_BUILD_TYPE}')")
endif()
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_SOURCE_DIR}/cmake/cpack_project_config.cmake)
include(CPack)
