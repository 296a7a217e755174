// ResidentMask: the source mask of resident sampling (--sampling resident).
// Partition p is the contiguous row range [offsets[p], offsets[p+1]), so
// the mask of a set of resident partitions is a few memsets; switching from
// one set to the next clears only the ranges the previous set filled, and
// setting the same set again costs nothing. The mask is what
// NeighborSampler::Sample and kernels::SampleNeighbors take.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

namespace foresight::sampler {

// Not thread-safe; mask() is valid (and unchanged) until the next Set, so a
// sampling stage owns one and sets it before each batch it samples.
class ResidentMask {
 public:
  // Makes mask() the u8 [offsets.back()] tensor that is 1 on the rows of
  // partitions `parts` (any order, repeats allowed) and 0 elsewhere.
  // `offsets`: P+1 non-decreasing row offsets starting at 0. Errors name
  // the bad offset or partition; the mask is then undefined until the next
  // successful Set.
  Status Set(const std::vector<int64_t>& offsets, const std::vector<int>& parts);

  // u8 [num rows]; undefined before the first successful Set.
  const Tensor& mask() const { return mask_; }
  // The partitions set by the last successful Set, ascending and distinct.
  const std::vector<int>& parts() const { return parts_; }
  // Rows that are 1 in mask().
  int64_t num_resident_rows() const;
  // What to pass to NeighborSampler::Sample: &mask(), or null when every row
  // is resident (&mask() while it is undefined, which Sample rejects). An
  // all-ones mask samples exactly like no mask, but a mask costs O(degree)
  // per sampled node (counting the allowed neighbours) where no mask costs
  // O(fanout): on a skewed graph, about twice the time.
  const Tensor* SamplingMask() const;

 private:
  Tensor mask_;
  std::vector<int64_t> offsets_;  // of the last Set
  std::vector<int> parts_;
  std::vector<std::pair<int64_t, int64_t>> ranges_;  // the rows set to 1
};

}  // namespace foresight::sampler
