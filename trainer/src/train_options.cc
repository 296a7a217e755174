#include "foresight/trainer/train_options.h"

#include <cmath>
#include <string>

#include "foresight/core/device.h"
#include "foresight/kernels/ops.h"
#include "learned_input.h"
#include "dlrm_options.h"
#include "sasrec_trainer.h"

namespace foresight::trainer {

namespace {

std::string FanoutsToString(const std::vector<int64_t>& fanouts) {
  std::string s;
  for (size_t i = 0; i < fanouts.size(); ++i) s += (i ? "," : "") + std::to_string(fanouts[i]);
  return s;
}

}  // namespace

float TrainOptions::EffectiveHotFraction() const {
  if (hot_fraction >= 0) return hot_fraction;
  return cache_policy == "lookahead" ? kAutoHotFraction : 0.0f;
}

bool TrainOptions::PartitionDiskReads() const {
  const bool gnn = model == "sage" || model == "gcn" || model == "gat";
  return task == "node" && gnn && !full_graph && feature_store == "disk" && order == "partition" &&
         cache_policy == "lookahead";
}

int TrainOptions::EffectiveLookahead() const {
  if (lookahead >= 0) return lookahead;
  return PartitionDiskReads() ? kPartitionDiskLookahead : 32;
}

int64_t TrainOptions::EffectiveReadGap() const {
  if (read_gap >= 0) return read_gap;
  return PartitionDiskReads() ? kPartitionDiskReadGap : 0;
}

int64_t TrainOptions::EffectiveCompanionSpan() const {
  if (companion_span >= 0) return companion_span;
  return PartitionDiskReads() ? kPartitionDiskCompanionSpan : 4096;
}

const char* TrainOptions::ChangedFeatureReadOption() const {
  const TrainOptions d;
  if (hot_rank != d.hot_rank) return "hot_rank";
  if (read_gap != d.read_gap) return "read_gap";
  if (companion_span != d.companion_span) return "companion_span";
  return nullptr;
}

Status TrainOptions::Validate() const {
  if (dataset.empty()) return InvalidArgument("dataset: no dataset directory given");
  if (plan_only && task != "link" && (model == "dlrm" || full_graph)) {
    return InvalidArgument("plan_only: the memory plan is mini-batch GNN and shallow link training's (not " +
                           std::string(model == "dlrm" ? "dlrm" : "full_graph") + ")");
  }
  // The first GNN layer's input: dlrm, sasrec and the shallow link models
  // have none, so a value there would silently do nothing.
  if (input_dropout >= 0.0f && model != "sage" && model != "gcn" && model != "gat") {
    return InvalidArgument("input_dropout: only sage, gcn and gat models have a first layer's input to drop out "
                           "(--model " + model + " has none)");
  }
  if (task == "link") return ValidateLink();
  if (model == "dlrm") return internal::ValidateDlrmOptions(*this);
  if (model == "sasrec") return internal::ValidateSasrecOptions(*this);
  if (task != "node") return InvalidArgument("task: '" + task + "' is not one of node, link");
  if (model != "sage" && model != "gcn" && model != "gat") {
    return InvalidArgument("model: '" + model + "' is not one of sage, gcn, gat, dlrm, sasrec");
  }
  const bool learned = internal::IsLearned(node_features);
  if (learned) FS_RETURN_IF_ERROR(internal::ParseLearnedDim(node_features).status());
  if (!learned && node_features != "file" && node_features != "degree" && node_features != "one-hot") {
    return InvalidArgument("node_features: '" + node_features +
                           "' is not one of file, degree, one-hot, learned:DIM");
  }
  {
    StatusOr<kernels::SparseOptimizer> sparse = kernels::ParseSparseOptimizer(sparse_optimizer);
    if (!sparse.ok()) return InvalidArgument("sparse_optimizer: " + sparse.status().message());
  }
  if (!(sparse_lr > 0.0f) || !std::isfinite(sparse_lr)) {
    return InvalidArgument("sparse_lr: must be a positive number, got " + std::to_string(sparse_lr));
  }
  if (learned && memory_budget > 0) {
    return InvalidArgument("memory_budget: learned node features size their table's cache with --cache-size "
                           "(the memory plan does not count the table yet)");
  }
  if (epochs < 1) return InvalidArgument("epochs: must be >= 1, got " + std::to_string(epochs));
  if (layers < 1) return InvalidArgument("layers: must be >= 1, got " + std::to_string(layers));
  if (hidden < 1) return InvalidArgument("hidden: must be >= 1, got " + std::to_string(hidden));
  if (heads < 1) return InvalidArgument("heads: must be >= 1, got " + std::to_string(heads));
  if (!full_graph) {
    if (batch_size < 1) {
      return InvalidArgument("batch_size: must be >= 1, got " + std::to_string(batch_size));
    }
    if (static_cast<int>(fanouts.size()) != layers) {
      return InvalidArgument("fanouts: " + std::to_string(fanouts.size()) + " given (" +
                             FanoutsToString(fanouts) + ") but layers is " + std::to_string(layers) +
                             "; give one fanout per layer, seeds outward");
    }
    for (size_t i = 0; i < fanouts.size(); ++i) {
      if (fanouts[i] == 0 || fanouts[i] < -1) {
        return InvalidArgument("fanouts: entry " + std::to_string(i) + " is " + std::to_string(fanouts[i]) +
                               "; expected a positive count or -1 for all neighbours");
      }
    }
  }
  if (!(lr > 0.0f) || !std::isfinite(lr)) {
    return InvalidArgument("lr: must be a positive number, got " + std::to_string(lr));
  }
  if (!(weight_decay >= 0.0f) || !std::isfinite(weight_decay)) {
    return InvalidArgument("weight_decay: must be >= 0, got " + std::to_string(weight_decay));
  }
  if (!(dropout >= 0.0f && dropout < 1.0f)) {
    return InvalidArgument("dropout: must be in [0, 1), got " + std::to_string(dropout));
  }
  if (!(input_dropout < 1.0f)) {  // NaN too
    return InvalidArgument("input_dropout: must be below 1 (negative: the dropout), got " +
                           std::to_string(input_dropout));
  }
  if (optimizer != "adam" && optimizer != "adamw" && optimizer != "sgd") {
    return InvalidArgument("optimizer: '" + optimizer + "' is not one of adam, adamw, sgd");
  }
  if (patience < 0) return InvalidArgument("patience: must be >= 0, got " + std::to_string(patience));
  if (threads < 0) return InvalidArgument("threads: must be >= 0, got " + std::to_string(threads));
  if (!ParseDevice(device).ok()) {
    return InvalidArgument("device: '" + device + "' is not cpu, cuda or cuda:N");
  }
  if (eval_batch_size < 1) {
    return InvalidArgument("eval_batch_size: must be >= 1, got " + std::to_string(eval_batch_size));
  }
  if (feature_store != "memory" && feature_store != "mmap" && feature_store != "disk") {
    return InvalidArgument("feature_store: '" + feature_store + "' is not one of memory, mmap, disk");
  }
  if (topology != "mapped" && topology != "paged") {
    return InvalidArgument("topology: '" + topology + "' is not one of mapped, paged");
  }
  if (page_companions != "on" && page_companions != "off") {
    return InvalidArgument("page_companions: '" + page_companions + "' is not one of on, off");
  }
  if (cache_policy != "lookahead" && cache_policy != "lru" && cache_policy != "static") {
    return InvalidArgument("cache_policy: '" + cache_policy + "' is not one of lookahead, lru, static");
  }
  if (planner_index != "auto" && planner_index != "flat" && planner_index != "window") {
    return InvalidArgument("planner_index: '" + planner_index + "' is not one of auto, flat, window");
  }
  if (planner_index == "window" && cache_policy != "lookahead") {
    return InvalidArgument("planner_index: the window index is the lookahead policy's; cache_policy " + cache_policy +
                           " keeps an array over the keys (use auto or flat)");
  }
  if (hot_fraction != -1 && !(hot_fraction >= 0 && hot_fraction <= 1)) {
    return InvalidArgument("hot_fraction: must be in [0, 1] (or -1: auto), got " + std::to_string(hot_fraction));
  }
  if (read_gap < -1) {
    return InvalidArgument("read_gap: must be >= 0 bytes (or -1: auto), got " + std::to_string(read_gap));
  }
  if (companion_span != -1 && (companion_span < 4096 || companion_span % 4096 != 0)) {
    return InvalidArgument("companion_span: must be a multiple of 4096 bytes (or -1: auto), got " +
                           std::to_string(companion_span));
  }
  if (hot_rank != "in-degree" && hot_rank != "halo") {
    return InvalidArgument("hot_rank: '" + hot_rank + "' is not one of in-degree, halo");
  }
  if (hot_rank == "halo" && order != "partition") {
    return InvalidArgument("hot_rank: halo ranks rows by edges from other partitions and needs order partition, got " +
                           order);
  }
  if (hot_fraction > 0 && cache_policy != "lookahead") {
    return InvalidArgument("hot_fraction: a static tier beside the lookahead tier needs cache_policy lookahead, got " +
                           cache_policy + " (static is a static tier alone)");
  }
  if (cache_size < -1) {
    return InvalidArgument("cache_size: must be >= 0 bytes (or -1: sized from memory_budget), got " +
                           std::to_string(cache_size));
  }
  if (lookahead < -1) {
    return InvalidArgument("lookahead: must be >= 0 batches (or -1: auto), got " + std::to_string(lookahead));
  }
  if (io_depth < 1) return InvalidArgument("io_depth: must be >= 1, got " + std::to_string(io_depth));
  if (allreduce_bucket < 0) {
    return InvalidArgument("allreduce_bucket: must be >= 0 bytes (0 = one exchange after backward), got " +
                           std::to_string(allreduce_bucket));
  }
  if (memory_budget < 0) {
    return InvalidArgument("memory_budget: must be >= 0 bytes (0 = none), got " + std::to_string(memory_budget));
  }
  if (entity_partitions != 0) return InvalidArgument("entity_partitions: applies to task link with order buckets");
  if (order != "random" && order != "partition") {
    return InvalidArgument("order: '" + order + "' is not one of random, partition");
  }
  if (sampling != "full" && sampling != "resident") {
    return InvalidArgument("sampling: '" + sampling + "' is not one of full, resident");
  }
  if (resident_partitions < 0) {
    return InvalidArgument("resident_partitions: must be >= 0 (0 = as many as the cache holds), got " +
                           std::to_string(resident_partitions));
  }
  if (rank_partitions < 0) {
    return InvalidArgument("rank_partitions: must be >= 0 (0 = the job's ranks), got " +
                           std::to_string(rank_partitions));
  }
  if (rank_partitions > 0 && order != "partition") {
    return InvalidArgument("rank_partitions: splits the partitions of order partition between ranks (got order = " +
                           order + ")");
  }
  if (rank_partitions > 1 && sampling == "resident") {
    return InvalidArgument("rank_partitions: sampling resident restricts a batch to one resident set, but each "
                           "rank's part of it has its own partitions; use sampling full");
  }
  if (sampling == "resident" && order != "partition") {
    return InvalidArgument("sampling: resident restricts sampling to the batch's partition group, so it needs "
                           "order = partition (got order = " + order + ")");
  }
  if (full_graph) {
    // Full-graph training reads every feature at once from the mapped file
    // (learned features: from their table, through its cache).
    const char* mini_batch_only = nullptr;
    if (feature_store == "disk" && !learned) mini_batch_only = "feature_store: disk";
    else if (cache_size > 0 && !learned) mini_batch_only = "cache_size";
    else if (order != "random") mini_batch_only = "order: partition";
    else if (sampling != "full") mini_batch_only = "sampling: resident";
    else if (memory_budget > 0) mini_batch_only = "memory_budget";
    else if (topology != "mapped") mini_batch_only = "topology: paged";
    if (mini_batch_only != nullptr) {
      return InvalidArgument(std::string(mini_batch_only) +
                             " applies to mini-batch training; full_graph reads every feature at once");
    }
  }
  if (memory_budget > 0 && cache_size > memory_budget) {
    return InvalidArgument("cache_size: " + std::to_string(cache_size) + " bytes exceeds memory_budget (" +
                           std::to_string(memory_budget) + " bytes)");
  }
  if (resume && checkpoint_dir.empty()) {
    return InvalidArgument("resume: needs a checkpoint directory to resume from");
  }
  return Status::OK();
}

}  // namespace foresight::trainer
