# `mpirun -np 3 foresight train ...` with rank 2 SIGKILLed mid-epoch (its
# own test hook, FORESIGHT_TEST_KILL_AT=train.step:N): the job must end
# with a non-zero status within 60 s and a message naming rank 2. Run with
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
include(${CMAKE_CURRENT_LIST_DIR}/mpi_kill_rank_common.cmake)
run_with_rank2_killed(20 ${train})
