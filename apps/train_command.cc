// `foresight train DATASET [flags] [--config FILE]`: every TrainKey is a
// flag; flags given explicitly override the config file.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <deque>

#include "command.h"
#include "foresight/core/communicator.h"
#include "foresight/core/logging.h"
#include "foresight/core/progress.h"
#include "foresight/core/thread_pool.h"
#include "foresight/trainer/train_device.h"
#include "foresight/trainer/trainer.h"
#include "train_settings.h"

namespace foresight::apps {

namespace {

// CLI11's placeholder for the value in --help.
std::string FlagTypeName(const TrainKey& key) {
  if (key.choices != nullptr) return key.choices;
  if (std::string(key.name) == "metrics") return "FILE";
  if (std::string(key.name) == "checkpoint" || std::string(key.name) == "export") return "DIR";
  if (key.bytes) return "SIZE";
  return std::visit(
      [](auto field) -> std::string {
        using T = std::decay_t<decltype(std::declval<TrainOptions>().*field)>;
        if constexpr (std::is_same_v<T, std::string>) return "TEXT";
        if constexpr (std::is_same_v<T, float>) return "FLOAT";
        if constexpr (std::is_same_v<T, std::vector<int64_t>>) return "INT,INT,...";
        if constexpr (std::is_same_v<T, uint64_t>) return "UINT";
        return "INT";
      },
      key.field);
}

// Ranks of this job on this machine (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE; 1 without mpirun).
int LocalRanks() {
  const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  return v != nullptr && std::atoi(v) > 1 ? std::atoi(v) : 1;
}

bool IsBool(const TrainKey& key) {
  return std::holds_alternative<bool TrainOptions::*>(key.field);
}

class TrainCommand : public Command {
 public:
  explicit TrainCommand(CLI::App* app) : Command(app) {
    // Required, but --config may name it (`dataset:`), so Prepare checks it.
    app->add_option("DATASET", dataset_,
                    "Dataset directory (from `foresight preprocess`); or `dataset` in --config")
        ->option_text("DIR REQUIRED");
    app->add_option("--config", config_,
                    "YAML (.yaml/.yml), JSON (.json) or TOML (.toml) file of these options")
        ->type_name("FILE");
    app->add_flag("--plan-only", plan_only_,
                  "Print the memory plan of mini-batch GNN training or shallow link prediction (each item, "
                  "whether it scales with the graph or the batch, the cache the --memory-budget leaves) and the "
                  "smallest --memory-budget the run accepts, then exit without training");
    app->add_option("--step-losses", step_losses_,
                    "--task link: write every training step's loss to FILE, one 'epoch batch loss' line "
                    "(the loss with 17 significant digits: runs compare bit for bit)")
        ->type_name("FILE");
    const TrainOptions defaults;
    for (const TrainKey& key : TrainKeys()) {
      if (std::string(key.name) == "dataset") continue;  // the positional
      Flag& flag = flags_.emplace_back();
      flag.key = &key;
      std::string help = key.help;
      if (help.find("default") == std::string::npos) {
        const std::string value = FormatTrainValue(key, defaults);
        help += " (default: " + (value.empty() ? std::string("none") : value) + ")";
      }
      if (IsBool(key)) {
        flag.option = app->add_flag("--" + std::string(key.name), flag.boolean, help);
      } else {
        flag.option = app->add_option("--" + std::string(key.name), flag.text, help)
                          ->type_name(FlagTypeName(key));
      }
    }
  }

  Status Prepare() override {
    std::vector<FlagValue> given;
    for (const Flag& f : flags_) {
      if (f.option->count() == 0) continue;
      given.push_back({f.key->name, IsBool(*f.key) ? ConfigValue::Bool(f.boolean)
                                                   : ConfigValue::Text(f.text)});
    }
    FS_ASSIGN_OR_RETURN(options_, ResolveTrainOptions(config_, given, dataset_));
    options_.plan_only = plan_only_;
    if (options_.dataset.empty()) {
      return InvalidArgument("DATASET is required (as the first argument or `dataset` in --config)");
    }
    FS_RETURN_IF_ERROR(WithFlagNames(options_.Validate()));
    if (!step_losses_.empty() && options_.task != "link") {
      return InvalidArgument("--step-losses applies to --task link");
    }
    return WithFlagNames(trainer::CheckTrainDevice(options_));
  }

  Status Run() override {
    // Under mpirun: the MPI world (log lines then start "[rank r/N] ").
    FS_ASSIGN_OR_RETURN(Communicator * world, WorldCommunicator());
    // --threads is per rank; left out, the ranks on this machine share its CPUs.
    const int local_ranks = LocalRanks();
    if (options_.threads == 0 && local_ranks > 1) options_.threads = std::max(1, OnlineCpus() / local_ranks);
    UseThreads(options_.threads);
    SetProgressEnabled(options_.progress);
    // options_.progress: the trainer's own display (epoch status lines and
    // summaries on stderr). --quiet prints nothing but errors: no progress,
    // no info or warning logs, no result line (the metrics file has it).
    if (!options_.progress && GetLogLevel() < LogLevel::kError) SetLogLevel(LogLevel::kError);
    trainer::TrainSummary summary;
    trainer::TrainCallbacks callbacks;
    std::unique_ptr<FILE, int (*)(FILE*)> losses(nullptr, &std::fclose);
    if (!step_losses_.empty() && world->rank() == 0 && !options_.plan_only) {
      losses.reset(std::fopen(step_losses_.c_str(), "w"));
      if (losses == nullptr) {
        return IoError("--step-losses: cannot create " + step_losses_ + ": " + std::strerror(errno));
      }
      callbacks.on_batch = [&losses](int epoch, int64_t batch, int64_t, double loss) {
        std::fprintf(losses.get(), "%d %lld %.17g\n", epoch, static_cast<long long>(batch), loss);
      };
    }
    const Status trained = trainer::Train(options_, callbacks, world, &summary);
    if (losses != nullptr && (std::fflush(losses.get()) != 0 || std::ferror(losses.get()) != 0)) {
      return IoError("--step-losses: cannot write " + step_losses_ + ": " + std::strerror(errno));
    }
    // One rank's error ends every rank now (the others would wait for it
    // in their next collective).
    if (!trained.ok() && world->size() > 1) world->Abort(trained.ToString(), 1);
    FS_RETURN_IF_ERROR(trained);
    if (options_.plan_only) {
      // The plan is the output, even with --quiet (rank 0's only).
      if (world->rank() == 0) std::fputs(summary.memory_plan.c_str(), stdout);
      return Status::OK();
    }
    if (!options_.progress || world->rank() != 0) return Status::OK();
    if (options_.model == "dlrm") {
      std::printf("epochs %d, best epoch %d: val_auc %.4f test_auc %.4f test_logloss %.4f\n",
                  summary.epochs_completed, summary.best_epoch, summary.best_val_auc, summary.test_auc,
                  summary.test_logloss);
      return Status::OK();
    }
    if (options_.model == "sasrec") {
      std::printf("epochs %d%s, best epoch %d: val_ndcg10 %.4f test_hr10 %.4f test_ndcg10 %.4f\n",
                  summary.epochs_completed, summary.stopped_early ? " (stopped early)" : "", summary.best_epoch,
                  summary.best_val_ndcg10, summary.test_hr10, summary.test_ndcg10);
      return Status::OK();
    }
    if (options_.task == "link") {
      std::printf("epochs %d%s, best epoch %d: val_mrr %.4f test_mrr %.4f test_hits10 %.4f\n",
                  summary.epochs_completed, summary.stopped_early ? " (stopped early)" : "", summary.best_epoch,
                  summary.best_val_mrr, summary.test_mrr, summary.test_hits10);
      return Status::OK();
    }
    std::printf("epochs %d%s, best epoch %d: val_acc %.4f test_acc %.4f\n",
                summary.epochs_completed, summary.stopped_early ? " (stopped early)" : "",
                summary.best_epoch, summary.best_val_acc, summary.test_acc);
    return Status::OK();
  }

 private:
  struct Flag {
    const TrainKey* key = nullptr;
    CLI::Option* option = nullptr;
    std::string text;
    bool boolean = false;
  };

  std::string dataset_;
  std::string config_;
  bool plan_only_ = false;
  std::string step_losses_;
  std::deque<Flag> flags_;  // a deque keeps the bound storage in place
  TrainOptions options_;
};

}  // namespace

std::unique_ptr<Command> AddTrainCommand(CLI::App* root) {
  CLI::App* app = root->add_subcommand(
      "train", "Train a GNN (sage, gcn, gat) on a graph dataset, DLRM (dlrm) on a clicks dataset, SASRec "
               "(sasrec) on a sequences dataset, or link prediction (--task link)");
  return std::make_unique<TrainCommand>(app);
}

}  // namespace foresight::apps
