// `foresight eval DATASET --checkpoint DIR`: accuracies of a checkpoint on
// the train/val/test ids, one JSON line on stdout.
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
    std::printf("%s\n", j.dump().c_str());
    return Status::OK();
  }

 private:
  trainer::InferenceOptions options_;
  bool last_ = false;
};

}  // namespace

std::unique_ptr<Command> AddEvalCommand(CLI::App* root) {
  CLI::App* app = root->add_subcommand("eval", "Accuracy of a checkpoint on a dataset's splits");
  return std::make_unique<EvalCommand>(app);
}

}  // namespace foresight::apps
