// Link-prediction checkpoints: a directory holding link_checkpoint.json (the
// pointer, written last and atomically) and link-epoch-<k>/ with what the
// run needs to go on after epoch k: every entity row and every relation row
// with its sparse optimizer state beside it (entities.npy and
// relations.npy, [rows, row_width] in the kernels::EmbeddingRowLayout of the
// tables). Everything else that decides the next steps is a function of the
// options and the step count (batch order and negatives come from a
// counter-based RNG keyed by seed, epoch and batch), so the pointer keeps
// only the counts and the best evaluation so far. A sub-directory is written
// under a .tmp name and renamed into place, so a crash leaves the previous
// checkpoint; what it left is removed when the directory is next opened.
// Private to the trainer.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "foresight/core/communicator.h"
#include "foresight/core/status.h"
#include "foresight/embed/embedding_table.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer::internal {

inline constexpr char kLinkCheckpointFile[] = "link_checkpoint.json";

// Filtered ranking metrics of one split (the values of the final line).
struct LinkRankValues {
  double mrr = 0, hits1 = 0, hits3 = 0, hits10 = 0;
};

struct LinkCheckpointState {
  int epoch = 0;       // epochs completed
  int64_t steps = 0;   // sparse optimizer steps taken (Adam's bias correction)
  int best_epoch = 0;
  double best_val_mrr = -1.0;
  LinkRankValues best_test;
  int since_best = 0;  // evaluations without a better validation MRR (patience)
  bool stopped_early = false;
  int64_t entity_rows = 0, relation_rows = 0, row_width = 0;
  int ranks = 1;  // > 1: each rank's shards, entities.rank-<r>.npy and relations.rank-<r>.npy
  nlohmann::json options;    // LinkOptionsToJson
  std::string options_hash;  // LinkOptionsHash
  std::string last_dir;      // "link-epoch-<k>"
};

// The options that shape the run, and a hex hash of those that determine
// its trajectory (not epochs, threads, paths, progress, or the table store
// and cache, which never change a result bit).
nlohmann::json LinkOptionsToJson(const TrainOptions& o);
std::string LinkOptionsHash(const TrainOptions& o);

// Writes link-epoch-<state->epoch>/ (the tables' rows, flushed first), then
// the pointer, then removes the sub-directory it replaces. The caller holds
// the directory's CheckpointDirLock.
Status SaveLinkCheckpoint(const std::string& dir, embed::EmbeddingTable* entities, embed::EmbeddingTable* relations,
                          LinkCheckpointState* state);
// Several ranks, row-wise shards (link_sharded_trainer.cc): every rank writes
// its shards' rows (entities.rank-<r>.npy, relations.rank-<r>.npy: its
// tables' local rows) into the sub-directory rank 0 made, then rank 0
// commits it and writes the pointer (with state->ranks). Collective on
// `comm`; a rank's failure fails all. Rank 0 holds the directory's lock.
Status SaveLinkCheckpointShards(const std::string& dir, embed::EmbeddingTable* entities,
                                embed::EmbeddingTable* relations, Communicator* comm, LinkCheckpointState* state);
// That the checkpoint was written by `ranks` ranks for these tables
// (FailedPrecondition naming what differs and how to resume it).
Status CheckShardedLinkCheckpoint(const std::string& dir, const LinkCheckpointState& state, int ranks,
                                  int64_t entity_rows, int64_t relation_rows, int64_t row_width);
// This rank's shards' rows into its tables' stores (as LoadLinkCheckpoint).
Status LoadLinkCheckpointShard(const std::string& dir, const LinkCheckpointState& state, int rank,
                               embed::EmbeddingTable* entities, embed::EmbeddingTable* relations);
// Reads the pointer (NotFound when the directory holds none).
StatusOr<LinkCheckpointState> ReadLinkCheckpointState(const std::string& dir);
// Removes "*.tmp" entries and link-epoch-* sub-directories the pointer does
// not name (all of them without a pointer).
Status RemoveLinkCheckpointLeftovers(const std::string& dir);
// Writes the rows saved in dir/state.last_dir into the tables' stores, before
// any batch is planned (the caches hold nothing then). Shapes must match
// (errors name the file).
Status LoadLinkCheckpoint(const std::string& dir, const LinkCheckpointState& state, embed::EmbeddingTable* entities,
                          embed::EmbeddingTable* relations);

}  // namespace foresight::trainer::internal
