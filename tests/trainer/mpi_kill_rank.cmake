# `mpirun -np 3 foresight train ...` with rank 2 SIGKILLed mid-epoch (its
# own test hook, FORESIGHT_TEST_KILL_AT=train.step:N): the job must end
# with a non-zero status and a message naming rank 2. Run with
# -DFORESIGHT=... -DMPIEXEC=... "-DMPIEXEC_FLAGS=..." -DWORK=dir.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${FORESIGHT} generate graph --output ${WORK}/data --nodes 3000 --edges 30000
                        --features 16 --classes 4 --train-frac 0.5 --test-frac 0.3 --undirected --quiet --threads 1
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generate failed (${rc}): ${err}")
endif()
set(train train ${WORK}/data --model sage --dropout 0 --epochs 3 --batch-size 16 --threads 1)
string(TIMESTAMP start "%s")
execute_process(
  COMMAND ${MPIEXEC} ${MPIEXEC_FLAGS} -np 2 ${FORESIGHT} ${train}
          : -np 1 env FORESIGHT_TEST_KILL_AT=train.step:20 ${FORESIGHT} ${train}
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
