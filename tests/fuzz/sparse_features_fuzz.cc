// Sparse feature files of an edge-list dataset: the JSON object
// {"node": [feature ids]} (streamed through nlohmann's SAX parser) or COO
// "node feature [value]" lines, over a fixed 6-node edge list. Input: one
// flag byte (1: string ids, 2: JSON rather than COO, 4: --feature-dim 64,
// 8: row normalisation), then the feature file.
#include "fuzz_util.h"
#include "preprocess_check.h"

using namespace foresight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const std::string_view features(reinterpret_cast<const char*>(data + 1), size - 1);
  const bool string_ids = flags & 1;
  // Integer node ids size the dataset (max id + 1 rows).
  if (!string_ids && fuzz::HasHugeTextId(features)) return 0;
  datasets::PreprocessOptions o = fuzz::ScratchPreprocessOptions(datasets::InputFormat::kEdgeList);
  o.ids = string_ids ? datasets::IdKind::kString : datasets::IdKind::kInt;
  o.edges = fuzz::ScratchFile("edges.txt");
  fuzz::WriteScratch(o.edges, string_ids ? "a b\nb c\nc a\nd e\ne f\n" : "0 1\n1 2\n2 0\n3 4\n4 5\n");
  if (flags & 2) {
    o.features = fuzz::ScratchFile("features.json");
    fuzz::WriteScratch(o.features, features);
  } else {
    o.sparse_features = fuzz::ScratchFile("features.coo");
    fuzz::WriteScratch(o.sparse_features, features);
  }
  if (flags & 4) o.feature_dim = 64;
  o.normalize_features = (flags & 8) ? datasets::FeatureNorm::kRow : datasets::FeatureNorm::kNone;
  fuzz::RunPreprocessAndCheck(o);
  return 0;
}
