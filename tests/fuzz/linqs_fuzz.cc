// LINQS citation input (Cora-style): "<id> <features...> <class>" content
// lines, "<cited> <citing>" cites lines and an optional split file. Input:
// one flag byte, then content, cites and split separated by 0x1e bytes.
#include <filesystem>

#include "fuzz_util.h"
#include "preprocess_check.h"

using namespace foresight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const auto parts = fuzz::SplitSections(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1), 3);
  const std::string in = fuzz::ScratchFile("linqs");
  fuzz::RemoveTree(in);
  std::filesystem::create_directory(in);
  fuzz::WriteScratch(in + "/g.content", parts[0]);
  fuzz::WriteScratch(in + "/g.cites", parts[1]);
  datasets::PreprocessOptions o = fuzz::ScratchPreprocessOptions(datasets::InputFormat::kLinqs);
  o.input = in;
  o.undirected = flags & 1;
  o.normalize_features = (flags & 2) ? datasets::FeatureNorm::kRow : datasets::FeatureNorm::kNone;
  o.feature_dtype = (flags & 4) ? "f16" : "f32";
  o.keep_self_loops = flags & 8;
  o.keep_duplicates = flags & 16;
  if (flags & 32) {
    o.split_file = fuzz::ScratchFile("split.tsv");
    fuzz::WriteScratch(o.split_file, parts[2]);
  } else {
    o.train_per_class = (flags & 64) ? 2 : 0;
  }
  fuzz::RunPreprocessAndCheck(o);
  return 0;
}
