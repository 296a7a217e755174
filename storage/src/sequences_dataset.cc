#include "foresight/storage/sequences_dataset.h"

#include <string>

#include "file_util.h"
#include "foresight/storage/npy.h"

namespace foresight::storage {

namespace {

StatusOr<int64_t> Count(const nlohmann::json& j, const std::string& origin, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
    return DataLoss(origin + ": \"sequences\"." + key + " must be a non-negative integer");
  }
  return it->get<int64_t>();
}

}  // namespace

StatusOr<std::unique_ptr<SequencesDataset>> SequencesDataset::Open(const std::string& dir_in) {
  FS_ASSIGN_OR_RETURN(const std::string dir, internal::ExistingDatasetDir(dir_in));
  FS_RETURN_IF_ERROR(CheckNotStagingDir(dir));
  return OpenDir(dir);
}

StatusOr<std::unique_ptr<SequencesDataset>> SequencesDataset::OpenDir(const std::string& dir_in) {
  FS_ASSIGN_OR_RETURN(const std::string dir, internal::ExistingDatasetDir(dir_in));
  std::unique_ptr<SequencesDataset> ds(new SequencesDataset());
  const std::string manifest_path = dir + "/" + kManifestFile;
  FS_ASSIGN_OR_RETURN(ds->manifest_, ReadManifest(manifest_path));
  const DatasetManifest& m = ds->manifest_;
  if (m.kind != kKindSequences) {
    return InvalidArgument("dataset " + dir + " is a " + m.kind +
                           " dataset, not a sequences dataset (`foresight preprocess --format sequences`)");
  }
  FS_ASSIGN_OR_RETURN(ds->num_users_, Count(m.sequences, manifest_path, "num_users"));
  FS_ASSIGN_OR_RETURN(ds->num_items_, Count(m.sequences, manifest_path, "num_items"));
  FS_ASSIGN_OR_RETURN(const int64_t n, Count(m.sequences, manifest_path, "num_actions"));
  const int64_t u = ds->num_users_, items = ds->num_items_;

  auto map = [&](const char* name, DType dtype, int64_t rows, Tensor* out) -> Status {
    auto it = m.arrays.find(name);
    if (it == m.arrays.end()) return DataLoss(manifest_path + ": \"arrays\" has no entry \"" + name + "\"");
    const std::string path = dir + "/" + it->second.file;
    NpyInfo info;
    auto t = MmapNpy(path, &info);
    if (!t.ok()) return t.status().WithContext("dataset " + dir + ": array \"" + name + "\"");
    if (info.is_bytes || info.dtype != dtype || info.shape != Shape{rows}) {
      return DataLoss(path + ": expected " + DTypeName(dtype) + " [" + std::to_string(rows) + "], got " +
                      (info.is_bytes ? std::string("bytes") : std::string(DTypeName(info.dtype))) + " " +
                      ShapeToString(info.shape));
    }
    *out = std::move(t).value();
    return Status::OK();
  };
  FS_RETURN_IF_ERROR(map("items", DType::kI32, n, &ds->items_));
  FS_RETURN_IF_ERROR(map("offsets", DType::kI64, u + 1, &ds->offsets_));
  FS_RETURN_IF_ERROR(map("valid", DType::kI32, u, &ds->valid_));
  FS_RETURN_IF_ERROR(map("test", DType::kI32, u, &ds->test_));
  FS_RETURN_IF_ERROR(map("user_ids", DType::kI64, u, &ds->user_ids_));
  FS_RETURN_IF_ERROR(map("item_ids", DType::kI64, items + 1, &ds->item_ids_));

  const int64_t* off = ds->offsets();
  if (off[0] != 0 || off[u] != n) {
    return DataLoss(dir + "/offsets.npy: must run from 0 to num_actions " + std::to_string(n) + ", got " +
                    std::to_string(off[0]) + " .. " + std::to_string(off[u]));
  }
  const int32_t* it = ds->items();
  for (int64_t i = 0; i < n; ++i) {
    if (it[i] < 1 || it[i] > items) {
      return DataLoss(dir + "/items.npy: row " + std::to_string(i) + " is " + std::to_string(it[i]) +
                      ", expected an item in [1, " + std::to_string(items) + "]");
    }
  }
  for (int64_t r = 0; r < u; ++r) {
    if (off[r + 1] < off[r]) return DataLoss(dir + "/offsets.npy: row " + std::to_string(r + 1) + " decreases");
    const int64_t len = off[r + 1] - off[r];
    const bool eval = len >= kMinEvalActions;
    const int32_t want_valid = eval ? it[off[r + 1] - 2] : 0, want_test = eval ? it[off[r + 1] - 1] : 0;
    if (ds->valid(r) != want_valid || ds->test(r) != want_test) {
      return DataLoss(dir + "/valid.npy, test.npy: row " + std::to_string(r) + " holds " +
                      std::to_string(ds->valid(r)) + ", " + std::to_string(ds->test(r)) +
                      ", expected the user's last two actions " + std::to_string(want_valid) + ", " +
                      std::to_string(want_test) + " (0, 0 below " + std::to_string(kMinEvalActions) + " actions)");
    }
  }
  return ds;
}

}  // namespace foresight::storage
