#include "checkpoint.h"

#include <cstdio>
#include <filesystem>
#include <set>
#include <system_error>

#include "file_ops.h"
#include "foresight/storage/npy.h"

namespace foresight::trainer::internal {

namespace {

constexpr char kFormat[] = "foresight-checkpoint";
constexpr int kVersion = 1;
constexpr char kParamPrefix[] = "param.";
constexpr char kOptimizerPrefix[] = "opt.";

// Parameter names are "layers.0.self.weight"-like; anything outside
// [A-Za-z0-9._-] becomes '_' so a name is always a plain file name.
std::string FileNameFor(const std::string& prefix, const std::string& name) {
  std::string s = prefix;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    s += ok ? c : '_';
  }
  return s + ".npy";
}

std::string SubDirName(const char* kind, int epoch) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%s-%06d", kind, epoch);
  return buf;
}

// Writes `tensors` (file name -> tensor) into dir/sub via dir/sub.tmp.
Status WriteSubDir(const std::string& dir, const std::string& sub,
                   const std::vector<std::pair<std::string, Tensor>>& tensors) {
  const std::string final_dir = dir + "/" + sub;
  const std::string tmp_dir = final_dir + ".tmp";
  FS_RETURN_IF_ERROR(RemoveAll(tmp_dir));
  FS_RETURN_IF_ERROR(MakeDirs(tmp_dir));
  std::set<std::string> seen;
  for (const auto& [file, t] : tensors) {
    if (!seen.insert(file).second) {
      return Internal("checkpoint: two tensors map to the file name " + file);
    }
    FS_RETURN_IF_ERROR(storage::SaveNpy(tmp_dir + "/" + file, t));
  }
  FS_RETURN_IF_ERROR(RemoveAll(final_dir));
  return DurableRename(tmp_dir, final_dir);
}

// Loads dir/sub/file into `dst` (same shape and dtype) or, when dst is
// undefined, makes dst a copy of it.
Status LoadInto(const std::string& path, Tensor* dst) {
  FS_ASSIGN_OR_RETURN(Tensor t, storage::LoadNpy(path));
  if (!dst->defined()) {
    *dst = t;
    return Status::OK();
  }
  if (t.shape() != dst->shape() || t.dtype() != dst->dtype()) {
    return DataLoss(path + ": holds " + t.ToString() + " but the model expects " + dst->ToString());
  }
  return dst->CopyFrom(t);
}

template <typename T>
Status Get(const nlohmann::json& j, const char* key, const std::string& origin, T* out) {
  if (!j.contains(key)) return DataLoss(origin + ": missing field '" + key + "'");
  try {
    *out = j.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    return DataLoss(origin + ": field '" + key + "' has the wrong type (" + e.what() + ")");
  }
  return Status::OK();
}

}  // namespace

nlohmann::json TrainOptionsToJson(const TrainOptions& o) {
  nlohmann::json j;
  j["dataset"] = o.dataset;
  j["model"] = o.model;
  // Recorded when not the default, so checkpoints written before the
  // choice existed keep their options hash (and still resume).
  if (o.node_features != "file") j["node_features"] = o.node_features;
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
  j["seed"] = c.seed;
  if (c.node_features != "file") j["node_features"] = c.node_features;
  if (c.input_table) j["input_table"] = c.input_table;
  return j;
}

Status ModelConfigFromJson(const nlohmann::json& j, const std::string& origin, ModelConfig* out) {
  if (!j.is_object()) return DataLoss(origin + ": 'model' is not an object");
  FS_RETURN_IF_ERROR(Get(j, "kind", origin, &out->kind));
  FS_RETURN_IF_ERROR(Get(j, "in_features", origin, &out->in_features));
  FS_RETURN_IF_ERROR(Get(j, "num_classes", origin, &out->num_classes));
  FS_RETURN_IF_ERROR(Get(j, "hidden", origin, &out->hidden));
  FS_RETURN_IF_ERROR(Get(j, "layers", origin, &out->layers));
  FS_RETURN_IF_ERROR(Get(j, "heads", origin, &out->heads));
  FS_RETURN_IF_ERROR(Get(j, "dropout", origin, &out->dropout));
  FS_RETURN_IF_ERROR(Get(j, "seed", origin, &out->seed));
  // Absent in checkpoints written before node feature choices: the file's
  // dense features.
  if (j.contains("node_features")) FS_RETURN_IF_ERROR(Get(j, "node_features", origin, &out->node_features));
  if (j.contains("input_table")) FS_RETURN_IF_ERROR(Get(j, "input_table", origin, &out->input_table));
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
  const std::string s = j.dump();
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

Status SaveCheckpoint(const std::string& dir, const GnnModel& model, autograd::Optimizer& optimizer,
                      bool is_best, CheckpointState* state) {
  FS_RETURN_IF_ERROR(MakeDirs(dir));
  std::vector<std::pair<std::string, Tensor>> params;
  for (const autograd::Parameter* p : model.Parameters()) {
    params.emplace_back(FileNameFor(kParamPrefix, p->name()), p->value());
  }
  std::vector<std::pair<std::string, Tensor>> with_optimizer = params;
  nlohmann::json optimizer_files = nlohmann::json::array();
  for (const auto& [name, t] : optimizer.StateTensors()) {
    if (t == nullptr || !t->defined()) continue;  // state not created yet
    with_optimizer.emplace_back(FileNameFor(kOptimizerPrefix, name), *t);
    optimizer_files.push_back(name);
  }
  const std::string last = SubDirName("epoch", state->epoch);
  FS_RETURN_IF_ERROR(WriteSubDir(dir, last, with_optimizer));
  state->last_dir = last;
  if (is_best) {
    const std::string best = SubDirName("best", state->epoch);
    FS_RETURN_IF_ERROR(WriteSubDir(dir, best, params));
    state->best_dir = best;
  }
  state->optimizer_steps = optimizer.step_count();

  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["epoch"] = state->epoch;
  j["optimizer_steps"] = state->optimizer_steps;
  j["optimizer_state"] = optimizer_files;
  j["best_epoch"] = state->best_epoch;
  j["best_val_acc"] = state->best_val_acc;
  j["test_acc"] = state->test_acc;
  j["epochs_since_best"] = state->epochs_since_best;
  j["stopped_early"] = state->stopped_early;
  j["num_nodes"] = state->num_nodes;
  j["model"] = ModelConfigToJson(state->model);
  j["options"] = state->options;
  j["options_hash"] = state->options_hash;
  j["last"] = state->last_dir;
  j["best"] = state->best_dir;
  FS_RETURN_IF_ERROR(WriteFileAtomic(dir + "/" + kCheckpointFile, j.dump(2) + "\n"));

  // Older sub-directories are garbage once the pointer moved on.
  std::error_code ec;
  std::vector<std::string> stale;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool ours = name.rfind("epoch-", 0) == 0 || name.rfind("best-", 0) == 0;
    if (ours && name != state->last_dir && name != state->best_dir) stale.push_back(name);
  }
  if (ec) return ErrnoError("list " + dir, ec.value());
  for (const std::string& name : stale) FS_RETURN_IF_ERROR(RemoveAll(dir + "/" + name));
  return Status::OK();
}

StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir) {
  const std::string path = dir + "/" + kCheckpointFile;
  StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return NotFound("no checkpoint in " + dir + " (" + path + " does not exist)");
    }
    return text.status();
  }
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return DataLoss(path + ": not a JSON object");
  std::string format;
  int version = 0;
  FS_RETURN_IF_ERROR(Get(j, "format", path, &format));
  FS_RETURN_IF_ERROR(Get(j, "version", path, &version));
  if (format != kFormat) return DataLoss(path + ": format is '" + format + "', expected '" + kFormat + "'");
  if (version != kVersion) {
    return DataLoss(path + ": version " + std::to_string(version) + " is not supported (expected " +
                    std::to_string(kVersion) + ")");
  }
  CheckpointState s;
  FS_RETURN_IF_ERROR(Get(j, "epoch", path, &s.epoch));
  FS_RETURN_IF_ERROR(Get(j, "optimizer_steps", path, &s.optimizer_steps));
  FS_RETURN_IF_ERROR(Get(j, "best_epoch", path, &s.best_epoch));
  FS_RETURN_IF_ERROR(Get(j, "best_val_acc", path, &s.best_val_acc));
  FS_RETURN_IF_ERROR(Get(j, "test_acc", path, &s.test_acc));
  FS_RETURN_IF_ERROR(Get(j, "epochs_since_best", path, &s.epochs_since_best));
  FS_RETURN_IF_ERROR(Get(j, "stopped_early", path, &s.stopped_early));
  FS_RETURN_IF_ERROR(Get(j, "num_nodes", path, &s.num_nodes));
  FS_RETURN_IF_ERROR(Get(j, "options_hash", path, &s.options_hash));
  FS_RETURN_IF_ERROR(Get(j, "last", path, &s.last_dir));
  FS_RETURN_IF_ERROR(Get(j, "best", path, &s.best_dir));
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
  for (autograd::Parameter* p : model->Parameters()) {
    FS_RETURN_IF_ERROR(LoadInto(dir + "/" + sub + "/" + FileNameFor(kParamPrefix, p->name()),
                                &p->mutable_value()));
  }
  return Status::OK();
}

Status LoadOptimizerState(const std::string& dir, const std::string& sub, int64_t steps,
                          autograd::Optimizer* optimizer) {
  for (auto& [name, t] : optimizer->StateTensors()) {
    const std::string path = dir + "/" + sub + "/" + FileNameFor(kOptimizerPrefix, name);
    if (!PathExists(path)) {
      if (steps == 0) continue;  // nothing was created before the first step
      return DataLoss(path + ": optimizer state '" + name + "' is missing from the checkpoint");
    }
    FS_RETURN_IF_ERROR(LoadInto(path, t));
  }
  optimizer->set_step_count(steps);
  return Status::OK();
}

}  // namespace foresight::trainer::internal
