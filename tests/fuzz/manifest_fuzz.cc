// manifest.json from outside: JSON syntax, ParseManifest's field checks, and
// Dataset::Open's validation of the manifest against real arrays (a tiny
// valid dataset built once; each input replaces only its manifest.json).
// A manifest that parses must survive ToJson -> ParseManifest unchanged.
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "foresight/storage/dataset.h"
#include "fuzz_util.h"

using namespace foresight;
using nlohmann::json;

namespace {

template <typename T>
Tensor Vec(std::initializer_list<T> v) {
  Tensor t = Tensor::Empty({static_cast<int64_t>(v.size())}, DTypeOf<T>::value);
  if (v.size() > 0) std::memcpy(t.raw_data(), v.begin(), v.size() * sizeof(T));
  return t;
}

void Require(const Status& s) { fuzz::Check(s.ok(), "building the base dataset: " + s.ToString()); }

// 4 nodes, 5 edges, 2 features, 3 classes, int original ids.
std::string BuildBase() {
  const std::string dir = fuzz::ScratchFile("base");
  auto w = storage::DatasetWriter::Create(dir, false);
  Require(w.status());
  storage::DatasetManifest& m = (*w)->manifest();
  m.name = "fuzz";
  m.num_nodes = 4;
  m.num_edges = 5;
  m.feature_dim = 2;
  m.num_classes = 3;
  m.id_map = storage::IdMap::kInt;
  Require((*w)->WriteArray(storage::kIndptrFile, Vec<int64_t>({0, 2, 3, 3, 5})));
  Require((*w)->WriteArray(storage::kIndicesFile, Vec<int32_t>({1, 2, 0, 0, 1})));
  Tensor f = Tensor::Zeros({4, 2}, DType::kF32);
  Require((*w)->WriteArray(storage::kFeaturesFile, f));
  Require((*w)->WriteArray(storage::kLabelsFile, Vec<int64_t>({0, 2, -1, 1})));
  Require((*w)->WriteArray(storage::kTrainIdsFile, Vec<int64_t>({0, 1})));
  Require((*w)->WriteArray(storage::kValIdsFile, Vec<int64_t>({3})));
  Require((*w)->WriteArray(storage::kTestIdsFile, Vec<int64_t>({})));
  Require((*w)->WriteArray(storage::kOriginalIdsFile, Vec<int64_t>({10, 11, 12, 13})));
  Require((*w)->Commit());
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = BuildBase();
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // ParseManifest on the JSON value, and the round trip.
  const json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) {
    storage::DatasetManifest m;
    const Status s = storage::ParseManifest(j, "fuzz.json", &m);
    fuzz::CheckNotInternal(s, "ParseManifest");
    if (s.ok()) {
      const json again = m.ToJson();
      storage::DatasetManifest m2;
      const Status s2 = storage::ParseManifest(again, "again.json", &m2);
      fuzz::Check(s2.ok(), "ToJson of a parsed manifest does not parse: " + s2.ToString());
      fuzz::Check(m2.ToJson() == again, "manifest round trip changed it");
    }
  }

  // The whole open path, reading the file.
  fuzz::WriteScratch(dir + "/" + storage::kManifestFile, text);
  auto ds = storage::Dataset::Open(dir);
  fuzz::Report("Dataset::Open", ds.status());
  fuzz::CheckNotInternal(ds.status(), "Dataset::Open");
  if (ds.ok()) {
    fuzz::Check((*ds)->indptr().numel() == (*ds)->num_nodes() + 1, "an opened dataset has a wrong indptr length");
  }
  return 0;
}
