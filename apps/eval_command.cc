// `foresight eval DATASET --checkpoint DIR`: accuracies of a checkpoint on
// the train/val/test ids, as a table on stdout (one JSON line with --json).
#include <nlohmann/json.hpp>

#include <cstdio>

#include "command.h"
#include "foresight/trainer/inference.h"
#include "inference_flags.h"

namespace foresight::apps {

namespace {

class EvalCommand : public Command {
 public:
  explicit EvalCommand(CLI::App* app) : Command(app) {
    AddInferenceFlags(app, &options_, &last_);
    app->add_flag("--json", json_, "Print one JSON line instead of the table");
  }

  Status Prepare() override {
    options_.use_best = !last_;
    return options_.Validate();
  }

  Status Run() override {
    UseThreads(options_.threads);
    trainer::EvaluationResult r;
    FS_RETURN_IF_ERROR(trainer::Evaluate(options_, &r));
    nlohmann::json j = {{"epoch", r.epoch},           {"train_acc", r.train_acc},
                        {"val_acc", r.val_acc},       {"test_acc", r.test_acc},
                        {"train_count", r.train_count}, {"val_count", r.val_count},
                        {"test_count", r.test_count}};
    if (json_) {
      std::printf("%s\n", j.dump().c_str());
      return Status::OK();
    }
    std::printf("checkpoint epoch %d (%s)\n", r.epoch, last_ ? "last" : "best validation accuracy");
    std::printf("%-7s %9s %9s\n", "split", "accuracy", "nodes");
    const struct {
      const char* name;
      double acc;
      int64_t count;
    } rows[] = {{"train", r.train_acc, r.train_count}, {"val", r.val_acc, r.val_count},
                {"test", r.test_acc, r.test_count}};
    for (const auto& row : rows) {
      std::printf("%-7s %9.4f %9lld\n", row.name, row.acc, static_cast<long long>(row.count));
    }
    return Status::OK();
  }

 private:
  trainer::InferenceOptions options_;
  bool last_ = false;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> AddEvalCommand(CLI::App* root) {
  CLI::App* app = root->add_subcommand("eval", "Accuracy of a checkpoint on a dataset's splits");
  return std::make_unique<EvalCommand>(app);
}

}  // namespace foresight::apps
