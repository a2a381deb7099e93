# ropecheck_add_plugin_test(<target> [NAME <test>] [TIMEOUT <seconds>] [ARGS <verify options>...])
#
# Registers a ctest that verifies the plugin library built by <target> (a MODULE or SHARED library
# speaking ropecheck/plugin.h) with every property a plugin can run:
#   ropecheck verify --plugin $<TARGET_FILE:<target>> --out <build dir>/<test> [ARGS...]
# The test passes when verify exits 0; a failed property (exit 1) or a plugin ropecheck refuses
# (exit 2) fails it, with verify's table in the test's output. NAME defaults to
# ropecheck_verify_<target>, TIMEOUT to 600 s; ARGS are more verify options (--cases 1000,
# --property oracle_agreement, --plugin-threads 4, ...).
function(ropecheck_add_plugin_test target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NAME;TIMEOUT" "ARGS")
  if(NOT TARGET ${target})
    message(FATAL_ERROR "ropecheck_add_plugin_test: no target named '${target}'")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ropecheck_add_plugin_test: unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_NAME)
    set(arg_NAME ropecheck_verify_${target})
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 600)
  endif()
  add_test(NAME ${arg_NAME}
           COMMAND ropecheck::ropecheck verify --plugin $<TARGET_FILE:${target}>
                   --out ${CMAKE_CURRENT_BINARY_DIR}/${arg_NAME} ${arg_ARGS})
  set_tests_properties(${arg_NAME} PROPERTIES TIMEOUT ${arg_TIMEOUT} LABELS ropecheck)
endfunction()
