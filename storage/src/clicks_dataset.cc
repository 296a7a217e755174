// ClicksDataset::Open and manifest "clicks": maps a click-log dataset and
// checks it against its layout, naming the file and the first bad row.
#include "foresight/storage/clicks_dataset.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <vector>

#include "file_util.h"
#include "foresight/core/thread_pool.h"

namespace foresight::storage {
namespace {

using nlohmann::json;

constexpr int64_t kScanGrain = int64_t{1} << 16;  // rows per parallel scan chunk

Status LayoutError(const std::string& origin, const std::string& field, const std::string& what) {
  return DataLoss(origin + ": field \"clicks." + field + "\" " + what);
}

Status GetCount(const json& j, const std::string& origin, const std::string& label, const char* key, int64_t* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
    return LayoutError(origin, label, "must be an integer >= 0");
  }
  *out = it->get<int64_t>();
  return Status::OK();
}

Status GetRange(const json& splits, const std::string& origin, const char* name, RowRange* out) {
  auto it = splits.find(name);
  const std::string label = std::string("splits.") + name;
  if (it == splits.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number_integer() ||
      !(*it)[1].is_number_integer()) {
    return LayoutError(origin, label, "must be a [begin, end] row range");
  }
  out->begin = (*it)[0].get<int64_t>();
  out->end = (*it)[1].get<int64_t>();
  return Status::OK();
}

// The first row in [0, n) for which bad(row) holds, or -1; the smallest bad
// row wins whatever the scheduling.
template <typename Bad>
int64_t FirstBadRow(int64_t n, const Bad& bad) {
  if (n <= 0) return -1;
  const int64_t chunks = ThreadPool::NumChunks(n, kScanGrain);
  std::vector<int64_t> first(static_cast<size_t>(chunks), -1);
  DefaultThreadPool()->ParallelForChunks(n, kScanGrain, [&](int64_t c, int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (bad(i)) {
        first[static_cast<size_t>(c)] = i;
        return;
      }
    }
  });
  for (int64_t f : first) {
    if (f >= 0) return f;
  }
  return -1;
}

std::string DTypeString(const NpyInfo& info) {
  return info.is_bytes ? "S" + std::to_string(info.item_size) : DTypeName(info.dtype);
}

}  // namespace

std::string ClickIdsArray(int64_t field) { return "cat_" + std::to_string(field); }
std::string ClickVocabArray(int64_t field) { return "vocab_" + std::to_string(field); }

json ClicksLayout::ToJson() const {
  json fields_json = json::array();
  for (const ClickField& f : fields) {
    fields_json.push_back({{"name", f.name}, {"rows", f.rows}, {"bag_size", f.bag_size}, {"vocab", f.has_vocab}});
  }
  return {
      {"num_samples", num_samples},
      {"dense", dense},
      {"categorical", fields_json},
      {"splits",
       {{"train", {train.begin, train.end}}, {"val", {val.begin, val.end}}, {"test", {test.begin, test.end}}}},
      {"id_mode", id_mode},
  };
}

Status ParseClicksLayout(const json& j, const std::string& origin, ClicksLayout* out) {
  if (!j.is_object()) return DataLoss(origin + ": field \"clicks\" must be an object");
  ClicksLayout l;
  FS_RETURN_IF_ERROR(GetCount(j, origin, "num_samples", "num_samples", &l.num_samples));
  auto dense = j.find("dense");
  if (dense == j.end() || !dense->is_array()) return LayoutError(origin, "dense", "must be a list of names");
  for (const json& d : *dense) {
    if (!d.is_string()) return LayoutError(origin, "dense", "must be a list of names, got " + dense->dump());
    l.dense.push_back(d.get<std::string>());
  }
  auto cats = j.find("categorical");
  if (cats == j.end() || !cats->is_array()) {
    return LayoutError(origin, "categorical", "must be a list of {name, rows, bag_size, vocab}");
  }
  for (size_t k = 0; k < cats->size(); ++k) {
    const json& c = (*cats)[k];
    const std::string label = "categorical[" + std::to_string(k) + "]";
    if (!c.is_object() || !c.contains("name") || !c["name"].is_string()) {
      return LayoutError(origin, label, "must be an object with a string \"name\"");
    }
    ClickField f;
    f.name = c["name"].get<std::string>();
    FS_RETURN_IF_ERROR(GetCount(c, origin, label + ".rows", "rows", &f.rows));
    FS_RETURN_IF_ERROR(GetCount(c, origin, label + ".bag_size", "bag_size", &f.bag_size));
    if (f.rows < 1) return LayoutError(origin, label + ".rows", "must be >= 1");
    if (f.bag_size < 1) return LayoutError(origin, label + ".bag_size", "must be >= 1");
    auto v = c.find("vocab");
    if (v != c.end()) {
      if (!v->is_boolean()) return LayoutError(origin, label + ".vocab", "must be true or false");
      f.has_vocab = v->get<bool>();
    }
    l.fields.push_back(std::move(f));
  }
  auto splits = j.find("splits");
  if (splits == j.end() || !splits->is_object()) return LayoutError(origin, "splits", "must be an object");
  FS_RETURN_IF_ERROR(GetRange(*splits, origin, "train", &l.train));
  FS_RETURN_IF_ERROR(GetRange(*splits, origin, "val", &l.val));
  FS_RETURN_IF_ERROR(GetRange(*splits, origin, "test", &l.test));
  if (l.train.begin != 0 || l.train.end < l.train.begin || l.val.begin != l.train.end || l.val.end < l.val.begin ||
      l.test.begin != l.val.end || l.test.end != l.num_samples) {
    return LayoutError(origin, "splits",
                       "must be consecutive ranges train, val, test covering [0, num_samples=" +
                           std::to_string(l.num_samples) + "), got " + splits->dump());
  }
  auto mode = j.find("id_mode");
  if (mode == j.end() || !mode->is_string()) return LayoutError(origin, "id_mode", "must be a string");
  l.id_mode = mode->get<std::string>();
  *out = std::move(l);
  return Status::OK();
}

StatusOr<std::unique_ptr<ClicksDataset>> ClicksDataset::Open(const std::string& dir_in, bool validate_ids) {
  FS_ASSIGN_OR_RETURN(const std::string dir, internal::ExistingDatasetDir(dir_in));
  FS_RETURN_IF_ERROR(CheckNotStagingDir(dir));
  return OpenDir(dir, validate_ids);
}

StatusOr<std::unique_ptr<ClicksDataset>> ClicksDataset::OpenDir(const std::string& dir_in, bool validate_ids) {
  FS_ASSIGN_OR_RETURN(const std::string dir, internal::ExistingDatasetDir(dir_in));
  std::unique_ptr<ClicksDataset> ds(new ClicksDataset());
  ds->dir_ = dir;
  const std::string manifest_path = dir + "/" + kManifestFile;
  FS_ASSIGN_OR_RETURN(ds->manifest_, ReadManifest(manifest_path));
  const DatasetManifest& m = ds->manifest_;
  if (m.kind != kKindClicks) {
    return InvalidArgument("dataset " + dir + " is a " + m.kind + " dataset, not a clicks dataset");
  }
  FS_RETURN_IF_ERROR(ParseClicksLayout(m.clicks, manifest_path, &ds->layout_));
  const ClicksLayout& l = ds->layout_;
  const int64_t n = l.num_samples;

  // Maps array `name` and checks its dtype (one of `dtypes`) and shape.
  auto map = [&](const std::string& name, bool required, std::initializer_list<DType> dtypes, bool bytes,
                 const Shape& shape, Tensor* out) -> Status {
    auto it = m.arrays.find(name);
    if (it == m.arrays.end()) {
      if (!required) return Status::OK();
      return DataLoss(manifest_path + ": \"arrays\" has no entry \"" + name + "\" (required)");
    }
    const std::string path = dir + "/" + it->second.file;
    NpyInfo info;
    auto t = MmapNpy(path, &info);
    if (!t.ok()) return t.status().WithContext("dataset " + dir + ": array \"" + name + "\"");
    const std::string got = DTypeString(info);
    if (got != it->second.dtype) {
      return DataLoss(path + ": dtype is " + got + " but " + manifest_path + " says " + it->second.dtype);
    }
    bool dtype_ok = bytes && info.is_bytes;
    std::string names = bytes ? "S<width>" : "";
    for (DType d : dtypes) {
      dtype_ok |= !info.is_bytes && info.dtype == d;
      names += std::string(names.empty() ? "" : " or ") + DTypeName(d);
    }
    if (!dtype_ok) return DataLoss(path + ": dtype must be " + names + ", got " + got);
    if (info.shape != shape) {
      return DataLoss(path + ": expected shape " + ShapeToString(shape) + " (from \"clicks\" in " + manifest_path +
                      "), got " + ShapeToString(info.shape));
    }
    *out = std::move(t).value();
    return Status::OK();
  };

  FS_RETURN_IF_ERROR(
      map(kClickDenseArray, true, {DType::kF32}, false, {n, static_cast<int64_t>(l.dense.size())}, &ds->dense_));
  FS_RETURN_IF_ERROR(map(kClickLabelsArray, true, {DType::kU8}, false, {n}, &ds->labels_));
  FS_RETURN_IF_ERROR(map(kClickProbArray, false, {DType::kF32}, false, {n}, &ds->click_prob_));
  ds->ids_.resize(l.fields.size());
  ds->vocab_.resize(l.fields.size());
  for (size_t k = 0; k < l.fields.size(); ++k) {
    const ClickField& f = l.fields[k];
    const Shape shape = f.bag_size == 1 ? Shape{n} : Shape{n, f.bag_size};
    const std::initializer_list<DType> id_types = {DType::kI32, DType::kI64};
    const std::initializer_list<DType> wide_only = {DType::kI64};
    FS_RETURN_IF_ERROR(map(ClickIdsArray(static_cast<int64_t>(k)), true, f.rows > INT32_MAX ? wide_only : id_types,
                           false, shape, &ds->ids_[k]));
    if (f.has_vocab) {
      FS_RETURN_IF_ERROR(map(ClickVocabArray(static_cast<int64_t>(k)), true, {}, true, {f.rows}, &ds->vocab_[k]));
    }
  }

  auto file_of = [&](const std::string& name) { return dir + "/" + m.arrays.at(name).file; };
  {
    const uint8_t* p = ds->labels_.data<uint8_t>();
    const int64_t bad = FirstBadRow(n, [p](int64_t i) { return p[i] > 1; });
    if (bad >= 0) {
      return DataLoss(file_of(kClickLabelsArray) + ": row " + std::to_string(bad) + ": label " +
                      std::to_string(p[bad]) + " is not 0 or 1");
    }
  }
  {
    const int64_t d = static_cast<int64_t>(l.dense.size());
    const float* p = ds->dense_.data<float>();
    const int64_t bad = FirstBadRow(n, [p, d](int64_t i) {
      bool any = false;
      for (int64_t j = 0; j < d; ++j) any |= !std::isfinite(p[i * d + j]);
      return any;
    });
    if (bad >= 0) {
      return DataLoss(file_of(kClickDenseArray) + ": row " + std::to_string(bad) + ": a dense value is not finite");
    }
  }
  if (validate_ids) {
    for (size_t k = 0; k < l.fields.size(); ++k) {
      const Tensor& t = ds->ids_[k];
      const int64_t bag = l.fields[k].bag_size;
      const uint64_t rows = static_cast<uint64_t>(l.fields[k].rows);
      int64_t bad_row = -1, bad_value = 0;
      if (t.dtype() == DType::kI32) {
        const int32_t* p = t.data<int32_t>();
        bad_row = FirstBadRow(n, [=](int64_t i) {
          bool any = false;
          for (int64_t j = 0; j < bag; ++j) any |= static_cast<uint64_t>(static_cast<int64_t>(p[i * bag + j])) >= rows;
          return any;
        });
        for (int64_t j = 0; bad_row >= 0 && j < bag; ++j) {
          if (static_cast<uint64_t>(static_cast<int64_t>(p[bad_row * bag + j])) >= rows) {
            bad_value = p[bad_row * bag + j];
            break;
          }
        }
      } else {
        const int64_t* p = t.data<int64_t>();
        bad_row = FirstBadRow(n, [=](int64_t i) {
          bool any = false;
          for (int64_t j = 0; j < bag; ++j) any |= static_cast<uint64_t>(p[i * bag + j]) >= rows;
          return any;
        });
        for (int64_t j = 0; bad_row >= 0 && j < bag; ++j) {
          if (static_cast<uint64_t>(p[bad_row * bag + j]) >= rows) {
            bad_value = p[bad_row * bag + j];
            break;
          }
        }
      }
      if (bad_row >= 0) {
        return DataLoss(file_of(ClickIdsArray(static_cast<int64_t>(k))) + ": row " + std::to_string(bad_row) + ": id " +
                        std::to_string(bad_value) + " of field \"" + l.fields[k].name + "\" is not in [0, " +
                        std::to_string(rows) + ")");
      }
    }
  }
  return ds;
}

}  // namespace foresight::storage
