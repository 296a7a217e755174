#include "nccl_library.h"

#include <cstdlib>

#include "foresight/core/shared_library.h"

namespace foresight::internal {

std::string NcclSoname() {
  const char* override_name = std::getenv("FORESIGHT_NCCL_LIBRARY");
  if (override_name != nullptr && *override_name != '\0') return override_name;
  return "libnccl.so." + std::to_string(NCCL_MAJOR);
}

StatusOr<NcclLibrary> LoadNcclLibrary(const std::string& soname) {
  FS_ASSIGN_OR_RETURN(void* lib,
                      OpenSharedLibrary(soname, "a collective on GPU tensors (the NCCL communicator)", "NCCL",
                                        "install NCCL " + std::to_string(NCCL_MAJOR) +
                                            " and put its folder on LD_LIBRARY_PATH, or name the library in "
                                            "FORESIGHT_NCCL_LIBRARY"));
  const std::string expected = "the NCCL " + std::to_string(NCCL_MAJOR) + " this foresight was built against";
  NcclLibrary t{};
  t.soname = soname;
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclGetVersion", expected, &t.get_version));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclGetErrorString", expected, &t.error_string));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclGetLastError", expected, &t.last_error));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclGetUniqueId", expected, &t.get_unique_id));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclCommInitRankConfig", expected, &t.comm_init_rank_config));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclCommGetAsyncError", expected, &t.comm_get_async_error));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclCommFinalize", expected, &t.comm_finalize));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclCommDestroy", expected, &t.comm_destroy));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclCommAbort", expected, &t.comm_abort));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclAllReduce", expected, &t.all_reduce));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclAllGather", expected, &t.all_gather));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclBroadcast", expected, &t.broadcast));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclSend", expected, &t.send));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclRecv", expected, &t.recv));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclGroupStart", expected, &t.group_start));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "ncclGroupEnd", expected, &t.group_end));
  const ncclResult_t rc = t.get_version(&t.version);
  if (rc != ncclSuccess) {
    return FailedPrecondition(soname + ": ncclGetVersion failed: " + t.error_string(rc));
  }
  // NCCL_VERSION_CODE is major*10000 + minor*100 + patch since 2.9.
  const int major = t.version / 10000, minor = t.version / 100 % 100;
  if (major != NCCL_MAJOR || (major == 2 && minor < 14)) {
    return FailedPrecondition(soname + " is NCCL " + std::to_string(major) + "." + std::to_string(minor) +
                              ", but foresight needs NCCL " + std::to_string(NCCL_MAJOR) +
                              " from 2.14 on (built against " + std::to_string(NCCL_MAJOR) + "." +
                              std::to_string(NCCL_MINOR) + "; non-blocking communicators for the deadlines)");
  }
  return t;
}

StatusOr<const NcclLibrary*> Nccl() {
  static const StatusOr<NcclLibrary> loaded = LoadNcclLibrary(NcclSoname());
  if (!loaded.ok()) return loaded.status();
  return &loaded.value();
}

}  // namespace foresight::internal
