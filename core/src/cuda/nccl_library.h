// NCCL, opened with dlopen on the first NCCL communicator instead of
// linked, for the reason cuBLAS is (kernels/src/cuda/cublas_library.h): a
// CPU run, or a GPU run on one rank that never asks for NCCL, maps no
// libnccl (about 200 MB on disk), and a machine without it runs everything
// else. Private to core.
#pragma once

#include <nccl.h>

#include <string>

#include "foresight/core/status.h"

namespace foresight::internal {

// The NCCL entry points the NCCL communicator calls.
struct NcclLibrary {
  std::string soname;
  int version = 0;  // ncclGetVersion's, e.g. 22809 for 2.28.9
  decltype(&::ncclGetVersion) get_version;
  decltype(&::ncclGetErrorString) error_string;
  decltype(&::ncclGetLastError) last_error;
  decltype(&::ncclGetUniqueId) get_unique_id;
  decltype(&::ncclCommInitRankConfig) comm_init_rank_config;
  decltype(&::ncclCommGetAsyncError) comm_get_async_error;
  decltype(&::ncclCommFinalize) comm_finalize;
  decltype(&::ncclCommDestroy) comm_destroy;
  decltype(&::ncclCommAbort) comm_abort;
  decltype(&::ncclAllReduce) all_reduce;
  decltype(&::ncclAllGather) all_gather;
  decltype(&::ncclBroadcast) broadcast;
  decltype(&::ncclSend) send;
  decltype(&::ncclRecv) recv;
  decltype(&::ncclGroupStart) group_start;
  decltype(&::ncclGroupEnd) group_end;
};

// The soname foresight opens: libnccl.so.<NCCL_MAJOR of the headers>, or the
// FORESIGHT_NCCL_LIBRARY environment variable (a name or a path) when set.
std::string NcclSoname();

// Opens `soname` and resolves every entry point (no caching: tests call it
// with names that do not exist). FailedPrecondition naming the library and
// the loader's reason, or the missing entry point; also when the library's
// major version is not the headers' (the config struct and the ABI differ
// between majors) or it is older than 2.14 (no non-blocking communicators,
// which the deadlines need).
StatusOr<NcclLibrary> LoadNcclLibrary(const std::string& soname);

// LoadNcclLibrary(NcclSoname()) once per process; later calls return the
// same table or the same error. Thread-safe.
StatusOr<const NcclLibrary*> Nccl();

}  // namespace foresight::internal
