#include <algorithm>
#include <string>

#include "foresight/autograd/transformer.h"

namespace foresight::autograd {

StatusOr<PackedSequences> PackedSequences::FromLengths(const std::vector<int64_t>& lengths, Device device) {
  std::vector<int64_t> offsets{0};
  for (size_t b = 0; b < lengths.size(); ++b) {
    if (lengths[b] < 0) {
      return InvalidArgument("PackedSequences: sequence " + std::to_string(b) + " has negative length " +
                             std::to_string(lengths[b]));
    }
    offsets.push_back(offsets.back() + lengths[b]);
  }
  return FromOffsets(offsets, device);
}

StatusOr<PackedSequences> PackedSequences::FromOffsets(const std::vector<int64_t>& offsets, Device device) {
  if (offsets.empty() || offsets[0] != 0) {
    return InvalidArgument("PackedSequences: offsets must start with 0 (B + 1 prefix sums of the lengths)");
  }
  PackedSequences p;
  p.offsets_ = offsets;
  for (size_t b = 0; b + 1 < offsets.size(); ++b) {
    const int64_t len = offsets[b + 1] - offsets[b];
    if (len < 0) {
      return InvalidArgument("PackedSequences: offsets decrease at sequence " + std::to_string(b) + " (" +
                             std::to_string(offsets[b]) + " then " + std::to_string(offsets[b + 1]) + ")");
    }
    p.max_seqlen_ = std::max(p.max_seqlen_, len);
  }
  Tensor host = Tensor::Empty({static_cast<int64_t>(offsets.size())}, DType::kI64);
  std::copy(offsets.begin(), offsets.end(), host.data<int64_t>());
  if (device.is_cpu()) {
    p.cu_seqlens_ = std::move(host);
  } else {
    FS_ASSIGN_OR_RETURN(p.cu_seqlens_, host.To(device));
  }
  return p;
}

}  // namespace foresight::autograd
