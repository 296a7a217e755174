#include "cli.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "foresight/core/device.h"
#include "foresight/core/thread_pool.h"
#include "foresight/kernels/blas_info.h"

namespace foresight::apps {

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

// "foresight train: <message>" (or "foresight: <message>" outside any
// subcommand), and a pointer to the help for usage errors.
int Report(const std::string& command, const std::string& message, int code) {
  const std::string prefix = command.empty() ? "foresight" : "foresight " + command;
  std::fprintf(stderr, "%s: %s\n", prefix.c_str(), message.c_str());
  if (code == kExitUsage) {
    std::fprintf(stderr, "Run '%s --help' for usage.\n", prefix.c_str());
  }
  return code;
}

// The deepest sub-app that parsing entered, as "generate graph".
std::string ParsedCommandName(const CLI::App& root) {
  std::string name;
  const CLI::App* app = &root;
  while (true) {
    const auto subs = app->get_subcommands();
    if (subs.empty()) break;
    app = subs.front();
    name += (name.empty() ? "" : " ") + app->get_name();
  }
  return name;
}

// CLI11's help layout, except that a positional whose option text ends in
// "REQUIRED" (train's DATASET, which --config may give instead, so CLI11
// cannot enforce it) also shows as required in the usage line.
class CliFormatter : public CLI::Formatter {
 public:
  std::string make_option_usage(const CLI::Option* opt) const override {
    const std::string text = opt->get_option_text();
    const std::string kRequired = "REQUIRED";
    if (text.size() >= kRequired.size() &&
        text.compare(text.size() - kRequired.size(), kRequired.size(), kRequired) == 0) {
      return make_option_name(opt, true);
    }
    return CLI::Formatter::make_option_usage(opt);
  }
};

// What runs where in this build, for --help and --version: only GNN node
// classification trains on a GPU (train --device cuda); everything else
// runs on the CPU, whatever the build compiled.
std::string WhereItRuns() {
  return std::string("Runs on the CPU, except `train --device cuda[:N]`: GNN node classification (sage, gcn, "
                     "gat; full graph or in-memory mini-batches) on a GPU. ") +
         (CudaCompiledIn() ? "This build has CUDA support compiled in."
                           : "This build has no CUDA support compiled in, so it refuses --device cuda.") +
         "\nBLAS: " + kernels::BlasDescription();
}


// "foresight generate graph": the words a user types to reach `app`.
std::string FullCommandName(const CLI::App* app) {
  std::string name = app->get_name();
  for (const CLI::App* p = app->get_parent(); p != nullptr; p = p->get_parent()) {
    name = p->get_name() + " " + name;
  }
  return name;
}

// `foresight help [COMMAND...]`: the root's or a subcommand's --help text.
int RunHelp(CLI::App* root, const std::vector<std::string>& topic) {
  CLI::App* app = root;
  for (const std::string& word : topic) {
    CLI::App* sub = nullptr;
    try {
      sub = app->get_subcommand(word);
    } catch (const CLI::OptionNotFound&) {
    }
    if (sub == nullptr || word == "help") {
      return Report("help", "unknown command '" + word + "'", kExitUsage);
    }
    app = sub;
  }
  // App::help() delegates to the parsed subcommand (here `help` itself), so
  // format the chosen app directly.
  std::cout << app->get_formatter()->make_help(app, FullCommandName(app), CLI::AppFormatMode::Normal);
  return 0;
}

// Runs one phase of a command, turning a failed Status or an escaped
// exception into the error report.
template <typename Fn>
int Guard(const std::string& name, int failure_code, Fn&& fn) {
  try {
    const Status s = fn();
    if (s.ok()) return 0;
    return Report(name, s.message(), failure_code);
  } catch (const std::bad_alloc&) {
    return Report(name, "out of memory", kExitFailure);
  } catch (const std::exception& e) {
    return Report(name, std::string("internal error: ") + e.what(), kExitFailure);
  } catch (...) {
    return Report(name, "internal error: unknown exception", kExitFailure);
  }
}

int RunCliImpl(int argc, char** argv) {
  CLI::App root("foresight: train graph neural networks on data larger than memory.", "foresight");
  root.set_version_flag("--version", std::string("foresight ") + FORESIGHT_VERSION + "\n" + WhereItRuns());
  root.footer(WhereItRuns());
  root.require_subcommand(1);
  // Before any subcommand: each one copies the root's formatter.
  root.formatter(std::make_shared<CliFormatter>());
  root.get_formatter()->column_width(36);

  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(AddPreprocessCommand(&root));
  commands.push_back(AddGenerateCommand(&root));
  commands.push_back(AddGenerateClicksCommand(&root));
  commands.push_back(AddPartitionCommand(&root));
  commands.push_back(AddTrainCommand(&root));
  commands.push_back(AddEvalCommand(&root));
  commands.push_back(AddExportCommand(&root));
  commands.push_back(AddPlotCommand(&root));
  commands.push_back(AddCacheCurveCommand(&root));
  CLI::App* help = root.add_subcommand("help", "Show help for foresight or for one command");
  std::vector<std::string> help_topic;
  help->add_option("COMMAND", help_topic, "A command, e.g. train or generate graph");

  if (argc <= 1) {
    std::cerr << root.help();
    return kExitUsage;
  }
  // CLI11 reports an unknown first word as "a subcommand is required"; name it.
  if (const std::string first = argv[1]; !first.empty() && first[0] != '-') {
    try {
      root.get_subcommand(first);
    } catch (const CLI::OptionNotFound&) {
      return Report("", "unknown command '" + first + "'", kExitUsage);
    }
  }
  try {
    root.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << root.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << root.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    return Report(ParsedCommandName(root), e.what(), kExitUsage);
  }

  if (help->parsed()) return RunHelp(&root, help_topic);
  for (const auto& command : commands) {
    if (!command->app()->parsed()) continue;
    const std::string name = command->name();
    if (const int rc = Guard(name, kExitUsage, [&] { return command->Prepare(); }); rc != 0) {
      return rc;
    }
    return Guard(name, kExitFailure, [&] { return command->Run(); });
  }
  return Report("", "no command given", kExitUsage);
}

}  // namespace

void UseThreads(int threads) { SetDefaultThreads(threads > 0 ? threads : OnlineCpus()); }

CLI::Option* AddThreadsFlag(CLI::App* app, int* threads) {
  // Runs on the text before conversion; a non-number is left to CLI11's
  // conversion error.
  CLI::Validator at_least_one(
      [](std::string& value) -> std::string {
        char* end = nullptr;
        const long n = std::strtol(value.c_str(), &end, 10);
        if (end == value.c_str() || *end != '\0' || n >= 1) return "";
        return "expected at least 1 thread, got " + value + " (leave --threads out to use every online CPU)";
      },
      "");
  return app->add_option("--threads", *threads, "CPU threads, at least 1 (default: every online CPU)")
      ->type_name("INT")
      ->check(at_least_one);
}

int RunCli(int argc, char** argv) {
  try {
    return RunCliImpl(argc, argv);
  } catch (const std::exception& e) {
    return Report("", std::string("internal error: ") + e.what(), kExitFailure);
  } catch (...) {
    return Report("", "internal error: unknown exception", kExitFailure);
  }
}

}  // namespace foresight::apps
