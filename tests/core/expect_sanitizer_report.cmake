# cmake -DPROGRAM=... -DMODE=... -DEXPECT=<regex> -P expect_sanitizer_report.cmake
# Passes when PROGRAM MODE prints a report matching EXPECT and exits with a
# failure status: a report that does not fail the run would let a test with
# the same error pass.
execute_process(COMMAND ${PROGRAM} ${MODE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${err}${out}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "${PROGRAM} ${MODE}: no report matching '${EXPECT}' (exit ${rc}):\n${out}${err}")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} ${MODE}: the sanitizer reported but the process exited 0, "
    "so a test with this error would pass:\n${out}${err}")
endif()
message(STATUS "${MODE}: reported and failed the process (exit ${rc})")
