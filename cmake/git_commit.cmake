# Writes OUT (core/build_commit.cc) with the commit SOURCE_DIR is checked out at: run at configure
# time and again at every build (top-level CMakeLists.txt), so a commit made after configuring is
# the one recorded, and `ropecheck --version` never names a stale one. configure_file() rewrites
# OUT only when the commit changed: then one small file recompiles and the CLI relinks.
#   cmake -DSOURCE_DIR=<source tree> -DOUT=<file> -P cmake/git_commit.cmake
# "unknown" outside a git checkout (a source tarball), and also when SOURCE_DIR is not the top of
# the checkout that git finds: a tarball unpacked inside some other repository must not take that
# repository's commit as its own.
set(ROPECHECK_GIT_COMMIT unknown)
find_program(ROPECHECK_GIT git)
if(ROPECHECK_GIT)
  execute_process(COMMAND ${ROPECHECK_GIT} rev-parse --show-toplevel --short=12 HEAD
                  WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE status
                  OUTPUT_VARIABLE lines OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(status EQUAL 0)
    string(REPLACE "\n" ";" lines "${lines}")
    list(GET lines 0 top)
    list(GET lines 1 commit)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SOURCE_DIR}" source)
    if(top STREQUAL source AND commit MATCHES "^[0-9a-f]+$")
      set(ROPECHECK_GIT_COMMIT ${commit})
    endif()
  endif()
endif()
get_filename_component(here ${CMAKE_CURRENT_LIST_FILE} DIRECTORY)
configure_file(${here}/../core/build_commit.cc.in ${OUT} @ONLY)
