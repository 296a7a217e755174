#include "foresight/sampler/neighbor_sampler.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "foresight/core/mapped_pages.h"
#include "foresight/kernels/ops.h"
#include "local_id_map.h"

namespace foresight::sampler {

NeighborSampler::NeighborSampler(kernels::Csr graph, std::vector<int64_t> fanouts, uint64_t seed)
    : graph_(std::move(graph)),
      fanouts_(std::move(fanouts)),
      seed_(seed),
      map_(std::make_unique<internal::LocalIdMap>()) {}

NeighborSampler::~NeighborSampler() = default;
NeighborSampler::NeighborSampler(NeighborSampler&&) noexcept = default;
NeighborSampler& NeighborSampler::operator=(NeighborSampler&&) noexcept = default;

RngKey NeighborSampler::HopKey(uint64_t seed, int64_t epoch, int64_t batch, int64_t hop) {
  return RngKey::FromSeed(seed)
      .Fold(static_cast<uint64_t>(RngPurpose::kSampling))
      .Fold(static_cast<uint64_t>(epoch))
      .Fold(static_cast<uint64_t>(batch))
      .Fold(static_cast<uint64_t>(hop));
}

Status NeighborSampler::CheckGraph() const {
  if (!graph_.indptr.defined() || !graph_.indices.defined()) {
    return InvalidArgument("NeighborSampler: the graph is empty (indptr or indices undefined)");
  }
  if (!graph_.device().is_cpu()) {
    return Unimplemented("NeighborSampler: graph on " + graph_.device().ToString() +
                         ": sampling a device-resident graph is not implemented; pass a host graph");
  }
  if (graph_.num_src != graph_.num_dst()) {
    return InvalidArgument("NeighborSampler: the graph must be square (a full graph with num_src == num_dst), got " +
                           std::to_string(graph_.num_dst()) + " rows and num_src " +
                           std::to_string(graph_.num_src));
  }
  return Status::OK();
}

Status NeighborSampler::PageTopology(bool guard) {
  FS_RETURN_IF_ERROR(CheckGraph());
  FS_RETURN_IF_ERROR(CheckReleasableMapping(graph_.indptr, "NeighborSampler: paged topology: graph.indptr"));
  FS_RETURN_IF_ERROR(CheckReleasableMapping(graph_.indices, "NeighborSampler: paged topology: graph.indices"));
  if (graph_.indptr.dtype() != DType::kI64) {
    return InvalidArgument("NeighborSampler: paged topology: graph.indptr must be i64, got " +
                           std::string(DTypeName(graph_.indptr.dtype())));
  }
  const char* env = std::getenv("FORESIGHT_TOPOLOGY_GUARD");
  guard = guard || (env != nullptr && std::string(env) == "1");
  FS_ASSIGN_OR_RETURN(std::unique_ptr<PageShadow> indptr,
                      PageShadow::Create(graph_.indptr, "NeighborSampler: paged topology: graph.indptr", guard));
  FS_ASSIGN_OR_RETURN(std::unique_ptr<PageShadow> indices,
                      PageShadow::Create(graph_.indices, "NeighborSampler: paged topology: graph.indices", guard));
  paged_graph_ = graph_;
  paged_graph_.indptr = indptr->tensor();
  paged_graph_.indices = indices->tensor();
  indptr_pages_ = std::move(indptr);
  indices_pages_ = std::move(indices);
  return Status::OK();
}

int64_t NeighborSampler::topology_pages_loaded() const {
  if (!paged_topology()) return 0;
  return indptr_pages_->loaded_pages() + indices_pages_->loaded_pages();
}

Status NeighborSampler::LoadRows(const ExecContext& ctx, const Tensor& frontier) {
  const int64_t n = graph_.num_dst();
  const int64_t m = frontier.numel();
  auto id = [&](int64_t i) -> int64_t {
    return frontier.dtype() == DType::kI32 ? frontier.data<int32_t>()[i] : frontier.data<int64_t>()[i];
  };
  // indptr[v] and indptr[v + 1] first: they say where the rows lie.
  for (int64_t i = 0; i < m; ++i) {
    const int64_t v = id(i);
    if (v >= 0 && v < n) indptr_pages_->Want(v * 8, (v + 2) * 8);
  }
  FS_RETURN_IF_ERROR(indptr_pages_->Load(ctx));
  const int64_t* indptr = paged_graph_.indptr.data<int64_t>();
  const int64_t element = static_cast<int64_t>(graph_.indices.element_size());
  const int64_t edges = graph_.indices.numel();
  for (int64_t i = 0; i < m; ++i) {
    const int64_t v = id(i);
    if (v < 0 || v >= n) continue;
    // A corrupt indptr is the kernel's to report; load only what exists.
    const int64_t begin = std::clamp<int64_t>(indptr[v], 0, edges);
    const int64_t end = std::clamp<int64_t>(indptr[v + 1], begin, edges);
    indices_pages_->Want(begin * element, end * element);
  }
  FS_RETURN_IF_ERROR(indices_pages_->Load(ctx));
  last_call_pages_ = std::max(last_call_pages_, topology_pages_loaded());
  return Status::OK();
}

void NeighborSampler::ReleaseTopology() {
  if (!paged_topology()) return;
  indptr_pages_->Release();
  indices_pages_->Release();
}

Status NeighborSampler::CheckSourceMask(const Tensor& source_mask) const {
  const char* what = "NeighborSampler: source_mask";
  FS_RETURN_IF_ERROR(CheckDefined(source_mask, what));
  FS_RETURN_IF_ERROR(CheckDType(source_mask, DType::kU8, what));
  FS_RETURN_IF_ERROR(CheckDim(source_mask, 1, what));
  FS_RETURN_IF_ERROR(CheckContiguous(source_mask, what));
  if (!source_mask.device().is_cpu()) {
    return InvalidArgument(std::string(what) + ": expected a host tensor, got one on " +
                           source_mask.device().ToString());
  }
  if (source_mask.size(0) != graph_.num_dst()) {
    return InvalidArgument(std::string(what) + " has " + std::to_string(source_mask.size(0)) +
                           " entries, expected one per graph node (" + std::to_string(graph_.num_dst()) + ")");
  }
  return Status::OK();
}

Status NeighborSampler::CheckSeedsResident(const Tensor& source_mask) const {
  const uint8_t* m = source_mask.data<uint8_t>();
  const Tensor seeds = map_->Nodes();
  const int64_t* nodes = seeds.data<int64_t>();
  for (int64_t i = 0; i < seeds.size(0); ++i) {
    if (m[nodes[i]] == 0) {
      return InvalidArgument("NeighborSampler: seeds[" + std::to_string(i) + "] = " + std::to_string(nodes[i]) +
                             " is not resident (source_mask is 0 there): with resident sampling every seed "
                             "must lie in the batch's resident partitions");
    }
  }
  return Status::OK();
}

Status NeighborSampler::SampleHop(const ExecContext& ctx, int64_t fanout, RngKey key, const Tensor* source_mask,
                                  const Tensor* seeds, const kernels::SampledAhead* drawn,
                                  kernels::SampledAhead* ahead, kernels::Csr* block) {
  // The frontier is the seeds, or a view of the map's nodes so far: the
  // relabelling below only appends to them while the op reads the frontier.
  const Tensor frontier = seeds != nullptr ? *seeds : map_->Nodes();
  if (paged_topology()) FS_RETURN_IF_ERROR(LoadRows(ctx, frontier));
  const kernels::Csr& graph = paged_topology() ? paged_graph_ : graph_;
  bool begun = seeds == nullptr;
  auto begin = [&]() {
    begun = true;
    FS_RETURN_IF_ERROR(map_->Begin(graph_.num_dst(), *seeds, "seeds"));
    return source_mask != nullptr ? CheckSeedsResident(*source_mask) : Status::OK();
  };
  // Relabel while sampling: the sink gets the sampled global ids chunk by
  // chunk in order and writes the block's local ids in their place, on
  // this thread between the chunks it samples (the id table stays in this
  // core's caches).
  internal::LocalIdMap* map = map_.get();
  const kernels::SampleSink relabel = [&](const int64_t* sampled, int64_t* ids, int64_t b, int64_t e) {
    if (!begun) FS_RETURN_IF_ERROR(begin());
    return map->Relabel(sampled, ids + b, e - b);
  };
  Tensor indptr, neighbors;
  FS_RETURN_IF_ERROR(
      kernels::SampleNeighbors(ctx, graph, frontier, fanout, key, &indptr, &neighbors, source_mask, &relabel,
                               drawn, ahead));
  if (!begun) FS_RETURN_IF_ERROR(begin());
  block->indptr = std::move(indptr);
  block->indices = std::move(neighbors);
  block->num_src = map_->size();
  block->edge_weight = Tensor();
  return Status::OK();
}

Status NeighborSampler::Sample(const ExecContext& ctx, const Tensor& seeds, int64_t epoch, int64_t batch,
                               SampledBatch* out, const Tensor* source_mask) {
  if (out == nullptr) return InvalidArgument("NeighborSampler::Sample: out is null");
  FS_RETURN_IF_ERROR(CheckGraph());
  if (fanouts_.empty()) return InvalidArgument("NeighborSampler: fanouts is empty (need one per layer)");
  for (size_t h = 0; h < fanouts_.size(); ++h) {
    if (fanouts_[h] < -1) {
      return InvalidArgument("NeighborSampler: fanouts[" + std::to_string(h) + "] = " +
                             std::to_string(fanouts_[h]) + " (expected -1 for all neighbours, or >= 0)");
    }
  }
  FS_RETURN_IF_ERROR(internal::LocalIdMap::CheckIds(seeds, "seeds"));
  if (source_mask != nullptr) FS_RETURN_IF_ERROR(CheckSourceMask(*source_mask));
  // Paged: the call's topology pages go back when it returns, whatever
  // it returns.
  last_call_pages_ = 0;
  struct TopologyRelease {
    NeighborSampler* sampler;
    ~TopologyRelease() { sampler->ReleaseTopology(); }
  } release{this};
  internal::ScopedReset reset(map_.get());
  const int num_layers = static_cast<int>(fanouts_.size());
  std::vector<kernels::Csr> blocks(num_layers);
  int64_t edges = 0;
  // Hop 0 draws the seeds' neighbours, enters the seeds into the map while
  // it draws, and yields the last block. Entering them first cost 4% of
  // sampling with the other threads idle. Each hop also draws the next hop
  // for its own frontier, the next frontier's first nodes, with the
  // threads that run out of its work while this thread relabels it (the
  // other thread idled a third of the first hop).
  kernels::SampledAhead ahead[2];
  for (int h = 0; h < num_layers; ++h) {
    kernels::Csr& block = blocks[num_layers - 1 - h];
    const kernels::SampledAhead* drawn = h > 0 ? &ahead[(h - 1) % 2] : nullptr;
    kernels::SampledAhead* next = nullptr;
    if (h + 1 < num_layers) {
      next = &ahead[h % 2];
      *next = kernels::SampledAhead{};
      next->fanout = fanouts_[h + 1];
      next->key = HopKey(seed_, epoch, batch, h + 1);
    }
    FS_RETURN_IF_ERROR(SampleHop(ctx, fanouts_[h], HopKey(seed_, epoch, batch, h), source_mask,
                                 h == 0 ? &seeds : nullptr, drawn, next, &block));
    edges += block.num_edges();
  }
  out->input_nodes = map_->TakeNodes();
  out->seeds = Tensor::Empty({seeds.size(0)}, DType::kI64);
  std::copy_n(out->input_nodes.data<int64_t>(), seeds.size(0), out->seeds.data<int64_t>());
  out->blocks = std::move(blocks);
  out->sampled_edges = edges;
  return Status::OK();
}

Status NeighborSampler::FullNeighborBlock(const ExecContext& ctx, const Tensor& dst_nodes, kernels::Csr* block,
                                          Tensor* src_nodes) {
  if (block == nullptr || src_nodes == nullptr) {
    return InvalidArgument("NeighborSampler::FullNeighborBlock: output pointer is null");
  }
  FS_RETURN_IF_ERROR(CheckGraph());
  // Paged: the call's topology pages go back when it returns, whatever
  // it returns.
  last_call_pages_ = 0;
  struct TopologyRelease {
    NeighborSampler* sampler;
    ~TopologyRelease() { sampler->ReleaseTopology(); }
  } release{this};
  internal::ScopedReset reset(map_.get());
  FS_RETURN_IF_ERROR(map_->Begin(graph_.num_dst(), dst_nodes, "dst_nodes"));
  kernels::Csr result;
  // fanout -1 takes every neighbour in CSR order and draws nothing.
  FS_RETURN_IF_ERROR(SampleHop(ctx, -1, RngKey{}, nullptr, nullptr, nullptr, nullptr, &result));
  *src_nodes = map_->TakeNodes();
  *block = std::move(result);
  return Status::OK();
}

}  // namespace foresight::sampler
