# `mpirun -np 2 foresight train --model dlrm` with row-wise sharded tables
# on the disk store, each rank under --memory-budget: every rank's peak RSS
# (GNU time's, per rank process) must be within its budget + 10%, and each
# rank's shard (4 of 8 tables' rows, 600k rows of 32 f32 each: 293 MiB)
# must be larger than the cache its plan leaves it (checked from the
# logged plan), so each rank trains out of core. Run with -DFORESIGHT=... -DMPIEXEC=...
# "-DMPIEXEC_FLAGS=..." -DGNU_TIME=... -DWORK=dir.
include(${CMAKE_CURRENT_LIST_DIR}/mpi_peak_rss.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${FORESIGHT} generate clicks --output ${WORK}/clicks --tables 8 --rows 600000 --dim 32
                        --samples 60000 --seed 1 --quiet --threads 1
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generate failed (${rc}): ${err}")
endif()
set(budget_mib 420)
rank_peak_rss_flags(peak_flags ${WORK}/peaks.txt)
execute_process(
  COMMAND ${MPIEXEC} ${MPIEXEC_FLAGS} -np 2 ${GNU_TIME} ${peak_flags}
          ${FORESIGHT} train ${WORK}/clicks --model dlrm --bottom-mlp 64,32 --top-mlp 64,1 --embedding-dim 32
          --batch-size 2048 --epochs 1 --dropout 0 --sparse-optimizer sgd --sparse-lr 0.1 --lr 0.001 --threads 1
          --sharding row --table-store disk --table-dir ${WORK} --memory-budget ${budget_mib}M
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 280)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "training failed (${rc}):\n${out}\n${err}")
endif()
expect_rank_peaks_within(${WORK}/peaks.txt 2 ${budget_mib})
string(REGEX MATCHALL "table cache [0-9.]+ [KMG]iB" caches "${err}")
list(LENGTH caches n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "expected the memory plans of 2 ranks, got ${n}:\n${err}")
endif()
foreach(c IN LISTS caches)
  message(STATUS "a rank's plan: ${c} for a shard of 293 MiB")
  if(NOT c MATCHES "[KM]iB$")
    message(FATAL_ERROR "a rank's plan holds its whole shard (${c}): not out of core")
  endif()
  string(REGEX REPLACE "table cache ([0-9]+).*" "\\1" mib "${c}")
  if(c MATCHES "MiB$" AND mib GREATER_EQUAL 293)
    message(FATAL_ERROR "a rank's plan holds its whole shard (${c}): not out of core")
  endif()
endforeach()
