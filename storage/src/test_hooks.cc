#include "test_hooks.h"

#include <cstdlib>
#include <cstring>

namespace foresight::storage::internal {

bool RenameExchangeAllowed() {
  const char* v = std::getenv("FORESIGHT_TEST_NO_RENAME_EXCHANGE");
  return v == nullptr || *v == '\0' || std::strcmp(v, "0") == 0;
}

}  // namespace foresight::storage::internal
