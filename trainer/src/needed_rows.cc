#include "needed_rows.h"

#include <algorithm>
#include <string>
#include <utility>

#include "foresight/core/mapped_pages.h"

namespace foresight::trainer::internal {

namespace {

constexpr int64_t kWordsPerBlock = 8;  // a running count per 512 nodes

int64_t Words(int64_t n) { return (n + 63) / 64; }

template <typename I>
Status MarkIds(const Tensor& ids, int64_t num_nodes, size_t group, uint64_t* bits) {
  const I* p = ids.data<I>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int64_t v = static_cast<int64_t>(p[i]);
    if (v < 0 || v >= num_nodes) {
      return OutOfRange("layer-wise inference: output group " + std::to_string(group) + " has id " +
                        std::to_string(v) + " at position " + std::to_string(i) + ", outside [0, " +
                        std::to_string(num_nodes) + ")");
    }
    bits[v >> 6] |= uint64_t{1} << (v & 63);
  }
  return Status::OK();
}

// next = set plus the in-neighbours of every node in set, over the words
// [w_begin, w_end).
template <typename I>
void ExpandWords(const ExecContext& ctx, const kernels::Csr& graph, const uint64_t* set, uint64_t* next,
                 int64_t w_begin, int64_t w_end) {
  const int64_t* ip = graph.indptr.data<int64_t>();
  const I* idx = graph.indices.data<I>();
  ctx.pool->ParallelFor(w_end - w_begin, 64, [&](int64_t begin, int64_t end) {
    for (int64_t w = w_begin + begin; w < w_begin + end; ++w) {
      for (uint64_t word = set[w]; word != 0; word &= word - 1) {
        const int64_t v = w * 64 + __builtin_ctzll(word);
        for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
          const int64_t u = static_cast<int64_t>(idx[e]);
          // Every writer ORs the same bit in: the result is the same in any order.
          __atomic_fetch_or(&next[u >> 6], uint64_t{1} << (u & 63), __ATOMIC_RELAXED);
        }
      }
    }
  });
}

// next = set plus the in-neighbours of every node in set; with
// `give_back_pages` window by window (NeededRows), else in one pass.
template <typename I>
void Expand(const ExecContext& ctx, const kernels::Csr& graph, const uint64_t* set, uint64_t* next,
            bool give_back_pages) {
  const int64_t n = graph.num_dst();
  const int64_t words = Words(n);
  ctx.pool->ParallelFor(words, 4096, [&](int64_t begin, int64_t end) {
    std::copy(set + begin, set + end, next + begin);
  });
  if (!give_back_pages) {
    ExpandWords<I>(ctx, graph, set, next, 0, words);
    return;
  }
  const int64_t* ip = graph.indptr.data<int64_t>();
  const I* idx = graph.indices.data<I>();
  for (int64_t w0 = 0; w0 < words;) {
    // Whole words, at least one, until the window's nodes own
    // kScanWindowEdges in-edges (a hub's word may own more alone).
    int64_t w1 = w0 + 1;
    while (w1 < words && ip[std::min(n, (w1 + 1) * 64)] - ip[w0 * 64] <= kScanWindowEdges) ++w1;
    ExpandWords<I>(ctx, graph, set, next, w0, w1);
    const int64_t a = w0 * 64, b = std::min(n, w1 * 64);
    ReleaseMappedPages(ip + a, static_cast<size_t>(b - a + 1) * sizeof(int64_t));
    ReleaseMappedPages(idx + ip[a], static_cast<size_t>(ip[b] - ip[a]) * sizeof(I));
    w0 = w1;
  }
}

int64_t PopCount(const std::vector<uint64_t>& bits) {
  int64_t count = 0;
  for (uint64_t w : bits) count += __builtin_popcountll(w);
  return count;
}

LayerRows RowsOf(const std::vector<uint64_t>& bits) {
  LayerRows r;
  r.all = false;
  r.bits = bits;
  const int64_t words = static_cast<int64_t>(bits.size());
  r.before.reserve(static_cast<size_t>((words + kWordsPerBlock - 1) / kWordsPerBlock + 1));
  int64_t count = 0;
  for (int64_t w = 0; w < words; ++w) {
    if (w % kWordsPerBlock == 0) r.before.push_back(count);
    count += __builtin_popcountll(bits[static_cast<size_t>(w)]);
  }
  r.before.push_back(count);
  return r;
}

}  // namespace

int64_t LayerRows::Rank(int64_t v) const {
  const int64_t w = v >> 6;
  int64_t rank = before[static_cast<size_t>(w / kWordsPerBlock)];
  for (int64_t i = w / kWordsPerBlock * kWordsPerBlock; i < w; ++i) {
    rank += __builtin_popcountll(bits[static_cast<size_t>(i)]);
  }
  const uint64_t below = (v & 63) == 0 ? 0 : bits[static_cast<size_t>(w)] << (64 - (v & 63));
  return rank + __builtin_popcountll(below);
}

void LayerRows::Ids(int64_t begin, int64_t end, int64_t* out) const {
  if (begin >= end) return;
  // The last block that starts at or below position `begin`.
  const int64_t blocks = static_cast<int64_t>(before.size()) - 1;
  const int64_t b = std::upper_bound(before.begin(), before.begin() + blocks, begin) - before.begin() - 1;
  int64_t position = before[static_cast<size_t>(b)];
  for (int64_t w = b * kWordsPerBlock; position < end; ++w) {
    for (uint64_t word = bits[static_cast<size_t>(w)]; word != 0 && position < end; word &= word - 1, ++position) {
      if (position >= begin) *out++ = w * 64 + __builtin_ctzll(word);
    }
  }
}

StatusOr<std::vector<LayerRows>> NeededRows(const ExecContext& ctx, const kernels::Csr& graph, int num_layers,
                                            const std::vector<Tensor>& outputs, bool give_back_pages) {
  std::vector<LayerRows> rows(static_cast<size_t>(num_layers > 1 ? num_layers - 1 : 0));
  if (outputs.empty() || rows.empty()) return rows;
  const int64_t n = graph.num_dst();
  std::vector<uint64_t> set(static_cast<size_t>(Words(n)), 0);
  std::vector<uint64_t> next(set.size());
  for (size_t g = 0; g < outputs.size(); ++g) {
    const Tensor& ids = outputs[g];
    if (!ids.defined() || ids.dim() != 1 || !ids.is_contiguous() ||
        (ids.dtype() != DType::kI32 && ids.dtype() != DType::kI64)) {
      return InvalidArgument("layer-wise inference: output group " + std::to_string(g) +
                             " must be a contiguous 1-D i32/i64 id list");
    }
    FS_RETURN_IF_ERROR(ids.dtype() == DType::kI32 ? MarkIds<int32_t>(ids, n, g, set.data())
                                                  : MarkIds<int64_t>(ids, n, g, set.data()));
  }
  for (int l = num_layers - 2; l >= 0; --l) {
    if (graph.indices.dtype() == DType::kI32) {
      Expand<int32_t>(ctx, graph, set.data(), next.data(), give_back_pages);
    } else {
      Expand<int64_t>(ctx, graph, set.data(), next.data(), give_back_pages);
    }
    std::swap(set, next);
    if (PopCount(set) == n) break;  // this layer and every one below it: all nodes
    rows[static_cast<size_t>(l)] = RowsOf(set);
  }
  return rows;
}

int64_t NeededRowsBytes(int64_t num_nodes, int num_layers) {
  const int64_t set = Words(num_nodes) * 8;
  const int64_t counts = (Words(num_nodes) + kWordsPerBlock - 1) / kWordsPerBlock * 8 + 8;
  return std::max(0, num_layers - 1) * (set + counts) + 2 * set;
}

}  // namespace foresight::trainer::internal
