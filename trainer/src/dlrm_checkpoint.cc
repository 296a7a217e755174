#include "dlrm_checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "file_ops.h"
#include "foresight/core/logging.h"
#include "foresight/storage/clicks_dataset.h"
#include "foresight/storage/npy.h"

namespace foresight::trainer::internal {

namespace {

constexpr char kFormat[] = "foresight-dlrm-checkpoint";
constexpr int kVersion = 1;
constexpr char kSubDirPrefix[] = "dlrm-epoch-";
constexpr char kTablesFile[] = "tables.npy";
constexpr char kTableOffsetsFile[] = "table_offsets.npy";
// Rows read from the tables (and written to the file) at a time.
constexpr int64_t kChunkRows = 65536;

// Parameter names ("bottom0.weight") as plain file names.
std::string FileNameFor(const char* prefix, const std::string& name) {
  std::string s = prefix;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    s += ok ? c : '_';
  }
  return s + ".npy";
}

std::string SubDirName(int epoch) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%s%06d", kSubDirPrefix, epoch);
  return buf;
}

Status WriteNpyFile(const std::string& path, const Tensor& t) {
  const Shape inner(t.shape().begin() + 1, t.shape().end());
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::NpyWriter> w, storage::NpyWriter::Create(path, t.dtype(), inner));
  FS_RETURN_IF_ERROR(w->AppendTensor(t));
  return w->Finish();
}

// Every row of the collection's flat table, in key order, chunk by chunk.
Status WriteTables(const std::string& path, embed::EmbeddingBagCollection* tables, int64_t total_rows) {
  const kernels::EmbeddingRowLayout& layout = tables->layout();
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::NpyWriter> w,
                      storage::NpyWriter::Create(path, layout.dtype, {layout.row_width()}));
  std::vector<uint8_t> buf;
  for (int64_t r0 = 0; r0 < total_rows; r0 += kChunkRows) {
    const int64_t r1 = std::min(total_rows, r0 + kChunkRows);
    std::vector<int64_t> keys(static_cast<size_t>(r1 - r0));
    for (int64_t r = r0; r < r1; ++r) keys[r - r0] = r;
    buf.resize(static_cast<size_t>((r1 - r0) * layout.row_bytes()));
    FS_RETURN_IF_ERROR(tables->table()->ReadRows(keys, buf.data()));
    FS_RETURN_IF_ERROR(w->Append(buf.data(), r1 - r0));
  }
  return w->Finish();
}

Status LoadInto(const std::string& path, Tensor* dst) {
  FS_ASSIGN_OR_RETURN(Tensor t, storage::LoadNpy(path));
  if (!dst->defined()) {
    *dst = t;
    return Status::OK();
  }
  if (t.shape() != dst->shape() || t.dtype() != dst->dtype()) {
    return DataLoss(path + ": holds an array of " + DTypeName(t.dtype()) + " with shape " + ShapeToString(t.shape()) +
                    " but the model expects " + DTypeName(dst->dtype()) + " with shape " +
                    ShapeToString(dst->shape()));
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

int64_t Sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

}  // namespace

nlohmann::json DlrmOptionsToJson(const TrainOptions& o) {
  nlohmann::json j;
  j["dataset"] = o.dataset;
  j["model"] = o.model;
  j["epochs"] = o.epochs;
  j["batch_size"] = o.batch_size;
  j["bottom_mlp"] = o.bottom_mlp;
  j["top_mlp"] = o.top_mlp;
  j["embedding_dim"] = o.embedding_dim;
  j["interaction"] = o.interaction;
  j["optimizer"] = o.optimizer;
  j["lr"] = o.lr;
  j["weight_decay"] = o.weight_decay;
  j["dropout"] = o.dropout;
  j["sparse_optimizer"] = o.sparse_optimizer;
  j["sparse_lr"] = o.sparse_lr;
  j["eval_every"] = o.eval_every;  // which metrics lines the file holds
  j["seed"] = o.seed;
  return j;
}

std::string DlrmOptionsHash(const TrainOptions& o) {
  nlohmann::json j = DlrmOptionsToJson(o);
  j.erase("dataset");
  j.erase("epochs");
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

Status SaveDlrmCheckpoint(const std::string& dir, const autograd::Module& model, autograd::Optimizer& optimizer,
                          embed::EmbeddingBagCollection* tables, DlrmCheckpointState* state) {
  FS_RETURN_IF_ERROR(MakeDirs(dir));
  FS_RETURN_IF_ERROR(tables->Flush());
  const std::string sub = SubDirName(state->epoch);
  const std::string final_dir = dir + "/" + sub, tmp_dir = final_dir + ".tmp";
  nlohmann::json optimizer_files = nlohmann::json::array();
  auto fill = [&]() -> Status {
    FS_RETURN_IF_ERROR(RemoveAll(tmp_dir));
    FS_RETURN_IF_ERROR(MakeDirs(tmp_dir));
    for (const autograd::Parameter* p : model.Parameters()) {
      FS_RETURN_IF_ERROR(WriteNpyFile(tmp_dir + "/" + FileNameFor("param.", p->name()), p->value()));
    }
    for (const auto& [name, t] : optimizer.StateTensors()) {
      if (t == nullptr || !t->defined()) continue;  // not created before the first step
      FS_RETURN_IF_ERROR(WriteNpyFile(tmp_dir + "/" + FileNameFor("opt.", name), *t));
      optimizer_files.push_back(name);
    }
    Tensor offsets = Tensor::Empty({static_cast<int64_t>(state->table_rows.size()) + 1}, DType::kI64);
    offsets.data<int64_t>()[0] = 0;
    for (size_t t = 0; t < state->table_rows.size(); ++t) {
      offsets.data<int64_t>()[t + 1] = offsets.data<int64_t>()[t] + state->table_rows[t];
    }
    FS_RETURN_IF_ERROR(WriteNpyFile(tmp_dir + "/" + kTableOffsetsFile, offsets));
    FS_RETURN_IF_ERROR(WriteTables(tmp_dir + "/" + kTablesFile, tables, Sum(state->table_rows)));
    FS_RETURN_IF_ERROR(FsyncDir(tmp_dir));
    FS_RETURN_IF_ERROR(RemoveAll(final_dir));
    return DurableRename(tmp_dir, final_dir);
  };
  Status s = fill();
  if (!s.ok()) {
    RemoveAll(tmp_dir).IgnoreError();  // the write's own error is the one to report
    return s;
  }
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["epoch"] = state->epoch;
  j["optimizer_steps"] = optimizer.step_count();
  j["optimizer_state"] = optimizer_files;
  j["best_epoch"] = state->best_epoch;
  j["best_step"] = state->best_step;
  j["best_val_auc"] = state->best_val_auc;
  j["test_auc"] = state->test_auc;
  j["test_logloss"] = state->test_logloss;
  j["table_rows"] = state->table_rows;
  j["embedding_dim"] = state->embedding_dim;
  j["sparse_optimizer"] = state->sparse_optimizer;
  j["row_width"] = tables->layout().row_width();
  j["options"] = state->options;
  j["options_hash"] = state->options_hash;
  j["last"] = sub;
  s = WriteFileAtomic(dir + "/" + kDlrmCheckpointFile, j.dump(2) + "\n");
  if (!s.ok()) {
    if (sub != state->last_dir) RemoveAll(final_dir).IgnoreError();
    return s;
  }
  const std::string old = state->last_dir;
  state->last_dir = sub;
  state->optimizer_steps = optimizer.step_count();
  if (!old.empty() && old != sub) FS_RETURN_IF_ERROR(RemoveAll(dir + "/" + old));
  return Status::OK();
}

StatusOr<DlrmCheckpointState> ReadDlrmCheckpointState(const std::string& dir) {
  const std::string path = dir + "/" + kDlrmCheckpointFile;
  StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return NotFound("no DLRM checkpoint in " + dir + " (" + path + " does not exist)");
    }
    return text.status();
  }
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
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
  DlrmCheckpointState s;
  FS_RETURN_IF_ERROR(Get(j, "epoch", path, &s.epoch));
  FS_RETURN_IF_ERROR(Get(j, "optimizer_steps", path, &s.optimizer_steps));
  FS_RETURN_IF_ERROR(Get(j, "best_epoch", path, &s.best_epoch));
  FS_RETURN_IF_ERROR(Get(j, "best_step", path, &s.best_step));
  FS_RETURN_IF_ERROR(Get(j, "best_val_auc", path, &s.best_val_auc));
  FS_RETURN_IF_ERROR(Get(j, "test_auc", path, &s.test_auc));
  FS_RETURN_IF_ERROR(Get(j, "test_logloss", path, &s.test_logloss));
  FS_RETURN_IF_ERROR(Get(j, "table_rows", path, &s.table_rows));
  FS_RETURN_IF_ERROR(Get(j, "embedding_dim", path, &s.embedding_dim));
  FS_RETURN_IF_ERROR(Get(j, "sparse_optimizer", path, &s.sparse_optimizer));
  FS_RETURN_IF_ERROR(Get(j, "options_hash", path, &s.options_hash));
  FS_RETURN_IF_ERROR(Get(j, "last", path, &s.last_dir));
  s.options = j.contains("options") ? j["options"] : nlohmann::json::object();
  if (!PathExists(dir + "/" + s.last_dir)) {
    return DataLoss(path + ": names sub-directory '" + s.last_dir + "' which does not exist");
  }
  return s;
}

Status RemoveDlrmCheckpointLeftovers(const std::string& dir) {
  StatusOr<DlrmCheckpointState> state = ReadDlrmCheckpointState(dir);
  // An unreadable pointer keeps everything for a person to look at.
  if (!state.ok() && state.status().code() != StatusCode::kNotFound) return Status::OK();
  std::vector<std::string> garbage;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool tmp = name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0;
    const bool sub = name.rfind(kSubDirPrefix, 0) == 0;
    if (tmp || (sub && (!state.ok() || name != state->last_dir))) garbage.push_back(name);
  }
  if (ec) return ErrnoError("list " + dir, ec.value());
  std::sort(garbage.begin(), garbage.end());
  std::string names;
  for (const std::string& name : garbage) {
    FS_RETURN_IF_ERROR(RemoveAll(dir + "/" + name));
    names += (names.empty() ? "" : ", ") + name;
  }
  if (!names.empty()) {
    FS_LOG(INFO) << "checkpoint directory " << dir << ": removed what an interrupted run left (" << names << ")";
  }
  return Status::OK();
}

Status LoadDlrmCheckpoint(const std::string& dir, const DlrmCheckpointState& state, autograd::Module* model,
                          autograd::Optimizer* optimizer, embed::EmbeddingBagCollection* tables) {
  const std::string sub = dir + "/" + state.last_dir;
  for (autograd::Parameter* p : model->Parameters()) {
    FS_RETURN_IF_ERROR(LoadInto(sub + "/" + FileNameFor("param.", p->name()), &p->mutable_value()));
  }
  for (auto& [name, t] : optimizer->StateTensors()) {
    const std::string path = sub + "/" + FileNameFor("opt.", name);
    if (!PathExists(path)) {
      if (state.optimizer_steps == 0) continue;
      return DataLoss(path + ": optimizer state '" + name + "' is missing from the checkpoint");
    }
    FS_RETURN_IF_ERROR(LoadInto(path, t));
  }
  optimizer->set_step_count(state.optimizer_steps);
  // The rows go straight to the store: no batch has been planned yet, so
  // the cache holds nothing that could go stale.
  const std::string path = sub + "/" + kTablesFile;
  FS_ASSIGN_OR_RETURN(Tensor rows, storage::MmapNpy(path));
  const kernels::EmbeddingRowLayout& layout = tables->layout();
  const int64_t total = Sum(state.table_rows);
  if (rows.dim() != 2 || rows.size(0) != total || rows.size(1) != layout.row_width() ||
      rows.dtype() != layout.dtype) {
    return DataLoss(path + ": holds " + DTypeName(rows.dtype()) + " " + ShapeToString(rows.shape()) +
                    " but the tables need " + DTypeName(layout.dtype) + " [" + std::to_string(total) + ", " +
                    std::to_string(layout.row_width()) + "]");
  }
  storage::RowStore* store = tables->table()->store();
  for (int64_t r0 = 0; r0 < total; r0 += kChunkRows) {
    const int64_t r1 = std::min(total, r0 + kChunkRows);
    std::vector<storage::RowRequest> reqs;
    reqs.reserve(static_cast<size_t>(r1 - r0));
    for (int64_t r = r0; r < r1; ++r) {
      reqs.push_back({r, static_cast<uint8_t*>(rows.raw_data()) + r * layout.row_bytes()});
    }
    FS_RETURN_IF_ERROR(store->Write(reqs));
  }
  return store->Flush();
}

Status ExportDlrmTables(const std::string& dataset, const std::string& checkpoint_dir, const std::string& output_dir,
                        int* epoch) {
  FS_ASSIGN_OR_RETURN(DlrmCheckpointState state, ReadDlrmCheckpointState(checkpoint_dir));
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::ClicksDataset> data, storage::ClicksDataset::Open(dataset, false));
  if (data->num_fields() != static_cast<int64_t>(state.table_rows.size())) {
    return InvalidArgument("export: the checkpoint in " + checkpoint_dir + " has " +
                           std::to_string(state.table_rows.size()) + " tables but " + dataset + " has " +
                           std::to_string(data->num_fields()) + " categorical fields");
  }
  for (int64_t k = 0; k < data->num_fields(); ++k) {
    if (data->field(k).rows != state.table_rows[k]) {
      return InvalidArgument("export: table " + std::to_string(k) + " of the checkpoint has " +
                             std::to_string(state.table_rows[k]) + " rows but field " + data->field(k).name +
                             " of " + dataset + " has " + std::to_string(data->field(k).rows));
    }
  }
  const std::string path = checkpoint_dir + "/" + state.last_dir + "/" + kTablesFile;
  FS_ASSIGN_OR_RETURN(Tensor rows, storage::MmapNpy(path));
  kernels::EmbeddingRowLayout layout;
  layout.dim = state.embedding_dim;
  FS_ASSIGN_OR_RETURN(layout.optimizer, kernels::ParseSparseOptimizer(state.sparse_optimizer));
  if (rows.dim() != 2 || rows.dtype() != DType::kF32 || rows.size(0) != Sum(state.table_rows) ||
      rows.size(1) != layout.row_width()) {
    return DataLoss(path + ": holds " + DTypeName(rows.dtype()) + " " + ShapeToString(rows.shape()) +
                    ", which does not match the checkpoint's tables");
  }
  FS_RETURN_IF_ERROR(MakeDirs(output_dir));
  nlohmann::json fields = nlohmann::json::array();
  int64_t start = 0;
  for (int64_t k = 0; k < data->num_fields(); ++k) {
    const int64_t n = state.table_rows[k];
    Tensor t = Tensor::Empty({n, layout.dim}, DType::kF32);
    for (int64_t r = 0; r < n; ++r) {
      std::memcpy(t.data<float>() + r * layout.dim, rows.data<float>() + (start + r) * layout.row_width(),
                  static_cast<size_t>(layout.dim) * sizeof(float));
    }
    const std::string table_file = "table_" + std::to_string(k) + ".npy";
    FS_RETURN_IF_ERROR(storage::SaveNpy(output_dir + "/" + table_file, t));
    nlohmann::json f = {{"name", data->field(k).name}, {"rows", n}, {"table", table_file}};
    if (data->vocab(k).defined()) {
      const std::string vocab_file = "vocab_" + std::to_string(k) + ".npy";
      FS_RETURN_IF_ERROR(storage::SaveNpyBytes(output_dir + "/" + vocab_file, data->vocab(k)));
      f["vocab"] = vocab_file;
    }
    fields.push_back(f);
    start += n;
  }
  nlohmann::json j = {{"epoch", state.epoch}, {"embedding_dim", layout.dim}, {"fields", fields}};
  FS_RETURN_IF_ERROR(WriteFileAtomic(output_dir + "/tables.json", j.dump(2) + "\n"));
  *epoch = state.epoch;
  return Status::OK();
}

}  // namespace foresight::trainer::internal
