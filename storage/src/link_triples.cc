// LinkTriples::Open and manifest "link": maps the triples of a graph
// dataset and checks them, naming the file and the first bad row.
#include "foresight/storage/link_triples.h"

#include <vector>

#include "foresight/storage/npy.h"

namespace foresight::storage {
namespace {

using nlohmann::json;

Status LayoutError(const std::string& origin, const std::string& field, const std::string& what) {
  return DataLoss(origin + ": field \"link." + field + "\" " + what);
}

Status GetCount(const json& j, const std::string& origin, const char* key, int64_t* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
    return LayoutError(origin, key, "must be an integer >= 0");
  }
  *out = it->get<int64_t>();
  return Status::OK();
}

// Maps dir/<name>.npy as named by the manifest and checks it is i64 [rows, 3].
Status MapTriples(const std::string& dir, const DatasetManifest& m, const char* name, int64_t rows,
                  Tensor* out) {
  const std::string manifest = dir + "/" + kManifestFile;
  auto it = m.arrays.find(name);
  if (it == m.arrays.end()) return DataLoss(manifest + ": \"arrays\" has no entry \"" + name + "\" (required)");
  const std::string path = dir + "/" + it->second.file;
  NpyInfo info;
  FS_ASSIGN_OR_RETURN(*out, MmapNpy(path, &info));
  if (info.is_bytes || info.dtype != DType::kI64 || info.shape != Shape{rows, 3}) {
    return DataLoss(path + ": expected i64 [" + std::to_string(rows) + ", 3] (head, relation, tail) rows, got " +
                    (info.is_bytes ? std::string("byte strings") : DTypeName(info.dtype)) + " " +
                    ShapeToString(info.shape));
  }
  return Status::OK();
}

// The first row whose head or tail is outside [0, n) or relation outside
// [0, r), with what is wrong; OK when none.
Status CheckRows(const std::string& path, const Tensor& t, int64_t n, int64_t r) {
  const int64_t* p = t.data<int64_t>();
  const int64_t rows = t.numel() / 3;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t h = p[3 * i], rel = p[3 * i + 1], tail = p[3 * i + 2];
    if (h < 0 || h >= n || tail < 0 || tail >= n) {
      return DataLoss(path + ": row " + std::to_string(i) + ": entity " + std::to_string(h < 0 || h >= n ? h : tail) +
                      " is not in [0, num_nodes=" + std::to_string(n) + ")");
    }
    if (rel < 0 || rel >= r) {
      return DataLoss(path + ": row " + std::to_string(i) + ": relation " + std::to_string(rel) +
                      " is not in [0, num_relations=" + std::to_string(r) + ")");
    }
  }
  return Status::OK();
}

}  // namespace

json LinkLayout::ToJson() const {
  return json{{"num_relations", num_relations},
              {"train", num_train},
              {"val", num_val},
              {"test", num_test},
              {"unseen_entities", unseen_entities}};
}

Status ParseLinkLayout(const json& j, const std::string& origin, LinkLayout* out) {
  if (!j.is_object()) return DataLoss(origin + ": field \"link\" must be an object");
  LinkLayout l;
  FS_RETURN_IF_ERROR(GetCount(j, origin, "num_relations", &l.num_relations));
  FS_RETURN_IF_ERROR(GetCount(j, origin, "train", &l.num_train));
  FS_RETURN_IF_ERROR(GetCount(j, origin, "val", &l.num_val));
  FS_RETURN_IF_ERROR(GetCount(j, origin, "test", &l.num_test));
  FS_RETURN_IF_ERROR(GetCount(j, origin, "unseen_entities", &l.unseen_entities));
  *out = l;
  return Status::OK();
}

StatusOr<std::unique_ptr<LinkTriples>> LinkTriples::Open(const std::string& dir) {
  FS_RETURN_IF_ERROR(CheckNotStagingDir(dir));
  return OpenDir(dir);
}

StatusOr<std::unique_ptr<LinkTriples>> LinkTriples::OpenDir(const std::string& dir) {
  std::unique_ptr<LinkTriples> lt(new LinkTriples());
  const std::string origin = dir + "/" + kManifestFile;
  FS_ASSIGN_OR_RETURN(lt->manifest_, ReadManifest(origin));
  const DatasetManifest& m = lt->manifest_;
  if (m.kind != kKindGraph || m.link.is_null()) {
    return FailedPrecondition(dir + " holds no link-prediction triples (its manifest has no \"link\"); make "
                              "them with `foresight preprocess --format triples`");
  }
  FS_RETURN_IF_ERROR(ParseLinkLayout(m.link, origin, &lt->layout_));
  lt->num_entities_ = m.num_nodes;
  const LinkLayout& l = lt->layout_;
  FS_RETURN_IF_ERROR(MapTriples(dir, m, kLinkTrainArray, l.num_train, &lt->train_));
  FS_RETURN_IF_ERROR(MapTriples(dir, m, kLinkValArray, l.num_val, &lt->val_));
  FS_RETURN_IF_ERROR(MapTriples(dir, m, kLinkTestArray, l.num_test, &lt->test_));
  const std::pair<const char*, const Tensor*> splits[] = {
      {kLinkTrainArray, &lt->train_}, {kLinkValArray, &lt->val_}, {kLinkTestArray, &lt->test_}};
  for (const auto& [name, t] : splits) {
    FS_RETURN_IF_ERROR(CheckRows(dir + "/" + m.arrays.at(name).file, *t, m.num_nodes, l.num_relations));
  }
  auto names = m.arrays.find(kRelationNamesArray);
  if (names != m.arrays.end()) {
    const std::string path = dir + "/" + names->second.file;
    NpyInfo info;
    FS_ASSIGN_OR_RETURN(lt->relation_names_, MmapNpy(path, &info));
    if (!info.is_bytes || info.shape.empty() || info.shape[0] != l.num_relations) {
      return DataLoss(path + ": expected " + std::to_string(l.num_relations) +
                      " relation names as byte strings (|S<w>), got " + ShapeToString(info.shape));
    }
  }
  return lt;
}

}  // namespace foresight::storage
