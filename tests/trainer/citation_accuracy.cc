#include "citation_accuracy.h"

#include <cstdio>

#include "foresight/datasets/preprocess.h"
#include "foresight/trainer/trainer.h"
#include "testing/testing.h"

namespace foresight::testing {

Status PrepareCitation(const std::string& name, const std::string& dir) {
  datasets::PreprocessOptions o;
  o.format = datasets::InputFormat::kLinqs;
  o.input = SourceDir() + "/datasets/" + name;
  o.output = dir;
  o.undirected = true;
  o.normalize_features = datasets::FeatureNorm::kRow;
  o.split_file = o.input + "/" + name + ".planetoid_split.tsv";
  return datasets::Preprocess(o, CpuContext());
}

StatusOr<double> MeanTestAccuracy(trainer::TrainOptions options) {
  double sum = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    options.seed = seed;
    trainer::TrainSummary s;
    FS_RETURN_IF_ERROR(trainer::Train(options, &s));
    std::printf("%s seed %llu: best epoch %d val %.4f test %.4f\n", options.model.c_str(),
                static_cast<unsigned long long>(seed), s.best_epoch, s.best_val_acc, s.test_acc);
    sum += s.test_acc;
  }
  std::printf("%s mean test accuracy %.4f\n", options.model.c_str(), sum / 5);
  return sum / 5;
}

}  // namespace foresight::testing
