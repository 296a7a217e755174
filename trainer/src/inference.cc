#include "foresight/trainer/inference.h"

#include <cmath>
#include <memory>

#include <nlohmann/json.hpp>

#include "checkpoint.h"
#include "dlrm_checkpoint.h"
#include "file_ops.h"
#include "foresight/core/logging.h"
#include "foresight/core/thread_pool.h"
#include "foresight/kernels/ops.h"
#include "foresight/sampler/neighbor_sampler.h"
#include "foresight/storage/npy.h"
#include "foresight/storage/row_store.h"
#include "layerwise_inference.h"
#include "node_data.h"
#include "node_input.h"

namespace foresight::trainer {

namespace {

// A checkpoint's model, loaded and ready for inference on a dataset.
struct Loaded {
  internal::NodeData data;
  internal::NodeInput input;  // as the checkpoint's model was trained
  internal::CheckpointState state;
  std::unique_ptr<GnnModel> model;
  bool full_graph = false;  // trained on the full graph: infer the same way
  Tensor learned_rows;      // learned node features: f32 [N, DIM] from the checkpoint
};

// The embeddings (the first `dim` columns) of a checkpoint's learned rows.
StatusOr<Tensor> LearnedEmbeddings(const std::string& path, int64_t nodes, int64_t dim) {
  if (!internal::PathExists(path)) {
    return DataLoss(path + ": the checkpoint's learned node features are missing");
  }
  FS_ASSIGN_OR_RETURN(Tensor rows, storage::MmapNpy(path));
  if (rows.dim() != 2 || rows.size(0) != nodes || rows.size(1) < dim || rows.dtype() != DType::kF32) {
    return DataLoss(path + ": holds " + DTypeName(rows.dtype()) + " rows of shape " + ShapeToString(rows.shape()) +
                    ", expected f32 rows of " + std::to_string(nodes) + " nodes with at least " +
                    std::to_string(dim) + " columns");
  }
  return rows.Slice(1, 0, dim).Contiguous();
}

Status Load(const InferenceOptions& o, Loaded* out) {
  FS_RETURN_IF_ERROR(o.Validate());
  if (internal::PathExists(o.checkpoint_dir + "/" + internal::kDlrmCheckpointFile)) {
    return Unimplemented("the checkpoint in " + o.checkpoint_dir +
                         " is a DLRM's: its validation and test metrics are in the training's metrics file, "
                         "and `foresight export` writes its tables");
  }
  FS_RETURN_IF_ERROR(internal::OpenNodeData(o.dataset, &out->data));
  FS_ASSIGN_OR_RETURN(out->state, internal::ReadCheckpointState(o.checkpoint_dir));
  const storage::Dataset& d = *out->data.dataset;
  const ModelConfig& c = out->state.model;
  FS_ASSIGN_OR_RETURN(out->input, internal::OpenNodeInput(c.node_features, d));
  if (out->state.num_nodes != d.num_nodes() || c.in_features != out->input.width ||
      c.input_table != out->input.table || c.num_classes != d.num_classes()) {
    return FailedPrecondition("the checkpoint in " + o.checkpoint_dir + " is for " +
                              std::to_string(out->state.num_nodes) + " nodes, " +
                              std::to_string(c.in_features) + " " + c.node_features + " features and " +
                              std::to_string(c.num_classes) + " classes, but " + o.dataset + " has " +
                              std::to_string(d.num_nodes()) + ", " + std::to_string(out->input.width) +
                              " and " + std::to_string(d.num_classes()));
  }
  FS_ASSIGN_OR_RETURN(out->model, CreateModel(c));
  const std::string& sub = o.use_best ? out->state.best_dir : out->state.last_dir;
  FS_RETURN_IF_ERROR(internal::LoadParameters(o.checkpoint_dir, sub, out->model.get()));
  out->full_graph = out->state.options.value("full_graph", false);
  if (out->input.is_learned()) {
    // The checkpoint's rows: the embeddings are the input rows.
    FS_ASSIGN_OR_RETURN(const int64_t dim, internal::ParseLearnedDim(c.node_features));
    FS_ASSIGN_OR_RETURN(out->learned_rows, LearnedEmbeddings(internal::LearnedRowsPath(o.checkpoint_dir, sub),
                                                             d.num_nodes(), dim));
  }
  return Status::OK();
}

Status Infer(const ExecContext& ctx, const InferenceOptions& o, Loaded& l,
             const std::vector<Tensor>& output_groups, bool want_embeddings, internal::LayerwiseOutputs* out) {
  autograd::GraphBlock whole_graph(l.data.graph);
  sampler::NeighborSampler full_neighbors(l.data.graph, std::vector<int64_t>(l.model->num_layers(), -1), 0);
  // Table inputs (sparse features, one-hot) become the model's first-layer
  // rows here, once: [N, hidden] in RAM.
  Tensor features = l.input.is_learned() ? l.learned_rows : l.input.dense;
  if (l.input.is_learned() && l.input.dense.defined()) {  // file+learned: the file's rows first
    FS_ASSIGN_OR_RETURN(Tensor file_rows, internal::FeaturesAsF32(ctx, l.input.dense));
    features = internal::ConcatColumns(file_rows, l.learned_rows);
  }
  if (l.input.table) {
    FS_ASSIGN_OR_RETURN(features, internal::AllInputRows(ctx, *l.model, l.input));
  }
  if (l.full_graph) {
    // Whole graph per layer, as in training: every layer is in RAM anyway.
    return internal::LayerwiseInference(ctx, *l.model, full_neighbors, whole_graph, features, o.eval_batch_size,
                                        output_groups, want_embeddings, /*whole_graph_per_layer=*/true, out);
  }
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::RowStore> store,
                      storage::MemoryRowStore(features, /*writable=*/false));
  internal::InferenceMemory memory;
  memory.budget_bytes = o.hidden_memory_bytes;
  memory.scratch_dir = o.scratch_dir;
  return internal::LayerwiseInference(ctx, *l.model, full_neighbors, whole_graph, *store, o.eval_batch_size,
                                      output_groups, want_embeddings, /*whole_graph_per_layer=*/false, memory, out);
}

Status Score(const ExecContext& ctx, const Tensor& logits, const Tensor& labels, double* acc, int64_t* counted) {
  int64_t correct = 0;
  FS_RETURN_IF_ERROR(kernels::Accuracy(ctx, logits, labels, &correct, counted));
  *acc = *counted == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(*counted);
  return Status::OK();
}

// i64 [N]: argmax of each row (first max wins).
Tensor ArgmaxRows(const ExecContext& ctx, const Tensor& scores) {
  const int64_t n = scores.size(0), c = scores.size(1);
  Tensor out = Tensor::Empty({n}, DType::kI64);
  const float* s = scores.data<float>();
  int64_t* o = out.data<int64_t>();
  ctx.pool->ParallelFor(n, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float* row = s + i * c;
      int64_t best = 0;
      for (int64_t k = 1; k < c; ++k) {
        if (row[k] > row[best]) best = k;
      }
      o[i] = best;
    }
  });
  return out;
}

}  // namespace

Status InferenceOptions::Validate() const {
  if (dataset.empty()) return InvalidArgument("dataset: no dataset directory given");
  if (checkpoint_dir.empty()) return InvalidArgument("checkpoint: no checkpoint directory given");
  if (threads < 0) return InvalidArgument("threads: must be >= 0, got " + std::to_string(threads));
  if (eval_batch_size < 1) {
    return InvalidArgument("eval_batch_size: must be >= 1, got " + std::to_string(eval_batch_size));
  }
  if (hidden_memory_bytes < 0) {
    return InvalidArgument("hidden_memory_bytes: must be >= 0, got " + std::to_string(hidden_memory_bytes));
  }
  return Status::OK();
}

Status Evaluate(const InferenceOptions& options, EvaluationResult* out) {
  Loaded l;
  FS_RETURN_IF_ERROR(Load(options, &l));
  ThreadPool pool(options.threads);
  const ExecContext ctx = CpuContext(0, &pool);
  const storage::Dataset& d = *l.data.dataset;
  // Validation and test ids form one group, as in Train's evaluation, so the
  // numbers repeat Train's bit for bit; the training ids are a group of
  // their own.
  const Tensor eval_ids = internal::ConcatIds(d.val_ids(), d.test_ids());
  FS_ASSIGN_OR_RETURN(Tensor eval_labels, internal::GatherLabels(d.labels(), eval_ids));
  FS_ASSIGN_OR_RETURN(Tensor train_labels, internal::GatherLabels(d.labels(), d.train_ids()));
  internal::LayerwiseOutputs outputs;
  FS_RETURN_IF_ERROR(Infer(ctx, options, l, {eval_ids, d.train_ids()},
                           /*want_embeddings=*/false, &outputs));

  *out = EvaluationResult();
  out->epoch = options.use_best ? l.state.best_epoch : l.state.epoch;
  const int64_t nv = d.val_ids().numel(), n = eval_ids.numel();
  FS_RETURN_IF_ERROR(Score(ctx, outputs.logits[0].Slice(0, 0, nv), eval_labels.Slice(0, 0, nv),
                           &out->val_acc, &out->val_count));
  FS_RETURN_IF_ERROR(Score(ctx, outputs.logits[0].Slice(0, nv, n), eval_labels.Slice(0, nv, n),
                           &out->test_acc, &out->test_count));
  FS_RETURN_IF_ERROR(Score(ctx, outputs.logits[1], train_labels, &out->train_acc, &out->train_count));
  return Status::OK();
}

Status Export(const InferenceOptions& options, const std::string& output_dir) {
  if (output_dir.empty()) return InvalidArgument("output: no output directory given");
  if (internal::PathExists(options.checkpoint_dir + "/" + internal::kDlrmCheckpointFile)) {
    FS_RETURN_IF_ERROR(options.Validate());
    int epoch = 0;
    FS_RETURN_IF_ERROR(internal::ExportDlrmTables(options.dataset, options.checkpoint_dir, output_dir, &epoch));
    FS_LOG(INFO) << "export: the DLRM tables of epoch " << epoch << " (the checkpoint's last)";
    return Status::OK();
  }
  Loaded l;
  FS_RETURN_IF_ERROR(Load(options, &l));
  FS_RETURN_IF_ERROR(internal::MakeDirs(output_dir));
  ThreadPool pool(options.threads);
  const ExecContext ctx = CpuContext(0, &pool);
  internal::LayerwiseOutputs outputs;
  FS_RETURN_IF_ERROR(Infer(ctx, options, l, {}, /*want_embeddings=*/true, &outputs));

  FS_RETURN_IF_ERROR(storage::SaveNpy(output_dir + "/embeddings.npy", outputs.embeddings));
  if (l.input.is_learned()) {
    FS_RETURN_IF_ERROR(storage::SaveNpy(output_dir + "/learned_features.npy", l.learned_rows));
  }
  FS_RETURN_IF_ERROR(storage::SaveNpy(output_dir + "/predictions.npy", ArgmaxRows(ctx, outputs.logits[0])));
  // Labels preprocessed from class names: the name of each predicted id.
  const std::vector<std::string>& class_names = l.data.dataset->manifest().class_names;
  if (!class_names.empty()) {
    FS_RETURN_IF_ERROR(
        internal::WriteFileAtomic(output_dir + "/class_names.json",
                                  internal::JsonText(nlohmann::json(class_names), 1) + "\n"));
  }
  if (options.write_logits) FS_RETURN_IF_ERROR(storage::SaveNpy(output_dir + "/logits.npy", outputs.logits[0]));
  if (options.write_probabilities) {
    Tensor probs = Tensor::Empty(outputs.logits[0].shape(), DType::kF32);
    FS_RETURN_IF_ERROR(kernels::LogSoftmax(ctx, outputs.logits[0], &probs));
    float* p = probs.data<float>();
    ctx.pool->ParallelFor(probs.numel(), 1 << 16, [p](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) p[i] = std::exp(p[i]);
    });
    FS_RETURN_IF_ERROR(storage::SaveNpy(output_dir + "/probabilities.npy", probs));
  }
  // Always written, so a consumer maps rows to input ids the same way for
  // every dataset: a dataset that kept the input's ids maps row i to id i.
  const std::string path = output_dir + "/original_ids.npy";
  const Tensor& original = l.data.dataset->original_ids();
  if (original.defined()) {
    return original.dim() == 2 ? storage::SaveNpyBytes(path, original) : storage::SaveNpy(path, original);
  }
  Tensor identity = Tensor::Empty({l.data.dataset->num_nodes()}, DType::kI64);
  int64_t* ids = identity.data<int64_t>();
  for (int64_t i = 0; i < identity.numel(); ++i) ids[i] = i;
  return storage::SaveNpy(path, identity);
}

}  // namespace foresight::trainer
