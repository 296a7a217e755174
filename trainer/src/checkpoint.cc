#include "checkpoint.h"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>
#include <system_error>
#include <utility>

#include "checkpoint_io.h"
#include "file_ops.h"
#include "test_points.h"

namespace foresight::trainer::internal {

namespace {

constexpr char kFormat[] = "foresight-checkpoint";
constexpr int kVersion = 1;

std::string SubDirName(const char* kind, int epoch) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%s-%06d", kind, epoch);
  return buf;
}

// Writes `tensors` (file name -> tensor) into dir/sub via dir/sub.tmp. On
// failure, removes dir/sub.tmp: a full disk leaves no half-written directory.
// `extra`, when set, writes further files into the temporary directory it
// is given (streamed arrays too large to hold as one tensor).
Status WriteSubDir(const std::string& dir, const std::string& sub,
                   const std::vector<std::pair<std::string, Tensor>>& tensors,
                   const std::function<Status(const std::string& tmp_dir)>& extra) {
  const std::string final_dir = dir + "/" + sub;
  const std::string tmp_dir = final_dir + ".tmp";
  FS_RETURN_IF_ERROR(RemoveAll(tmp_dir));
  FS_RETURN_IF_ERROR(MakeDirs(tmp_dir));
  auto fill = [&]() -> Status {
    FS_RETURN_IF_ERROR(TestPoint("checkpoint.subdir-created"));
    std::set<std::string> seen;
    for (const auto& [file, t] : tensors) {
      if (!seen.insert(file).second) {
        return Internal("checkpoint: two tensors map to the file name " + file);
      }
      FS_RETURN_IF_ERROR(WriteCheckpointNpy(tmp_dir + "/" + file, t));
      FS_RETURN_IF_ERROR(TestPoint("checkpoint.tensor-written"));
    }
    if (extra) FS_RETURN_IF_ERROR(extra(tmp_dir));
    FS_RETURN_IF_ERROR(FsyncDir(tmp_dir));  // its entries are durable before the rename publishes them
    FS_RETURN_IF_ERROR(RemoveAll(final_dir));
    return TestPoint("checkpoint.subdir-filled");
  };
  Status s = fill();
  if (s.ok()) s = DurableRename(tmp_dir, final_dir);
  if (!s.ok()) {
    RemoveAll(tmp_dir).IgnoreError();  // the write's own error is the one to report
    return s;
  }
  return TestPoint("checkpoint.subdir-renamed");
}

// Entries of `dir` that are sub-directories of checkpoints ("epoch-*",
// "best-*") or temporary files and directories ("*.tmp").
struct DirEntries {
  std::vector<std::string> subdirs;
  std::vector<std::string> temporaries;
};

StatusOr<DirEntries> ListCheckpointEntries(const std::string& dir) {
  DirEntries out;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (IsTemporaryName(name)) {
      out.temporaries.push_back(name);
    } else if (name.rfind("epoch-", 0) == 0 || name.rfind("best-", 0) == 0) {
      out.subdirs.push_back(name);
    }
  }
  if (ec) return ErrnoError("list " + dir, ec.value());
  return out;
}

}  // namespace

std::string JsonText(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json TrainOptionsToJson(const TrainOptions& o) {
  nlohmann::json j;
  j["dataset"] = o.dataset;
  j["model"] = o.model;
  // Recorded when not the default, so checkpoints written before the
  // choice existed keep their options hash (and still resume).
  if (o.node_features != "file") j["node_features"] = o.node_features;
  if (IsLearned(o.node_features)) {
    j["sparse_optimizer"] = o.sparse_optimizer;
    j["sparse_lr"] = o.sparse_lr;
  }
  j["epochs"] = o.epochs;
  j["batch_size"] = o.batch_size;
  j["fanouts"] = o.fanouts;
  j["full_graph"] = o.full_graph;
  j["hidden"] = o.hidden;
  j["layers"] = o.layers;
  j["heads"] = o.heads;
  j["lr"] = o.lr;
  j["weight_decay"] = o.weight_decay;
  j["dropout"] = o.dropout;
  // Only when set, so runs without it hash as before.
  if (o.input_dropout >= 0.0f) j["input_dropout"] = o.input_dropout;
  j["optimizer"] = o.optimizer;
  j["patience"] = o.patience;
  j["seed"] = o.seed;
  j["eval_batch_size"] = o.eval_batch_size;
  // The seed order and the sampling scope change which batches a run sees.
  // The feature store, cache and memory budget do not (results are
  // bit-identical across them), so a run may resume with different ones.
  j["order"] = o.order;
  j["sampling"] = o.sampling;
  j["resident_partitions"] = o.resident_partitions;
  // The ranks the partitions are split between change the global batches
  // (recorded only then, so other checkpoints keep their hash).
  if (o.order == "partition" && o.rank_partitions > 1) j["rank_partitions"] = o.rank_partitions;
  return j;
}

nlohmann::json ModelConfigToJson(const ModelConfig& c) {
  nlohmann::json j;
  j["kind"] = c.kind;
  j["in_features"] = c.in_features;
  j["num_classes"] = c.num_classes;
  j["hidden"] = c.hidden;
  j["layers"] = c.layers;
  j["heads"] = c.heads;
  j["dropout"] = c.dropout;
  if (c.input_dropout >= 0.0f) j["input_dropout"] = c.input_dropout;
  j["seed"] = c.seed;
  if (c.node_features != "file") j["node_features"] = c.node_features;
  if (c.input_table) j["input_table"] = c.input_table;
  return j;
}

Status ModelConfigFromJson(const nlohmann::json& j, const std::string& origin, ModelConfig* out) {
  if (!j.is_object()) return DataLoss(origin + ": 'model' is not an object");
  FS_RETURN_IF_ERROR(GetJsonField(j, "kind", origin, &out->kind));
  FS_RETURN_IF_ERROR(GetJsonField(j, "in_features", origin, &out->in_features));
  FS_RETURN_IF_ERROR(GetJsonField(j, "num_classes", origin, &out->num_classes));
  FS_RETURN_IF_ERROR(GetJsonField(j, "hidden", origin, &out->hidden));
  FS_RETURN_IF_ERROR(GetJsonField(j, "layers", origin, &out->layers));
  FS_RETURN_IF_ERROR(GetJsonField(j, "heads", origin, &out->heads));
  FS_RETURN_IF_ERROR(GetJsonField(j, "dropout", origin, &out->dropout));
  // Absent: the layers' dropout (checkpoints before --input-dropout too).
  if (j.contains("input_dropout")) FS_RETURN_IF_ERROR(GetJsonField(j, "input_dropout", origin, &out->input_dropout));
  FS_RETURN_IF_ERROR(GetJsonField(j, "seed", origin, &out->seed));
  // Absent in checkpoints written before node feature choices: the file's
  // dense features.
  if (j.contains("node_features")) FS_RETURN_IF_ERROR(GetJsonField(j, "node_features", origin, &out->node_features));
  if (j.contains("input_table")) FS_RETURN_IF_ERROR(GetJsonField(j, "input_table", origin, &out->input_table));
  Status s = out->Validate();
  if (!s.ok()) return DataLoss(origin + ": " + s.message());
  return Status::OK();
}

std::string TrainingOptionsHash(const TrainOptions& o) {
  nlohmann::json j = TrainOptionsToJson(o);
  for (const char* k : {"dataset", "epochs", "patience", "eval_batch_size"}) j.erase(k);
  if (o.full_graph) {  // ignored in full-graph mode
    j.erase("batch_size");
    j.erase("fanouts");
  }
  return Fnv1aHex(JsonText(j));
}

std::string LearnedRowsPath(const std::string& dir, const std::string& sub) {
  return dir + "/" + sub + "/" + kLearnedRowsFile;
}

Status SaveCheckpoint(const std::string& dir, const GnnModel& model, autograd::Optimizer& optimizer,
                      bool is_best, CheckpointState* state, LearnedNodeTable* learned) {
  FS_RETURN_IF_ERROR(MakeDirs(dir));
  std::vector<std::pair<std::string, Tensor>> params;
  for (const autograd::Parameter* p : model.Parameters()) {
    params.emplace_back(CheckpointFileName(kParamPrefix, p->name()), p->value());
  }
  std::vector<std::pair<std::string, Tensor>> with_optimizer = params;
  nlohmann::json optimizer_files = nlohmann::json::array();
  for (const auto& [name, t] : optimizer.StateTensors()) {
    if (t == nullptr || !t->defined()) continue;  // state not created yet
    with_optimizer.emplace_back(CheckpointFileName(kOptimizerPrefix, name), *t);
    optimizer_files.push_back(name);
  }
  // Until checkpoint.json names them, the new sub-directories are garbage:
  // a failure before then removes them and leaves `state` as it was.
  const std::string old_last = state->last_dir, old_best = state->best_dir;
  const std::string last = SubDirName("epoch", state->epoch);
  const std::string best = is_best ? SubDirName("best", state->epoch) : old_best;
  auto write = [&]() -> Status {
    std::function<Status(const std::string&)> learned_rows;
    if (learned != nullptr) {
      learned_rows = [learned](const std::string& tmp_dir) {
        return learned->SaveRows(tmp_dir + "/" + kLearnedRowsFile);
      };
    }
    FS_RETURN_IF_ERROR(WriteSubDir(dir, last, with_optimizer, learned_rows));
    if (is_best) FS_RETURN_IF_ERROR(WriteSubDir(dir, best, params, learned_rows));
    nlohmann::json j =
        CheckpointPointerHeader(kFormat, kVersion, state->epoch, optimizer.step_count(), optimizer_files);
    j["best_epoch"] = state->best_epoch;
    j["best_val_acc"] = state->best_val_acc;
    j["test_acc"] = state->test_acc;
    j["epochs_since_best"] = state->epochs_since_best;
    j["stopped_early"] = state->stopped_early;
    j["num_nodes"] = state->num_nodes;
    j["model"] = ModelConfigToJson(state->model);
    j["options"] = state->options;
    j["options_hash"] = state->options_hash;
    j["last"] = last;
    j["best"] = best;
    FS_RETURN_IF_ERROR(TestPoint("checkpoint.before-pointer"));
    return WriteFileAtomic(dir + "/" + kCheckpointFile, JsonText(j, 2) + "\n");
  };
  Status s = write();
  if (!s.ok()) {
    // What the pointer on disk names stays, whatever this call meant to do
    // (a failed fsync after its rename leaves the new pointer in place). An
    // unreadable pointer leaves everything for a person to look at.
    StatusOr<CheckpointState> on_disk = ReadCheckpointState(dir);
    const bool known = on_disk.ok() || on_disk.status().code() == StatusCode::kNotFound;
    for (const std::string& sub : {last, best}) {
      const bool named = on_disk.ok() && (sub == on_disk->last_dir || sub == on_disk->best_dir);
      if (known && !named && sub != old_last && sub != old_best) RemoveAll(dir + "/" + sub).IgnoreError();
    }
    return s;
  }
  state->last_dir = last;
  state->best_dir = best;
  state->optimizer_steps = optimizer.step_count();
  FS_RETURN_IF_ERROR(TestPoint("checkpoint.pointer-written"));

  // Older sub-directories are garbage once the pointer moved on.
  FS_ASSIGN_OR_RETURN(DirEntries entries, ListCheckpointEntries(dir));
  for (const std::string& name : entries.subdirs) {
    if (name == state->last_dir || name == state->best_dir) continue;
    FS_RETURN_IF_ERROR(RemoveAll(dir + "/" + name));
    FS_RETURN_IF_ERROR(TestPoint("checkpoint.stale-removed"));
  }
  return Status::OK();
}

Status RemoveCheckpointLeftovers(const std::string& dir) {
  FS_ASSIGN_OR_RETURN(DirEntries entries, ListCheckpointEntries(dir));
  std::vector<std::string> garbage = entries.temporaries;
  // Sub-directories the pointer does not name were being written, or being
  // replaced, when a run died. With no pointer at all, every one of them is.
  // An unreadable pointer keeps them: that is for a person to look at.
  StatusOr<CheckpointState> state = ReadCheckpointState(dir);
  if (state.ok() || state.status().code() == StatusCode::kNotFound) {
    for (const std::string& name : entries.subdirs) {
      if (!state.ok() || (name != state->last_dir && name != state->best_dir)) garbage.push_back(name);
    }
  }
  return RemoveLeftovers(dir, std::move(garbage));
}

StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir) {
  const std::string path = dir + "/" + kCheckpointFile;
  FS_ASSIGN_OR_RETURN(nlohmann::json j, ReadCheckpointPointer(dir, kCheckpointFile, "checkpoint", kFormat, kVersion));
  CheckpointState s;
  FS_RETURN_IF_ERROR(GetJsonField(j, "epoch", path, &s.epoch));
  FS_RETURN_IF_ERROR(GetJsonField(j, "optimizer_steps", path, &s.optimizer_steps));
  FS_RETURN_IF_ERROR(GetJsonField(j, "best_epoch", path, &s.best_epoch));
  FS_RETURN_IF_ERROR(GetJsonField(j, "best_val_acc", path, &s.best_val_acc));
  FS_RETURN_IF_ERROR(GetJsonField(j, "test_acc", path, &s.test_acc));
  FS_RETURN_IF_ERROR(GetJsonField(j, "epochs_since_best", path, &s.epochs_since_best));
  FS_RETURN_IF_ERROR(GetJsonField(j, "stopped_early", path, &s.stopped_early));
  FS_RETURN_IF_ERROR(GetJsonField(j, "num_nodes", path, &s.num_nodes));
  FS_RETURN_IF_ERROR(GetJsonField(j, "options_hash", path, &s.options_hash));
  FS_RETURN_IF_ERROR(GetJsonField(j, "last", path, &s.last_dir));
  FS_RETURN_IF_ERROR(GetJsonField(j, "best", path, &s.best_dir));
  if (!j.contains("model")) return DataLoss(path + ": missing field 'model'");
  FS_RETURN_IF_ERROR(ModelConfigFromJson(j["model"], path, &s.model));
  s.options = j.contains("options") ? j["options"] : nlohmann::json::object();
  for (const std::string* sub : {&s.last_dir, &s.best_dir}) {
    if (!PathExists(dir + "/" + *sub)) {
      return DataLoss(path + ": names sub-directory '" + *sub + "' which does not exist");
    }
  }
  return s;
}

Status LoadParameters(const std::string& dir, const std::string& sub, GnnModel* model) {
  return LoadModuleParameters(dir + "/" + sub, model);
}

Status LoadOptimizerState(const std::string& dir, const std::string& sub, int64_t steps,
                          autograd::Optimizer* optimizer) {
  return LoadOptimizerStateFrom(dir + "/" + sub, steps, optimizer);
}

}  // namespace foresight::trainer::internal
