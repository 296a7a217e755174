// Row gather and deterministic row scatter-add.
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpu_ops.h"
#include "dropout_span.h"

namespace foresight::kernels::cpu {

namespace {

template <typename I>
Status FirstOutOfRange(const char* op, const Tensor& ids, int64_t rows) {
  const I* p = ids.data<I>();
  for (int64_t i = 0; i < ids.size(0); ++i) {
    const int64_t v = static_cast<int64_t>(p[i]);
    if (v < 0 || v >= rows) {
      return OutOfRange(std::string(op) + ": ids[" + std::to_string(i) + "] = " + std::to_string(v) +
                        " is out of range [0, " + std::to_string(rows) + ")");
    }
  }
  return Status::OK();
}

Status CheckIdRange(const char* op, const Tensor& ids, int64_t rows) {
  return ids.dtype() == DType::kI32 ? FirstOutOfRange<int32_t>(op, ids, rows)
                                    : FirstOutOfRange<int64_t>(op, ids, rows);
}

// Calls fn(the source's rows as their type, that type widened to float) for
// an f32, f16 or bf16 source (the dispatcher allows nothing else).
template <typename Fn>
void WithWidening(const Tensor& src, Fn fn) {
  if (src.dtype() == DType::kF32) {
    fn(src.data<float>(), [](float v) { return v; });
  } else if (src.dtype() == DType::kF16) {
    fn(src.data<Half>(), [](Half h) { return HalfToFloat(h.bits); });
  } else {
    fn(src.data<BFloat16>(), [](BFloat16 b) { return BFloat16ToFloat(b.bits); });
  }
}

template <typename I, typename S, typename O, typename Convert>
void Gather(const ExecContext& ctx, const S* src, const I* ids, int64_t n, int64_t row, O* out,
            Convert convert) {
  ctx.pool->ParallelFor(n, RowGrain(row), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const S* s = src + static_cast<int64_t>(ids[r]) * row;
      O* o = out + r * row;
      for (int64_t j = 0; j < row; ++j) o[j] = convert(s[j]);
    }
  });
}

template <typename I>
void GatherTyped(const ExecContext& ctx, const Tensor& src, const Tensor& ids, Tensor* out) {
  const int64_t n = ids.size(0);
  const int64_t row = n > 0 ? out->numel() / n : 0;
  const I* pid = ids.data<I>();
  if (out->dtype() == src.dtype()) {
    const size_t bytes = static_cast<size_t>(row) * src.element_size();
    const char* ps = static_cast<const char*>(src.raw_data());
    char* po = static_cast<char*>(out->raw_data());
    ctx.pool->ParallelFor(n, RowGrain(row), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) std::memcpy(po + r * bytes, ps + static_cast<int64_t>(pid[r]) * bytes, bytes);
    });
  } else {  // f16 / bf16 -> f32 (the dispatcher allows nothing else)
    WithWidening(src, [&](const auto* ps, auto convert) { Gather(ctx, ps, pid, n, row, out->data<float>(), convert); });
  }
}

// Positions 0..n-1 of `ids` ordered by (id, position): a stable counting sort
// when the destination has few rows relative to n, else a comparison sort.
// `groups` receives the start of each run of equal ids (plus n at the end).
template <typename I>
void GroupById(const I* ids, int64_t n, int64_t rows, std::vector<int64_t>* order,
               std::vector<int64_t>* groups) {
  order->resize(static_cast<size_t>(n));
  if (rows <= 4 * n + 65536) {
    std::vector<int64_t> start(static_cast<size_t>(rows) + 1, 0);
    for (int64_t i = 0; i < n; ++i) ++start[static_cast<size_t>(ids[i]) + 1];
    for (int64_t r = 0; r < rows; ++r) start[r + 1] += start[r];
    for (int64_t i = 0; i < n; ++i) (*order)[start[static_cast<size_t>(ids[i])]++] = i;
  } else {
    std::vector<std::pair<int64_t, int64_t>> keyed(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) keyed[i] = {static_cast<int64_t>(ids[i]), i};
    std::sort(keyed.begin(), keyed.end());
    for (int64_t i = 0; i < n; ++i) (*order)[i] = keyed[i].second;
  }
  groups->clear();
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || ids[(*order)[i]] != ids[(*order)[i - 1]]) groups->push_back(i);
  }
  groups->push_back(n);
}

// Each destination row adds its sources in ascending position: the same
// order as a serial loop over ids, so the result equals it bit for bit.
template <typename I>
void IndexAddTyped(const ExecContext& ctx, const Tensor& src, const Tensor& ids, Tensor* dst) {
  const int64_t n = ids.size(0);
  const int64_t row = n > 0 ? src.numel() / n : 0;
  const I* pid = ids.data<I>();
  std::vector<int64_t> order, groups;
  GroupById(pid, n, dst->size(0), &order, &groups);
  const float* ps = src.data<float>();
  float* pd = dst->data<float>();
  const int64_t num_groups = static_cast<int64_t>(groups.size()) - 1;
  ctx.pool->ParallelFor(num_groups, RowGrain(row), [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g) {
      float* d = pd + static_cast<int64_t>(pid[order[groups[g]]]) * row;
      for (int64_t k = groups[g]; k < groups[g + 1]; ++k) {
        const float* s = ps + order[k] * row;
        for (int64_t j = 0; j < row; ++j) d[j] += s[j];
      }
    }
  });
}

// GatherRowsDropout of rows of S (widened by `convert` when S is not
// float): a tile of rows is copied into an L1-sized buffer, then dropped
// out from there into out. x is written once and never read back from
// memory. Not a dropout straight from the source rows: the Philox work
// between two random rows' loads fills the out-of-order window, so each
// row's DRAM (and page-walk) latency was paid in turn, where a plain copy
// overlaps many rows' (measured in the speed run: that fused pass, with or
// without software prefetch, took more CPU than the copy and dropout apart).
template <typename I, typename S, typename Convert>
void GatherDropoutTyped(const ExecContext& ctx, float p, const S* src, const I* ids, int64_t n, int64_t row,
                        float* out, Convert convert) {
  const RngKey rng = ctx.rng;
  constexpr int64_t kTileFloats = 4096;  // 16 KB
  const int64_t tile_rows = std::max<int64_t>(1, kTileFloats / std::max<int64_t>(1, row));
  ctx.pool->ParallelFor(n, RowGrain(row), [&](int64_t r0, int64_t r1) {
    std::vector<float> tile(static_cast<size_t>(std::min(tile_rows, r1 - r0) * row));
    for (int64_t t0 = r0; t0 < r1; t0 += tile_rows) {
      const int64_t t1 = std::min(r1, t0 + tile_rows);
      for (int64_t r = t0; r < t1; ++r) {
        const S* s = src + static_cast<int64_t>(ids[r]) * row;
        float* d = tile.data() + (r - t0) * row;
        if constexpr (std::is_same<S, float>::value) {
          std::memcpy(d, s, static_cast<size_t>(row) * sizeof(float));
        } else {
          for (int64_t j = 0; j < row; ++j) d[j] = convert(s[j]);
        }
      }
      for (int64_t r = t0; r < t1; ++r) {
        // Keyed as DropoutRows keys row r by ids[r]: stream positions id * row on.
        const uint64_t g = static_cast<uint64_t>(static_cast<int64_t>(ids[r])) * static_cast<uint64_t>(row);
        DropoutStreamSpan(rng, g, row, p, tile.data() + (r - t0) * row, out + r * row, nullptr);
      }
    }
  });
}

template <typename I>
void GatherDropoutOf(const ExecContext& ctx, float p, const Tensor& src, const Tensor& ids, Tensor* out) {
  const int64_t n = ids.size(0);
  const int64_t row = n > 0 ? out->numel() / n : 0;
  const I* pid = ids.data<I>();
  float* po = out->data<float>();
  WithWidening(src, [&](const auto* ps, auto convert) { GatherDropoutTyped(ctx, p, ps, pid, n, row, po, convert); });
}

}  // namespace

Status GatherRowsDropout(const ExecContext& ctx, float p, const Tensor& src, const Tensor& ids, Tensor* out) {
  FS_RETURN_IF_ERROR(CheckIdRange("GatherRowsDropout", ids, src.size(0)));
  if (ids.dtype() == DType::kI32) {
    GatherDropoutOf<int32_t>(ctx, p, src, ids, out);
  } else {
    GatherDropoutOf<int64_t>(ctx, p, src, ids, out);
  }
  return Status::OK();
}

Status GatherRows(const ExecContext& ctx, const Tensor& src, const Tensor& ids, Tensor* out) {
  FS_RETURN_IF_ERROR(CheckIdRange("GatherRows", ids, src.size(0)));
  if (ids.dtype() == DType::kI32) {
    GatherTyped<int32_t>(ctx, src, ids, out);
  } else {
    GatherTyped<int64_t>(ctx, src, ids, out);
  }
  return Status::OK();
}

Status IndexAddRows(const ExecContext& ctx, const Tensor& src, const Tensor& ids, Tensor* dst) {
  FS_RETURN_IF_ERROR(CheckIdRange("IndexAddRows", ids, dst->size(0)));
  if (ids.dtype() == DType::kI32) {
    IndexAddTyped<int32_t>(ctx, src, ids, dst);
  } else {
    IndexAddTyped<int64_t>(ctx, src, ids, dst);
  }
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
