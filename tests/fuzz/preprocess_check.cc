#include "preprocess_check.h"

#include <filesystem>

#include "foresight/core/logging.h"
#include "foresight/core/thread_pool.h"
#include "foresight/storage/dataset.h"
#include "fuzz_util.h"

namespace foresight::fuzz {

datasets::PreprocessOptions ScratchPreprocessOptions(datasets::InputFormat format) {
  datasets::PreprocessOptions o;
  o.format = format;
  o.output = ScratchFile("out");
  o.temp_dir = ScratchDir();
  // The smallest run (1024 edges): larger inputs exercise spilled runs.
  o.memory_budget_bytes = 16 << 10;
  return o;
}

void RunPreprocessAndCheck(const datasets::PreprocessOptions& options) {
  // Once per process: one thread for everything (Preprocess and the
  // Dataset::Open below, which uses the default pool): waking pool threads
  // for a few rows cost more than the rows, and one thread keeps runs
  // reproducible. Dropped-edge warnings would flood the fuzzer's output.
  static const bool set_up = [] {
    SetDefaultThreads(1);
    SetLogLevel(LogLevel::kError);
    return true;
  }();
  (void)set_up;
  RemoveTree(options.output);
  const Status s = datasets::Preprocess(options, CpuContext(0, DefaultThreadPool()));
  Report("Preprocess", s);
  CheckNotInternal(s, "Preprocess");
  std::error_code ec;
  if (!s.ok()) {
    Check(!std::filesystem::exists(options.output, ec), "a failed preprocess left " + options.output);
  } else {
    auto ds = storage::Dataset::Open(options.output);
    Check(ds.ok(), "a successful preprocess wrote a dataset that does not open: " + ds.status().ToString());
  }
  RemoveTree(options.output);
  // A failed run must not leave staging directories beside the output either.
  for (const auto& e : std::filesystem::directory_iterator(ScratchDir(), ec)) {
    const std::string name = e.path().filename().string();
    Check(name.rfind("out.tmp-", 0) != 0, "preprocess left a staging directory " + name);
  }
}

}  // namespace foresight::fuzz
