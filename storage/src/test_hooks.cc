#include "test_hooks.h"

#include <signal.h>

#include <cstdlib>
#include <cstring>

namespace foresight::storage::internal {

void CrashPoint(const char* point) {
  const char* at = std::getenv("FORESIGHT_TEST_CRASH_AT");
  if (at != nullptr && std::strcmp(at, point) == 0) ::raise(SIGKILL);
}

bool RenameExchangeAllowed() {
  const char* v = std::getenv("FORESIGHT_TEST_NO_RENAME_EXCHANGE");
  return v == nullptr || *v == '\0' || std::strcmp(v, "0") == 0;
}

}  // namespace foresight::storage::internal
