# Run by ctest after the tests (CTEST_CUSTOM_POST_TEST in the build's
# CTestCustom.cmake): ctest lists a skipped test as "***Skipped" and never
# shows its output, so this prints each GoogleTest skip with its reason
# ("skipped DeviceTest.CudaOps...: no GPU here: ...") from the run's log.
# Usage: cmake -DLOG=<build>/Testing/Temporary/LastTest.log -P PrintSkipReasons.cmake
if(NOT EXISTS "${LOG}")
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
