// A `foresight` subcommand: it declares its flags on a CLI11 sub-app, turns
// the parsed flags into options (Prepare: a failure there is a usage error,
// exit 2) and then does the work (Run: a failure exits 1). cli.cc drives them.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "foresight/core/status.h"

namespace foresight::apps {

class Command {
 public:
  explicit Command(CLI::App* app) : app_(app) {}
  virtual ~Command() = default;

  // Builds the options from the parsed flags (and config file); checks them.
  virtual Status Prepare() = 0;
  // Does the work; prints results on stdout, progress and logs on stderr.
  virtual Status Run() = 0;

  CLI::App* app() const { return app_; }
  // "train", or "generate graph" for a nested sub-app (error prefixes).
  std::string name() const {
    std::string n = app_->get_name();
    for (const CLI::App* p = app_->get_parent(); p != nullptr && p->get_parent() != nullptr;
         p = p->get_parent()) {
      n = p->get_name() + " " + n;
    }
    return n;
  }

 private:
  CLI::App* app_;
};

// Each adds its sub-app to `root` and returns the command that owns the
// flag storage.
std::unique_ptr<Command> AddTrainCommand(CLI::App* root);
std::unique_ptr<Command> AddEvalCommand(CLI::App* root);
std::unique_ptr<Command> AddExportCommand(CLI::App* root);
std::unique_ptr<Command> AddPreprocessCommand(CLI::App* root);
std::unique_ptr<Command> AddGenerateCommand(CLI::App* root);
// Adds `generate clicks` under the `generate` sub-app AddGenerateCommand made.
std::unique_ptr<Command> AddGenerateClicksCommand(CLI::App* root);
std::unique_ptr<Command> AddPartitionCommand(CLI::App* root);
std::unique_ptr<Command> AddPlotCommand(CLI::App* root);
std::unique_ptr<Command> AddCacheCurveCommand(CLI::App* root);

// Sizes the process thread pool (0 = online CPUs); call before any work.
void UseThreads(int threads);

// Registers --threads INT into *threads (left at 0 = every online CPU when
// absent); an explicit value below 1 is a usage error.
CLI::Option* AddThreadsFlag(CLI::App* app, int* threads);

}  // namespace foresight::apps
