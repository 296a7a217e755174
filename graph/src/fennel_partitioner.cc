// Streaming Fennel: nodes arrive in id order with their CSR row (their
// in-neighbours); node v goes to the partition i, among those below the
// capacity, that maximises
//
//   g(v, i) = |N(v) ∩ P_i| - alpha * gamma * |P_i|^(gamma - 1)
//
// with gamma = 1.5 and alpha = sqrt(P) * E / N^1.5, the constants of the
// Fennel paper (m = E, the edges the stream shows: each CSR edge is seen
// once, at its destination). Only already-placed neighbours count. The
// capacity is floor((1 + imbalance) * N / P), at least ceil(N / P), so no
// partition ever exceeds it. Ties go to the lighter partition, then the
// lower index, so the result is a function of the graph alone.
//
// Memory: part[] (4 bytes a node), P loads, one read chunk. Among the
// partitions holding none of v's neighbours the lightest one scores best
// (the penalty grows with the load), so each node scores only the
// partitions its neighbours touch plus the lightest open one, found in a
// tournament tree: O(deg + log P) per node.
#include <cmath>
#include <limits>

#include "foresight/core/progress.h"
#include "partitioners.h"

namespace foresight::graph::internal {
namespace {

constexpr double kGamma = 1.5;

// Smallest (load, index) over partitions that are still open.
class LightestTree {
 public:
  explicit LightestTree(int parts) {
    size_ = 1;
    while (size_ < parts) size_ <<= 1;
    key_.assign(2 * static_cast<size_t>(size_), kClosed);
    for (int i = 0; i < parts; ++i) key_[size_ + i] = Key(0, i);
    for (int i = size_ - 1; i >= 1; --i) key_[i] = std::min(key_[2 * i], key_[2 * i + 1]);
  }
  // Sets partition i's load (or closes it).
  void Set(int i, int64_t load, bool open) {
    size_t k = size_ + i;
    key_[k] = open ? Key(load, i) : kClosed;
    for (k >>= 1; k >= 1; k >>= 1) key_[k] = std::min(key_[2 * k], key_[2 * k + 1]);
  }
  // The lightest open partition, or -1 when all are full.
  int Lightest() const { return key_[1] == kClosed ? -1 : static_cast<int>(key_[1] & 0xffffffffu); }

 private:
  static constexpr uint64_t kClosed = std::numeric_limits<uint64_t>::max();
  static uint64_t Key(int64_t load, int i) { return (static_cast<uint64_t>(load) << 32) | static_cast<uint32_t>(i); }
  int size_;
  std::vector<uint64_t> key_;
};

template <typename T>
Status RunFennel(const SourceDataset& src, const AssignOptions& o, std::vector<int32_t>* part_out) {
  const int64_t n = src.num_nodes;
  const int parts = o.parts;
  std::vector<int32_t>& part = *part_out;
  part.assign(static_cast<size_t>(n), -1);
  const double alpha = std::sqrt(static_cast<double>(parts)) * static_cast<double>(src.num_edges) /
                       std::pow(static_cast<double>(n), 1.5);
  const double penalty = alpha * kGamma;  // times load^(gamma - 1) = sqrt(load)
  const int64_t even = (n + parts - 1) / parts;
  const int64_t cap = std::max<int64_t>(
      even, static_cast<int64_t>(std::floor((1.0 + o.imbalance) * static_cast<double>(n) / parts)));
  std::vector<int64_t> hits(static_cast<size_t>(parts), 0);
  std::vector<int> touched;
  std::vector<int64_t> load;
  ProgressOptions po;
  po.unit = "nodes";
  Progress progress("partition (stream)", n, po);
  {
    load.assign(static_cast<size_t>(parts), 0);
    LightestTree lightest(parts);
    FS_RETURN_IF_ERROR(ForEachRow<T>(src, o.read_chunk_bytes, [&](int64_t v, const T* first, const T* last) {
      for (const T* id = first; id != last; ++id) {
        const int64_t u = static_cast<int64_t>(*id);
        if (u == v) continue;
        const int32_t pu = part[static_cast<size_t>(u)];
        if (pu < 0) continue;
        if (hits[pu]++ == 0) touched.push_back(pu);
      }
      int best = lightest.Lightest();
      if (best < 0) return Internal("fennel: every partition is full before node " + std::to_string(v));
      double best_score = -penalty * std::sqrt(static_cast<double>(load[best]));
      for (int i : touched) {
        if (load[i] < cap) {
          const double score = static_cast<double>(hits[i]) - penalty * std::sqrt(static_cast<double>(load[i]));
          if (score > best_score ||
              (score == best_score && (load[i] < load[best] || (load[i] == load[best] && i < best)))) {
            best = i;
            best_score = score;
          }
        }
        hits[i] = 0;
      }
      touched.clear();
      part[static_cast<size_t>(v)] = best;
      ++load[best];
      lightest.Set(best, load[best], load[best] < cap);
      if ((v & 4095) == 4095) progress.Advance(4096);
      return Status::OK();
    }));
  }
  progress.Advance(n & 4095);
  progress.Finish("");
  return Status::OK();
}

}  // namespace

StatusOr<std::vector<int32_t>> FennelAssign(const SourceDataset& src, const AssignOptions& options) {
  std::vector<int32_t> part;
  if (src.indices_i64()) {
    FS_RETURN_IF_ERROR(RunFennel<int64_t>(src, options, &part));
  } else {
    FS_RETURN_IF_ERROR(RunFennel<int32_t>(src, options, &part));
  }
  return part;
}

}  // namespace foresight::graph::internal
