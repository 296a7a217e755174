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
  // Checks the values and stores in *memory_budget_bytes the bytes the sort
  // may use: the budget (the flag, else *memory_budget_bytes' default) is
  // the whole process's peak RSS, so the sort gets it less the RSS the
  // process holds now; a budget below that plus a quarter for the sort
  // gives the sort a quarter and logs that the peak will exceed it.
  Status Apply(size_t* memory_budget_bytes) const;
  // Sizes the thread pool and the progress display; call before running.
  void Activate() const;

 private:
  std::string memory_budget_;
  int threads_ = 0;
  bool quiet_ = false;
};

}  // namespace foresight::apps
