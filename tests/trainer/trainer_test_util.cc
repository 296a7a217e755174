#include "trainer_test_util.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "foresight/core/thread_pool.h"
#include "foresight/datasets/generate.h"
#include "foresight/datasets/triples.h"
#include "foresight/trainer/trainer.h"
#include "testing/testing.h"

namespace foresight::testing {

std::vector<nlohmann::json> ReadMetricsWithoutTimings(const std::string& path) {
  std::vector<nlohmann::json> lines = ReadJsonLines(path);
  for (nlohmann::json& j : lines) {
    for (auto it = j.begin(); it != j.end();) {
      const std::string& key = it.key();
      const bool timing = (key.size() > 8 && (key.compare(key.size() - 8, 8, "_seconds") == 0 ||
                                              key.find("_per_second") != std::string::npos)) ||
                          key == "stages" || key == "bottleneck" ||
                          key == "epoch_minor_faults";  // the process's page faults: vary run to run
      it = timing ? j.erase(it) : std::next(it);
    }
  }
  return lines;
}

std::map<std::string, std::string> TreeContents(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out[std::filesystem::relative(e.path(), dir).string()] = ReadFile(e.path().string());
  }
  return out;
}

trainer::TrainOptions SmallOptions(const std::string& dataset, const std::string& model, bool full_graph) {
  trainer::TrainOptions o;
  o.dataset = dataset;
  o.model = model;
  o.full_graph = full_graph;
  o.epochs = 5;
  o.batch_size = 32;
  o.fanouts = {5, 3};
  o.hidden = 16;
  o.heads = 2;
  o.lr = 0.02f;
  o.dropout = 0.3f;
  o.eval_batch_size = 50;
  o.threads = 1;
  o.progress = false;
  o.seed = 7;
  return o;
}

double ExpectLossesNear(const std::vector<double>& got, const std::vector<double>& want, size_t steps,
                        const std::string& what) {
  EXPECT_GE(got.size(), steps) << what;
  EXPECT_GE(want.size(), steps) << what;
  double worst = 0;
  for (size_t i = 0; i < std::min({steps, got.size(), want.size()}); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 * std::abs(want[i])) << what << ", step " << i;
    worst = std::max(worst, std::abs(got[i] - want[i]) / std::abs(want[i]));
  }
  return worst;
}

std::vector<double> StepLosses(const trainer::TrainOptions& options) {
  std::vector<double> losses;
  trainer::TrainCallbacks cb;
  cb.on_batch = [&](int, int64_t, int64_t, double loss) { losses.push_back(loss); };
  trainer::TrainSummary summary;
  const Status s = trainer::Train(options, cb, &summary);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return losses;
}

Status GenerateBudgetLinkGraph(const std::string& path, int64_t entities) {
  datasets::GenerateGraphOptions g;
  g.output = path;
  g.num_nodes = entities;
  g.num_edges = 30000;
  g.feature_dim = 0;
  g.num_classes = 2;
  g.seed = 4;
  g.task = "link";
  g.edge_split = {0.9, 0.05, 0.05};
  ThreadPool pool(2);
  return datasets::GenerateGraph(g, CpuContext(0, &pool));
}

trainer::TrainOptions BudgetLinkOptions(const std::string& dataset) {
  trainer::TrainOptions o;
  o.dataset = dataset;
  o.task = "link";
  o.model = "distmult";
  o.embedding_dim = 16;
  o.sparse_optimizer = "sgd";
  o.sparse_lr = 0.1f;
  o.negatives = 32;
  o.negative_chunk = 64;
  o.batch_size = 256;
  o.lookahead = 4;
  o.epochs = 1;
  o.eval_negatives = 500;
  o.progress = false;
  o.threads = 1;
  o.seed = 9;
  return o;
}

Status PreprocessTriplesInto(const TempDir& dir, const std::string& name, const std::string& train,
                             const std::string& val, const std::string& test) {
  datasets::TriplesPreprocessOptions o;
  o.train = dir.File(name + ".train.txt");
  o.val = dir.File(name + ".valid.txt");
  o.test = dir.File(name + ".test.txt");
  WriteFile(o.train, train);
  WriteFile(o.val, val);
  WriteFile(o.test, test);
  o.output = dir.File(name);
  return datasets::PreprocessTriples(o, CpuContext());
}

}  // namespace foresight::testing
