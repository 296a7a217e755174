// LinkBatcher::BucketOrder (link_batches.h): an epoch's training rows in
// edge-bucket order.
#include <utility>

#include "foresight/core/rng.h"
#include "link_batches.h"

namespace foresight::trainer::internal {
namespace {

constexpr uint64_t kBucketShuffleStream = 0x4C494E4B42554B53ull;  // "LINKBUKS"

}  // namespace

void LinkBatcher::BucketOrder(int epoch, EpochOrder* out) const {
  const int p = static_cast<int>(partition_begin_.size()) - 1;
  // Valid options (checked by ValidateLink) cannot make the plan fail.
  const sampler::BucketPlan plan = sampler::PlanBuckets(p, options_.resident_partitions, options_.seed, epoch).value();
  const RngKey key = RngKey::FromSeed(options_.seed).Fold(kBucketShuffleStream).Fold(static_cast<uint64_t>(epoch));
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const sampler::BucketStep& step = plan.steps[s];
    const size_t begin = out->rows.size();
    for (const auto& [a, b] : step.buckets) {
      const std::vector<int64_t>& rows = bucket_rows_[static_cast<size_t>(a) * p + b];
      out->rows.insert(out->rows.end(), rows.begin(), rows.end());
    }
    const int64_t n = static_cast<int64_t>(out->rows.size() - begin);
    if (n == 0) continue;  // a load that opened only empty buckets
    int64_t* r = out->rows.data() + begin;
    const RngKey step_key = key.Fold(s);
    for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates within the buffer state
      const int64_t j = static_cast<int64_t>(step_key.Below(static_cast<uint64_t>(i + 1), static_cast<uint64_t>(i), 0));
      std::swap(r[i], r[j]);
    }
    out->step_end.push_back(static_cast<int64_t>(out->rows.size()));
    out->resident.push_back(step.resident);
  }
}

}  // namespace foresight::trainer::internal
