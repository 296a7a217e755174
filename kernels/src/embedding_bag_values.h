// Value checks of an embedding-bag call, made on the host: the bag offsets,
// and the message for an id outside its table. The CPU runs them on every
// call; the CUDA ops flag errors on the device and, only when one was
// flagged, copy the offsets back and run these, so both devices report the
// same error in the same words.
#pragma once

#include <cstdint>

#include "embedding_bag_args.h"
#include "foresight/core/status.h"

namespace foresight::kernels::internal {

// offsets start at 0, never decrease and end at num_ids. Also says whether
// every bag holds exactly one id (when one_id_per_bag is not null).
Status CheckBagOffsetValues(const char* op, const int64_t* offsets, int64_t num_bags, int64_t num_ids,
                            bool* one_id_per_bag);

// ids[k] = id lies outside its table: names the sample and the table. g's
// offsets (and table offsets) must be host pointers.
Status BadEmbeddingId(const char* op, const EmbeddingBagArgs& g, int64_t k, int64_t id);

}  // namespace foresight::kernels::internal
