// Node files of an edge-list dataset: feature rows (CSV / TSV / whitespace,
// or .npy), labels (one per line, "id label", wide CSV tables with a header,
// quoted fields and class names, or .npy) and split-file lines, over a
// fixed 6-node edge list. Input: one flag byte, then
// labels, split and features separated by 0x1e bytes (features last, so an
// .npy there may hold any byte); empty sections are not passed.
#include "fuzz_util.h"
#include "preprocess_check.h"

using namespace foresight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const auto parts = fuzz::SplitSections(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1), 3);
  const bool string_ids = flags & 1;
  datasets::PreprocessOptions o = fuzz::ScratchPreprocessOptions(datasets::InputFormat::kEdgeList);
  o.ids = string_ids ? datasets::IdKind::kString : datasets::IdKind::kInt;
  o.edges = fuzz::ScratchFile("edges.txt");
  fuzz::WriteScratch(o.edges, string_ids ? "a b\nb c\nc a\nd e\ne f\n" : "0 1\n1 2\n2 0\n3 4\n4 5\n");
  const std::string_view labels = parts[0], split = parts[1], features = parts[2];
  // "id label" lines grow the label array to max id + 1.
  if (!string_ids && !(flags & 4) && fuzz::HasHugeTextId(labels)) return 0;
  if (!features.empty()) {
    o.features = fuzz::ScratchFile((flags & 2) ? "features.npy" : "features.csv");
    fuzz::WriteScratch(o.features, features);
  }
  if (!labels.empty()) {
    o.labels = fuzz::ScratchFile((flags & 4) ? "labels.npy" : "labels.txt");
    fuzz::WriteScratch(o.labels, labels);
  }
  if (!split.empty()) {
    o.split_file = fuzz::ScratchFile("split.tsv");
    fuzz::WriteScratch(o.split_file, split);
  }
  o.normalize_features = (flags & 8) ? datasets::FeatureNorm::kRow : datasets::FeatureNorm::kNone;
  o.feature_dtype = (flags & 16) ? "f16" : "f32";
  o.train_per_class = (flags & 32) ? 1 : 0;
  o.allow_isolated_nodes = flags & 64;
  if (flags & 128) {  // a named label column (needs a header line)
    o.label_column = "label";
    o.class_names = flags & 64;
  }
  fuzz::RunPreprocessAndCheck(o);
  return 0;
}
