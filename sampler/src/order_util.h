// Helpers shared by the seed orders (SeedOrder, PartitionOrder).
#pragma once

#include <cstdint>

#include "foresight/core/rng.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

namespace foresight::sampler::internal {

// A contiguous i64 copy of `ids` (1-D i32 or i64 host tensor, possibly
// strided); InvalidArgument starting with "<who>: train_ids:" otherwise.
StatusOr<Tensor> CopyIdsToI64(const Tensor& ids, const char* who);

// Fisher-Yates over p[0, n): step i (from n-1 down to 1) swaps p[i] with
// p[key.Below(i + 1, i, 0)], so the permutation is a function of key and n.
void Shuffle(int64_t* p, int64_t n, RngKey key);

}  // namespace foresight::sampler::internal
