# ropecheck_reconfigure_when_installed(PATH): the next build re-runs CMake's configure once PATH
# (an optional peer's file, absent or present) is installed or reinstalled, so that
# `cmake --build` picks up a peer a script installed after the build tree was configured. Ninja
# and Make compare the configure's inputs by time: the deepest part of PATH that exists now is
# made one (installing creates or rewrites what lies below it, which changes its time).
# Build-time only: not part of the installed CMake package.
function(ropecheck_reconfigure_when_installed path)
  set(watched ${path})
  while(NOT EXISTS ${watched})
    get_filename_component(parent ${watched} DIRECTORY)
    if(parent STREQUAL watched)
      return()  # a relative path with nothing of it existing: nothing to watch
    endif()
    set(watched ${parent})
  endwhile()
  set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${watched})
endfunction()
