# FORESIGHT_MPI: AUTO builds the MPI communicator when an MPI library is
# found (Debian: libopenmpi-dev), ON requires it, OFF never builds it.
# FORESIGHT_HAVE_MPI is what the code checks; without it every run is one
# process (the single-process communicator) and the multi-rank tests are
# not registered.
set(FORESIGHT_HAVE_MPI OFF)
if(NOT FORESIGHT_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(FORESIGHT_HAVE_MPI ON)
    # mpiexec runs the multi-rank tests; Open MPI refuses root unless told,
    # and CI runs as root.
    set(FORESIGHT_MPIEXEC_FLAGS --oversubscribe)
    execute_process(COMMAND id -u OUTPUT_VARIABLE FORESIGHT_UID OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(FORESIGHT_UID STREQUAL "0")
      list(APPEND FORESIGHT_MPIEXEC_FLAGS --allow-run-as-root)
    endif()
    message(STATUS "foresight: MPI communicator compiled (${MPI_C_LIBRARIES}; tests run with ${MPIEXEC_EXECUTABLE})")
  elseif(FORESIGHT_MPI STREQUAL "ON")
    message(FATAL_ERROR "FORESIGHT_MPI=ON but no MPI library was found (apt-get install libopenmpi-dev openmpi-bin)")
  endif()
endif()
if(NOT FORESIGHT_HAVE_MPI)
  message(STATUS "foresight: MPI communicator not compiled; training runs as one process")
endif()
