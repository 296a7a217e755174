// Argument checks every communicator backend shares, so both give the same
// message for the same mistake. Private to core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/communicator.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

namespace foresight::internal {

// `t` is defined, on `device` and contiguous.
Status CheckTensorOn(const Tensor& t, Device device, const char* op, const char* what);
// The same for the host.
Status CheckHostTensor(const Tensor& t, const char* op, const char* what);
// `n` elements at `data`: n >= 0, data non-null when n > 0.
Status CheckSpan(const void* data, int64_t n, const char* op);
// Rows of `t` along dim 0 (1 for a 0-D tensor) and the shape of one row.
int64_t RowsOf(const Tensor& t);
Shape RowShape(const Tensor& t);
// `counts` has one non-negative entry per rank and sums to send's rows;
// `send` is on `device`.
Status CheckSendCounts(const Tensor& send, const std::vector<int64_t>& counts, int size, const char* op,
                       Device device = Device::Cpu());
// `root` is a rank of a world of `size`.
Status CheckRoot(int root, int size, const char* op);
// `options` with FORESIGHT_COLLECTIVE_TIMEOUT (seconds) applied when set;
// InvalidArgument when it is not a positive number.
StatusOr<CommunicatorOptions> ResolveOptions(const CommunicatorOptions& options);

}  // namespace foresight::internal
