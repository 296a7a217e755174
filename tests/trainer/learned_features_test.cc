// Learned node features (--node-features learned:DIM) through trainer::Train:
// the per-step losses do not depend on where the table lives (memory, mmap,
// disk behind a cache of a few rows, any policy) or on the thread count; a
// resumed run equals an uninterrupted one (rows and sparse optimizer state
// are checkpointed); eval and export read the checkpoint's rows.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/storage/npy.h"
#include "foresight/trainer/inference.h"
#include "foresight/trainer/trainer.h"
#include "synthetic_dataset.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

using testing::SmallOptions;

class LearnedFeaturesTest : public testing::SyntheticDatasetTest<> {
 protected:

  TrainOptions Options(const std::string& model, bool full_graph) {
    TrainOptions o = SmallOptions(dir_.File("data"), model, full_graph);
    o.node_features = "learned:8";
    o.epochs = 3;
    o.sparse_optimizer = "adam";  // the most state beside each row
    o.sparse_lr = 0.05f;
    return o;
  }

  // eval of o's checkpoint repeats training's accuracies (the best epoch's
  // rows, as training evaluated them), and export writes the learned rows
  // into `out` as f32 [240, dim].
  void ExpectEvalAndExportOf(const TrainOptions& o, const TrainSummary& trained, const std::string& out,
                             int64_t dim) {
    InferenceOptions io;
    io.dataset = o.dataset;
    io.checkpoint_dir = o.checkpoint_dir;
    io.threads = 1;
    io.eval_batch_size = o.eval_batch_size;
    EvaluationResult e;
    ASSERT_OK(Evaluate(io, &e));
    EXPECT_EQ(e.test_acc, trained.test_acc) << o.model << " " << o.node_features;
    EXPECT_EQ(e.val_acc, trained.best_val_acc) << o.model << " " << o.node_features;
    ASSERT_OK(Export(io, out));
    ASSERT_OK_AND_ASSIGN(Tensor rows, storage::LoadNpy(out + "/learned_features.npy"));
    EXPECT_EQ(rows.shape(), (Shape{240, dim}));
    EXPECT_EQ(rows.dtype(), DType::kF32);
  }

  // Every step's loss, then the final accuracies.
  std::vector<double> StepLosses(const TrainOptions& o, TrainSummary* summary = nullptr) {
    std::vector<double> losses;
    TrainCallbacks cb;
    cb.on_batch = [&](int, int64_t, int64_t, double loss) { losses.push_back(loss); };
    TrainSummary s;
    const Status status = Train(o, cb, &s);
    EXPECT_OK(status);
    if (summary != nullptr) *summary = s;
    return losses;
  }
};

TEST_F(LearnedFeaturesTest, DiskBehindATinyCacheGivesTheLossesOfMemory) {
  for (bool full_graph : {false, true}) {
    TrainOptions memory = Options("sage", full_graph);
    memory.feature_store = "memory";
    TrainSummary expected;
    const std::vector<double> reference = StepLosses(memory, &expected);
    ASSERT_FALSE(reference.empty());
    struct Variant {
      const char* store;
      int64_t cache_rows;
      const char* policy;
    };
    for (const Variant& v : {Variant{"mmap", 0, "lookahead"}, Variant{"disk", 4, "lookahead"},
                             Variant{"disk", 0, "lookahead"}, Variant{"disk", 16, "lru"},
                             Variant{"memory", 8, "static"}}) {
      TrainOptions o = memory;
      o.feature_store = v.store;
      // Rows of dim 8 with Adam's 16 floats of state: 96 bytes.
      o.cache_size = v.cache_rows * 96;
      o.cache_policy = v.policy;
      o.lookahead = 3;
      o.table_dir = dir_.File(std::string("table-") + v.store);
      TrainSummary s;
      EXPECT_EQ(StepLosses(o, &s), reference) << v.store << " " << v.cache_rows << " " << v.policy << " full "
                                                << full_graph;
      EXPECT_EQ(s.test_acc, expected.test_acc);
      // Mini-batch epochs count the table's I/O: every row looked up is a
      // hit or a miss of its cache, and disk rows are read from the file.
      if (full_graph) continue;
      const EpochMetrics& m = s.history[0];
      EXPECT_GT(m.rows_requested, 0);
      if (v.cache_rows > 0) {
        EXPECT_EQ(m.cache_hits + m.cache_misses, m.rows_requested);
      }
      if (std::string(v.store) == "disk") {
        EXPECT_GT(m.bytes_read, 0);
      }
    }
  }
}

TEST_F(LearnedFeaturesTest, LossesDoNotDependOnTheThreadCount) {
  for (const char* model : {"gcn", "sage", "gat"}) {
    TrainOptions o = Options(model, false);
    o.feature_store = "disk";
    o.cache_size = 10 * 96;
    o.table_dir = dir_.File("table");
    const std::vector<double> one = StepLosses(o);
    o.threads = 2;
    EXPECT_EQ(StepLosses(o), one) << model;
  }
}

TEST_F(LearnedFeaturesTest, TheRowsLearn) {
  // Every model, mini-batch and full-graph: the loss falls.
  for (const char* model : {"gcn", "sage", "gat"}) {
    for (bool full_graph : {false, true}) {
      TrainOptions o = Options(model, full_graph);
      o.epochs = full_graph ? 30 : 6;
      TrainSummary s;
      StepLosses(o, &s);
      ASSERT_EQ(s.history.size(), static_cast<size_t>(o.epochs));
      EXPECT_LT(s.history.back().loss, s.history.front().loss) << model << " full " << full_graph;
    }
  }
}

TEST_F(LearnedFeaturesTest, AResumedRunEqualsAnUninterruptedOne) {
  for (bool full_graph : {false, true}) {
    for (const char* store : {"memory", "disk"}) {
      TrainOptions o = Options("sage", full_graph);
      o.feature_store = store;
      o.cache_size = std::string(store) == "disk" ? 6 * 96 : 0;
      o.table_dir = dir_.File("table");
      o.epochs = 3;
      const std::vector<double> whole = StepLosses(o);
      o.checkpoint_dir = dir_.File(std::string("ck-") + store + (full_graph ? "-full" : ""));
      o.epochs = 2;
      std::vector<double> parts = StepLosses(o);
      o.epochs = 3;
      o.resume = true;
      const std::vector<double> rest = StepLosses(o);
      parts.insert(parts.end(), rest.begin(), rest.end());
      EXPECT_EQ(parts, whole) << store << " full " << full_graph;
    }
  }
}

TEST_F(LearnedFeaturesTest, EvalAndExportReadTheCheckpointsRows) {
  // gcn evaluates whole layers; sage reads the table's rows chunk by chunk
  // (LearnedRowsStore), here from disk behind a small cache.
  for (const char* model : {"gcn", "sage"}) {
    TrainOptions o = Options(model, false);
    o.checkpoint_dir = dir_.File(std::string("ck-") + model);
    o.dropout = 0;
    o.feature_store = "disk";
    o.cache_size = 8 * 96;
    o.table_dir = dir_.File("table");
    o.eval_batch_size = 16;
    TrainSummary s;
    StepLosses(o, &s);
    ExpectEvalAndExportOf(o, s, dir_.File(std::string("out-") + model), 8);
  }
}

// file+learned:DIM: the dataset's 8 features with 4 learned values beside
// them (the model reads 12), the file's rows through the feature store and
// cache, the learned ones from their table.
TEST_F(LearnedFeaturesTest, FileAndLearnedFeaturesSideBySide) {
  for (bool full_graph : {false, true}) {
    TrainOptions o = Options("gat", full_graph);
    o.node_features = "file+learned:4";
    o.feature_store = "memory";
    o.checkpoint_dir = dir_.File(full_graph ? "ck-full" : "ck");
    TrainSummary memory;
    const std::vector<double> reference = StepLosses(o, &memory);
    ASSERT_FALSE(reference.empty());
    const nlohmann::json saved =
        nlohmann::json::parse(testing::ReadFile(o.checkpoint_dir + "/checkpoint.json"));
    EXPECT_EQ(saved["model"]["in_features"], 12);
    if (!full_graph) {
      TrainOptions d = o;
      d.checkpoint_dir.clear();
      d.feature_store = "disk";
      d.cache_size = 5 * 32;  // five feature rows; the table then has no cache
      d.table_dir = dir_.File("table");
      EXPECT_EQ(StepLosses(d), reference);
    }
    ExpectEvalAndExportOf(o, memory, dir_.File(full_graph ? "out-full" : "out"), 4);
  }
}

TEST_F(LearnedFeaturesTest, BadChoicesAreRefused) {
  TrainOptions o = Options("gcn", false);
  o.node_features = "learned:0";
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o.node_features = "learned:x";
  EXPECT_NE(o.Validate().message().find("learned:DIM"), std::string::npos) << o.Validate().message();
  o.node_features = "learned:4";
  o.sparse_optimizer = "adagrad";
  EXPECT_NE(o.Validate().message().find("sparse_optimizer"), std::string::npos) << o.Validate().message();
  o.sparse_optimizer = "sgd";
  o.sparse_lr = 0;
  EXPECT_NE(o.Validate().message().find("sparse_lr"), std::string::npos);
  o.sparse_lr = 0.1f;
  EXPECT_OK(o.Validate());
  o.node_features = "file+learned:4";
  EXPECT_OK(o.Validate());
  o.node_features = "file+learned:";
  EXPECT_NE(o.Validate().message().find("file+learned:DIM"), std::string::npos) << o.Validate().message();
}

}  // namespace
}  // namespace foresight::trainer
