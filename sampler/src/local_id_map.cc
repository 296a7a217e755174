#include "local_id_map.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace foresight::sampler::internal {

namespace {

// How far ahead Relabel prefetches slots: the lookups are random over an
// array of 4 bytes per node, which outgrows the caches on large graphs.
constexpr int64_t kPrefetchDistance = 16;
constexpr int64_t kMaxLocalIds = std::numeric_limits<int32_t>::max();

constexpr size_t kHugePage = size_t{2} << 20;

template <typename T>
Status BeginImpl(const T* ids, int64_t n, int64_t num_nodes, const char* what, int32_t* s,
                 std::vector<int64_t>* nodes) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = static_cast<int64_t>(ids[i]);
    if (v < 0 || v >= num_nodes) {
      return OutOfRange(std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(v) +
                        " is out of range [0, " + std::to_string(num_nodes) + ")");
    }
    if (s[v] >= 0) {
      return InvalidArgument(std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(v) +
                             " repeats " + what + "[" + std::to_string(s[v]) +
                             "] (destination nodes must be distinct)");
    }
    s[v] = static_cast<int32_t>(i);
    nodes->push_back(v);
  }
  return Status::OK();
}

}  // namespace

LocalIdMap::~LocalIdMap() {
  if (slot_ != nullptr) munmap(slot_, slot_bytes_);
}

Status LocalIdMap::Allocate(int64_t num_nodes) {
  if (slot_ != nullptr && num_nodes == num_nodes_) return Status::OK();
  if (slot_ != nullptr) munmap(slot_, slot_bytes_);
  slot_ = nullptr;
  num_nodes_ = 0;
  // Whole huge pages, so the kernel can back the array with them.
  const size_t bytes = std::max<size_t>(1, static_cast<size_t>(num_nodes) * sizeof(int32_t));
  slot_bytes_ = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = mmap(nullptr, slot_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return ResourceExhausted("NeighborSampler: cannot map " + std::to_string(slot_bytes_) +
                             " bytes for the id map of " + std::to_string(num_nodes) + " nodes");
  }
#ifdef MADV_HUGEPAGE
  madvise(p, slot_bytes_, MADV_HUGEPAGE);  // advisory: ignored where unsupported
#endif
  slot_ = static_cast<int32_t*>(p);
  num_nodes_ = num_nodes;
  std::memset(slot_, 0xff, static_cast<size_t>(num_nodes) * sizeof(int32_t));  // all -1
  return Status::OK();
}

Status LocalIdMap::Begin(int64_t num_nodes, const Tensor& ids, const char* what) {
  Reset();
  if (!ids.defined() || ids.dim() != 1 || !ids.is_contiguous() || !ids.device().is_cpu() ||
      (ids.dtype() != DType::kI32 && ids.dtype() != DType::kI64)) {
    return InvalidArgument(std::string(what) + ": expected a contiguous 1-D i32 or i64 host tensor, got " +
                           (ids.defined() ? ids.ToString() : std::string("an undefined tensor")));
  }
  if (ids.size(0) > kMaxLocalIds) {
    return InvalidArgument(std::string(what) + ": " + std::to_string(ids.size(0)) +
                           " nodes exceed the 2^31-1 local ids of one batch");
  }
  FS_RETURN_IF_ERROR(Allocate(num_nodes));
  nodes_.reserve(static_cast<size_t>(ids.size(0)));
  const Status s = ids.dtype() == DType::kI32
                       ? BeginImpl(ids.data<int32_t>(), ids.size(0), num_nodes, what, slot_, &nodes_)
                       : BeginImpl(ids.data<int64_t>(), ids.size(0), num_nodes, what, slot_, &nodes_);
  if (!s.ok()) Reset();
  return s;
}

Status LocalIdMap::Relabel(int64_t* ids, int64_t n) {
  const int64_t num_nodes = num_nodes_;
  int32_t* slot = slot_;
  if (size() + n > kMaxLocalIds) {
    // Only possible when the batch could exceed 2^31-1 distinct nodes.
    int64_t bound = size() + n;
    if (bound > num_nodes) bound = num_nodes;
    if (bound > kMaxLocalIds) {
      return ResourceExhausted("NeighborSampler: a batch may reach " + std::to_string(bound) +
                               " distinct nodes, beyond the 2^31-1 local ids of a block");
    }
  }
  // Branch-free: whether an id is new is a coin flip in a sampled batch
  // (about half are), so a branch mispredicts on every other id. Every id
  // writes its slot and the next node-list entry; only a new id advances
  // `next`, so an old id's entry is overwritten by the next new one.
  // At most min(first + n, num_nodes) ids exist afterwards; the entry one
  // past the last is written (and dropped) by a trailing old id.
  const int64_t first = size();
  nodes_.resize(static_cast<size_t>(std::min(first + n, num_nodes) + 1));
  int64_t* nodes = nodes_.data();
  int32_t next = static_cast<int32_t>(first);
  for (int64_t e = 0; e < n; ++e) {
    if (e + kPrefetchDistance < n) {
      const uint64_t ahead = static_cast<uint64_t>(ids[e + kPrefetchDistance]);
      if (ahead < static_cast<uint64_t>(num_nodes)) __builtin_prefetch(slot + ahead, 1);
    }
    const int64_t v = ids[e];
    if (static_cast<uint64_t>(v) >= static_cast<uint64_t>(num_nodes)) {
      nodes_.resize(static_cast<size_t>(next));
      return DataLoss("NeighborSampler: graph.indices holds node " + std::to_string(v) +
                      ", outside [0, " + std::to_string(num_nodes) + ") (run ValidateCsr on the graph)");
    }
    const int32_t old = slot[v];
    const int32_t is_new = old < 0;
    const int32_t l = is_new ? next : old;
    slot[v] = l;
    nodes[next] = v;
    next += is_new;
    ids[e] = l;
  }
  nodes_.resize(static_cast<size_t>(next));
  return Status::OK();
}

void LocalIdMap::Reset(ThreadPool* pool) {
  int32_t* slot = slot_;
  const int64_t* nodes = nodes_.data();
  auto clear = [slot, nodes](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) slot[nodes[i]] = -1;
  };
  if (pool != nullptr) {
    pool->ParallelFor(size(), 1 << 13, clear);
  } else {
    clear(0, size());
  }
  nodes_.clear();
}

Tensor LocalIdMap::NodesTensor() const {
  Tensor t = Tensor::Empty({size()}, DType::kI64);
  if (!nodes_.empty()) std::memcpy(t.raw_data(), nodes_.data(), nodes_.size() * sizeof(int64_t));
  return t;
}

}  // namespace foresight::sampler::internal
