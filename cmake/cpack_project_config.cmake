# Read by cpack before it packages (CPACK_PROJECT_CONFIG_FILE, cmake/packaging.cmake): refuses a build
# tree whose CLI is not the one to ship.
if(CPACK_ROPECHECK_REFUSE)
  message(FATAL_ERROR "ropecheck: not packaging ${CPACK_ROPECHECK_REFUSE}; package the default preset's "
                      "build (cmake --preset default, docs/packaging.md)")
endif()
