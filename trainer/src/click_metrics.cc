#include "click_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace foresight::trainer::internal {

StatusOr<ClickMetrics> ComputeClickMetrics(const std::vector<float>& logits, const std::vector<float>& labels) {
  if (logits.size() != labels.size()) {
    return InvalidArgument("click metrics: " + std::to_string(logits.size()) + " logits for " +
                           std::to_string(labels.size()) + " labels");
  }
  ClickMetrics m;
  const size_t n = logits.size();
  m.count = static_cast<int64_t>(n);
  if (n == 0) return m;
  double loss = 0;
  int64_t correct = 0, positives = 0;
  for (size_t i = 0; i < n; ++i) {
    const double z = logits[i], y = labels[i];
    if (y != 0.0 && y != 1.0) {
      return InvalidArgument("click metrics: label " + std::to_string(i) + " is " + std::to_string(y) +
                             "; expected 0 or 1");
    }
    // -log sigmoid(z) = softplus(-z), stable for any z.
    loss += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::fabs(z)));
    correct += (z > 0) == (y == 1.0);
    positives += y == 1.0;
  }
  m.logloss = loss / static_cast<double>(n);
  m.accuracy = static_cast<double>(correct) / static_cast<double>(n);
  const int64_t negatives = static_cast<int64_t>(n) - positives;
  if (positives == 0 || negatives == 0) {
    m.auc = 0.5;
    return m;
  }
  // Mann-Whitney: AUC = (sum of the positives' ranks - P(P+1)/2) / (P N),
  // ranks 1-based in ascending score, a run of ties sharing its mean rank.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return logits[a] < logits[b]; });
  double rank_sum = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && logits[order[j + 1]] == logits[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2.0;
    for (size_t k = i; k <= j; ++k) {
      if (labels[order[k]] == 1.0) rank_sum += mean_rank;
    }
    i = j + 1;
  }
  const double p = static_cast<double>(positives), q = static_cast<double>(negatives);
  m.auc = (rank_sum - p * (p + 1) / 2) / (p * q);
  return m;
}

}  // namespace foresight::trainer::internal
