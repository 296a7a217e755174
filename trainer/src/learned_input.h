// Learned node features (--node-features learned:DIM): one learnable row
// of DIM values per node in an embed::EmbeddingTable, on the feature store
// the options name (memory, mmap or disk) behind the lookahead cache. A
// batch's input rows are gathered from the table as the model's x; the
// gradient that reaches x is applied to the rows by the fused sparse
// optimizer update (SGD, row-wise Adagrad or Adam, its state beside each
// row), never held as a dense N x DIM gradient. Private to the trainer.
//
// The lookahead: the table plans batch t once W batches past it are known,
// so the pipeline's sample stage enqueues every sampled batch's input nodes
// here (Enqueue, in sequence order) while the compute thread trains the
// oldest (WaitReady, then Forward; its Backward updates the rows). Enqueue
// and the compute calls may run on different threads: every call takes the
// table's lock. Full-graph training enqueues all nodes each step itself
// (lookahead 0).
//
// Determinism: the rows after each step depend only on the seed, the
// options and the batches, never on the store, cache size, window or
// thread count (the table's guarantee), so a disk table behind a tiny
// cache gives the losses of a memory table bit for bit.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "foresight/autograd/tape.h"
#include "foresight/core/status.h"
#include "temp_dir.h"
#include "foresight/embed/embedding_bag_collection.h"
#include "foresight/kernels/ops.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer::internal {

// "learned:DIM" or "file+learned:DIM" (the dataset's dense features with
// the learned rows beside them) -> DIM; InvalidArgument naming the option
// otherwise.
StatusOr<int64_t> ParseLearnedDim(const std::string& node_features);
bool IsLearned(const std::string& node_features);
// "file+learned:DIM".
bool WithFileFeatures(const std::string& node_features);
// [a | b]: f32 [n, fa + fb] from contiguous f32 [n, fa] and [n, fb].
Tensor ConcatColumns(const Tensor& a, const Tensor& b);

struct LearnedTableOptions {
  int64_t rows = 0;  // nodes
  int64_t dim = 0;
  uint64_t seed = 0;  // rows start uniform in [-1/sqrt(dim), 1/sqrt(dim))
  kernels::SparseOptimizerConfig optimizer;  // kind and lr (step is set per step)
  // "memory", "mmap" or "disk" (TrainOptions::feature_store); mmap and disk
  // keep the rows in dir/learned_rows.npy.
  std::string store = "memory";
  std::string dir;
  int io_depth = 64;
  cache::Policy cache_policy = cache::Policy::kLookahead;
  int64_t cache_bytes = 0;  // 0: a memory or mmap table is used in place
  int lookahead = 0;        // W
};

class LearnedNodeTable {
 public:
  static StatusOr<std::unique_ptr<LearnedNodeTable>> Open(const LearnedTableOptions& options);

  int64_t dim() const { return options_.dim; }
  int64_t rows() const { return options_.rows; }
  const kernels::EmbeddingRowLayout& layout() const { return collection_->layout(); }
  const LearnedTableOptions& options() const { return options_; }
  // The batches the table plans ahead (0 when it needs none).
  int lookahead() const { return lookahead_; }

  // The static cache policy's keys by priority (before the first batch).
  Status SetStaticKeys(std::vector<int64_t> keys);
  // A future batch's node ids (i64 host [n], distinct), in batch order.
  Status Enqueue(const Tensor& ids);
  // No more batches (wakes a WaitReady that waits for a window that will
  // never fill).
  void Close();
  // Blocks (passively) until the oldest enqueued batch can be planned.
  // Call it before taking the CPU budget's compute turn: the sample stage
  // that fills the window needs that turn with one thread.
  void WaitReady();
  // The oldest enqueued batch's rows, f32 [n, dim], on `tape` (with `left`,
  // f32 [n, F]: [left | rows], left taking no gradient): when it records,
  // its Backward applies the fused update as step `step` (1-based; Adam's
  // bias correction); else the rows are read only.
  StatusOr<autograd::Var> Forward(autograd::Tape& tape, int64_t step, const Tensor& left = Tensor());

  // Cumulative I/O of training's batches: ids looked up, cache hits and
  // misses (zero without a cache), store bytes read and written.
  struct Io {
    int64_t rows_requested = 0, hits = 0, misses = 0, bytes_read = 0, bytes_written = 0, reads = 0, rows_read = 0;
  };
  Io io();
  int64_t cache_bytes() const { return options_.cache_bytes; }

  // Reads for evaluation: PrepareReads writes every dirty row back (and
  // releases a forward-only batch); then, until the next training step,
  // ReadEmbeddings fills each request's buffer with its key's DIM floats
  // straight from the store.
  Status PrepareReads();
  Status ReadEmbeddings(const std::vector<storage::RowRequest>& reqs);

  // Every node's row, f32 [N, dim] (evaluation, export).
  StatusOr<Tensor> AllEmbeddings();
  // Writes every row with its optimizer state ([N, row_width] f32) to a
  // .npy at `path` / reads them back into the table (before any Enqueue).
  // Chunked: never all rows in RAM at once.
  Status SaveRows(const std::string& path);
  Status LoadRows(const std::string& path);

 private:
  explicit LearnedNodeTable(const LearnedTableOptions& options) : options_(options) {}
  std::vector<uint8_t> scratch_;  // ReadEmbeddings' whole rows
  // Reads rows [begin, end) with their state into `out` (lock held).
  Status ReadRowsLocked(int64_t begin, int64_t end, void* out);
  template <typename Fn>
  Status ForEachChunk(Fn&& fn);

  LearnedTableOptions options_;
  int lookahead_ = 0;
  std::unique_ptr<embed::EmbeddingBagCollection> collection_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<int64_t> sizes_;  // ids of each enqueued batch not yet taken
  int64_t enqueued_ = 0;  // batches enqueued
  int64_t taken_ = 0;     // batches given to Forward
  int64_t rows_requested_ = 0;  // ids of the batches given to Forward
  bool closed_ = false;
};

// The table of a training run's learned node features: on
// options.feature_store behind the feature cache options (cache_size -1 is
// no cache; the static policy keeps the rows of highest in-degree, by
// `indptr`), with `lookahead` W; mmap and disk keep it in
// options.table_dir, or a temporary directory that *temp_dir removes when
// it goes.
StatusOr<std::shared_ptr<LearnedNodeTable>> OpenLearnedTable(const TrainOptions& options, int64_t nodes,
                                                             const Tensor& indptr, int lookahead,
                                                             std::unique_ptr<TempDir>* temp_dir);

}  // namespace foresight::trainer::internal
