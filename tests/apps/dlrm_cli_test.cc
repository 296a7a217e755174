// End-to-end: `foresight train --model dlrm` as a user runs it: the real
// Criteo sample (skipped when ../shared/datasets lacks it) trains past
// chance with the metrics file's keys; a generated click log gives the same
// metrics with any thread count; bad input gets clear errors.
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

using testing::Quote;
using Result = testing::CliResult;

// A small DLRM that trains in well under a second on a few thousand rows.
const char kSmallDlrm[] =
    " --model dlrm --bottom-mlp 32,8 --top-mlp 32,1 --embedding-dim 8 --batch-size 128 --lr 0.001 "
    "--weight-decay 0 --quiet";
const char kAdagrad[] = " --sparse-optimizer rowwise-adagrad --sparse-lr 0.05";

// The lines of a metrics file without their timings (which differ run to run).
std::vector<nlohmann::json> WithoutTimings(std::vector<nlohmann::json> lines) {
  for (nlohmann::json& j : lines) {
    for (const char* k : {"train_seconds", "train_cpu_seconds", "samples_per_second", "median_step_seconds",
                          "eval_seconds", "loop_seconds"}) {
      j.erase(k);
    }
  }
  return lines;
}

Result Generate(const std::string& out) {
  return testing::RunForesight("generate clicks --tables 4 --rows 500 --dim 4 --samples 6000 --zipf 1.1 --seed 3 "
                               "--quiet --output " + Quote(out));
}

TEST(DlrmCli, CriteoSampleTrainsPastChance) {
  const std::string src = testing::SharedDataset("criteo-kaggle-8k");
  if (src.empty()) GTEST_SKIP() << "criteo-kaggle-8k not found in ../shared/datasets";
  testing::TempDir dir;
  Result r = testing::RunForesight("preprocess --format criteo --train " + Quote(src + "/train.tsv.xz") +
                                   " --val " + Quote(src + "/dev.tsv.xz") + " --test " +
                                   Quote(src + "/test.tsv.xz") + " --min-frequency 2 --quiet --output " +
                                   Quote(dir.File("c8k")));
  ASSERT_EQ(r.code, 0) << r.err;
  r = testing::RunForesight("train " + Quote(dir.File("c8k")) + kSmallDlrm + kAdagrad +
                            " --epochs 2 --eval-every 40 --dropout 0 --seed 1 --metrics " + Quote(dir.File("m.jsonl")));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<nlohmann::json> lines = testing::ReadJsonLines(dir.File("m.jsonl"));
  // 57 steps an epoch: step 40, the end of epoch 1 (57), 80, the end (114); then the final line.
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0]["step"], 40);
  EXPECT_EQ(lines[0]["epoch_end"], false);
  EXPECT_EQ(lines[1]["step"], 57);
  EXPECT_FALSE(lines[1].contains("epoch_end"));
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    for (const char* key : {"epoch", "step", "loss", "val_auc", "val_logloss", "val_acc", "test_auc",
                            "test_logloss", "test_acc", "samples_per_second", "cache_hits", "cache_misses",
                            "rows_requested", "bytes_read", "bytes_written"}) {
      EXPECT_TRUE(lines[i].contains(key)) << key << " missing from line " << i << ": " << lines[i].dump();
    }
  }
  const nlohmann::json& final_line = lines.back();
  ASSERT_EQ(final_line["final"], true);
  for (const char* key : {"best_epoch", "val_auc", "test_auc", "test_logloss"}) {
    EXPECT_TRUE(final_line.contains(key)) << key;
  }
  // The final line is the evaluation with the best validation AUC.
  double best = 0;
  for (size_t i = 0; i + 1 < lines.size(); ++i) best = std::max(best, lines[i]["val_auc"].get<double>());
  EXPECT_EQ(final_line["val_auc"].get<double>(), best);
  // 391 test rows with 86 clicks: chance is 0.5 and one run's AUC varies by
  // about 0.03 around the 0.7 this model reaches.
  EXPECT_GT(final_line["test_auc"].get<double>(), 0.62) << final_line.dump();
  EXPECT_LT(final_line["test_logloss"].get<double>(), 0.6) << final_line.dump();
}

TEST(DlrmCli, SameMetricsWithAnyThreadCount) {
  testing::TempDir dir;
  const Result g = Generate(dir.File("g"));
  ASSERT_EQ(g.code, 0) << g.err;
  for (const char* threads : {"1", "2"}) {
    const Result r = testing::RunForesight("train " + Quote(dir.File("g")) + kSmallDlrm + kAdagrad +
                                           " --epochs 2 --eval-every 10 --dropout 0.1 --seed 4 --threads " +
                                           threads + " --metrics " + Quote(dir.File(std::string("m") + threads)));
    ASSERT_EQ(r.code, 0) << r.err;
  }
  // The median of each line's step times: positive and no longer than
  // their sum (how it compares with the mean step is timing: not checked).
  for (const nlohmann::json& line : testing::ReadJsonLines(dir.File("m2"))) {
    if (line.contains("final")) continue;
    ASSERT_TRUE(line.contains("median_step_seconds")) << line.dump();
    EXPECT_GT(line["median_step_seconds"].get<double>(), 0.0) << line.dump();
    EXPECT_LE(line["median_step_seconds"].get<double>(), line["train_seconds"].get<double>()) << line.dump();
  }
  const auto one = WithoutTimings(testing::ReadJsonLines(dir.File("m1")));
  const auto two = WithoutTimings(testing::ReadJsonLines(dir.File("m2")));
  ASSERT_GT(one.size(), 4u);
  EXPECT_EQ(one, two);
}

TEST(DlrmCli, ProgressShowsSamplesPerSecondAndTheCacheHitRate) {
  testing::TempDir dir;
  ASSERT_EQ(Generate(dir.File("g")).code, 0);
  const Result r = testing::RunForesight("train " + Quote(dir.File("g")) +
                                         " --model dlrm --bottom-mlp 8,4 --top-mlp 8,1 --embedding-dim 4 "
                                         "--epochs 1 --table-store mmap --cache-size 4K --table-dir " +
                                         Quote(dir.path()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("epoch 1/1 step 5: loss "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" samples/s | cache "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("% hits"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("epochs 1, best epoch 1: val_auc "), std::string::npos) << r.out;
}

TEST(DlrmCli, BadInputGetsClearErrors) {
  testing::TempDir dir;
  ASSERT_EQ(Generate(dir.File("clicks")).code, 0);
  Result r = testing::RunForesight("generate graph --nodes 50 --edges 200 --features 4 --classes 3 --seed 1 "
                                   "--quiet --output " + Quote(dir.File("graph")));
  ASSERT_EQ(r.code, 0) << r.err;

  r = testing::RunForesight("train " + Quote(dir.File("graph")) + " --model dlrm --quiet");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("model dlrm trains on a click log, but " + dir.File("graph") +
                       " is a dataset of kind 'graph'"), std::string::npos) << r.err;

  r = testing::RunForesight("train " + Quote(dir.File("clicks")) + " --model sage --quiet");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is a clicks dataset (a click log); train it with --model dlrm"), std::string::npos)
      << r.err;

  // A budget that cannot hold the run names what it holds.
  r = testing::RunForesight("train " + Quote(dir.File("clicks")) + " --model dlrm --quiet --table-store disk " +
                            "--memory-budget 2M --table-dir " + Quote(dir.path()));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("memory_budget: 2.0 MiB cannot hold the run's minimum (no table cache): baseline"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cache index"), std::string::npos) << r.err;

  const std::pair<const char*, const char*> bad_flags[] = {
      {" --embedding-dim 16", "--bottom-mlp: with interaction dot the bottom MLP's last width (64"},
      {" --top-mlp 64,2", "--top-mlp: the last layer gives the click logit, so its width must be 1"},
      {" --fanouts 5,5", "--fanouts: applies to the GNN models (sage, gcn, gat), not to dlrm"},
      {" --hot-fraction 0.5", "--hot-fraction: applies to the GNN models (sage, gcn, gat), not to dlrm"},
      {" --read-gap 8K", "--read-gap: applies to the GNN models (sage, gcn, gat), not to dlrm"},
      {" --sparse-lr 0", "--sparse-lr: must be a positive number"},
      {" --sparse-optimizer adagrad", "adagrad"},
      {" --table-store ssd", "ssd"},
      {" --eval-every -1", "--eval-every: must be >= 0 steps"},
      {" --bottom-mlp 64,0,64", "--bottom-mlp: layer 1 has width 0"},
  };
  for (const auto& [flags, message] : bad_flags) {
    r = testing::RunForesight("train " + Quote(dir.File("clicks")) + " --model dlrm --quiet" + flags);
    EXPECT_EQ(r.code, 2) << flags << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << flags << ": " << r.err;
  }
}

}  // namespace
}  // namespace foresight

namespace foresight {
namespace {

std::vector<nlohmann::json> WithoutTimingsOrCache(std::vector<nlohmann::json> lines) {
  for (nlohmann::json& j : lines) {
    for (const char* k : {"train_seconds", "train_cpu_seconds", "samples_per_second", "median_step_seconds",
                          "eval_seconds", "loop_seconds", "cache_hits", "cache_misses", "rows_requested", "rows_bypassed", "rows_written_back",
                          "bytes_read", "bytes_written"}) {
      j.erase(k);
    }
  }
  return lines;
}

// 2 epochs, then --resume to 4, equals 4 uninterrupted epochs: the whole
// metrics file (timings aside) and every checkpointed byte, dense and
// sparse with their optimizer state. The resumed half runs its tables on
// disk behind a 3-row cache, so its cache counters differ (left out) and
// its checkpoint goes through that store's final flush.
TEST(DlrmCli, ResumeEqualsAnUninterruptedRunAndExportWritesTheTables) {
  testing::TempDir dir;
  ASSERT_EQ(Generate(dir.File("g")).code, 0);
  const std::string train = "train " + Quote(dir.File("g")) + kSmallDlrm +
                            " --eval-every 30 --dropout 0.1 --seed 9 --sparse-optimizer adam --sparse-lr 0.003 "
                            "--table-dir " + Quote(dir.path());
  Result r = testing::RunForesight(train + " --epochs 4 --checkpoint " + Quote(dir.File("full")) + " --metrics " +
                                   Quote(dir.File("full.jsonl")));
  ASSERT_EQ(r.code, 0) << r.err;
  r = testing::RunForesight(train + " --epochs 2 --checkpoint " + Quote(dir.File("part")) + " --metrics " +
                            Quote(dir.File("part.jsonl")));
  ASSERT_EQ(r.code, 0) << r.err;
  r = testing::RunForesight(train + " --epochs 4 --resume --table-store disk --cache-size 120 --checkpoint " +
                            Quote(dir.File("part")) + " --metrics " + Quote(dir.File("part.jsonl")));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto full = WithoutTimingsOrCache(testing::ReadJsonLines(dir.File("full.jsonl")));
  const auto part = WithoutTimingsOrCache(testing::ReadJsonLines(dir.File("part.jsonl")));
  ASSERT_GT(full.size(), 8u);
  EXPECT_EQ(full, part);
  EXPECT_EQ(testing::DirContents(dir.File("full/dlrm-epoch-000004")),
            testing::DirContents(dir.File("part/dlrm-epoch-000004")));
  EXPECT_TRUE(testing::PathExists(dir.File("part/dlrm-epoch-000004/tables.npy")));

  // A different recipe is refused, naming what differs.
  r = testing::RunForesight(train + " --epochs 5 --resume --interaction cat --checkpoint " + Quote(dir.File("part")));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("was written with different training options"), std::string::npos) << r.err;

  // export: one .npy per table, the embeddings without optimizer state.
  r = testing::RunForesight("export " + Quote(dir.File("g")) + " --checkpoint " + Quote(dir.File("part")) +
                            " --output " + Quote(dir.File("out")));
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream f(dir.File("out/tables.json"));
  const nlohmann::json tables = nlohmann::json::parse(f);
  EXPECT_EQ(tables["epoch"], 4);
  ASSERT_EQ(tables["fields"].size(), 4u);
  for (int k = 0; k < 4; ++k) {
    EXPECT_TRUE(testing::PathExists(dir.File("out/table_" + std::to_string(k) + ".npy")));
    EXPECT_EQ(tables["fields"][k]["rows"], 500);
  }
  // `eval` says where a DLRM's metrics are instead.
  r = testing::RunForesight("eval " + Quote(dir.File("g")) + " --checkpoint " + Quote(dir.File("part")));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("is a DLRM's"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace foresight
