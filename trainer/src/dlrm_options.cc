#include "dlrm_options.h"

#include <cmath>
#include <string>

namespace foresight::trainer::internal {

namespace {

std::string ListToString(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

Status CheckWidths(const char* name, const std::vector<int64_t>& widths) {
  if (widths.empty()) return InvalidArgument(std::string(name) + ": needs at least one layer width");
  for (size_t i = 0; i < widths.size(); ++i) {
    if (widths[i] < 1) {
      return InvalidArgument(std::string(name) + ": layer " + std::to_string(i) + " has width " +
                             std::to_string(widths[i]) + " (" + ListToString(widths) + "); widths must be >= 1");
    }
  }
  return Status::OK();
}

}  // namespace

Status ValidateDlrmOptions(const TrainOptions& o) {
  // Options that only mean something for GNNs on a graph dataset.
  const TrainOptions d;
  const char* gnn_only = nullptr;
  if (o.full_graph) gnn_only = "full_graph";
  else if (o.node_features != d.node_features) gnn_only = "node_features";
  else if (o.fanouts != d.fanouts) gnn_only = "fanouts";
  else if (o.hidden != d.hidden) gnn_only = "hidden";
  else if (o.layers != d.layers) gnn_only = "layers";
  else if (o.heads != d.heads) gnn_only = "heads";
  else if (o.feature_store != d.feature_store) gnn_only = "feature_store";
  else if (o.order != d.order) gnn_only = "order";
  else if (o.sampling != d.sampling) gnn_only = "sampling";
  else if (o.topology != d.topology) gnn_only = "topology";
  else if (o.hot_fraction != d.hot_fraction) gnn_only = "hot_fraction";
  else if (o.resident_partitions != d.resident_partitions) gnn_only = "resident_partitions";
  else if (o.rank_partitions != d.rank_partitions) gnn_only = "rank_partitions";
  else if (o.ChangedFeatureReadOption() != nullptr) gnn_only = o.ChangedFeatureReadOption();
  else if (o.patience != d.patience) gnn_only = "patience";
  if (gnn_only != nullptr) {
    return InvalidArgument(std::string(gnn_only) +
                           ": applies to the GNN models (sage, gcn, gat), not to dlrm; DLRM's shape is set by "
                           "bottom_mlp, top_mlp, embedding_dim and interaction, and table_store says where its "
                           "tables live");
  }
  if (o.epochs < 1) return InvalidArgument("epochs: must be >= 1, got " + std::to_string(o.epochs));
  if (o.batch_size < 1) return InvalidArgument("batch_size: must be >= 1, got " + std::to_string(o.batch_size));
  if (o.eval_batch_size < 1) {
    return InvalidArgument("eval_batch_size: must be >= 1, got " + std::to_string(o.eval_batch_size));
  }
  FS_RETURN_IF_ERROR(CheckWidths("bottom_mlp", o.bottom_mlp));
  FS_RETURN_IF_ERROR(CheckWidths("top_mlp", o.top_mlp));
  if (o.top_mlp.back() != 1) {
    return InvalidArgument("top_mlp: the last layer gives the click logit, so its width must be 1, got " +
                           ListToString(o.top_mlp));
  }
  if (o.embedding_dim < 1) {
    return InvalidArgument("embedding_dim: must be >= 1, got " + std::to_string(o.embedding_dim));
  }
  if (o.interaction != "dot" && o.interaction != "cat") {
    return InvalidArgument("interaction: '" + o.interaction + "' is not one of dot, cat");
  }
  if (o.interaction == "dot" && o.bottom_mlp.back() != o.embedding_dim) {
    return InvalidArgument("bottom_mlp: with interaction dot the bottom MLP's last width (" +
                           std::to_string(o.bottom_mlp.back()) + ", of " + ListToString(o.bottom_mlp) +
                           ") must equal embedding_dim (" + std::to_string(o.embedding_dim) +
                           "), since it is dotted with the embeddings");
  }
  if (o.sparse_optimizer != "sgd" && o.sparse_optimizer != "rowwise-adagrad" && o.sparse_optimizer != "adam") {
    return InvalidArgument("sparse_optimizer: '" + o.sparse_optimizer + "' is not one of sgd, rowwise-adagrad, adam");
  }
  if (!(o.sparse_lr > 0.0f) || !std::isfinite(o.sparse_lr)) {
    return InvalidArgument("sparse_lr: must be a positive number, got " + std::to_string(o.sparse_lr));
  }
  if (!(o.lr > 0.0f) || !std::isfinite(o.lr)) {
    return InvalidArgument("lr: must be a positive number, got " + std::to_string(o.lr));
  }
  if (!(o.weight_decay >= 0.0f) || !std::isfinite(o.weight_decay)) {
    return InvalidArgument("weight_decay: must be >= 0, got " + std::to_string(o.weight_decay));
  }
  if (!(o.dropout >= 0.0f && o.dropout < 1.0f)) {
    return InvalidArgument("dropout: must be in [0, 1), got " + std::to_string(o.dropout));
  }
  if (o.optimizer != "adam" && o.optimizer != "adamw" && o.optimizer != "sgd") {
    return InvalidArgument("optimizer: '" + o.optimizer + "' is not one of adam, adamw, sgd");
  }
  if (o.eval_every < 0) {
    return InvalidArgument("eval_every: must be >= 0 steps (0 = at the end of each epoch only), got " +
                           std::to_string(o.eval_every));
  }
  if (o.patience < 0) return InvalidArgument("patience: must be >= 0, got " + std::to_string(o.patience));
  if (o.threads < 0) return InvalidArgument("threads: must be >= 0, got " + std::to_string(o.threads));
  if (o.table_store != "memory" && o.table_store != "mmap" && o.table_store != "disk" && o.table_store != "rocksdb") {
    return InvalidArgument("table_store: '" + o.table_store + "' is not one of memory, mmap, disk, rocksdb");
  }
  if (o.sharding != "row" && o.sharding != "table") {
    return InvalidArgument("sharding: '" + o.sharding + "' is not one of row, table");
  }
  if (o.cache_policy != "lookahead" && o.cache_policy != "lru" && o.cache_policy != "static") {
    return InvalidArgument("cache_policy: '" + o.cache_policy + "' is not one of lookahead, lru, static");
  }
  if (o.cache_size < -1) {
    return InvalidArgument("cache_size: must be >= 0 bytes (or -1: sized from memory_budget), got " +
                           std::to_string(o.cache_size));
  }
  if (o.lookahead < -1) {
    return InvalidArgument("lookahead: must be >= 0 batches (or -1: auto), got " + std::to_string(o.lookahead));
  }
  if (o.io_depth < 1) return InvalidArgument("io_depth: must be >= 1, got " + std::to_string(o.io_depth));
  if (o.memory_budget < 0) {
    return InvalidArgument("memory_budget: must be >= 0 bytes (0 = none), got " + std::to_string(o.memory_budget));
  }
  if (o.memory_budget > 0 && o.cache_size > o.memory_budget) {
    return InvalidArgument("cache_size: " + std::to_string(o.cache_size) + " bytes exceeds memory_budget (" +
                           std::to_string(o.memory_budget) + " bytes)");
  }
  if (o.resume && o.checkpoint_dir.empty()) {
    return InvalidArgument("resume: needs a checkpoint directory to resume from");
  }
  return Status::OK();
}

}  // namespace foresight::trainer::internal
