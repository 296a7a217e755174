# Shared by the killed-rank scripts: runs `mpirun -np 3 foresight ARGS...`
# with rank 2 SIGKILLed at its step KILL_STEP (its own test hook,
# FORESIGHT_TEST_KILL_AT=train.step:N) and fails unless the job ends with a
# non-zero status within 60 s and a message naming rank 2. Needs MPIEXEC,
# MPIEXEC_FLAGS and FORESIGHT set by the including script.
function(run_with_rank2_killed kill_step)
  string(TIMESTAMP start "%s")
  execute_process(
    COMMAND ${MPIEXEC} ${MPIEXEC_FLAGS} -np 2 ${FORESIGHT} ${ARGN}
            : -np 1 env FORESIGHT_TEST_KILL_AT=train.step:${kill_step} ${FORESIGHT} ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 170)
  string(TIMESTAMP end "%s")
  math(EXPR seconds "${end} - ${start}")
  message(STATUS "the job ended after ${seconds} s with status ${rc}")
  if(rc EQUAL 0)
    message(FATAL_ERROR "the job succeeded although rank 2 was killed:\n${out}\n${err}")
  endif()
  if(NOT err MATCHES "test point [0-9]+ \\(train.step\\): SIGKILL")
    message(FATAL_ERROR "rank 2's kill point was not reached:\n${err}")
  endif()
  if(NOT err MATCHES "rank 2[^\n]*exited on signal 9")
    message(FATAL_ERROR "no message names rank 2:\n${err}")
  endif()
  if(seconds GREATER 60)
    message(FATAL_ERROR "the job took ${seconds} s to end after rank 2 died")
  endif()
endfunction()
