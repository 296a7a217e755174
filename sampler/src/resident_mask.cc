#include "foresight/sampler/resident_mask.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace foresight::sampler {

namespace {

Status CheckOffsets(const std::vector<int64_t>& offsets) {
  if (offsets.size() < 2) {
    return InvalidArgument("ResidentMask: offsets: expected P+1 >= 2 row offsets, got " +
                           std::to_string(offsets.size()));
  }
  if (offsets[0] != 0) {
    return InvalidArgument("ResidentMask: offsets[0] = " + std::to_string(offsets[0]) + " (expected 0)");
  }
  for (size_t p = 1; p < offsets.size(); ++p) {
    if (offsets[p] < offsets[p - 1]) {
      return InvalidArgument("ResidentMask: offsets decrease at partition " + std::to_string(p - 1) + " (offsets[" +
                             std::to_string(p - 1) + "] = " + std::to_string(offsets[p - 1]) + " > offsets[" +
                             std::to_string(p) + "] = " + std::to_string(offsets[p]) + ")");
    }
  }
  return Status::OK();
}

}  // namespace

Status ResidentMask::Set(const std::vector<int64_t>& offsets, const std::vector<int>& parts) {
  std::vector<int> sorted(parts);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (mask_.defined() && offsets == offsets_ && sorted == parts_) return Status::OK();

  const Status checked = [&]() -> Status {
    FS_RETURN_IF_ERROR(CheckOffsets(offsets));
    const int num_parts = static_cast<int>(offsets.size() - 1);
    for (size_t i = 0; i < parts.size(); ++i) {
      if (parts[i] < 0 || parts[i] >= num_parts) {
        return OutOfRange("ResidentMask: parts[" + std::to_string(i) + "] = " + std::to_string(parts[i]) +
                          " is not a partition (expected [0, " + std::to_string(num_parts) + "))");
      }
    }
    return Status::OK();
  }();
  if (!checked.ok()) {
    mask_ = Tensor();
    offsets_.clear();
    parts_.clear();
    ranges_.clear();
    return checked;
  }

  const int64_t rows = offsets.back();
  uint8_t* m = nullptr;
  if (!mask_.defined() || mask_.numel() != rows) {
    mask_ = Tensor::Zeros({rows}, DType::kU8);
    m = mask_.data<uint8_t>();
  } else {
    m = mask_.data<uint8_t>();
    for (const auto& r : ranges_) std::memset(m + r.first, 0, static_cast<size_t>(r.second - r.first));
  }
  // Adjacent partitions merge into one range (one memset).
  ranges_.clear();
  for (const int p : sorted) {
    const int64_t begin = offsets[p], end = offsets[p + 1];
    if (begin == end) continue;
    if (!ranges_.empty() && ranges_.back().second == begin) {
      ranges_.back().second = end;
    } else {
      ranges_.emplace_back(begin, end);
    }
  }
  for (const auto& r : ranges_) std::memset(m + r.first, 1, static_cast<size_t>(r.second - r.first));
  offsets_ = offsets;
  parts_ = std::move(sorted);
  return Status::OK();
}

int64_t ResidentMask::num_resident_rows() const {
  int64_t n = 0;
  for (const auto& r : ranges_) n += r.second - r.first;
  return n;
}

const Tensor* ResidentMask::SamplingMask() const {
  // Before a successful Set the undefined mask goes through, so that
  // sampling fails rather than silently running unrestricted.
  if (mask_.defined() && num_resident_rows() == mask_.numel()) return nullptr;
  return &mask_;
}

}  // namespace foresight::sampler
