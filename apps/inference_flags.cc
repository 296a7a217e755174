#include "inference_flags.h"

#include "command.h"

namespace foresight::apps {

void AddInferenceFlags(CLI::App* app, trainer::InferenceOptions* options, bool* last) {
  app->add_option("DATASET", options->dataset, "Dataset directory")->required();
  app->add_option("--checkpoint", options->checkpoint_dir,
                  "Checkpoint directory written by `foresight train --checkpoint`")
      ->type_name("DIR")
      ->required();
  app->add_flag("--last", *last,
                "Use the last completed epoch instead of the best one (default: best)");
  AddThreadsFlag(app, &options->threads);
  app->add_option("--eval-batch-size", options->eval_batch_size,
                  "Destination nodes per chunk in layer-wise inference (default: 4096)")
      ->type_name("INT");
}

}  // namespace foresight::apps
