// TrainOptions::ValidateLink: the checks of `foresight train --task link`.
#include <cmath>
#include <string>

#include "foresight/kernels/ops.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer {

Status TrainOptions::ValidateLink() const {
  const bool gnn = model == "sage" || model == "gcn" || model == "gat";  // link_gnn_options.cc
  if (!gnn && model != "distmult" && model != "complex" && model != "transe" && model != "dot") {
    return InvalidArgument("model: '" + model + "' is not one of distmult, complex, transe, dot, sage, gcn, gat "
                           "(task link)");
  }
  if (embedding_dim < 1) return InvalidArgument("embedding_dim: must be >= 1, got " + std::to_string(embedding_dim));
  if (model == "complex" && embedding_dim % 2 != 0) {
    return InvalidArgument("embedding_dim: complex needs an even dim (dim / 2 complex numbers), got " +
                           std::to_string(embedding_dim));
  }
  if (epochs < 1) return InvalidArgument("epochs: must be >= 1, got " + std::to_string(epochs));
  if (batch_size < 1) return InvalidArgument("batch_size: must be >= 1, got " + std::to_string(batch_size));
  if (negatives < 1) return InvalidArgument("negatives: must be >= 1, got " + std::to_string(negatives));
  if (negative_chunk < 0) {
    return InvalidArgument("negative_chunk: must be >= 0 (0 = the whole batch), got " +
                           std::to_string(negative_chunk));
  }
  if (negative_sampling != "uniform" && negative_sampling != "degree") {
    return InvalidArgument("negative_sampling: '" + negative_sampling + "' is not one of uniform, degree");
  }
  if (loss != "softmax" && loss != "logistic") {
    return InvalidArgument("loss: '" + loss + "' is not one of softmax, logistic");
  }
  if (sampled_softmax && (loss != "softmax" || negative_sampling != "uniform")) {
    return InvalidArgument("sampled_softmax: applies to loss softmax with uniform negative_sampling (got loss " +
                           loss + ", negative_sampling " + negative_sampling + ")");
  }
  if (regularizer != "none" && regularizer != "l2" && regularizer != "l3") {
    return InvalidArgument("regularizer: '" + regularizer + "' is not one of none, l2, l3");
  }
  if (!(regularization_weight >= 0.0f) || !std::isfinite(regularization_weight)) {
    return InvalidArgument("regularization_weight: must be >= 0, got " + std::to_string(regularization_weight));
  }
  if (!std::isfinite(margin)) return InvalidArgument("margin: must be a finite number");
  if (!(init_scale > 0.0f) || !std::isfinite(init_scale)) {
    return InvalidArgument("init_scale: must be a positive number, got " + std::to_string(init_scale));
  }
  // The shallow models have no dense parameters: their rows train with the
  // sparse optimizer, as learned features and DLRM tables do. The dense
  // optimizer's keys would be ignored, so they are refused when changed. (A
  // GNN encoder's weights are dense: ValidateLinkGnn checks optimizer, lr.)
  if (!gnn && (optimizer != TrainOptions().optimizer || lr != TrainOptions().lr)) {
    return InvalidArgument("optimizer/lr: task link with model " + model + " trains embedding rows only; give "
                           "sparse_optimizer (sgd, rowwise-adagrad, adam) and sparse_lr instead");
  }
  {
    StatusOr<kernels::SparseOptimizer> sparse = kernels::ParseSparseOptimizer(sparse_optimizer);
    if (!sparse.ok()) return InvalidArgument("sparse_optimizer: " + sparse.status().message());
  }
  if (!(sparse_lr > 0.0f) || !std::isfinite(sparse_lr)) {
    return InvalidArgument("sparse_lr: must be a positive number, got " + std::to_string(sparse_lr));
  }
  if (!(weight_decay >= 0.0f) || !std::isfinite(weight_decay)) {
    return InvalidArgument("weight_decay: must be >= 0, got " + std::to_string(weight_decay));
  }
  if (table_store != "memory" && table_store != "disk") {
    return InvalidArgument("table_store: '" + table_store + "' is not one of memory, disk (link prediction)");
  }
  if (cache_policy == "static") return Unimplemented("cache_policy: static is not built for task link yet");
  if (cache_policy != "lookahead" && cache_policy != "lru") {
    return InvalidArgument("cache_policy: '" + cache_policy + "' is not one of lookahead, lru (task link)");
  }
  if (cache_size < -1) return InvalidArgument("cache_size: must be >= 0 bytes, got " + std::to_string(cache_size));
  if (hot_fraction != TrainOptions().hot_fraction) {
    return InvalidArgument("hot_fraction: applies to the GNN feature cache of task node, not to task link");
  }
  if (const char* changed = ChangedFeatureReadOption()) {
    return InvalidArgument(std::string(changed) + ": applies to the GNN feature store of task node, not to task link");
  }
  if (lookahead < -1) {
    return InvalidArgument("lookahead: must be >= 0 batches (or -1: auto), got " + std::to_string(lookahead));
  }
  if (eval_negatives < 0) {
    return InvalidArgument("eval_negatives: must be >= 0 (0 = every entity), got " + std::to_string(eval_negatives));
  }
  if (eval_epochs < 1) return InvalidArgument("eval_epochs: must be >= 1, got " + std::to_string(eval_epochs));
  if (patience < 0) return InvalidArgument("patience: must be >= 0, got " + std::to_string(patience));
  if (threads < 0) return InvalidArgument("threads: must be >= 0, got " + std::to_string(threads));
  // What link training does not do (yet): say so rather than ignore it.
  if (resume && checkpoint_dir.empty()) {
    return InvalidArgument("resume: needs a checkpoint directory to resume from");
  }
  if (full_graph) return InvalidArgument("full_graph: applies to task node");
  if (rank_partitions != 0) {
    return InvalidArgument("rank_partitions: splits the partitions of task node's order partition between ranks");
  }
  if (order != "random" && order != "buckets") {
    return InvalidArgument("order: '" + order + "' is not one of random, buckets (task link)");
  }
  if (order == "buckets") {
    if (gnn) return Unimplemented("order: buckets applies to the shallow models (a " + model + " encoder samples)");
    if (entity_partitions < 1) {
      return InvalidArgument("entity_partitions: order buckets needs >= 1 partitions, got " +
                             std::to_string(entity_partitions));
    }
    if (resident_partitions < 2 && entity_partitions > 1) {
      return InvalidArgument("resident_partitions: order buckets needs a buffer of >= 2 partitions (a bucket's "
                             "head and tail partitions), got " + std::to_string(resident_partitions));
    }
    if (negative_sampling != "uniform") {
      return Unimplemented("negative_sampling: order buckets draws uniform negatives from the resident partitions");
    }
    if (sampled_softmax) {
      // Its correction log(entities / negatives) assumes negatives drawn from
      // every entity; bucket order draws them from the resident partitions.
      return Unimplemented("sampled_softmax: not built for order buckets (its negatives come from the resident "
                           "partitions, not every entity)");
    }
  } else if (entity_partitions != 0) {
    return InvalidArgument("entity_partitions: applies to order buckets");
  }
  if (topology != "mapped") {
    return Unimplemented("topology: " + topology + " is not built for task link yet (mapped only)");
  }
  if (gnn && (memory_budget > 0 || plan_only)) {
    // The plan (link_memory_plan.h) counts the shallow models' items only.
    return Unimplemented(std::string(plan_only ? "plan_only" : "memory_budget") + ": the memory plan of task link "
                         "covers the shallow models (distmult, complex, transe, dot), not a " + model + " encoder");
  }
  if (memory_budget < 0) {
    return InvalidArgument("memory_budget: must be >= 0 bytes (0 = none), got " + std::to_string(memory_budget));
  }
  if (table_store == "memory" && cache_size > 0) {
    return InvalidArgument("cache_size: the memory embedding store reads its own rows; a cache applies to "
                           "table_store disk");
  }
  if (gnn) return ValidateLinkGnn();
  return Status::OK();
}

}  // namespace foresight::trainer
