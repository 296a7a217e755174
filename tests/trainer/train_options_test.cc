#include "foresight/trainer/train_options.h"

#include <gtest/gtest.h>

#include "testing/testing.h"

namespace foresight::trainer {
namespace {

TrainOptions Valid() {
  TrainOptions o;
  o.dataset = "/data/cora";
  return o;
}

TEST(TrainOptionsTest, DefaultsAreValid) {
  EXPECT_OK(Valid().Validate());
  TrainOptions o;
  EXPECT_EQ(o.model, "sage");
  EXPECT_EQ(o.epochs, 200);
  EXPECT_EQ(o.batch_size, 1024);
  EXPECT_EQ(o.fanouts, (std::vector<int64_t>{15, 10}));
  EXPECT_FALSE(o.full_graph);
  EXPECT_EQ(o.hidden, 64);
  EXPECT_EQ(o.layers, 2);
  EXPECT_EQ(o.heads, 8);
  EXPECT_FLOAT_EQ(o.lr, 0.01f);
  EXPECT_FLOAT_EQ(o.weight_decay, 5e-4f);
  EXPECT_FLOAT_EQ(o.dropout, 0.5f);
  EXPECT_EQ(o.optimizer, "adam");
  EXPECT_EQ(o.patience, 0);
  EXPECT_EQ(o.seed, 0u);
  EXPECT_EQ(o.threads, 0);
  EXPECT_TRUE(o.progress);
}

TEST(TrainOptionsTest, NamesTheBadOption) {
  TrainOptions o = Valid();
  o.dataset = "";
  EXPECT_ERROR_CONTAINS(o.Validate(), "dataset");
  o = Valid();
  o.model = "gin";
  EXPECT_ERROR_CONTAINS(o.Validate(), "model", "'gin'", "sage, gcn, gat");
  o = Valid();
  o.layers = 3;
  EXPECT_ERROR_CONTAINS(o.Validate(), "fanouts: 2 given (15,10) but layers is 3");
  o = Valid();
  o.fanouts = {15, 0};
  EXPECT_ERROR_CONTAINS(o.Validate(), "fanouts: entry 1 is 0");
  o = Valid();
  o.fanouts = {-2, 5};
  EXPECT_ERROR_CONTAINS(o.Validate(), "fanouts: entry 0 is -2");
  o = Valid();
  o.dropout = 1.0f;
  EXPECT_ERROR_CONTAINS(o.Validate(), "dropout");
  o = Valid();
  o.lr = 0;
  EXPECT_ERROR_CONTAINS(o.Validate(), "lr");
  o = Valid();
  o.weight_decay = -1;
  EXPECT_ERROR_CONTAINS(o.Validate(), "weight_decay");
  o = Valid();
  o.optimizer = "rmsprop";
  EXPECT_ERROR_CONTAINS(o.Validate(), "optimizer", "'rmsprop'");
  o = Valid();
  o.epochs = 0;
  EXPECT_ERROR_CONTAINS(o.Validate(), "epochs");
  o = Valid();
  o.batch_size = 0;
  EXPECT_ERROR_CONTAINS(o.Validate(), "batch_size");
  o = Valid();
  o.heads = 0;
  EXPECT_ERROR_CONTAINS(o.Validate(), "heads");
  o = Valid();
  o.patience = -1;
  EXPECT_ERROR_CONTAINS(o.Validate(), "patience");
  o = Valid();
  o.eval_batch_size = 0;
  EXPECT_ERROR_CONTAINS(o.Validate(), "eval_batch_size");
  o = Valid();
  o.resume = true;
  EXPECT_ERROR_CONTAINS(o.Validate(), "resume", "checkpoint");
}

TEST(TrainOptionsTest, FullGraphIgnoresFanoutsAndBatchSize) {
  TrainOptions o = Valid();
  o.full_graph = true;
  o.layers = 3;
  o.batch_size = 0;
  EXPECT_OK(o.Validate());
}

}  // namespace
}  // namespace foresight::trainer
