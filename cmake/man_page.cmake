# Writes OUT (ropecheck.1.gz): the man page, generated from the CLI's own help so that it cannot
# drift from it. help2man (Debian's help2man) formats `ropecheck --help`; a COMMANDS section holds
# the help of every subcommand (and of their subcommands: `history add`, `history report`), found
# by walking the Subcommands lists of CLI11's help. Run by the build (cmake/packaging.cmake):
#   cmake -DCLI=build/ropecheck -DHELP2MAN=/usr/bin/help2man -DOUT=build/man/ropecheck.1.gz \
#         -DVERSION=0.1.0 -P cmake/man_page.cmake
get_filename_component(dir ${OUT} DIRECTORY)
file(MAKE_DIRECTORY ${dir})

# roff: a backslash is \e, a line starting with . or ' would be a request.
function(roff_escape text out_var)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# The names listed under Subcommands: in `CLI <words> --help`.
function(subcommands_of words out_var)
  execute_process(COMMAND ${CLI} ${words} --help OUTPUT_VARIABLE help RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "man_page: `${CLI} ${words} --help` exited ${status}")
  endif()
  set(names "")
  string(REGEX MATCH "\n(SUBCOMMANDS|Subcommands):\n" heading "${help}")  # CLI11 2.x, 2.3+
  string(FIND "${help}" "${heading}" at)
  if(NOT heading)
    set(at -1)
  endif()
  if(at GREATER_EQUAL 0)
    string(SUBSTRING "${help}" ${at} -1 tail)
    string(REPLACE "\n" ";" lines "${tail}")
    foreach(line IN LISTS lines)
      if(line MATCHES "^  ([a-z][a-z0-9_-]*)( |$)")
        list(APPEND names ${CMAKE_MATCH_1})
      endif()
    endforeach()
  endif()
  set(${out_var} "${names}" PARENT_SCOPE)
endfunction()

set(include "[COMMANDS]\nWith no command, \\fBropecheck\\fR runs the main job into \\fIreports/out/latest/\\fR under the current directory. Each command's own help follows.\n")
set(queue "")
subcommands_of("" top)
foreach(name IN LISTS top)
  list(APPEND queue ${name})
endforeach()
while(queue)
  list(POP_FRONT queue words)
  string(REPLACE "/" ";" argv "${words}")
  execute_process(COMMAND ${CLI} ${argv} --help OUTPUT_VARIABLE help RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "man_page: `${CLI} ${argv} --help` exited ${status}")
  endif()
  roff_escape("${help}" help)
  string(REPLACE ";" " " title "${argv}")
  string(APPEND include ".SS \"ropecheck ${title}\"\n.nf\n${help}.fi\n")
  subcommands_of("${argv}" nested)
  foreach(name IN LISTS nested)
    list(APPEND queue "${words}/${name}")
  endforeach()
endwhile()
string(APPEND include [=[
[FILES]
.TP
.I reports/out/latest/
Under the current directory: where the main job, \fBverify\fR, \fBbench\fR and \fBreport\fR write
unless given \fB\-\-out\fR (or read, \fB\-\-in\fR). Nothing is written under the install prefix.
.TP
.I /usr/share/ropecheck/examples/
The example plugins' sources and \fIoutside-project/\fR, a CMake project that verifies its own
kernel with \fBfind_package(ropecheck)\fR and \fBropecheck_add_plugin_test()\fR.
.TP
.I /usr/include/ropecheck/plugin.h
The plugin ABI: the one header an outside kernel compiles against.
[ENVIRONMENT]
.TP
.B ROPECHECK_HISTORY
With a directory, the main job also records its benchmark into that performance history and
renders its page beside the report.
.TP
.B ROPECHECK_ISA
Caps the kernel level chosen at run time (\fBscalar\fR, \fBavx2\fR, \fBavx512\fR).
[SEE ALSO]
/usr/share/doc/ropecheck/README.md and /usr/share/doc/ropecheck/docs/, in particular
\fIcli.md\fR (every command) and \fIporting.md\fR (the plugin ABI, golden vectors).
]=])
file(WRITE ${dir}/ropecheck.h2m "${include}")

string(REGEX REPLACE "[.]gz$" "" page ${OUT})
execute_process(COMMAND ${HELP2MAN} --no-info --section 1 --version-string ${VERSION}
                        --name "property-based verification and benchmarking of RoPE implementations"
                        --include ${dir}/ropecheck.h2m --output ${page} ${CLI}
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "man_page: help2man exited ${status}")
endif()
file(REMOVE ${OUT})
execute_process(COMMAND gzip -9n ${page} RESULT_VARIABLE status)  # -n: no name or time in the header
if(NOT status EQUAL 0)
  message(FATAL_ERROR "man_page: gzip exited ${status}")
endif()
