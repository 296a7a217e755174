#include "key_list_check.h"

#include <limits>

namespace foresight::cache::internal {

Status KeyListCheck::Check(const std::vector<int64_t>& keys, int64_t key_space, const std::string& what) {
  const size_t n = keys.size();
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max() / 2)) {
    return InvalidArgument(what + " has " + std::to_string(n) + " keys; at most " +
                           std::to_string(std::numeric_limits<int32_t>::max() / 2) + " are supported");
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t k = keys[i];
    if (key_space > 0 ? (k < 0 || k >= key_space) : k == std::numeric_limits<int64_t>::min()) {
      if (key_space > 0) {
        return InvalidArgument(what + ": key " + std::to_string(k) + " at position " + std::to_string(i) +
                               " is outside [0, " + std::to_string(key_space) + ") (CacheConfig::key_space)");
      }
      return InvalidArgument(what + ": key " + std::to_string(k) + " at position " + std::to_string(i) +
                             " is reserved (sparse keys may be any int64 but INT64_MIN)");
    }
  }
  size_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  if (table_.size() < cap) {
    table_.assign(cap, Entry{0, 0, 0});
    stamp_ = 0;
  }
  if (++stamp_ == 0) {  // wrapped: old stamps could look current
    for (Entry& e : table_) e.stamp = 0;
    stamp_ = 1;
  }
  const size_t mask = table_.size() - 1;
  const int shift = 64 - __builtin_ctzll(table_.size());
  for (size_t i = 0; i < n; ++i) {
    const int64_t k = keys[i];
    size_t h = static_cast<size_t>((static_cast<uint64_t>(k) * 0x9E3779B97F4A7C15ull) >> shift);
    for (;; h = (h + 1) & mask) {
      Entry& e = table_[h];
      if (e.stamp != stamp_) {
        e = Entry{k, stamp_, static_cast<int32_t>(i)};
        break;
      }
      if (e.key == k) {
        return InvalidArgument(what + " repeats key " + std::to_string(k) + " (positions " + std::to_string(e.pos) +
                               " and " + std::to_string(i) + "); a batch's keys must be distinct");
      }
    }
  }
  return Status::OK();
}

}  // namespace foresight::cache::internal
