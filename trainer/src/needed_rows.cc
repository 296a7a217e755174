#include "needed_rows.h"

#include <string>
#include <utility>

namespace foresight::trainer::internal {

namespace {

template <typename I>
Status MarkIds(const Tensor& ids, int64_t num_nodes, size_t group, uint8_t* mask) {
  const I* p = ids.data<I>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int64_t v = static_cast<int64_t>(p[i]);
    if (v < 0 || v >= num_nodes) {
      return OutOfRange("layer-wise inference: output group " + std::to_string(group) + " has id " +
                        std::to_string(v) + " at position " + std::to_string(i) + ", outside [0, " +
                        std::to_string(num_nodes) + ")");
    }
    mask[v] = 1;
  }
  return Status::OK();
}

// next = mask plus the in-neighbours of every node in mask.
template <typename I>
void Expand(const ExecContext& ctx, const kernels::Csr& graph, const uint8_t* mask, uint8_t* next) {
  const int64_t n = graph.num_dst();
  const int64_t* ip = graph.indptr.data<int64_t>();
  const I* idx = graph.indices.data<I>();
  ctx.pool->ParallelFor(n, 16384, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) next[v] = mask[v];
  });
  ctx.pool->ParallelFor(n, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      if (mask[v] == 0) continue;
      for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
        // Every writer stores 1: the result is the same in any order.
        __atomic_store_n(&next[static_cast<int64_t>(idx[e])], uint8_t{1}, __ATOMIC_RELAXED);
      }
    }
  });
}

LayerRows RowsOf(const uint8_t* mask, int64_t n, int64_t count) {
  LayerRows r;
  r.all = false;
  r.ids = Tensor::Empty({count}, DType::kI64);
  r.rank = Tensor::Empty({n}, DType::kI64);
  int64_t* ids = r.ids.data<int64_t>();
  int64_t* rank = r.rank.data<int64_t>();
  int64_t k = 0;
  for (int64_t v = 0; v < n; ++v) {
    if (mask[v] != 0) {
      ids[k] = v;
      rank[v] = k++;
    } else {
      rank[v] = -1;
    }
  }
  return r;
}

}  // namespace

StatusOr<std::vector<LayerRows>> NeededRows(const ExecContext& ctx, const kernels::Csr& graph, int num_layers,
                                            const std::vector<Tensor>& outputs) {
  std::vector<LayerRows> rows(static_cast<size_t>(num_layers > 1 ? num_layers - 1 : 0));
  if (outputs.empty() || rows.empty()) return rows;
  const int64_t n = graph.num_dst();
  Tensor mask = Tensor::Zeros({n}, DType::kU8);
  Tensor next = Tensor::Empty({n}, DType::kU8);
  for (size_t g = 0; g < outputs.size(); ++g) {
    const Tensor& ids = outputs[g];
    if (!ids.defined() || ids.dim() != 1 || !ids.is_contiguous() ||
        (ids.dtype() != DType::kI32 && ids.dtype() != DType::kI64)) {
      return InvalidArgument("layer-wise inference: output group " + std::to_string(g) +
                             " must be a contiguous 1-D i32/i64 id list");
    }
    FS_RETURN_IF_ERROR(ids.dtype() == DType::kI32 ? MarkIds<int32_t>(ids, n, g, mask.data<uint8_t>())
                                                  : MarkIds<int64_t>(ids, n, g, mask.data<uint8_t>()));
  }
  for (int l = num_layers - 2; l >= 0; --l) {
    if (graph.indices.dtype() == DType::kI32) {
      Expand<int32_t>(ctx, graph, mask.data<uint8_t>(), next.data<uint8_t>());
    } else {
      Expand<int64_t>(ctx, graph, mask.data<uint8_t>(), next.data<uint8_t>());
    }
    std::swap(mask, next);
    const uint8_t* m = mask.data<uint8_t>();
    int64_t count = 0;
    for (int64_t v = 0; v < n; ++v) count += m[v];
    if (count == n) break;  // this layer and every one below it: all nodes
    rows[static_cast<size_t>(l)] = RowsOf(m, n, count);
  }
  return rows;
}

}  // namespace foresight::trainer::internal
