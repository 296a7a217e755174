# `mpirun -np 2 foresight train --model dlrm` with row-wise sharded tables
# on the disk store, each rank under --memory-budget: every rank's peak RSS
# (GNU time's, per rank process) must be within its budget + 10%. The
# tables (8 x 300k rows of 32 f32, 307 MB) are larger than what a rank's
# budget leaves after the rest of the run (about 370 MiB), so each rank's
# shard trains out of core. Run with -DFORESIGHT=... -DMPIEXEC=...
# "-DMPIEXEC_FLAGS=..." -DGNU_TIME=... -DWORK=dir.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${FORESIGHT} generate clicks --output ${WORK}/clicks --tables 8 --rows 300000 --dim 32
                        --samples 60000 --seed 1 --quiet --threads 1
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generate failed (${rc}): ${err}")
endif()
set(budget_mib 420)
execute_process(
  COMMAND ${MPIEXEC} ${MPIEXEC_FLAGS} -np 2 ${GNU_TIME} -f "peak-rss-kb %M"
          ${FORESIGHT} train ${WORK}/clicks --model dlrm --bottom-mlp 64,32 --top-mlp 64,1 --embedding-dim 32
          --batch-size 2048 --epochs 1 --dropout 0 --sparse-optimizer sgd --sparse-lr 0.1 --lr 0.001 --threads 1
          --sharding row --table-store disk --table-dir ${WORK} --memory-budget ${budget_mib}M
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 280)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "training failed (${rc}):\n${out}\n${err}")
endif()
string(REGEX MATCHALL "peak-rss-kb [0-9]+" peaks "${err}")
list(LENGTH peaks n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "expected the peak RSS of 2 ranks, got ${n}:\n${err}")
endif()
math(EXPR limit_kb "${budget_mib} * 1024 * 11 / 10")
foreach(p IN LISTS peaks)
  string(REGEX REPLACE "peak-rss-kb " "" kb "${p}")
  math(EXPR mib "${kb} / 1024")
  message(STATUS "a rank peaked at ${mib} MiB under a budget of ${budget_mib} MiB")
  if(kb GREATER limit_kb)
    message(FATAL_ERROR "a rank's peak RSS ${kb} KiB exceeds its budget of ${budget_mib} MiB + 10%:\n${err}")
  endif()
endforeach()
if(NOT err MATCHES "table cache")
  message(FATAL_ERROR "no memory plan was logged:\n${err}")
endif()
