#include "dataset_tool_flags.h"

#include <algorithm>
#include <string>

#include "command.h"
#include "cli_values.h"
#include "foresight/core/logging.h"
#include "foresight/core/process_memory.h"
#include "foresight/core/progress.h"

namespace foresight::apps {

void DatasetToolFlags::Add(CLI::App* app, std::string* temp_dir) {
  app->add_option("--memory-budget", memory_budget_,
                  "Peak RSS of the whole process; the edge sort gets what the process does not hold when it "
                  "starts (default: 1G)")
      ->type_name("SIZE");
  app->add_option("--temp-dir", *temp_dir, "Folder for spilled edge runs (default: $TMPDIR)")
      ->type_name("DIR");
  AddThreadsFlag(app, &threads_);
  app->add_flag("--quiet", quiet_, "No progress display");
}

Status DatasetToolFlags::Apply(size_t* memory_budget_bytes) const {
  if (!memory_budget_.empty()) {
    FS_ASSIGN_OR_RETURN(*memory_budget_bytes, ParseByteSize(memory_budget_, "--memory-budget"));
  }
  // The budget is the process's peak RSS, and the process already holds
  // its code and libraries (~230 MB with the CUDA libraries linked): at a
  // billion edges a sort given all 4 GiB peaked at 4.5 GB. The sort gets
  // the rest; a budget too small for that is said, not silently exceeded.
  const size_t budget = *memory_budget_bytes;
  const size_t held = static_cast<size_t>(std::max<int64_t>(0, CurrentRssBytes()));
  if (held + budget / 4 <= budget) {
    *memory_budget_bytes = budget - held;
  } else {
    *memory_budget_bytes = std::max<size_t>(1, budget / 4);
    LogLine(LogLevel::kWarning, "--memory-budget " + std::to_string(budget) +
                                    " bytes is below what this process holds before it starts (" +
                                    std::to_string(held) + " bytes) plus a quarter of the budget for the sort: "
                                    "the sort gets " + std::to_string(*memory_budget_bytes) +
                                    " bytes and the peak RSS will exceed the budget");
  }
  return Status::OK();
}

void DatasetToolFlags::Activate() const {
  UseThreads(threads_);
  SetProgressEnabled(!quiet_);
}

}  // namespace foresight::apps
