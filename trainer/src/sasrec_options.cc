// ValidateSasrecOptions (sasrec_trainer.h): what --model sasrec accepts.
#include <cmath>
#include <string>

#include "sasrec_trainer.h"

namespace foresight::trainer::internal {

Status ValidateSasrecOptions(const TrainOptions& o) {
  // Options of other models that would silently mean nothing here.
  const TrainOptions d;
  const char* other = nullptr;
  if (o.full_graph) other = "full_graph";
  else if (o.node_features != d.node_features) other = "node_features";
  else if (o.fanouts != d.fanouts) other = "fanouts";
  else if (o.layers != d.layers) other = "layers";
  else if (o.feature_store != d.feature_store) other = "feature_store";
  else if (o.order != d.order) other = "order";
  else if (o.sampling != d.sampling) other = "sampling";
  else if (o.memory_budget != d.memory_budget) other = "memory_budget";
  else if (o.bottom_mlp != d.bottom_mlp) other = "bottom_mlp";
  else if (o.top_mlp != d.top_mlp) other = "top_mlp";
  else if (o.embedding_dim != d.embedding_dim) other = "embedding_dim";
  else if (o.eval_every != d.eval_every) other = "eval_every";
  else if (o.sparse_optimizer != d.sparse_optimizer) other = "sparse_optimizer";
  else if (o.sparse_lr != d.sparse_lr) other = "sparse_lr";
  if (other != nullptr) {
    return InvalidArgument(std::string(other) +
                           ": does not apply to sasrec; its shape is set by blocks, heads, hidden and max_length, "
                           "and the item table takes the optimizer and lr of the dense parameters");
  }
  if (!o.checkpoint_dir.empty() || o.resume) {
    return Unimplemented("checkpoint: sasrec does not write checkpoints yet; train without --checkpoint");
  }
  if (o.device != "cpu") {
    return Unimplemented("device: sasrec trains on the CPU only so far (its loss and input ops have no CUDA "
                         "kernels yet); use --device cpu");
  }
  if (o.epochs < 1) return InvalidArgument("epochs: must be >= 1, got " + std::to_string(o.epochs));
  if (o.batch_size < 1) return InvalidArgument("batch_size: must be >= 1, got " + std::to_string(o.batch_size));
  if (o.eval_batch_size < 1) {
    return InvalidArgument("eval_batch_size: must be >= 1, got " + std::to_string(o.eval_batch_size));
  }
  if (o.eval_epochs < 1) return InvalidArgument("eval_epochs: must be >= 1, got " + std::to_string(o.eval_epochs));
  if (o.blocks < 1) return InvalidArgument("blocks: must be >= 1, got " + std::to_string(o.blocks));
  if (o.hidden < 1) return InvalidArgument("hidden: must be >= 1, got " + std::to_string(o.hidden));
  if (o.heads < 1 || o.hidden % o.heads != 0) {
    return InvalidArgument("heads: must be >= 1 and divide hidden (" + std::to_string(o.hidden) + "), got " +
                           std::to_string(o.heads));
  }
  if (o.max_length < 1) return InvalidArgument("max_length: must be >= 1, got " + std::to_string(o.max_length));
  if (!(o.dropout >= 0.0f && o.dropout < 1.0f)) {
    return InvalidArgument("dropout: must be in [0, 1), got " + std::to_string(o.dropout));
  }
  if (o.optimizer != "adam" && o.optimizer != "adamw" && o.optimizer != "sgd") {
    return InvalidArgument("optimizer: '" + o.optimizer + "' is not one of adam, adamw, sgd");
  }
  if (!(o.lr > 0.0f) || !std::isfinite(o.lr)) {
    return InvalidArgument("lr: must be a positive number, got " + std::to_string(o.lr));
  }
  if (!(o.adam_beta2 > 0.0f && o.adam_beta2 < 1.0f)) {
    return InvalidArgument("adam_beta2: must be in (0, 1), got " + std::to_string(o.adam_beta2));
  }
  if (!(o.weight_decay >= 0.0f) || !std::isfinite(o.weight_decay)) {
    return InvalidArgument("weight_decay: must be >= 0, got " + std::to_string(o.weight_decay));
  }
  if (o.patience < 0) return InvalidArgument("patience: must be >= 0, got " + std::to_string(o.patience));
  if (o.threads < 0) return InvalidArgument("threads: must be >= 0, got " + std::to_string(o.threads));
  if (o.table_store != "memory" && o.table_store != "mmap" && o.table_store != "disk" && o.table_store != "rocksdb") {
    return InvalidArgument("table_store: '" + o.table_store + "' is not one of memory, mmap, disk, rocksdb");
  }
  if (o.cache_policy != "lookahead" && o.cache_policy != "lru") {
    return InvalidArgument("cache_policy: '" + o.cache_policy + "' is not one of lookahead, lru (sasrec)");
  }
  if (o.cache_size < -1) return InvalidArgument("cache_size: must be >= 0 bytes, got " + std::to_string(o.cache_size));
  if (o.hot_fraction != TrainOptions().hot_fraction) {
    return InvalidArgument("hot_fraction: applies to the GNN feature cache of task node, not to sasrec");
  }
  if (const char* changed = o.ChangedFeatureReadOption()) {
    return InvalidArgument(std::string(changed) + ": applies to the GNN feature store of task node, not to sasrec");
  }
  if (o.lookahead < -1) {
    return InvalidArgument("lookahead: must be >= 0 batches (or -1: auto), got " + std::to_string(o.lookahead));
  }
  if (o.io_depth < 1) return InvalidArgument("io_depth: must be >= 1, got " + std::to_string(o.io_depth));
  return Status::OK();
}

}  // namespace foresight::trainer::internal
