// File and JSON helpers shared by the GNN checkpoints (checkpoint.h) and the
// DLRM checkpoints (dlrm_checkpoint.h): parameter file names, tensors as
// .npy files in a sub-directory written under a temporary name, typed JSON
// fields with errors naming the file, the pointer file's format check, the
// options hash, and the removal of what an interrupted run left. Private to
// the trainer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/autograd/module.h"
#include "foresight/autograd/optimizer.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

namespace foresight::trainer::internal {

// File-name prefixes of a module's parameters and of the optimizer's state.
inline constexpr char kParamPrefix[] = "param.";
inline constexpr char kOptimizerPrefix[] = "opt.";

// prefix + name + ".npy". Parameter names are "layers.0.self.weight"-like;
// anything outside [A-Za-z0-9._-] becomes '_' so a name is always a plain
// file name.
std::string CheckpointFileName(const std::string& prefix, const std::string& name);

// One tensor (at least 1-d) as a .npy file, fsync-ed. No write-and-rename of
// its own (unlike storage::SaveNpy): it goes into a temporary directory that
// is renamed as a whole, and skipping the per-file rename and directory
// fsync halves the fsyncs of a checkpoint, most of its time.
Status WriteCheckpointNpy(const std::string& path, const Tensor& t);

// Loads the .npy file at `path` into `dst` (same shape and dtype) or, when
// dst is undefined, makes dst a copy of it.
Status LoadNpyInto(const std::string& path, Tensor* dst);

// Copies the parameters saved in `sub_dir` into `model` (names and shapes
// must match; errors name the file).
Status LoadModuleParameters(const std::string& sub_dir, autograd::Module* model);
// Restores the optimizer's state tensors from `sub_dir` and its step count.
// With steps == 0, missing state files are fine (nothing was created before
// the first step).
Status LoadOptimizerStateFrom(const std::string& sub_dir, int64_t steps, autograd::Optimizer* optimizer);

// j[key] as T; DataLoss naming `origin` when missing or of the wrong type.
template <typename T>
Status GetJsonField(const nlohmann::json& j, const char* key, const std::string& origin, T* out) {
  if (!j.contains(key)) return DataLoss(origin + ": missing field '" + key + "'");
  try {
    *out = j.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    return DataLoss(origin + ": field '" + key + "' has the wrong type (" + e.what() + ")");
  }
  return Status::OK();
}

// Reads and parses the pointer file dir/file, checking its "format" and
// "version" fields. NotFound ("no <what> in <dir> ...") when it does not
// exist; DataLoss naming the file when it is not a JSON object or another
// format or version.
StatusOr<nlohmann::json> ReadCheckpointPointer(const std::string& dir, const std::string& file,
                                               const std::string& what, const std::string& format, int version);

// The fields every pointer file starts with (what ReadCheckpointPointer
// checks, then the epoch and the optimizer's step count and saved state
// tensors); the caller adds its own.
nlohmann::json CheckpointPointerHeader(const std::string& format, int version, int epoch, int64_t optimizer_steps,
                                       const nlohmann::json& optimizer_state);

// The 64-bit FNV-1a hash of `text` as 16 hex digits (options hashes).
std::string Fnv1aHex(const std::string& text);

// True for "*.tmp" names (what a killed writer leaves).
bool IsTemporaryName(const std::string& name);

// Removes the entries `names` of `dir` (sorted first) and logs one line
// naming them when there were any.
Status RemoveLeftovers(const std::string& dir, std::vector<std::string> names);

// Removes what a killed run left in a checkpoint directory whose pointer
// names one sub-directory: every temporary, and every `prefix`* sub-directory
// other than `kept`. `pointer` is how reading the pointer went: with none
// (NotFound) every such sub-directory goes; an unreadable one keeps
// everything for a person to look at.
Status RemoveLeftoversBesides(const std::string& dir, const std::string& prefix, const Status& pointer,
                              const std::string& kept);

}  // namespace foresight::trainer::internal
