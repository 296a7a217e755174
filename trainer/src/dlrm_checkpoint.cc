#include "dlrm_checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "checkpoint_io.h"
#include "data_parallel.h"
#include "file_ops.h"
#include "foresight/embed/embedding_sharding.h"
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

std::string ShardFileName(int rank) { return "tables.rank-" + std::to_string(rank) + ".npy"; }

std::string SubDirName(int epoch) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%s%06d", kSubDirPrefix, epoch);
  return buf;
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
  return Fnv1aHex(j.dump());
}

Status SaveDlrmCheckpoint(const std::string& dir, const autograd::Module& model, autograd::Optimizer& optimizer,
                          embed::EmbeddingBagCollection* tables, Communicator* comm, DlrmCheckpointState* state) {
  const int ranks = comm->size(), rank = comm->rank();
  const bool writer = rank == 0;
  const std::string sub = SubDirName(state->epoch);
  const std::string final_dir = dir + "/" + sub, tmp_dir = final_dir + ".tmp";
  nlohmann::json optimizer_files = nlohmann::json::array();
  // Rank 0 makes the sub-directory and writes the dense half; then every
  // rank its rows; then rank 0 commits.
  auto dense_half = [&]() -> Status {
    FS_RETURN_IF_ERROR(MakeDirs(dir));
    FS_RETURN_IF_ERROR(RemoveAll(tmp_dir));
    FS_RETURN_IF_ERROR(MakeDirs(tmp_dir));
    for (const autograd::Parameter* p : model.Parameters()) {
      FS_RETURN_IF_ERROR(WriteCheckpointNpy(tmp_dir + "/" + CheckpointFileName(kParamPrefix, p->name()), p->value()));
    }
    for (const auto& [name, t] : optimizer.StateTensors()) {
      if (t == nullptr || !t->defined()) continue;  // not created before the first step
      FS_RETURN_IF_ERROR(WriteCheckpointNpy(tmp_dir + "/" + CheckpointFileName(kOptimizerPrefix, name), *t));
      optimizer_files.push_back(name);
    }
    Tensor offsets = Tensor::Empty({static_cast<int64_t>(state->table_rows.size()) + 1}, DType::kI64);
    offsets.data<int64_t>()[0] = 0;
    for (size_t t = 0; t < state->table_rows.size(); ++t) {
      offsets.data<int64_t>()[t + 1] = offsets.data<int64_t>()[t] + state->table_rows[t];
    }
    return WriteCheckpointNpy(tmp_dir + "/" + kTableOffsetsFile, offsets);
  };
  auto rows = [&]() -> Status {
    FS_RETURN_IF_ERROR(tables->Flush());
    int64_t held = 0;  // this rank's rows
    for (int64_t t = 0; t < tables->num_tables(); ++t) held += tables->table_rows(t);
    return WriteTables(tmp_dir + "/" + (ranks == 1 ? std::string(kTablesFile) : ShardFileName(rank)), tables, held);
  };
  auto commit = [&]() -> Status {
    FS_RETURN_IF_ERROR(FsyncDir(tmp_dir));
    FS_RETURN_IF_ERROR(RemoveAll(final_dir));
    return DurableRename(tmp_dir, final_dir);
  };
  Status s = AllRanksOk(comm, writer ? dense_half() : Status::OK(), "writing the checkpoint in " + dir);
  if (s.ok()) s = AllRanksOk(comm, rows(), "writing the checkpoint's table shards in " + dir);
  if (s.ok()) s = AllRanksOk(comm, writer ? commit() : Status::OK(), "committing the checkpoint in " + dir);
  if (!s.ok()) {
    if (writer) RemoveAll(tmp_dir).IgnoreError();  // the write's own error is the one to report
    return s;
  }
  Status pointer;
  if (writer) {
    nlohmann::json j =
        CheckpointPointerHeader(kFormat, kVersion, state->epoch, optimizer.step_count(), optimizer_files);
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
    if (ranks > 1) {
      j["ranks"] = ranks;
      j["sharding"] = state->sharding;
    }
    j["last"] = sub;
    pointer = WriteFileAtomic(dir + "/" + kDlrmCheckpointFile, j.dump(2) + "\n");
    if (!pointer.ok() && sub != state->last_dir) RemoveAll(final_dir).IgnoreError();
  }
  FS_RETURN_IF_ERROR(AllRanksOk(comm, pointer, "writing the checkpoint pointer in " + dir));
  const std::string old = state->last_dir;
  state->last_dir = sub;
  state->optimizer_steps = optimizer.step_count();
  if (writer && !old.empty() && old != sub) FS_RETURN_IF_ERROR(RemoveAll(dir + "/" + old));
  return Status::OK();
}

StatusOr<DlrmCheckpointState> ReadDlrmCheckpointState(const std::string& dir) {
  const std::string path = dir + "/" + kDlrmCheckpointFile;
  FS_ASSIGN_OR_RETURN(const nlohmann::json j,
                      ReadCheckpointPointer(dir, kDlrmCheckpointFile, "DLRM checkpoint", kFormat, kVersion));
  DlrmCheckpointState s;
  FS_RETURN_IF_ERROR(GetJsonField(j, "epoch", path, &s.epoch));
  FS_RETURN_IF_ERROR(GetJsonField(j, "optimizer_steps", path, &s.optimizer_steps));
  FS_RETURN_IF_ERROR(GetJsonField(j, "best_epoch", path, &s.best_epoch));
  FS_RETURN_IF_ERROR(GetJsonField(j, "best_step", path, &s.best_step));
  FS_RETURN_IF_ERROR(GetJsonField(j, "best_val_auc", path, &s.best_val_auc));
  FS_RETURN_IF_ERROR(GetJsonField(j, "test_auc", path, &s.test_auc));
  FS_RETURN_IF_ERROR(GetJsonField(j, "test_logloss", path, &s.test_logloss));
  FS_RETURN_IF_ERROR(GetJsonField(j, "table_rows", path, &s.table_rows));
  FS_RETURN_IF_ERROR(GetJsonField(j, "embedding_dim", path, &s.embedding_dim));
  FS_RETURN_IF_ERROR(GetJsonField(j, "sparse_optimizer", path, &s.sparse_optimizer));
  FS_RETURN_IF_ERROR(GetJsonField(j, "options_hash", path, &s.options_hash));
  FS_RETURN_IF_ERROR(GetJsonField(j, "last", path, &s.last_dir));
  s.options = j.contains("options") ? j["options"] : nlohmann::json::object();
  if (j.contains("ranks")) {
    FS_RETURN_IF_ERROR(GetJsonField(j, "ranks", path, &s.ranks));
    FS_RETURN_IF_ERROR(GetJsonField(j, "sharding", path, &s.sharding));
  }
  if (!PathExists(dir + "/" + s.last_dir)) {
    return DataLoss(path + ": names sub-directory '" + s.last_dir + "' which does not exist");
  }
  return s;
}

Status RemoveDlrmCheckpointLeftovers(const std::string& dir) {
  const StatusOr<DlrmCheckpointState> state = ReadDlrmCheckpointState(dir);
  return RemoveLeftoversBesides(dir, kSubDirPrefix, state.status(), state.ok() ? state->last_dir : "");
}

Status LoadDlrmCheckpoint(const std::string& dir, const DlrmCheckpointState& state, autograd::Module* model,
                          autograd::Optimizer* optimizer, embed::EmbeddingBagCollection* tables, int rank) {
  const std::string sub = dir + "/" + state.last_dir;
  FS_RETURN_IF_ERROR(LoadModuleParameters(sub, model));
  FS_RETURN_IF_ERROR(LoadOptimizerStateFrom(sub, state.optimizer_steps, optimizer));
  // The rows go straight to the store: no batch has been planned yet, so
  // the cache holds nothing that could go stale.
  const std::string path = sub + "/" + (state.ranks == 1 ? std::string(kTablesFile) : ShardFileName(rank));
  FS_ASSIGN_OR_RETURN(Tensor rows, storage::MmapNpy(path));
  const kernels::EmbeddingRowLayout& layout = tables->layout();
  int64_t total = 0;  // the rows this rank holds
  for (int64_t t = 0; t < tables->num_tables(); ++t) total += tables->table_rows(t);
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
  kernels::EmbeddingRowLayout layout;
  layout.dim = state.embedding_dim;
  FS_ASSIGN_OR_RETURN(layout.optimizer, kernels::ParseSparseOptimizer(state.sparse_optimizer));
  // The files of rows: tables.npy, or each rank's shard; and where row r of
  // table k is among them.
  std::vector<Tensor> files;
  auto open = [&](const std::string& name, int64_t rows) -> Status {
    const std::string path = checkpoint_dir + "/" + state.last_dir + "/" + name;
    FS_ASSIGN_OR_RETURN(Tensor t, storage::MmapNpy(path));
    if (t.dim() != 2 || t.dtype() != DType::kF32 || t.size(0) != rows || t.size(1) != layout.row_width()) {
      return DataLoss(path + ": holds " + DTypeName(t.dtype()) + " " + ShapeToString(t.shape()) +
                      ", which does not match the checkpoint's tables (f32 [" + std::to_string(rows) + ", " +
                      std::to_string(layout.row_width()) + "])");
    }
    files.push_back(t);
    return Status::OK();
  };
  std::unique_ptr<embed::EmbeddingSharding> plan;
  std::vector<std::vector<int64_t>> first;  // [file][table]: the table's first row in the file (-1: none)
  if (state.ranks == 1) {
    FS_RETURN_IF_ERROR(open(kTablesFile, Sum(state.table_rows)));
    first.emplace_back();
    int64_t at = 0;
    for (int64_t n : state.table_rows) {
      first[0].push_back(at);
      at += n;
    }
  } else {
    FS_ASSIGN_OR_RETURN(const embed::ShardingKind kind, embed::ParseShardingKind(state.sharding));
    FS_ASSIGN_OR_RETURN(embed::EmbeddingSharding made,
                        embed::EmbeddingSharding::Make(kind, state.table_rows, state.ranks));
    plan = std::make_unique<embed::EmbeddingSharding>(std::move(made));
    for (int r = 0; r < state.ranks; ++r) {
      first.emplace_back(state.table_rows.size(), -1);
      const std::vector<int64_t> rows = plan->ShardRows(r);
      int64_t at = 0;
      for (size_t i = 0; i < rows.size(); ++i) {
        first[r][plan->TablesOf(r)[i]] = at;
        at += rows[i];
      }
      FS_RETURN_IF_ERROR(open(ShardFileName(r), at));
    }
  }
  auto row_of = [&](int64_t k, int64_t r) {
    const int file = plan ? plan->Owner(k, r) : 0;
    const int64_t row = first[file][k] + (plan ? plan->LocalId(r) : r);
    return files[file].data<float>() + row * layout.row_width();
  };
  FS_RETURN_IF_ERROR(MakeDirs(output_dir));
  nlohmann::json fields = nlohmann::json::array();
  for (int64_t k = 0; k < data->num_fields(); ++k) {
    const int64_t n = state.table_rows[k];
    Tensor t = Tensor::Empty({n, layout.dim}, DType::kF32);
    for (int64_t r = 0; r < n; ++r) {
      std::memcpy(t.data<float>() + r * layout.dim, row_of(k, r), static_cast<size_t>(layout.dim) * sizeof(float));
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
  }
  nlohmann::json j = {{"epoch", state.epoch}, {"embedding_dim", layout.dim}, {"fields", fields}};
  FS_RETURN_IF_ERROR(WriteFileAtomic(output_dir + "/tables.json", j.dump(2) + "\n"));
  *epoch = state.epoch;
  return Status::OK();
}

}  // namespace foresight::trainer::internal
