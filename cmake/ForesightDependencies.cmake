# Third-party libraries, all from Debian packages (see .ci/run).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(ZLIB REQUIRED)
find_package(LibLZMA REQUIRED)
find_package(nlohmann_json 3 REQUIRED)

# oneDNN's sgemm for the CPU GEMMs, one thread a call, the tiles spread
# over foresight's own pool (core/thread_pool.h).
include(ForesightDnnl)
pkg_check_modules(LIBURING REQUIRED IMPORTED_TARGET liburing)
find_package(RocksDB QUIET CONFIG)
if(NOT TARGET RocksDB::rocksdb)
  pkg_check_modules(ROCKSDB REQUIRED IMPORTED_TARGET rocksdb)
endif()
# METIS (Debian libmetis-dev) for graph/ partitioning. graph/ uses idx_t
# whatever its width (32-bit in Debian) and checks sizes against it.
find_path(METIS_INCLUDE_DIR metis.h REQUIRED)
find_library(METIS_LIBRARY metis REQUIRED)
file(STRINGS ${METIS_INCLUDE_DIR}/metis.h FORESIGHT_METIS_IDX_WIDTH
     REGEX "^#define IDXTYPEWIDTH[ \t]+[0-9]+")
string(REGEX REPLACE ".*IDXTYPEWIDTH[ \t]+([0-9]+).*" "\\1" FORESIGHT_METIS_IDX_WIDTH
       "${FORESIGHT_METIS_IDX_WIDTH}")
message(STATUS "foresight: METIS ${METIS_LIBRARY} (idx_t: ${FORESIGHT_METIS_IDX_WIDTH} bits)")
find_package(yaml-cpp REQUIRED)
find_package(toml11 QUIET)
find_package(CLI11 CONFIG REQUIRED)
if(FORESIGHT_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(FORESIGHT_BUILD_BENCH)
  find_package(benchmark QUIET)
endif()
