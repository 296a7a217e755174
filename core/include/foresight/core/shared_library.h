// Libraries opened with dlopen on first use instead of linked (cuBLAS,
// NCCL): a process that never needs them never maps them, and a machine
// without them runs everything else. The errors name the library, why the
// loader refused it and what to do, since "symbol not found" at start-up
// would say none of that.
#pragma once

#include <string>

#include "foresight/core/status.h"

namespace foresight {

// dlopen(soname, RTLD_NOW | RTLD_LOCAL). FailedPrecondition "<needed_by>
// needs <what>, but <soname> could not be loaded: <the loader's reason>
// (<hint>)" when it cannot be. The handle is never closed: the library
// stays loaded for the process's life.
StatusOr<void*> OpenSharedLibrary(const std::string& soname, const std::string& needed_by, const std::string& what,
                                  const std::string& hint);

// dlsym(library, symbol) into *fn. FailedPrecondition naming `soname`, the
// symbol and the loader's reason, "it is not <expected>", when missing.
Status ResolveSymbol(void* library, const std::string& soname, const char* symbol, const std::string& expected,
                     void** fn);

// The same, typed: *fn becomes the function `symbol` names.
template <typename Fn>
Status ResolveFunction(void* library, const std::string& soname, const char* symbol, const std::string& expected,
                       Fn* fn) {
  void* address = nullptr;
  FS_RETURN_IF_ERROR(ResolveSymbol(library, soname, symbol, expected, &address));
  *fn = reinterpret_cast<Fn>(address);
  return Status::OK();
}

}  // namespace foresight
