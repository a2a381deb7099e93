# Read by cpack before it packages (CPACK_PROJECT_CONFIG_FILE, cmake/packaging.cmake): refuses a build
# tree whose CLI is not the one to ship, and sets up dpkg-shlibdeps for a cross-build's package.
if(CPACK_ROPECHECK_REFUSE)
  message(FATAL_ERROR "ropecheck: not packaging ${CPACK_ROPECHECK_REFUSE}; package the default preset's "
                      "build (cmake --preset default, docs/packaging.md)")
endif()

# A cross-build's package (cmake/packaging.cmake): dpkg-shlibdeps, which cpack runs, takes the target
# architecture from DEB_HOST_ARCH, as in a Debian cross build.
if(CPACK_ROPECHECK_DEB_HOST_ARCH)
  set(ENV{DEB_HOST_ARCH} ${CPACK_ROPECHECK_DEB_HOST_ARCH})
endif()
