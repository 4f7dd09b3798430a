# Writes OUT (generated/build_info.h) from IN with the version and the git sha of the source tree as it
# is at build time ("-dirty" when tracked files differ from HEAD), so that results name the code that
# produced them. Run at every build by the target ib_build_info; configure_file rewrites OUT only when
# its content changes, so an unchanged sha rebuilds nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE IB_GIT_SHA OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT IB_GIT_SHA)
  set(IB_GIT_SHA unknown)
else()
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY ${SRC} RESULT_VARIABLE dirty ERROR_QUIET)
  if(dirty EQUAL 1)
    string(APPEND IB_GIT_SHA "-dirty")
  endif()
endif()
configure_file(${IN} ${OUT} @ONLY)
