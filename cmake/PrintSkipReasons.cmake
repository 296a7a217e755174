# Run by ctest after the tests (CTEST_CUSTOM_POST_TEST in the build's
# CTestCustom.cmake): ctest lists a skipped test as "***Skipped" and never
# shows its output, so this prints each GoogleTest skip with its reason
# ("skipped DeviceTest.CudaOps...: no GPU here: ...") from the run's log.
# Usage: cmake -DLOG=<build>/Testing/Temporary/LastTest.log -P PrintSkipReasons.cmake
# While ctest runs this step the run's log is still being written as
# LastTest.log.tmp (renamed to LastTest.log when ctest closes it); read the
# finished one only when there is no such file (a test passes LOG directly).
if(EXISTS "${LOG}.tmp")
  set(LOG "${LOG}.tmp")
elseif(NOT EXISTS "${LOG}")
  return()
endif()
file(STRINGS "${LOG}" lines)
set(reason "")
set(in_skip FALSE)
foreach(line IN LISTS lines)
  if(line MATCHES ": Skipped$")
    # GoogleTest prints "<file>:<line>: Skipped", then the message lines.
    set(in_skip TRUE)
    set(reason "")
  elseif(in_skip AND line MATCHES "^\\[  SKIPPED \\] ([^ ]+) \\(")
    if(reason STREQUAL "")
      set(reason "no reason given")
    endif()
    message("skipped ${CMAKE_MATCH_1}: ${reason}")
    set(in_skip FALSE)
  elseif(in_skip)
    if(reason STREQUAL "")
      set(reason "${line}")
    else()
      set(reason "${reason} ${line}")
    endif()
  endif()
endforeach()
