// End-to-end: `foresight preprocess --format triples` and `foresight train
// --task link` as a user runs them: WN18RR's counts (skipped when
// ../shared/datasets lacks it), a small graph trained with a config file,
// its metrics and export, bad input named by file and line, and a
// generated graph's link triples trained from the disk store under
// --memory-budget (--plan-only, the refusal naming the smallest budget,
// --step-losses equal to the memory store's).
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

using testing::Quote;
using Result = testing::CliResult;

TEST(LinkCli, Wn18rrCounts) {
  const std::string src = testing::SharedDataset("wn18rr");
  if (src.empty()) GTEST_SKIP() << "wn18rr not found in ../shared/datasets";
  testing::TempDir dir;
  Result r = testing::RunForesight("preprocess --format triples --train " + Quote(src + "/train.txt.xz") + " --val " +
                                   Quote(src + "/valid.txt.xz") + " --test " + Quote(src + "/test.txt.xz") +
                                   " --output " + Quote(dir.File("wn18rr")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("40943 entities (384 only in val/test), 11 relations, train/val/test triples "
                       "86835/3034/3134"),
            std::string::npos)
      << r.out;
}

TEST(LinkCli, TrainWithConfigMetricsAndExport) {
  testing::TempDir dir;
  std::string train;
  for (int i = 0; i < 30; ++i) {
    train += "n" + std::to_string(i) + "\tnext\tn" + std::to_string((i + 1) % 30) + "\n";
    train += "n" + std::to_string(i) + "\tsame\tn" + std::to_string((i / 5) * 5 + (i + 2) % 5) + "\n";
  }
  testing::WriteFile(dir.File("train.tsv"), train);
  testing::WriteFile(dir.File("valid.tsv"), "n3\tsame\tn1\nn7\tnext\tn8\n");
  testing::WriteFile(dir.File("test.tsv"), "n12\tsame\tn14\nn20\tnext\tn21\n");
  Result r = testing::RunForesight("preprocess --format triples --train " + Quote(dir.File("train.tsv")) +
                                   " --val " + Quote(dir.File("valid.tsv")) + " --test " +
                                   Quote(dir.File("test.tsv")) + " --output " + Quote(dir.File("kg")));
  ASSERT_EQ(r.code, 0) << r.err;
  testing::WriteFile(dir.File("cfg.yaml"),
                     "task: link\nmodel: complex\nembedding-dim: 8\nnegatives: 10\nbatch-size: 16\nepochs: 3\nsparse-optimizer: adam\nsparse-lr: 0.05\n"
                     "weight-decay: 0\nregularizer: l3\nregularization-weight: 0.001\nreciprocal: true\n");
  r = testing::RunForesight("train " + Quote(dir.File("kg")) + " --config " + Quote(dir.File("cfg.yaml")) +
                            " --threads 2 --metrics " + Quote(dir.File("m.jsonl")) + " --export " +
                            Quote(dir.File("emb")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("best epoch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("test_mrr"), std::string::npos) << r.out;
  const std::vector<nlohmann::json> lines = testing::ReadJsonLines(dir.File("m.jsonl"));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_TRUE(lines[0].contains("val_mrr"));
  const nlohmann::json& f = lines.back();
  EXPECT_EQ(f["final"], true);
  for (const char* key : {"best_epoch", "val_mrr", "test_mrr", "test_hits10"}) EXPECT_TRUE(f.contains(key)) << key;
  for (const char* file : {"entity_embeddings.npy", "entity_ids.npy", "relation_embeddings.npy",
                           "relation_names.npy"}) {
    EXPECT_TRUE(testing::PathExists(dir.File("emb/") + file)) << file;
  }
  // Node classification on triples says what to train instead.
  r = testing::RunForesight("train " + Quote(dir.File("kg")) + " --node-features degree --epochs 1");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("train them with --task link"), std::string::npos) << r.err;
}

TEST(LinkCli, BadInputIsNamedByFileAndLine) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("train.txt"), "a r b\n");
  testing::WriteFile(dir.File("valid.txt"), "a r b\na q b\n");
  testing::WriteFile(dir.File("test.txt"), "a r b\n");
  Result r = testing::RunForesight("preprocess --format triples --train " + Quote(dir.File("train.txt")) +
                                   " --val " + Quote(dir.File("valid.txt")) + " --test " +
                                   Quote(dir.File("test.txt")) + " --output " + Quote(dir.File("kg")));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("valid.txt:2: relation 'q' appears in no training triple"), std::string::npos) << r.err;
  EXPECT_FALSE(testing::PathExists(dir.File("kg")));
  // An option a GNN encoder does not take is refused by name.
  r = testing::RunForesight("train " + Quote(dir.File("kg")) + " --task link --model gat --eval-negatives 5");
  EXPECT_EQ(r.code, 2);  // a usage error
  EXPECT_NE(r.err.find("ranks against every entity"), std::string::npos) << r.err;
}

TEST(LinkCli, GeneratedGraphUnderAMemoryBudget) {
  testing::TempDir dir;
  Result r = testing::RunForesight("generate graph --nodes 100000 --edges 20000 --features 0 --classes 2 --seed 2 "
                                   "--task link --edge-split 0.9,0.05,0.05 --output " + Quote(dir.File("g")));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json manifest = nlohmann::json::parse(testing::ReadFile(dir.File("g/manifest.json")));
  EXPECT_EQ(manifest["num_nodes"], 100000);  // every node an entity, isolated ones too
  EXPECT_TRUE(manifest.contains("link")) << manifest.dump();
  const std::string train = "train " + Quote(dir.File("g")) +
                            " --task link --model distmult --embedding-dim 8 --sparse-optimizer sgd --batch-size 512 "
                            "--negatives 16 --negative-chunk 128 --epochs 1 --eval-negatives 100 --threads 1 "
                            "--lookahead 4 --quiet";
  const std::string disk = " --table-store disk --table-dir " + Quote(dir.path());
  r = testing::RunForesight(train + disk + " --plan-only");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* item : {"memory plan of", "triples (mapped)", "cache index", "scales with the batch",
                           "smallest --memory-budget this run accepts"}) {
    EXPECT_NE(r.out.find(item), std::string::npos) << item << " in\n" << r.out;
  }
  r = testing::RunForesight(train + disk + " --memory-budget 20M");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("the smallest --memory-budget that works is"), std::string::npos) << r.err;
  r = testing::RunForesight(train + disk + " --memory-budget 1G --step-losses " + Quote(dir.File("disk.txt")));
  ASSERT_EQ(r.code, 0) << r.err;
  r = testing::RunForesight(train + " --step-losses " + Quote(dir.File("memory.txt")));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string losses = testing::ReadFile(dir.File("memory.txt"));
  EXPECT_GT(std::count(losses.begin(), losses.end(), '\n'), 30);  // about 0.9 x 20000 / 512 steps
  EXPECT_EQ(testing::ReadFile(dir.File("disk.txt")), losses);
  r = testing::RunForesight("train " + Quote(dir.File("g")) + " --node-features degree --epochs 1 --step-losses x");
  EXPECT_EQ(r.code, 2);  // a usage error
  EXPECT_NE(r.err.find("--step-losses applies to --task link"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace foresight
