// `foresight export DATASET --checkpoint DIR --output OUT`: node embeddings
// and predictions (and optionally logits / probabilities) as .npy files.
#include <cstdio>

#include "command.h"
#include "foresight/trainer/inference.h"
#include "inference_flags.h"

namespace foresight::apps {

namespace {

class ExportCommand : public Command {
 public:
  explicit ExportCommand(CLI::App* app) : Command(app) {
    AddInferenceFlags(app, &options_, &last_);
    app->add_option("--output", output_, "Directory for embeddings.npy, predictions.npy, ...")
        ->type_name("DIR")
        ->required();
    app->add_flag("--logits", options_.write_logits, "Also write logits.npy");
    app->add_flag("--probabilities", options_.write_probabilities,
                  "Also write probabilities.npy (softmax)");
  }

  Status Prepare() override {
    options_.use_best = !last_;
    return options_.Validate();
  }

  Status Run() override {
    UseThreads(options_.threads);
    FS_RETURN_IF_ERROR(trainer::Export(options_, output_));
    std::printf("exported to %s\n", output_.c_str());
    return Status::OK();
  }

 private:
  trainer::InferenceOptions options_;
  std::string output_;
  bool last_ = false;
};

}  // namespace

std::unique_ptr<Command> AddExportCommand(CLI::App* root) {
  CLI::App* app =
      root->add_subcommand("export", "Write node embeddings and predictions of a checkpoint (a DLRM's: its tables)");
  return std::make_unique<ExportCommand>(app);
}

}  // namespace foresight::apps
