# `mpirun -np 2 foresight train --task link` (DistMult, row-wise sharded
# entity rows) on the disk store under a per-rank --memory-budget, through
# the CLI: --plan-only on 2 ranks prints the plan and exits 0; a budget a
# MiB below the smallest it names is refused naming it (or a MiB or two
# more); a budget 8 MiB above it trains with every rank's peak RSS (GNU
# time's, per rank process) within the budget + 10%, each rank's logged
# plan leaving it a cache smaller than its shard (1M entities of 64 bytes a
# rank: 61 MiB), so each rank trains out of core. Run with -DFORESIGHT=... -DMPIEXEC=...
# "-DMPIEXEC_FLAGS=..." -DGNU_TIME=... -DWORK=dir.
include(${CMAKE_CURRENT_LIST_DIR}/mpi_peak_rss.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${FORESIGHT} generate graph --output ${WORK}/graph --task link --nodes 2000000 --edges 60000
                        --features 0 --classes 2 --seed 3 --quiet --threads 1
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generate failed (${rc}): ${err}")
endif()
# One relation and its reverse: a relation row on each rank.
set(train ${FORESIGHT} train ${WORK}/graph --task link --model distmult --reciprocal --embedding-dim 16
          --sparse-optimizer sgd --sparse-lr 0.1 --negatives 32 --negative-chunk 64 --batch-size 256 --lookahead 4
          --epochs 1 --eval-negatives 500 --threads 1 --seed 9 --table-store disk --table-dir ${WORK})

execute_process(COMMAND ${MPIEXEC} ${MPIEXEC_FLAGS} -np 2 ${train} --plan-only
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--plan-only on 2 ranks failed (${rc}):\n${out}\n${err}")
endif()
foreach(item "memory plan of" "row-wise on 2 ranks" "exchanges (ids, rows, gradients)"
             "smallest --memory-budget this run accepts")
  string(FIND "${out}" "${item}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "--plan-only on 2 ranks printed no '${item}':\n${out}")
  endif()
endforeach()
if(NOT out MATCHES "smallest --memory-budget this run accepts: ([0-9]+)\\.0 MiB")
  message(FATAL_ERROR "no smallest budget in MiB in the plan:\n${out}")
endif()
set(minimum_mib ${CMAKE_MATCH_1})
message(STATUS "2 ranks: the smallest budget a rank is ${minimum_mib} MiB")

# Three MiB under the plan's minimum, not one: the baseline item is each
# run's RSS at its start, which varies by a MiB or so between the
# --plan-only run and this one (a run at minimum - 1 once planned 61.9 MiB
# under a budget of 62 and trained).
math(EXPR below_mib "${minimum_mib} - 3")
execute_process(COMMAND ${MPIEXEC} ${MPIEXEC_FLAGS} -np 2 ${train} --memory-budget ${below_mib}M
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
# It names the plan's minimum give or take a MiB or two, for the same reason.
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "the smallest --memory-budget that works is ([0-9]+)\\.0 MiB")
  message(FATAL_ERROR "--memory-budget ${below_mib}M on 2 ranks: expected a refusal naming the smallest budget, "
                      "got (${rc}):\n${out}\n${err}")
endif()
set(named_mib ${CMAKE_MATCH_1})
math(EXPR least_mib "${minimum_mib} - 2")
math(EXPR most_mib "${minimum_mib} + 2")
if(named_mib LESS least_mib OR named_mib GREATER most_mib)
  message(FATAL_ERROR "--memory-budget ${below_mib}M on 2 ranks named ${named_mib} MiB, the plan ${minimum_mib} MiB:\n${err}")
endif()

math(EXPR budget_mib "${minimum_mib} + 8")
rank_peak_rss_flags(peak_flags ${WORK}/peaks.txt)
execute_process(COMMAND ${MPIEXEC} ${MPIEXEC_FLAGS} -np 2 ${GNU_TIME} ${peak_flags} ${train}
                        --memory-budget ${budget_mib}M
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "training failed (${rc}):\n${out}\n${err}")
endif()
expect_rank_peaks_within(${WORK}/peaks.txt 2 ${budget_mib})
string(REGEX MATCHALL "entity cache [0-9.]+ [KMG]?i?B \\([0-9]+ of [0-9]+ rows\\)" caches "${err}")
list(LENGTH caches n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "expected the memory plans of 2 ranks, got ${n}:\n${err}")
endif()
foreach(c IN LISTS caches)
  message(STATUS "a rank's plan: ${c}")
  string(REGEX REPLACE ".*\\(([0-9]+) of ([0-9]+) rows\\)" "\\1;\\2" rows "${c}")
  list(GET rows 0 cached)
  list(GET rows 1 shard)
  if(cached EQUAL 0 OR NOT cached LESS shard)
    message(FATAL_ERROR "a rank's plan caches ${cached} of its ${shard} rows: not out of core")
  endif()
endforeach()
