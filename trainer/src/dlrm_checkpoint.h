// DLRM checkpoints: a directory holding dlrm_checkpoint.json (the pointer,
// written last and atomically) and dlrm-epoch-<k>/ with everything the run
// needs to go on after epoch k: the dense parameters (param.<name>.npy), the
// dense optimizer's state (opt.<name>.npy), and every table row with its
// sparse optimizer state beside it (tables.npy [rows of all tables,
// row_width], the kernels::EmbeddingRowLayout of each row; table t's rows
// start at table_offsets.npy[t]). A run on N > 1 ranks writes, instead of
// tables.npy, each rank's shard (embed::ShardedEmbeddingBags) as
// tables.rank-<r>.npy [rows of its shard's tables, row_width] from that
// rank, and records the rank count and sharding: it resumes on N ranks
// with the same sharding only. A sub-directory is written under a .tmp
// name and renamed into place, so a crash leaves the previous checkpoint;
// what it left is removed when the directory is next opened. Private to the
// trainer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/autograd/module.h"
#include "foresight/autograd/optimizer.h"
#include "foresight/core/communicator.h"
#include "foresight/core/status.h"
#include "foresight/embed/embedding_bag_collection.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer::internal {

inline constexpr char kDlrmCheckpointFile[] = "dlrm_checkpoint.json";

struct DlrmCheckpointState {
  int epoch = 0;  // epochs completed
  int64_t optimizer_steps = 0;
  // The best evaluation so far (the final line's values).
  int best_epoch = 0;
  int64_t best_step = 0;
  double best_val_auc = -1, test_auc = 0, test_logloss = 0;
  std::vector<int64_t> table_rows;
  int64_t embedding_dim = 0;
  std::string sparse_optimizer;
  nlohmann::json options;    // DlrmOptionsToJson
  std::string options_hash;  // DlrmOptionsHash
  std::string last_dir;      // "dlrm-epoch-<k>"
  int ranks = 1;             // ranks that wrote it, each its shard of the tables
  std::string sharding;      // ranks > 1: "row" or "table"
};

// The options that shape the run, and a hex hash of those that determine
// its trajectory (not epochs, threads, paths, progress, eval_batch_size, or
// the table store and cache, which never change a result bit).
nlohmann::json DlrmOptionsToJson(const TrainOptions& o);
std::string DlrmOptionsHash(const TrainOptions& o);

// Writes dlrm-epoch-<state->epoch>/, then the pointer, then removes the
// sub-directory it replaces. Flushes the tables first (their dirty rows go
// to the store). The caller holds the directory's CheckpointDirLock (rank
// 0's on several ranks). Collective on `comm`: every rank writes its shard
// (`tables`: its rows), rank 0 the rest; a rank's failure fails all.
Status SaveDlrmCheckpoint(const std::string& dir, const autograd::Module& model, autograd::Optimizer& optimizer,
                          embed::EmbeddingBagCollection* tables, Communicator* comm, DlrmCheckpointState* state);
// Reads the pointer (NotFound when the directory holds none).
StatusOr<DlrmCheckpointState> ReadDlrmCheckpointState(const std::string& dir);
// Removes "*.tmp" entries and dlrm-epoch-* sub-directories the pointer does
// not name (all of them without a pointer).
Status RemoveDlrmCheckpointLeftovers(const std::string& dir);
// Restores the dense parameters, the optimizer's state and every table row
// saved in dir/state.last_dir (with state.ranks > 1, this rank's shard:
// `rank`). Shapes must match (errors name the file).
Status LoadDlrmCheckpoint(const std::string& dir, const DlrmCheckpointState& state, autograd::Module* model,
                          autograd::Optimizer* optimizer, embed::EmbeddingBagCollection* tables, int rank);
// The last checkpoint's tables as table_<k>.npy (f32 [rows_k, dim], the
// embeddings without optimizer state) and, for fields with a vocabulary in
// the dataset, vocab_<k>.npy (row r's raw value; row 0 = out of vocabulary),
// plus tables.json naming each field with its files. Sets *epoch to the
// checkpoint's epoch. A checkpoint of several ranks is read from every
// rank's shard file (one process does it).
Status ExportDlrmTables(const std::string& dataset, const std::string& checkpoint_dir, const std::string& output_dir,
                        int* epoch);

}  // namespace foresight::trainer::internal
