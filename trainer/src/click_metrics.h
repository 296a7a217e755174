// The metrics of click prediction from logits and 0/1 labels: AUC (exact,
// tied scores share their average rank), logloss and accuracy at 0.5.
// Private to the trainer.
#pragma once

#include <vector>

#include "foresight/core/status.h"

namespace foresight::trainer::internal {

struct ClickMetrics {
  double auc = 0;      // 0.5 when one class is absent (no ranking to judge)
  double logloss = 0;  // mean -[y log p + (1 - y) log(1 - p)], p = sigmoid(logit)
  double accuracy = 0; // fraction with (logit > 0) == label
  int64_t count = 0;
};

// logits and labels (0 or 1) of the same length.
StatusOr<ClickMetrics> ComputeClickMetrics(const std::vector<float>& logits, const std::vector<float>& labels);

}  // namespace foresight::trainer::internal
