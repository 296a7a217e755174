// Edge-list input: text "u v" lines (whitespace, CSV, TSV, comments, a
// header line, quoted fields) or binary int32 / int64 pairs, integer or
// string ids. Input: one flag byte, then the edge file.
#include "fuzz_util.h"
#include "preprocess_check.h"

using namespace foresight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const std::string_view edges(reinterpret_cast<const char*>(data + 1), size - 1);
  static const datasets::EdgeDType kDTypes[] = {datasets::EdgeDType::kText, datasets::EdgeDType::kText,
                                                datasets::EdgeDType::kInt32, datasets::EdgeDType::kInt64};
  const datasets::EdgeDType dtype = kDTypes[flags & 3];
  // String ids are relabelled densely: long numbers are harmless there.
  if (!(flags & 4) && (dtype == datasets::EdgeDType::kText ? fuzz::HasHugeTextId(edges)
                                                           : fuzz::HasHugeBinaryId(edges, (flags & 3) == 2 ? 4 : 8))) {
    return 0;
  }
  datasets::PreprocessOptions o = fuzz::ScratchPreprocessOptions(datasets::InputFormat::kEdgeList);
  o.edges = fuzz::ScratchFile("edges.txt");
  fuzz::WriteScratch(o.edges, edges);
  o.edge_dtype = dtype;
  o.ids = (flags & 4) ? datasets::IdKind::kString : datasets::IdKind::kInt;
  o.undirected = flags & 8;
  o.keep_self_loops = flags & 16;
  o.keep_duplicates = flags & 32;
  // 64: --header; 128: --no-header and --allow-empty-edges; else detected.
  o.header = (flags & 64) ? datasets::HeaderMode::kPresent
                          : (flags & 128) ? datasets::HeaderMode::kAbsent : datasets::HeaderMode::kAuto;
  o.allow_empty_edges = flags & 128;
  fuzz::RunPreprocessAndCheck(o);
  return 0;
}
