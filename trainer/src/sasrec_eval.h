// SASRec's evaluation, both ways users report it, on every user with a
// validation and test item: the held-out item is ranked (1) against 100
// negatives drawn (seeded, per user and split) from the items the user
// never interacted with, the authors' protocol, and (2) against all such
// items (full ranking). HR@10 = share of users whose item ranks in the top
// 10; NDCG@10 = mean of 1 / log2(rank + 2) over those (rank from 0).
// A negative scoring exactly the held-out item's counts as ranked above it.
// Private to the trainer.
#pragma once

#include <cstdint>

#include "foresight/core/context.h"
#include "sasrec_data.h"
#include "sasrec_model.h"

namespace foresight::trainer::internal {

inline constexpr int64_t kSasrecEvalNegatives = 100;

struct SasrecMetrics {
  double hr10 = 0, ndcg10 = 0;            // against 100 sampled negatives
  double hr10_full = 0, ndcg10_full = 0;  // against all unseen items
};

// items: f32 [I + 1, hidden], the item table's embeddings (row 0 unused).
// Users go through the model (no dropout) `batch_users` at a time.
Status EvaluateSasrec(const ExecContext& ctx, SasrecModel& model, const SasrecData& data, const Tensor& items,
                      SasrecSplit split, uint64_t seed, int64_t batch_users, SasrecMetrics* out);

}  // namespace foresight::trainer::internal
