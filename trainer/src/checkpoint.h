// Checkpoints: a directory holding checkpoint.json (the pointer, written
// last and atomically) and sub-directories epoch-<k>/ (parameters and
// optimizer state after epoch k) and best-<j>/ (parameters of the best epoch
// j), each written under a temporary name and renamed into place. A crash at
// any point leaves the previous checkpoint intact, and what it left half
// written is removed when the directory is next opened
// (RemoveCheckpointLeftovers). Private to the trainer.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "foresight/autograd/optimizer.h"
#include "foresight/core/status.h"
#include "foresight/trainer/models.h"
#include "foresight/trainer/train_options.h"
#include "learned_input.h"

namespace foresight::trainer::internal {

inline constexpr char kCheckpointFile[] = "checkpoint.json";

struct CheckpointState {
  int epoch = 0;  // epochs completed
  int64_t optimizer_steps = 0;
  int best_epoch = 0;
  double best_val_acc = -1;
  double test_acc = 0;  // at best_epoch
  int epochs_since_best = 0;
  bool stopped_early = false;
  int64_t num_nodes = 0;
  ModelConfig model;
  nlohmann::json options;    // TrainOptionsToJson of the run
  std::string options_hash;  // TrainingOptionsHash of the run
  std::string last_dir;      // "epoch-<k>"
  std::string best_dir;      // "best-<j>"
};

// j as text. Paths and names are bytes, not necessarily UTF-8: invalid
// sequences become U+FFFD instead of the exception nlohmann::json::dump
// throws. -1 = one line.
std::string JsonText(const nlohmann::json& j, int indent = -1);

nlohmann::json TrainOptionsToJson(const TrainOptions& o);
nlohmann::json ModelConfigToJson(const ModelConfig& c);
Status ModelConfigFromJson(const nlohmann::json& j, const std::string& origin, ModelConfig* out);
// A hex hash of the options that determine the training trajectory (not
// epochs, patience, threads, file paths, progress or eval chunking).
std::string TrainingOptionsHash(const TrainOptions& o);

// Writes epoch-<state->epoch>/ with the model's parameters and the
// optimizer's state, best-<epoch>/ too when `is_best`, then checkpoint.json,
// then removes sub-directories no longer referenced. Updates state's dirs
// and optimizer_steps. A failure before checkpoint.json is replaced removes
// what this call created and leaves `state` as it was. The caller holds the
// directory's CheckpointDirLock.
// With `learned` (learned node features; may be null), both sub-directories
// also hold its rows with their optimizer state (kLearnedRowsFile).
Status SaveCheckpoint(const std::string& dir, const GnnModel& model, autograd::Optimizer& optimizer,
                      bool is_best, CheckpointState* state, LearnedNodeTable* learned = nullptr);
// The learned node features' rows in dir/sub: f32 [N, row_width], each row
// the embedding then the sparse optimizer's state.
inline constexpr char kLearnedRowsFile[] = "learned.rows.npy";
std::string LearnedRowsPath(const std::string& dir, const std::string& sub);
// Removes what killed or failed writers left in `dir`: "*.tmp" entries, and
// epoch-*/best-* sub-directories checkpoint.json does not name (all of them
// when there is no checkpoint.json; none when it is unreadable). Logs one
// line naming them when there were any. The caller holds the directory's
// CheckpointDirLock, so no live writer owns them.
Status RemoveCheckpointLeftovers(const std::string& dir);
// Reads checkpoint.json (NotFound when the directory holds none).
StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir);
// Copies the parameters saved in dir/sub into `model` (names and shapes must
// match; errors name the file).
Status LoadParameters(const std::string& dir, const std::string& sub, GnnModel* model);
// Restores the optimizer's state tensors and step count from dir/sub.
Status LoadOptimizerState(const std::string& dir, const std::string& sub, int64_t steps,
                          autograd::Optimizer* optimizer);

}  // namespace foresight::trainer::internal
