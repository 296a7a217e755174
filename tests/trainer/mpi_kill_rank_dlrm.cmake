# `mpirun -np 3 foresight train --model dlrm` (sharded tables, per-rank
# checkpoint shards) with rank 2 SIGKILLed in its second epoch (its own test
# hook, FORESIGHT_TEST_KILL_AT=train.step:N): the job must end within 60 s
# with a non-zero status and a message naming rank 2; `--resume` on 3 ranks
# must then finish as the uninterrupted run did: the same metrics lines
# (losses and AUCs; a resumed cache starts cold, so not its counters) and
# the same final line. Run with
# -DFORESIGHT=... -DMPIEXEC=... "-DMPIEXEC_FLAGS=..." -DWORK=dir.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${FORESIGHT} generate clicks --output ${WORK}/clicks --tables 4 --rows 3000 --dim 8
                        --samples 20000 --bag-sizes 1,2,1,1 --seed 2 --quiet --threads 1
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generate failed (${rc}): ${err}")
endif()
# 16000 training samples: 32 steps an epoch.
set(train train ${WORK}/clicks --model dlrm --bottom-mlp 16,8 --top-mlp 16,1 --embedding-dim 8 --batch-size 500
          --epochs 3 --eval-every 10 --dropout 0 --sparse-optimizer rowwise-adagrad --sparse-lr 0.05 --lr 0.003
          --threads 1 --sharding table --table-store disk --cache-size 40000 --table-dir ${WORK} --quiet)

execute_process(COMMAND ${MPIEXEC} ${MPIEXEC_FLAGS} -np 3 ${FORESIGHT} ${train} --checkpoint ${WORK}/full
                        --metrics ${WORK}/full.jsonl
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 170)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the uninterrupted run failed (${rc}):\n${out}\n${err}")
endif()

set(killed ${train} --checkpoint ${WORK}/killed --metrics ${WORK}/killed.jsonl)
include(${CMAKE_CURRENT_LIST_DIR}/mpi_kill_rank_common.cmake)
run_with_rank2_killed(45 ${killed})

file(READ ${WORK}/killed/dlrm_checkpoint.json pointer)
string(JSON saved GET "${pointer}" epoch)
string(JSON ranks GET "${pointer}" ranks)
if(NOT saved EQUAL 1 OR NOT ranks EQUAL 3)
  message(FATAL_ERROR "the killed run's checkpoint is not epoch 1's of 3 ranks:\n${pointer}")
endif()
# Without --quiet, to see where it resumes.
list(REMOVE_ITEM killed --quiet)
execute_process(COMMAND ${MPIEXEC} ${MPIEXEC_FLAGS} -np 3 ${FORESIGHT} ${killed} --resume
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 170)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the resumed run failed (${rc}):\n${out}\n${err}")
endif()
if(NOT err MATCHES "resuming from epoch 2 of 3")
  message(FATAL_ERROR "the run did not resume from the checkpoint of epoch 1:\n${err}")
endif()

# Every line's results (not its timings) and the final line must agree.
file(STRINGS ${WORK}/full.jsonl want_lines)
file(STRINGS ${WORK}/killed.jsonl got_lines)
list(LENGTH want_lines n_want)
list(LENGTH got_lines n_got)
if(NOT n_want EQUAL n_got)
  message(FATAL_ERROR "the resumed run wrote ${n_got} metrics lines, the uninterrupted one ${n_want}")
endif()
math(EXPR last "${n_want} - 1")
foreach(i RANGE ${last})
  list(GET want_lines ${i} want)
  list(GET got_lines ${i} got)
  foreach(key epoch step loss val_auc val_logloss test_auc test_logloss final best_epoch best_step)
    string(JSON a ERROR_VARIABLE no_a GET "${want}" ${key})
    string(JSON b ERROR_VARIABLE no_b GET "${got}" ${key})
    if(NOT "${a}|${no_a}" STREQUAL "${b}|${no_b}")
      message(FATAL_ERROR "line ${i} differs in ${key}: uninterrupted ${a}${no_a}, resumed ${b}${no_b}")
    endif()
  endforeach()
endforeach()
message(STATUS "${n_got} metrics lines equal the uninterrupted run's")
