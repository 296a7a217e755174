#include "link_checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include "checkpoint_io.h"
#include "data_parallel.h"
#include "file_ops.h"
#include "foresight/storage/npy.h"

namespace foresight::trainer::internal {

namespace {

constexpr char kFormat[] = "foresight-link-checkpoint";
constexpr int kVersion = 1;
constexpr char kSubDirPrefix[] = "link-epoch-";
constexpr char kEntitiesFile[] = "entities.npy";
constexpr char kRelationsFile[] = "relations.npy";
// Rows read from a table (and written to the file) at a time, so a table
// larger than RAM is saved and restored in bounded memory.
constexpr int64_t kChunkRows = 65536;

std::string ShardFile(const char* table, int rank) {
  return std::string(table) + ".rank-" + std::to_string(rank) + ".npy";
}

std::string SubDirName(int epoch) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%s%06d", kSubDirPrefix, epoch);
  return buf;
}

// Every row of `table` (with its optimizer state), in key order.
Status WriteRows(const std::string& path, embed::EmbeddingTable* table) {
  const kernels::EmbeddingRowLayout& layout = table->layout();
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::NpyWriter> w,
                      storage::NpyWriter::Create(path, layout.dtype, {layout.row_width()}));
  std::vector<uint8_t> buf;
  for (int64_t r0 = 0; r0 < table->rows(); r0 += kChunkRows) {
    const int64_t r1 = std::min(table->rows(), r0 + kChunkRows);
    std::vector<int64_t> keys(static_cast<size_t>(r1 - r0));
    for (int64_t r = r0; r < r1; ++r) keys[static_cast<size_t>(r - r0)] = r;
    buf.resize(static_cast<size_t>((r1 - r0) * layout.row_bytes()));
    FS_RETURN_IF_ERROR(table->ReadRows(keys, buf.data()));
    FS_RETURN_IF_ERROR(w->Append(buf.data(), r1 - r0));
  }
  return w->Finish();
}

// The rows of `path` into the store of `table`.
Status ReadRowsInto(const std::string& path, embed::EmbeddingTable* table) {
  FS_ASSIGN_OR_RETURN(Tensor rows, storage::MmapNpy(path));
  const kernels::EmbeddingRowLayout& layout = table->layout();
  if (rows.dim() != 2 || rows.size(0) != table->rows() || rows.size(1) != layout.row_width() ||
      rows.dtype() != layout.dtype) {
    return DataLoss(path + ": holds " + DTypeName(rows.dtype()) + " " + ShapeToString(rows.shape()) +
                    " but the table needs " + DTypeName(layout.dtype) + " [" + std::to_string(table->rows()) +
                    ", " + std::to_string(layout.row_width()) + "]");
  }
  storage::RowStore* store = table->store();
  for (int64_t r0 = 0; r0 < table->rows(); r0 += kChunkRows) {
    const int64_t r1 = std::min(table->rows(), r0 + kChunkRows);
    std::vector<storage::RowRequest> reqs;
    reqs.reserve(static_cast<size_t>(r1 - r0));
    for (int64_t r = r0; r < r1; ++r) {
      reqs.push_back({r, static_cast<uint8_t*>(rows.raw_data()) + r * layout.row_bytes()});
    }
    FS_RETURN_IF_ERROR(store->Write(reqs));
  }
  return store->Flush();
}

nlohmann::json RankJson(const LinkRankValues& v) {
  return {{"mrr", v.mrr}, {"hits1", v.hits1}, {"hits3", v.hits3}, {"hits10", v.hits10}};
}

Status RankFromJson(const nlohmann::json& j, const std::string& path, LinkRankValues* v) {
  if (!j.contains("best_test") || !j["best_test"].is_object()) {
    return DataLoss(path + ": missing object field 'best_test'");
  }
  const nlohmann::json& t = j["best_test"];
  FS_RETURN_IF_ERROR(GetJsonField(t, "mrr", path, &v->mrr));
  FS_RETURN_IF_ERROR(GetJsonField(t, "hits1", path, &v->hits1));
  FS_RETURN_IF_ERROR(GetJsonField(t, "hits3", path, &v->hits3));
  return GetJsonField(t, "hits10", path, &v->hits10);
}

// Writes the pointer naming `sub` (the counts and shapes from *state), then
// removes the sub-directory it replaces.
Status CommitPointer(const std::string& dir, const std::string& sub, LinkCheckpointState* state) {
  nlohmann::json j =
      CheckpointPointerHeader(kFormat, kVersion, state->epoch, state->steps, nlohmann::json::array());
  j["best_epoch"] = state->best_epoch;
  j["best_val_mrr"] = state->best_val_mrr;
  j["best_test"] = RankJson(state->best_test);
  j["since_best"] = state->since_best;
  j["stopped_early"] = state->stopped_early;
  j["entity_rows"] = state->entity_rows;
  j["relation_rows"] = state->relation_rows;
  j["row_width"] = state->row_width;
  if (state->ranks > 1) j["ranks"] = state->ranks;  // absent: one rank (checkpoints before shards)
  j["options"] = state->options;
  j["options_hash"] = state->options_hash;
  j["last"] = sub;
  const Status s = WriteFileAtomic(dir + "/" + kLinkCheckpointFile, j.dump(2) + "\n");
  if (!s.ok()) {
    if (sub != state->last_dir) RemoveAll(dir + "/" + sub).IgnoreError();
    return s;
  }
  const std::string old = state->last_dir;
  state->last_dir = sub;
  if (!old.empty() && old != sub) FS_RETURN_IF_ERROR(RemoveAll(dir + "/" + old));
  return Status::OK();
}

}  // namespace

nlohmann::json LinkOptionsToJson(const TrainOptions& o) {
  nlohmann::json j;
  j["dataset"] = o.dataset;
  j["model"] = o.model;
  j["epochs"] = o.epochs;
  j["embedding_dim"] = o.embedding_dim;
  j["init_scale"] = o.init_scale;
  j["batch_size"] = o.batch_size;
  j["negatives"] = o.negatives;
  j["negative_chunk"] = o.negative_chunk;
  j["negative_sampling"] = o.negative_sampling;
  j["loss"] = o.loss;
  j["sampled_softmax"] = o.sampled_softmax;
  j["regularizer"] = o.regularizer;
  j["regularization_weight"] = o.regularization_weight;
  j["reciprocal"] = o.reciprocal;
  j["margin"] = o.margin;
  j["sparse_optimizer"] = o.sparse_optimizer;
  j["sparse_lr"] = o.sparse_lr;
  j["weight_decay"] = o.weight_decay;
  j["eval_negatives"] = o.eval_negatives;  // which values the metrics hold
  j["eval_epochs"] = o.eval_epochs;        // which epochs are evaluated, so the best epoch
  j["patience"] = o.patience;
  j["seed"] = o.seed;
  if (o.order != "random") {  // only then, so random-order checkpoints keep their hash
    j["order"] = o.order;     // which triples each batch holds and which negatives it draws
    j["entity_partitions"] = o.entity_partitions;
    j["resident_partitions"] = o.resident_partitions;
  }
  return j;
}

std::string LinkOptionsHash(const TrainOptions& o) {
  nlohmann::json j = LinkOptionsToJson(o);
  j.erase("dataset");
  j.erase("epochs");
  return Fnv1aHex(j.dump());
}

Status SaveLinkCheckpoint(const std::string& dir, embed::EmbeddingTable* entities, embed::EmbeddingTable* relations,
                          LinkCheckpointState* state) {
  FS_RETURN_IF_ERROR(MakeDirs(dir));
  const std::string sub = SubDirName(state->epoch);
  const std::string final_dir = dir + "/" + sub, tmp_dir = final_dir + ".tmp";
  auto fill = [&]() -> Status {
    FS_RETURN_IF_ERROR(RemoveAll(tmp_dir));
    FS_RETURN_IF_ERROR(MakeDirs(tmp_dir));
    FS_RETURN_IF_ERROR(WriteRows(tmp_dir + "/" + kEntitiesFile, entities));
    FS_RETURN_IF_ERROR(WriteRows(tmp_dir + "/" + kRelationsFile, relations));
    FS_RETURN_IF_ERROR(FsyncDir(tmp_dir));
    FS_RETURN_IF_ERROR(RemoveAll(final_dir));
    return DurableRename(tmp_dir, final_dir);
  };
  Status s = fill();
  if (!s.ok()) {
    RemoveAll(tmp_dir).IgnoreError();  // the write's own error is the one to report
    return s;
  }
  state->entity_rows = entities->rows();
  state->relation_rows = relations->rows();
  state->row_width = entities->layout().row_width();
  state->ranks = 1;
  return CommitPointer(dir, sub, state);
}

Status SaveLinkCheckpointShards(const std::string& dir, embed::EmbeddingTable* entities,
                                embed::EmbeddingTable* relations, Communicator* comm, LinkCheckpointState* state) {
  const bool writer = comm->rank() == 0;
  const std::string sub = SubDirName(state->epoch);
  const std::string final_dir = dir + "/" + sub, tmp_dir = final_dir + ".tmp";
  Status s;
  if (writer) {
    s = MakeDirs(dir);
    if (s.ok()) s = RemoveAll(tmp_dir);
    if (s.ok()) s = MakeDirs(tmp_dir);
  }
  FS_RETURN_IF_ERROR(AllRanksOk(comm, s, "link checkpoint: making " + tmp_dir));
  s = WriteRows(tmp_dir + "/" + ShardFile("entities", comm->rank()), entities);
  if (s.ok()) s = WriteRows(tmp_dir + "/" + ShardFile("relations", comm->rank()), relations);
  s = AllRanksOk(comm, s, "link checkpoint: writing the shards of epoch " + std::to_string(state->epoch));
  if (!s.ok()) {
    if (writer) RemoveAll(tmp_dir).IgnoreError();  // the write's own error is the one to report
    return s;
  }
  state->ranks = comm->size();
  if (writer) {
    s = FsyncDir(tmp_dir);
    if (s.ok()) s = RemoveAll(final_dir);
    if (s.ok()) s = DurableRename(tmp_dir, final_dir);
    if (!s.ok()) RemoveAll(tmp_dir).IgnoreError();
    if (s.ok()) s = CommitPointer(dir, sub, state);
  }
  FS_RETURN_IF_ERROR(AllRanksOk(comm, s, "link checkpoint: committing epoch " + std::to_string(state->epoch)));
  state->last_dir = sub;
  return Status::OK();
}

Status CheckShardedLinkCheckpoint(const std::string& dir, const LinkCheckpointState& state, int ranks,
                                  int64_t entity_rows, int64_t relation_rows, int64_t row_width) {
  const auto count = [](int n) { return n == 1 ? std::string("1 rank") : std::to_string(n) + " ranks"; };
  if (state.ranks != ranks) {
    return FailedPrecondition("resume: the checkpoint in " + dir + " was written by " + count(state.ranks) +
                              " (each its shard of the tables) but this run has " + count(ranks) +
                              "; resume it on " + count(state.ranks) +
                              (state.ranks > 1 ? " (mpirun -np " + std::to_string(state.ranks) + ")" : ""));
  }
  if (state.entity_rows != entity_rows || state.relation_rows != relation_rows || state.row_width != row_width) {
    return FailedPrecondition("resume: the checkpoint in " + dir + " holds " + std::to_string(state.entity_rows) +
                              " entity and " + std::to_string(state.relation_rows) + " relation rows of width " +
                              std::to_string(state.row_width) + " but this run needs " +
                              std::to_string(entity_rows) + " and " + std::to_string(relation_rows) +
                              " of width " + std::to_string(row_width));
  }
  return Status::OK();
}

Status LoadLinkCheckpointShard(const std::string& dir, const LinkCheckpointState& state, int rank,
                               embed::EmbeddingTable* entities, embed::EmbeddingTable* relations) {
  const std::string sub = dir + "/" + state.last_dir;
  FS_RETURN_IF_ERROR(ReadRowsInto(sub + "/" + ShardFile("entities", rank), entities));
  return ReadRowsInto(sub + "/" + ShardFile("relations", rank), relations);
}

StatusOr<LinkCheckpointState> ReadLinkCheckpointState(const std::string& dir) {
  const std::string path = dir + "/" + kLinkCheckpointFile;
  FS_ASSIGN_OR_RETURN(const nlohmann::json j, ReadCheckpointPointer(dir, kLinkCheckpointFile,
                                                                    "link-prediction checkpoint", kFormat, kVersion));
  LinkCheckpointState s;
  FS_RETURN_IF_ERROR(GetJsonField(j, "epoch", path, &s.epoch));
  FS_RETURN_IF_ERROR(GetJsonField(j, "optimizer_steps", path, &s.steps));
  FS_RETURN_IF_ERROR(GetJsonField(j, "best_epoch", path, &s.best_epoch));
  FS_RETURN_IF_ERROR(GetJsonField(j, "best_val_mrr", path, &s.best_val_mrr));
  FS_RETURN_IF_ERROR(RankFromJson(j, path, &s.best_test));
  FS_RETURN_IF_ERROR(GetJsonField(j, "since_best", path, &s.since_best));
  FS_RETURN_IF_ERROR(GetJsonField(j, "stopped_early", path, &s.stopped_early));
  FS_RETURN_IF_ERROR(GetJsonField(j, "entity_rows", path, &s.entity_rows));
  FS_RETURN_IF_ERROR(GetJsonField(j, "relation_rows", path, &s.relation_rows));
  FS_RETURN_IF_ERROR(GetJsonField(j, "row_width", path, &s.row_width));
  if (j.contains("ranks")) FS_RETURN_IF_ERROR(GetJsonField(j, "ranks", path, &s.ranks));
  FS_RETURN_IF_ERROR(GetJsonField(j, "options_hash", path, &s.options_hash));
  FS_RETURN_IF_ERROR(GetJsonField(j, "last", path, &s.last_dir));
  s.options = j.contains("options") ? j["options"] : nlohmann::json::object();
  if (!PathExists(dir + "/" + s.last_dir)) {
    return DataLoss(path + ": names sub-directory '" + s.last_dir + "' which does not exist");
  }
  return s;
}

Status RemoveLinkCheckpointLeftovers(const std::string& dir) {
  const StatusOr<LinkCheckpointState> state = ReadLinkCheckpointState(dir);
  return RemoveLeftoversBesides(dir, kSubDirPrefix, state.status(), state.ok() ? state->last_dir : "");
}

Status LoadLinkCheckpoint(const std::string& dir, const LinkCheckpointState& state, embed::EmbeddingTable* entities,
                          embed::EmbeddingTable* relations) {
  FS_RETURN_IF_ERROR(CheckShardedLinkCheckpoint(dir, state, 1, entities->rows(), relations->rows(),
                                                entities->layout().row_width()));
  const std::string sub = dir + "/" + state.last_dir;
  FS_RETURN_IF_ERROR(ReadRowsInto(sub + "/" + kEntitiesFile, entities));
  return ReadRowsInto(sub + "/" + kRelationsFile, relations);
}

}  // namespace foresight::trainer::internal
