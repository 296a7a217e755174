#include "embedding_bag_values.h"

#include <algorithm>
#include <string>

namespace foresight::kernels::internal {

Status CheckBagOffsetValues(const char* op, const int64_t* offsets, int64_t num_bags, int64_t num_ids,
                            bool* one_id_per_bag) {
  if (offsets[0] != 0) {
    return InvalidArgument(std::string(op) + ": offsets[0] must be 0, got " + std::to_string(offsets[0]));
  }
  // One branch-free pass that the compiler vectorises: the CPU ops run this
  // check on the step's thread twice a step (forward and backward) while
  // the pool's workers wait, over 26 x 2048 offsets in the DLRM speed run
  // (a loop that returned at the first decrease took 36-55 us a call, this
  // one 16-18, in a standalone probe at -O3). The first decrease is looked for
  // only when there is one. Differences in unsigned arithmetic: no overflow.
  uint64_t not_one = 0, decreasing = 0;
  for (int64_t q = 0; q < num_bags; ++q) {
    not_one |= (static_cast<uint64_t>(offsets[q + 1]) - static_cast<uint64_t>(offsets[q])) ^ 1u;
    decreasing |= static_cast<uint64_t>(offsets[q + 1] < offsets[q]);
  }
  for (int64_t q = 0; decreasing != 0 && q < num_bags; ++q) {
    if (offsets[q + 1] < offsets[q]) {
      return InvalidArgument(std::string(op) + ": offsets must not decrease: offsets[" + std::to_string(q + 1) +
                             "] = " + std::to_string(offsets[q + 1]) + " < offsets[" + std::to_string(q) +
                             "] = " + std::to_string(offsets[q]));
    }
  }
  const bool ones = not_one == 0;
  if (offsets[num_bags] != num_ids) {
    return InvalidArgument(std::string(op) + ": offsets[" + std::to_string(num_bags) + "] must equal the " +
                           std::to_string(num_ids) + " ids, got " + std::to_string(offsets[num_bags]));
  }
  if (one_id_per_bag != nullptr) *one_id_per_bag = ones;
  return Status::OK();
}

Status BadEmbeddingId(const char* op, const EmbeddingBagArgs& g, int64_t k, int64_t id) {
  const int64_t q = std::upper_bound(g.offsets, g.offsets + g.num_bags() + 1, k) - g.offsets - 1;
  const int64_t t = q / std::max<int64_t>(g.batch, 1);
  return OutOfRange(std::string(op) + ": ids[" + std::to_string(k) + "] = " + std::to_string(id) + " (sample " +
                    std::to_string(q % std::max<int64_t>(g.batch, 1)) + " of table " + std::to_string(t) +
                    ") is out of the table's range [0, " + std::to_string(g.limit(t)) + ")");
}

}  // namespace foresight::kernels::internal
