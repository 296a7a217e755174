// Click-log input (preprocess --format criteo|csv). Input: one flag byte
// (bit 0 csv, bit 1 hash ids, bit 2 --skip-bad-rows, bit 3 min-frequency 2),
// then the log file. A success must open as a valid clicks dataset; a
// failure must be a clear error that leaves nothing at the output path.
#include <filesystem>

#include "foresight/core/thread_pool.h"
#include "foresight/datasets/clicks.h"
#include "foresight/storage/clicks_dataset.h"
#include "fuzz_util.h"

using namespace foresight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static ThreadPool pool(1);
  const uint8_t flags = data[0];
  const std::string_view log(reinterpret_cast<const char*>(data + 1), size - 1);
  datasets::ClickPreprocessOptions o;
  o.format = (flags & 1) ? datasets::ClickFormat::kCsv : datasets::ClickFormat::kCriteo;
  if (flags & 1) {
    o.columns = {"id", "click", "hour", "site", "price"};
    o.label = "click";
    o.drop = {"id"};
    o.dense = {"price"};
  }
  o.hash_buckets = (flags & 2) ? 64 : 0;
  o.skip_bad_rows = flags & 4;
  o.min_frequency = (flags & 8) && !(flags & 2) ? 2 : 1;
  o.output = fuzz::ScratchFile("out");
  o.temp_dir = fuzz::ScratchDir();
  o.memory_budget_bytes = 16 << 10;  // small: larger inputs spill count runs
  o.input = {fuzz::ScratchFile("log.txt")};
  fuzz::WriteScratch(o.input[0], log);
  fuzz::RemoveTree(o.output);
  const Status s = datasets::PreprocessClicks(o, CpuContext(0, &pool));
  fuzz::Report("PreprocessClicks", s);
  fuzz::CheckNotInternal(s, "PreprocessClicks");
  std::error_code ec;
  if (!s.ok()) {
    fuzz::Check(!std::filesystem::exists(o.output, ec), "a failed preprocess left " + o.output);
  } else {
    auto ds = storage::ClicksDataset::Open(o.output);
    fuzz::Check(ds.ok(), "a successful preprocess wrote a dataset that does not open: " + ds.status().ToString());
  }
  fuzz::RemoveTree(o.output);
  for (const auto& e : std::filesystem::directory_iterator(fuzz::ScratchDir(), ec)) {
    const std::string name = e.path().filename().string();
    fuzz::Check(name.rfind("out.tmp-", 0) != 0, "preprocess left a staging directory " + name);
  }
  return 0;
}
