#include "checkpoint_io.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "file_ops.h"
#include "foresight/core/logging.h"
#include "foresight/storage/npy.h"

namespace foresight::trainer::internal {

std::string CheckpointFileName(const std::string& prefix, const std::string& name) {
  std::string s = prefix;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    s += ok ? c : '_';
  }
  return s + ".npy";
}

Status WriteCheckpointNpy(const std::string& path, const Tensor& t) {
  if (t.dim() == 0) return Internal("checkpoint: " + path + " would hold a 0-d tensor");
  const Shape inner(t.shape().begin() + 1, t.shape().end());
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::NpyWriter> w, storage::NpyWriter::Create(path, t.dtype(), inner));
  FS_RETURN_IF_ERROR(w->AppendTensor(t));
  return w->Finish();
}

Status LoadNpyInto(const std::string& path, Tensor* dst) {
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

Status LoadModuleParameters(const std::string& sub_dir, autograd::Module* model) {
  for (autograd::Parameter* p : model->Parameters()) {
    FS_RETURN_IF_ERROR(LoadNpyInto(sub_dir + "/" + CheckpointFileName(kParamPrefix, p->name()), &p->mutable_value()));
  }
  return Status::OK();
}

Status LoadOptimizerStateFrom(const std::string& sub_dir, int64_t steps, autograd::Optimizer* optimizer) {
  for (auto& [name, t] : optimizer->StateTensors()) {
    const std::string path = sub_dir + "/" + CheckpointFileName(kOptimizerPrefix, name);
    if (!PathExists(path)) {
      if (steps == 0) continue;  // nothing was created before the first step
      return DataLoss(path + ": optimizer state '" + name + "' is missing from the checkpoint");
    }
    FS_RETURN_IF_ERROR(LoadNpyInto(path, t));
  }
  optimizer->set_step_count(steps);
  return Status::OK();
}

StatusOr<nlohmann::json> ReadCheckpointPointer(const std::string& dir, const std::string& file,
                                               const std::string& what, const std::string& format, int version) {
  const std::string path = dir + "/" + file;
  StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) {
      return NotFound("no " + what + " in " + dir + " (" + path + " does not exist)");
    }
    return text.status();
  }
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return DataLoss(path + ": not a JSON object");
  std::string got_format;
  int got_version = 0;
  FS_RETURN_IF_ERROR(GetJsonField(j, "format", path, &got_format));
  FS_RETURN_IF_ERROR(GetJsonField(j, "version", path, &got_version));
  if (got_format != format) return DataLoss(path + ": format is '" + got_format + "', expected '" + format + "'");
  if (got_version != version) {
    return DataLoss(path + ": version " + std::to_string(got_version) + " is not supported (expected " +
                    std::to_string(version) + ")");
  }
  return j;
}

nlohmann::json CheckpointPointerHeader(const std::string& format, int version, int epoch, int64_t optimizer_steps,
                                       const nlohmann::json& optimizer_state) {
  nlohmann::json j;
  j["format"] = format;
  j["version"] = version;
  j["epoch"] = epoch;
  j["optimizer_steps"] = optimizer_steps;
  j["optimizer_state"] = optimizer_state;
  return j;
}

std::string Fnv1aHex(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

bool IsTemporaryName(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0;
}

Status RemoveLeftovers(const std::string& dir, std::vector<std::string> names) {
  if (names.empty()) return Status::OK();
  std::sort(names.begin(), names.end());
  std::string list;
  for (const std::string& name : names) {
    FS_RETURN_IF_ERROR(RemoveAll(dir + "/" + name));
    list += (list.empty() ? "" : ", ") + name;
  }
  FS_LOG(INFO) << "checkpoint directory " << dir << ": removed what an interrupted run left (" << list << ")";
  return Status::OK();
}

Status RemoveLeftoversBesides(const std::string& dir, const std::string& prefix, const Status& pointer,
                              const std::string& kept) {
  if (!pointer.ok() && pointer.code() != StatusCode::kNotFound) return Status::OK();
  std::vector<std::string> garbage;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool sub = name.rfind(prefix, 0) == 0;
    if (IsTemporaryName(name) || (sub && (!pointer.ok() || name != kept))) garbage.push_back(name);
  }
  if (ec) return ErrnoError("list " + dir, ec.value());
  return RemoveLeftovers(dir, std::move(garbage));
}

}  // namespace foresight::trainer::internal
