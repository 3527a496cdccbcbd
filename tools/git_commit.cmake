# Writes OUT (a header) with TALLY_GIT_COMMIT: the commit the build was made from, "-dirty" when
# the tree had changes, "unknown" outside git. Run at every build (cmake -P), and rewrites the
# header only when the value changed, so nothing is recompiled needlessly.
execute_process(COMMAND git -C "${SRC}" rev-parse HEAD OUTPUT_VARIABLE c RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rc EQUAL 0 OR c STREQUAL "")
  set(c "unknown")
else()
  execute_process(COMMAND git -C "${SRC}" status --porcelain --untracked-files=no OUTPUT_VARIABLE d
                  ERROR_QUIET)
  if(NOT d STREQUAL "")
    set(c "${c}-dirty")
  endif()
endif()
set(text "#define TALLY_GIT_COMMIT \"${c}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
