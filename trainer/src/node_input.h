// What a node-classification model reads per node (TrainOptions::
// node_features): the dataset's dense feature rows, degree features computed
// from the graph, or sparse rows (the dataset's sparse features, or node
// identity for one-hot) that the model's input table turns into its first
// layer's input as an embedding bag: x W = sum over the row's entries of
// value * W[feature]. Private to the trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "foresight/autograd/tape.h"
#include "foresight/core/context.h"
#include "foresight/core/tensor.h"
#include "foresight/storage/dataset.h"
#include "foresight/trainer/models.h"
#include "learned_input.h"

namespace foresight::trainer::internal {

// Width of the degree features: log(1 + d) and 16 buckets of floor(log2(1 + d)).
inline constexpr int64_t kDegreeBuckets = 16;
inline constexpr int64_t kDegreeFeatureDim = kDegreeBuckets + 1;

struct NodeInput {
  std::string kind;       // "file", "degree", "one-hot" or "learned:DIM"
  bool table = false;     // rows go through the model's input table (ModelConfig::input_table)
  int64_t width = 0;      // ModelConfig::in_features
  // !table: the rows, [N, width] f32 or f16 on the host (the dataset's
  // mmap'd features, or computed degree features); file+learned:DIM: the
  // file's rows alone, [N, width - DIM]; learned:DIM: undefined.
  Tensor dense;
  // table with sparse features: the dataset's CSR rows (i64 [N+1], i32
  // [nnz], f32 [nnz]). Undefined for one-hot (row v is e_v).
  Tensor indptr, indices, values;
  // learned:DIM: the table of the rows (width = DIM, no dense rows); set by
  // whoever trains or infers with it (OpenNodeInput leaves it null).
  std::shared_ptr<LearnedNodeTable> learned;
  bool is_learned() const { return IsLearned(kind); }
};

// The input `node_features` names, for dataset `d`: an error that says what
// to pass when the dataset has no features and `node_features` is "file".
StatusOr<NodeInput> OpenNodeInput(const std::string& node_features, const storage::Dataset& d);

// Whether a run on `device` can read `in`: any input on the CPU; on a GPU,
// dense rows only (Unimplemented for an input table or learned rows, naming
// `dataset`: sparse "file" features show only once the dataset is open,
// CudaTrainingSupports refuses the rest by name before).
Status CheckInputOnDevice(const NodeInput& in, Device device, const std::string& dataset);

// Degree features of a CSR by destination (indptr i64 [N+1]): f32 [N, 17].
Tensor DegreeFeatures(const Tensor& indptr);

// The first layer's input for nodes `ids` (i64; undefined = all nodes in
// order) as a Var on `tape`: with a table, the embedding bag of their rows
// (recorded, so the table gets its gradient); else their dense rows as f32.
StatusOr<autograd::Var> InputRows(autograd::Tape& tape, GnnModel& model, const NodeInput& in, const Tensor& ids);

// The first layer's input for every node, f32 [N, model.LayerInputDim(0)],
// without gradients (evaluation): the table's bags, computed in chunks, or
// the dense rows (a view when they already are f32).
StatusOr<Tensor> AllInputRows(const ExecContext& ctx, GnnModel& model, const NodeInput& in);

}  // namespace foresight::trainer::internal
