# Per-rank peak RSS under mpirun, shared by the multi-rank --memory-budget
# tests (mpi_dlrm_memory_budget.cmake, mpi_link_memory_budget.cmake): put
# ${GNU_TIME} ${RANK_PEAK_RSS_FLAGS} before the command mpirun starts, so
# every rank process appends its peak RSS (GNU time's %M) to a file as one
# line (the ranks' stderr would interleave it character by character),
# then check the file with expect_rank_peaks_within.

# GNU time's flags: append (O_APPEND, one buffered write) to `file`.
function(rank_peak_rss_flags var file)
  file(REMOVE ${file})
  set(${var} -a -o ${file} -f "peak-rss-kb %M" PARENT_SCOPE)
endfunction()

# Fails unless `file` holds the peak RSS of `ranks` ranks, each within
# `budget_mib` MiB + 10%.
function(expect_rank_peaks_within file ranks budget_mib)
  file(READ ${file} text)
  string(REGEX MATCHALL "peak-rss-kb [0-9]+" peaks "${text}")
  list(LENGTH peaks n)
  if(NOT n EQUAL ranks)
    message(FATAL_ERROR "expected the peak RSS of ${ranks} ranks in ${file}, got ${n}:\n${text}")
  endif()
  math(EXPR limit_kb "${budget_mib} * 1024 * 11 / 10")
  foreach(p IN LISTS peaks)
    string(REGEX REPLACE "peak-rss-kb " "" kb "${p}")
    math(EXPR mib "${kb} / 1024")
    message(STATUS "a rank peaked at ${mib} MiB under a budget of ${budget_mib} MiB")
    if(kb GREATER limit_kb)
      message(FATAL_ERROR "a rank's peak RSS ${kb} KiB exceeds its budget of ${budget_mib} MiB + 10%:\n${text}")
    endif()
  endforeach()
endfunction()
