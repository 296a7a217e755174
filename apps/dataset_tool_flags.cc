#include "dataset_tool_flags.h"

#include "command.h"
#include "cli_values.h"
#include "foresight/core/progress.h"

namespace foresight::apps {

void DatasetToolFlags::Add(CLI::App* app, std::string* temp_dir) {
  app->add_option("--memory-budget", memory_budget_, "RAM for the edge sort (default: 1G)")
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
  return Status::OK();
}

void DatasetToolFlags::Activate() const {
  UseThreads(threads_);
  SetProgressEnabled(!quiet_);
}

}  // namespace foresight::apps
