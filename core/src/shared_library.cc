#include "foresight/core/shared_library.h"

#include <dlfcn.h>

namespace foresight {

namespace {

// What dlerror says, or `fallback` when it says nothing.
std::string DlError(const char* fallback) {
  const char* e = dlerror();
  return e != nullptr ? e : fallback;
}

}  // namespace

StatusOr<void*> OpenSharedLibrary(const std::string& soname, const std::string& needed_by, const std::string& what,
                                  const std::string& hint) {
  void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return FailedPrecondition(needed_by + " needs " + what + ", but " + soname +
                              " could not be loaded: " + DlError("dlopen failed") + " (" + hint + ")");
  }
  return lib;
}

Status ResolveSymbol(void* library, const std::string& soname, const char* symbol, const std::string& expected,
                     void** fn) {
  dlerror();
  *fn = dlsym(library, symbol);
  if (*fn != nullptr) return Status::OK();
  return FailedPrecondition(soname + " was loaded but has no " + symbol + " (" + DlError("symbol not found") +
                            "): it is not " + expected);
}

}  // namespace foresight
