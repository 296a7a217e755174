// KeyListCheck: validates a submitted key list before the planner trusts
// it: every key distinct, inside [0, key_space) for dense keys, not
// INT64_MIN (the sparse map's empty marker) for sparse ones. One reusable
// table stamped per call, so a check costs O(n) with no clearing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::cache::internal {

class KeyListCheck {
 public:
  // `what` names the list in messages, e.g. "Submit: batch 12".
  Status Check(const std::vector<int64_t>& keys, int64_t key_space, const std::string& what);

 private:
  struct Entry {
    int64_t key;
    uint32_t stamp;
    int32_t pos;
  };
  std::vector<Entry> table_;
  uint32_t stamp_ = 0;
};

}  // namespace foresight::cache::internal
