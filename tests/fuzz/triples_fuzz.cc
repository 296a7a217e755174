// Knowledge-graph triples (preprocess --format triples). Input: the train,
// validation and test files separated by fuzz::kSectionSeparator. A success
// must open as a valid graph dataset with valid link triples; a failure must
// be a clear error that leaves nothing at the output path.
#include <filesystem>

#include "foresight/core/thread_pool.h"
#include "foresight/datasets/triples.h"
#include "foresight/storage/dataset.h"
#include "foresight/storage/link_triples.h"
#include "fuzz_util.h"

using namespace foresight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ThreadPool pool(1);
  const std::vector<std::string_view> parts =
      fuzz::SplitSections(std::string_view(reinterpret_cast<const char*>(data), size), 3);
  datasets::TriplesPreprocessOptions o;
  o.train = fuzz::ScratchFile("train.txt");
  o.val = fuzz::ScratchFile("valid.txt");
  o.test = fuzz::ScratchFile("test.txt");
  fuzz::WriteScratch(o.train, parts[0]);
  fuzz::WriteScratch(o.val, parts[1]);
  fuzz::WriteScratch(o.test, parts[2]);
  o.output = fuzz::ScratchFile("out");
  o.temp_dir = fuzz::ScratchDir();
  fuzz::RemoveTree(o.output);
  const Status s = datasets::PreprocessTriples(o, CpuContext(0, &pool));
  fuzz::Report("PreprocessTriples", s);
  fuzz::CheckNotInternal(s, "PreprocessTriples");
  std::error_code ec;
  if (!s.ok()) {
    fuzz::Check(!std::filesystem::exists(o.output, ec), "a failed preprocess left " + o.output);
  } else {
    auto ds = storage::Dataset::Open(o.output);
    fuzz::Check(ds.ok(), "a successful preprocess wrote a dataset that does not open: " + ds.status().ToString());
    auto lt = storage::LinkTriples::Open(o.output);
    fuzz::Check(lt.ok(), "a successful preprocess wrote triples that do not open: " + lt.status().ToString());
  }
  fuzz::RemoveTree(o.output);
  return 0;
}
