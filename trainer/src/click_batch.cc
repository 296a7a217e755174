#include "click_batch.h"

#include <cstring>
#include <string>

namespace foresight::trainer::internal {

namespace {

int64_t IdAt(const Tensor& ids, int64_t i) {
  return ids.dtype() == DType::kI32 ? ids.data<int32_t>()[i] : ids.data<int64_t>()[i];
}

}  // namespace

Tensor RowRangeIds(int64_t begin, int64_t end) {
  Tensor t = Tensor::Empty({end - begin}, DType::kI64);
  for (int64_t i = begin; i < end; ++i) t.data<int64_t>()[i - begin] = i;
  return t;
}

StatusOr<ClickBatch> MakeClickBatch(const storage::ClicksDataset& data, const Tensor& rows) {
  if (rows.dtype() != DType::kI64 || rows.dim() != 1) {
    return InvalidArgument("MakeClickBatch: rows must be i64 [B], got " + rows.ToString());
  }
  const int64_t b = rows.size(0), d = data.num_dense(), t = data.num_fields();
  const int64_t* r = rows.data<int64_t>();
  for (int64_t i = 0; i < b; ++i) {
    if (r[i] < 0 || r[i] >= data.num_samples()) {
      return OutOfRange("MakeClickBatch: row " + std::to_string(r[i]) + " is outside the dataset's " +
                        std::to_string(data.num_samples()) + " samples");
    }
  }
  ClickBatch out;
  out.rows = rows;
  out.dense = Tensor::Empty({b, d}, DType::kF32);
  out.targets = Tensor::Empty({b}, DType::kF32);
  const float* dense = data.dense().data<float>();
  const uint8_t* labels = data.labels().data<uint8_t>();
  for (int64_t i = 0; i < b; ++i) {
    std::memcpy(out.dense.data<float>() + i * d, dense + r[i] * d, static_cast<size_t>(d) * sizeof(float));
    out.targets.data<float>()[i] = static_cast<float>(labels[r[i]]);
  }
  int64_t total = 0;
  for (int64_t k = 0; k < t; ++k) total += b * data.field(k).bag_size;
  out.ids = Tensor::Empty({total}, DType::kI64);
  out.offsets = Tensor::Empty({t * b + 1}, DType::kI64);
  int64_t* ids = out.ids.data<int64_t>();
  int64_t* off = out.offsets.data<int64_t>();
  int64_t n = 0;
  off[0] = 0;
  for (int64_t k = 0; k < t; ++k) {
    const Tensor& field = data.ids(k);
    const int64_t bag = data.field(k).bag_size;
    for (int64_t i = 0; i < b; ++i) {
      for (int64_t j = 0; j < bag; ++j) ids[n++] = IdAt(field, r[i] * bag + j);
      off[k * b + i + 1] = n;
    }
  }
  return out;
}

}  // namespace foresight::trainer::internal
