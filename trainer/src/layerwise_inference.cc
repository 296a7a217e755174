#include "layerwise_inference.h"

#include <algorithm>
#include <future>
#include <memory>
#include <string>
#include <utility>

#include "foresight/autograd/tape.h"
#include "foresight/core/mapped_pages.h"
#include "foresight/kernels/ops.h"
#include "needed_rows.h"
#include "node_data.h"

namespace foresight::trainer::internal {

using autograd::GraphBlock;
using autograd::Tape;
using autograd::Var;
using storage::RowRequest;
using storage::RowStore;

namespace {

// Rows per read when a whole store is loaded (whole-graph mode): bounds the
// request list, not the result.
constexpr int64_t kLoadBatchRows = 1 << 16;

// A submission that must finish before its buffers go away: on an early
// return the destructor waits for it (its Status is already superseded by
// the error being returned).
struct Pending {
  RowStore* store = nullptr;
  storage::IoTicket ticket = 0;
  bool in_flight = false;

  Status Wait() {
    if (!in_flight) return Status::OK();
    in_flight = false;
    return store->Wait(ticket);
  }
  ~Pending() {
    if (in_flight) {
      Status ignored = store->Wait(ticket);
      (void)ignored;
    }
  }
};

// Every row of `store` ([num_rows, row_width] of its dtype).
StatusOr<Tensor> LoadAllRows(RowStore& store) {
  const int64_t n = store.num_rows();
  Tensor all = Tensor::Empty({n, store.row_width()}, store.dtype());
  char* base = static_cast<char*>(all.raw_data());
  const int64_t rb = store.row_bytes();
  std::vector<RowRequest> reqs;
  for (int64_t begin = 0; begin < n; begin += kLoadBatchRows) {
    const int64_t end = std::min(n, begin + kLoadBatchRows);
    reqs.resize(static_cast<size_t>(end - begin));
    for (int64_t i = begin; i < end; ++i) reqs[static_cast<size_t>(i - begin)] = {i, base + i * rb};
    FS_RETURN_IF_ERROR(store.Read(reqs));
  }
  return all;
}

// Paged topology: gives back the file pages that the scans of
// sampler.graph() here mapped (the sampler's own reads never map them).
void ReleaseGraphPages(const sampler::NeighborSampler& sampler) {
  if (!sampler.paged_topology()) return;
  ReleaseMappedPages(sampler.graph().indptr);
  ReleaseMappedPages(sampler.graph().indices);
}

// ---- whole graph per layer (models trained on the full graph) ----

StatusOr<Tensor> WholeGraphLayer(const ExecContext& ctx, GnnModel& model, int layer, GraphBlock& whole_graph,
                                 const Tensor& h) {
  FS_ASSIGN_OR_RETURN(Tensor x, FeaturesAsF32(ctx, h));
  Tape tape(ctx, /*training=*/false, /*record=*/false);
  FS_ASSIGN_OR_RETURN(Var y, model.ForwardLayer(tape, layer, whole_graph, Var(x)));
  return y.value();
}

Status WholeGraphInference(const ExecContext& ctx, GnnModel& model, GraphBlock& whole_graph,
                           const Tensor& features, const std::vector<Tensor>& output_groups,
                           bool want_embeddings, LayerwiseOutputs* out) {
  const int num_layers = model.num_layers();
  if (want_embeddings && num_layers == 1) {
    FS_ASSIGN_OR_RETURN(out->embeddings, FeaturesAsF32(ctx, features));
  }
  Tensor h = features;
  for (int l = 0; l + 1 < num_layers; ++l) {
    FS_ASSIGN_OR_RETURN(h, WholeGraphLayer(ctx, model, l, whole_graph, h));
  }
  if (want_embeddings && num_layers > 1) out->embeddings = h;
  FS_ASSIGN_OR_RETURN(Tensor all, WholeGraphLayer(ctx, model, num_layers - 1, whole_graph, h));
  if (output_groups.empty()) {
    out->logits.push_back(all);
    return Status::OK();
  }
  for (const Tensor& ids : output_groups) {
    Tensor rows = Tensor::Empty({ids.numel(), all.size(1)}, DType::kF32);
    FS_RETURN_IF_ERROR(kernels::GatherRows(ctx, all, ids, &rows));
    out->logits.push_back(rows);
  }
  return Status::OK();
}

// ---- chunked ----

// Where a layer reads its input rows: `store`, at key rows->Rank(u) for
// node u when the layer below kept only some rows, else at key u.
struct LayerInput {
  RowStore* store = nullptr;
  const LayerRows* rows = nullptr;
};

// A layer's destinations: nodes 0..n-1 (neither set), an id list (i32/i64),
// or the set a LayerRows keeps.
struct Destinations {
  const Tensor* ids = nullptr;
  const LayerRows* rows = nullptr;

  // The ids at positions [begin, end): a view of `ids`, else i64 made here.
  Tensor Slice(int64_t begin, int64_t end) const {
    if (ids != nullptr) return ids->Slice(0, begin, end);
    if (rows == nullptr) return IdRange(begin, end);
    Tensor out = Tensor::Empty({end - begin}, DType::kI64);
    rows->Ids(begin, end, out.data<int64_t>());
    return out;
  }
};

// One chunk of destinations: its block, its sources' global ids, and their
// input rows, read into `rows` (a prefix of `buffer`, reused by later
// chunks). `read` is declared last, so a read still in flight is waited
// for before the buffers it writes into go away.
struct Chunk {
  int64_t begin = 0, end = 0;
  kernels::Csr csr;
  Tensor src_nodes;
  Tensor buffer;
  Tensor rows;
  std::vector<RowRequest> reqs;
  Pending read;
};

// Runs one layer chunk by chunk, reading the next chunk's rows while the
// current one computes.
class LayerRunner {
 public:
  // `gcn_degrees` (i64 [N], undefined unless the model is gcn): each
  // node's out-degree in the whole graph's GCN normalisation.
  LayerRunner(const ExecContext& ctx, GnnModel& model, sampler::NeighborSampler& sampler,
              Tensor gcn_degrees, int64_t chunk_size)
      : ctx_(ctx), model_(model), sampler_(sampler), gcn_degrees_(std::move(gcn_degrees)),
        chunk_size_(chunk_size) {}

  // Layer `layer` for the n_dst destinations `dst`, reading `in`.
  // sink(begin, end, y) receives the rows of destinations [begin, end) of
  // `dst` (y f32 [end - begin, out]); y stays valid as long as the sink
  // keeps it.
  template <typename Sink>
  Status Run(int layer, const LayerInput& in, const Destinations& dst, int64_t n_dst, Sink&& sink) {
    CutChunks(dst, n_dst);
    ReleaseGraphPages(sampler_);
    const int64_t num_chunks = static_cast<int64_t>(bounds_.size()) - 1;
    if (num_chunks <= 0) return Status::OK();
    Chunk chunks[2];
    // Chunk k+1's block and rows are loaded by a pool task while this
    // thread computes chunk k: the store's copies (page cache or memory)
    // then overlap the layer's compute, on the same CPU budget. Only the
    // task touches the sampler and the input store meanwhile.
    Loader loader;
    loader.Start(*ctx_.pool, [&] { return Load(in, dst, n_dst, 0, &chunks[0]); });
    for (int64_t k = 0; k < num_chunks; ++k) {
      FS_RETURN_IF_ERROR(loader.Finish());
      Chunk& cur = chunks[k & 1];
      if (k + 1 < num_chunks) {
        Chunk* next = &chunks[(k + 1) & 1];
        loader.Start(*ctx_.pool, [&, k, next] { return Load(in, dst, n_dst, k + 1, next); });
      }
      FS_ASSIGN_OR_RETURN(Tensor y, Compute(layer, &cur));
      FS_RETURN_IF_ERROR(sink(cur.begin, cur.end, y));
    }
    return Status::OK();
  }

 private:
  // One load in flight on the pool; waited for before its chunk is used,
  // and on every return (its chunk's buffers must outlive it).
  class Loader {
   public:
    ~Loader() {
      if (done_.valid()) done_.wait();
    }
    template <typename Fn>
    void Start(ThreadPool& pool, Fn fn) {
      done_ = pool.Submit([this, fn] { status_ = fn(); });
    }
    Status Finish() {
      done_.get();
      return status_;
    }

   private:
    std::future<void> done_;
    Status status_;
  };

  Status Load(const LayerInput& in, const Destinations& dst, int64_t n_dst, int64_t k, Chunk* c) {
    FS_RETURN_IF_ERROR(Prepare(in, dst, n_dst, k, c));
    return c->read.Wait();
  }

  // Builds chunk k's block and submits the read of its sources' rows.
  // Runs on a pool task: its loops run inline there.
  Status Prepare(const LayerInput& in, const Destinations& dst, int64_t n_dst, int64_t k, Chunk* c) {
    c->begin = bounds_[static_cast<size_t>(k)];
    c->end = bounds_[static_cast<size_t>(k) + 1];
    const Tensor ids = dst.Slice(c->begin, c->end);
    FS_RETURN_IF_ERROR(sampler_.FullNeighborBlock(ctx_, ids, &c->csr, &c->src_nodes));
    const int64_t n_src = c->src_nodes.numel();
    RowStore& store = *in.store;
    const int64_t width = store.row_width();
    if (!c->buffer.defined() || c->buffer.size(0) < n_src || c->buffer.size(1) != width ||
        c->buffer.dtype() != store.dtype()) {
      // A little slack, so slowly growing chunks do not reallocate each time.
      c->buffer = Tensor::Empty({n_src + n_src / 4, width}, store.dtype());
    }
    c->rows = c->buffer.Slice(0, 0, n_src);
    c->reqs.resize(static_cast<size_t>(n_src));
    const int64_t* src = c->src_nodes.data<int64_t>();
    const LayerRows* below = in.rows;
    char* base = static_cast<char*>(c->rows.raw_data());
    const int64_t rb = store.row_bytes();
    RowRequest* reqs = c->reqs.data();
    ctx_.pool->ParallelFor(n_src, 16384, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        reqs[i].key = below != nullptr ? below->Rank(src[i]) : src[i];
        reqs[i].data = base + i * rb;
      }
    });
    FS_ASSIGN_OR_RETURN(c->read.ticket, store.SubmitRead(c->reqs, nullptr));
    c->read.store = &store;
    c->read.in_flight = true;
    return Status::OK();
  }

  StatusOr<Tensor> Compute(int layer, Chunk* c) {
    FS_ASSIGN_OR_RETURN(Tensor x, FeaturesAsF32(ctx_, c->rows));
    std::unique_ptr<GraphBlock> block;
    if (gcn_degrees_.defined()) {
      // The whole graph's normalisation: in-degrees are the chunk's own
      // (a block row holds all in-edges), out-degrees the whole graph's.
      const int64_t n_src = c->src_nodes.numel();
      Tensor degrees = Tensor::Empty({n_src}, DType::kI64);
      const int64_t* src = c->src_nodes.data<int64_t>();
      const int64_t* all = gcn_degrees_.data<int64_t>();
      int64_t* d = degrees.data<int64_t>();
      ctx_.pool->ParallelFor(n_src, 16384, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) d[i] = all[src[i]];
      });
      kernels::Csr normalized;
      FS_RETURN_IF_ERROR(kernels::GcnNormalizeWithOutDegrees(ctx_, c->csr, degrees, &normalized));
      FS_RETURN_IF_ERROR(CsrOnDevice(ctx_.device, &c->csr));
      FS_RETURN_IF_ERROR(CsrOnDevice(ctx_.device, &normalized));
      block = std::make_unique<GraphBlock>(std::move(c->csr), std::move(normalized));
    } else {
      FS_RETURN_IF_ERROR(CsrOnDevice(ctx_.device, &c->csr));
      block = std::make_unique<GraphBlock>(std::move(c->csr));
    }
    // On a GPU (ctx.device) the chunk's rows and block go to it and the
    // layer's rows come back: the scratch stores and sinks hold host rows.
    FS_ASSIGN_OR_RETURN(x, OnDevice(x, ctx_.device));
    Tape tape(ctx_, /*training=*/false, /*record=*/false);
    FS_ASSIGN_OR_RETURN(Var y, model_.ForwardLayer(tape, layer, *block, Var(x)));
    return OnDevice(y.value(), Device::Cpu());
  }

  const ExecContext& ctx_;
  GnnModel& model_;
  sampler::NeighborSampler& sampler_;
  Tensor gcn_degrees_;
  // Cuts dst (or 0..n_dst-1) into bounds_: at most chunk_size_
  // destinations each, and no more in-edges than
  // kChunkSourcesPerDestination * chunk_size_ unless one destination has
  // more alone. Depends only on the graph and the ids, never on threads.
  static constexpr int64_t kReleaseEveryIds = 16;
  void CutChunks(const Destinations& dst, int64_t n_dst) {
    bounds_.assign(1, 0);
    const int64_t* indptr = sampler_.graph().indptr.data<int64_t>();
    const int64_t max_edges = kChunkSourcesPerDestination * chunk_size_;
    // The ids a piece at a time: a set's are made, not stored.
    constexpr int64_t kPiece = 1 << 16;
    Tensor piece;
    int64_t edges = 0;
    for (int64_t i = 0; i < n_dst; ++i) {
      if (i % kPiece == 0) piece = dst.Slice(i, std::min(n_dst, i + kPiece));
      const int64_t at = (i % kPiece) * piece.stride(0);
      const int64_t v = piece.dtype() == DType::kI32 ? piece.data<int32_t>()[at] : piece.data<int64_t>()[at];
      const int64_t degree = indptr[v + 1] - indptr[v];
      // Paged topology: ids in no useful order can map a 2 MiB folio of
      // indptr each; give the pages back every few ids (a walk of mostly
      // empty page tables) so the scan holds tens of MiB, not all indptr.
      if (sampler_.paged_topology() && i % kReleaseEveryIds == kReleaseEveryIds - 1) {
        ReleaseMappedPages(sampler_.graph().indptr);
      }
      const int64_t begin = bounds_.back();
      if (i > begin && (i - begin == chunk_size_ || edges + degree > max_edges)) {
        bounds_.push_back(i);
        edges = 0;
      }
      edges += degree;
    }
    if (n_dst > 0) bounds_.push_back(n_dst);
  }

  int64_t chunk_size_;
  std::vector<int64_t> bounds_;  // chunk k is destinations [bounds_[k], bounds_[k+1])
};

// A sink writing chunk rows to positions [begin, end) of a scratch store,
// one write in flight while the next chunk computes.
class StoreSink {
 public:
  explicit StoreSink(RowStore& store) : store_(store) { write_.store = &store; }

  Status operator()(int64_t begin, int64_t end, const Tensor& y) {
    FS_RETURN_IF_ERROR(write_.Wait());
    rows_ = y;  // kept alive until the write completes
    reqs_.resize(static_cast<size_t>(end - begin));
    char* base = static_cast<char*>(rows_.raw_data());
    const int64_t rb = store_.row_bytes();
    for (int64_t i = begin; i < end; ++i) reqs_[static_cast<size_t>(i - begin)] = {i, base + (i - begin) * rb};
    FS_ASSIGN_OR_RETURN(write_.ticket, store_.SubmitWrite(reqs_));
    write_.in_flight = true;
    return Status::OK();
  }
  Status Finish() { return write_.Wait(); }

 private:
  RowStore& store_;
  Tensor rows_;
  std::vector<RowRequest> reqs_;
  Pending write_;  // last: waited for before rows_ and reqs_ go away
};

}  // namespace

Status LayerwiseInference(const ExecContext& ctx, GnnModel& model, sampler::NeighborSampler& sampler,
                          GraphBlock& whole_graph, RowStore& features, int64_t chunk_size,
                          const std::vector<Tensor>& output_groups, bool want_embeddings,
                          bool whole_graph_per_layer, const InferenceMemory& memory, LayerwiseOutputs* out) {
  if (chunk_size < 1) return InvalidArgument("layer-wise inference: chunk size must be >= 1");
  if (memory.budget_bytes < 0) {
    return InvalidArgument("layer-wise inference: memory budget must be >= 0 bytes, got " +
                           std::to_string(memory.budget_bytes));
  }
  const kernels::Csr& graph = sampler.graph();
  const int64_t n = graph.num_dst();
  if (features.num_rows() != n) {
    return InvalidArgument("layer-wise inference: " + std::to_string(features.num_rows()) +
                           " feature rows (" + features.backend() + " store) for a graph of " + std::to_string(n) +
                           " nodes");
  }
  if (features.row_width() != model.LayerInputDim(0)) {
    return InvalidArgument("layer-wise inference: feature rows of width " + std::to_string(features.row_width()) +
                           " for a model whose input width is " + std::to_string(model.LayerInputDim(0)));
  }
  *out = LayerwiseOutputs();
  if (whole_graph_per_layer) {
    FS_ASSIGN_OR_RETURN(Tensor all, LoadAllRows(features));
    return WholeGraphInference(ctx, model, whole_graph, all, output_groups, want_embeddings, out);
  }

  const int num_layers = model.num_layers();
  const int last = num_layers - 1;
  if (want_embeddings && num_layers == 1) {
    FS_ASSIGN_OR_RETURN(Tensor all, LoadAllRows(features));
    FS_ASSIGN_OR_RETURN(out->embeddings, FeaturesAsF32(ctx, all));
  }
  // Embeddings are every node's last hidden layer: compute all rows then.
  FS_ASSIGN_OR_RETURN(std::vector<LayerRows> needed,
                      NeededRows(ctx, graph, num_layers, want_embeddings ? std::vector<Tensor>() : output_groups,
                                 sampler.paged_topology()));
  Tensor gcn_degrees;
  if (model.NeedsWholeGraphPerLayer()) FS_RETURN_IF_ERROR(kernels::GcnOutDegrees(ctx, graph, &gcn_degrees));
  // Both scans read the file-mapped CSR (sampler.graph()); a paged
  // sampler's arrays are checked read-only file mappings, whose pages can
  // go back now rather than stay resident through the layers.
  ReleaseGraphPages(sampler);
  LayerRunner runner(ctx, model, sampler, gcn_degrees, chunk_size);

  LayerInput in{&features, nullptr};
  std::unique_ptr<ScratchRows> held;  // the hidden layer `in` reads
  for (int l = 0; l < last; ++l) {
    const LayerRows& rows = needed[static_cast<size_t>(l)];
    const int64_t count = rows.count(n);
    const int64_t width = model.LayerOutputDim(l);
    const int64_t bytes = count * width * static_cast<int64_t>(sizeof(float));
    const int64_t held_bytes = held != nullptr && held->in_ram() ? held->bytes() : 0;
    const bool is_embeddings = want_embeddings && l == last - 1;
    const bool in_ram = is_embeddings || held_bytes + bytes <= memory.budget_bytes;
    FS_ASSIGN_OR_RETURN(std::unique_ptr<ScratchRows> next,
                        ScratchRows::Create(count, width, in_ram, memory.scratch_dir));
    StoreSink sink(next->store());
    FS_RETURN_IF_ERROR(runner.Run(l, in, Destinations{nullptr, rows.all ? nullptr : &rows}, count, sink));
    FS_RETURN_IF_ERROR(sink.Finish());
    if (is_embeddings) out->embeddings = next->tensor();
    held = std::move(next);  // the layer below is no longer needed
    in = LayerInput{&held->store(), rows.all ? nullptr : &rows};
  }

  const int64_t classes = model.LayerOutputDim(last);
  auto run_last = [&](const Tensor* ids, int64_t count) -> Status {
    Tensor logits = Tensor::Empty({count, classes}, DType::kF32);
    FS_RETURN_IF_ERROR(runner.Run(last, in, Destinations{ids, nullptr}, count, [&](int64_t begin, int64_t end, const Tensor& y) {
      Tensor rows = logits.Slice(0, begin, end);
      return rows.CopyFrom(y);
    }));
    out->logits.push_back(logits);
    return Status::OK();
  };
  if (output_groups.empty()) return run_last(nullptr, n);
  for (const Tensor& ids : output_groups) FS_RETURN_IF_ERROR(run_last(&ids, ids.numel()));
  return Status::OK();
}

int64_t MaxChunkSources(const Tensor& indptr, int64_t chunk_size) {
  const int64_t* p = indptr.data<int64_t>();
  int64_t max_degree = 0;
  for (int64_t v = 0; v + 1 < indptr.numel(); ++v) max_degree = std::max(max_degree, p[v + 1] - p[v]);
  return std::max(kChunkSourcesPerDestination * chunk_size + chunk_size, max_degree + 1);
}

Status LayerwiseInference(const ExecContext& ctx, GnnModel& model, sampler::NeighborSampler& sampler,
                          GraphBlock& whole_graph, const Tensor& features, int64_t chunk_size,
                          const std::vector<Tensor>& output_groups, bool want_embeddings,
                          bool whole_graph_per_layer, LayerwiseOutputs* out) {
  if (chunk_size < 1) return InvalidArgument("layer-wise inference: chunk size must be >= 1");
  if (features.dim() != 2 || features.size(0) != sampler.graph().num_dst()) {
    return InvalidArgument("layer-wise inference: features " + ShapeToString(features.shape()) +
                           " for a graph of " + std::to_string(sampler.graph().num_dst()) + " nodes");
  }
  if (whole_graph_per_layer) {
    // The tensor itself, without the store's copy.
    *out = LayerwiseOutputs();
    return WholeGraphInference(ctx, model, whole_graph, features, output_groups, want_embeddings, out);
  }
  FS_ASSIGN_OR_RETURN(std::unique_ptr<RowStore> store, storage::MemoryRowStore(features, /*writable=*/false));
  return LayerwiseInference(ctx, model, sampler, whole_graph, *store, chunk_size, output_groups, want_embeddings,
                            whole_graph_per_layer, InferenceMemory(), out);
}

}  // namespace foresight::trainer::internal
