// Flags shared by the commands that write datasets (preprocess, generate):
// the edge-sort RAM budget, its spill folder, the CPU budget and --quiet.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "foresight/core/status.h"

namespace foresight::apps {

class DatasetToolFlags {
 public:
  // Registers --memory-budget, --temp-dir, --threads and --quiet; --temp-dir
  // writes straight into `temp_dir` (the options struct's field).
  void Add(CLI::App* app, std::string* temp_dir);
  // Checks the values and stores the parsed budget in *memory_budget_bytes
  // (left at its default when the flag is absent).
  Status Apply(size_t* memory_budget_bytes) const;
  // Sizes the thread pool and the progress display; call before running.
  void Activate() const;

 private:
  std::string memory_budget_;
  int threads_ = 0;
  bool quiet_ = false;
};

}  // namespace foresight::apps
