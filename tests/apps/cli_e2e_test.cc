// End-to-end: runs the built `foresight` binary as a user would and checks
// its exit codes, messages and files. Preprocesses the bundled Cora.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
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

// Runs `foresight <args>` (args already shell-quoted where needed).
Result Foresight(const std::string& args) { return testing::RunForesight(args); }

// The Cora source: the copy bundled in the repository, else ../shared.
std::string CoraSource() {
  const std::string bundled = testing::SourceDir() + "/datasets/cora";
  if (testing::PathExists(bundled + "/cora.content.xz") || testing::PathExists(bundled + "/cora.content")) return bundled;
  return testing::SharedDataset("cora");
}

// Preprocesses Cora (Planetoid split, symmetric, row-normalised features)
// into `out`.
void PreprocessCora(const std::string& out) {
  const std::string src = CoraSource();
  if (src.empty()) GTEST_SKIP() << "Cora not found in datasets/cora or ../shared/datasets";
  const Result r = Foresight("preprocess --format linqs --input " + Quote(src) + " --split-file " +
                             Quote(src + "/cora.planetoid_split.tsv") +
                             " --undirected --normalize-features row --threads 2 --quiet --output " +
                             Quote(out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("2708 nodes"), std::string::npos) << r.out;
}

#define EXPECT_USAGE_ERROR(result, prefix, text)                                  \
  do {                                                                            \
    const Result& r_ = (result);                                                  \
    EXPECT_EQ(r_.code, 2) << r_.err;                                              \
    EXPECT_EQ(r_.err.rfind(std::string(prefix) + ": ", 0), 0u) << r_.err;         \
    EXPECT_NE(r_.err.find(text), std::string::npos) << r_.err;                    \
  } while (0)

TEST(CliE2E, HelpListsEverySubcommand) {
  for (const char* args : {"help", "--help"}) {
    const Result r = Foresight(args);
    EXPECT_EQ(r.code, 0) << args << ": " << r.err;
    for (const char* sub : {"preprocess", "generate", "train", "eval", "export", "help"}) {
      EXPECT_NE(r.out.find(sub), std::string::npos) << args << " lacks " << sub << ":\n" << r.out;
    }
  }
  const Result train = Foresight("help train");
  EXPECT_EQ(train.code, 0);
  for (const char* flag : {"--model", "--epochs", "--fanouts", "--full-graph", "--config",
                           "--metrics", "--checkpoint", "--resume", "--quiet", "--threads"}) {
    EXPECT_NE(train.out.find(flag), std::string::npos) << flag << ":\n" << train.out;
  }
  const Result gen = Foresight("generate graph --help");
  EXPECT_EQ(gen.code, 0);
  EXPECT_NE(gen.out.find("--rmat"), std::string::npos) << gen.out;
  EXPECT_NE(Foresight("help generate graph").out.find("--nodes"), std::string::npos);
  EXPECT_USAGE_ERROR(Foresight("help nonsense"), "foresight help", "unknown command 'nonsense'");
}

TEST(CliE2E, Version) {
  const Result r = Foresight("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("foresight ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find('.'), std::string::npos) << r.out;
}

TEST(CliE2E, UsageErrors) {
  const Result none = Foresight("");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("train"), std::string::npos) << "no arguments print the help";
  EXPECT_USAGE_ERROR(Foresight("fly"), "foresight", "fly");
  EXPECT_USAGE_ERROR(Foresight("train ds --bogus 3"), "foresight train", "--bogus");
  EXPECT_USAGE_ERROR(Foresight("train"), "foresight train", "DATASET is required");
  EXPECT_USAGE_ERROR(Foresight("train ds --epochs ten"), "foresight train",
                     "--epochs: expected an integer, got 'ten'");
  EXPECT_USAGE_ERROR(Foresight("train ds --model gpt"), "foresight train",
                     "--model: expected one of sage|gcn|gat");
  EXPECT_USAGE_ERROR(Foresight("train ds --epochs"), "foresight train", "--epochs");
  EXPECT_USAGE_ERROR(Foresight("eval ds"), "foresight eval", "--checkpoint");
  EXPECT_USAGE_ERROR(Foresight("export ds --checkpoint c"), "foresight export", "--output");
  EXPECT_USAGE_ERROR(Foresight("generate"), "foresight generate", "subcommand");
  EXPECT_USAGE_ERROR(Foresight("generate graph --output o --rmat 0.5,0.2"),
                     "foresight generate graph", "--rmat: expected 3 comma-separated numbers");
  EXPECT_USAGE_ERROR(Foresight("generate graph --output o --nodes many"), "foresight generate graph",
                     "--nodes");
  EXPECT_USAGE_ERROR(Foresight("preprocess --format csv --output o"), "foresight preprocess", "csv");
  EXPECT_USAGE_ERROR(Foresight("preprocess --output o --memory-budget lots"),
                     "foresight preprocess", "--memory-budget");
}

TEST(CliE2E, ConfigErrorsNameFileAndKey) {
  testing::TempDir dir;
  const std::string yaml = dir.File("bad.yaml");
  testing::WriteFile(yaml, "epochs: 3\nlearning_rate: 0.1\n");
  EXPECT_USAGE_ERROR(Foresight("train ds --config " + Quote(yaml)), "foresight train",
                     yaml + ": unknown key 'learning-rate'");
  const std::string toml = dir.File("bad.toml");
  testing::WriteFile(toml, "epochs = \"three\"\n");
  EXPECT_USAGE_ERROR(Foresight("train ds --config " + Quote(toml)), "foresight train",
                     "key 'epochs': expected an integer");
  EXPECT_USAGE_ERROR(Foresight("train ds --config " + Quote(dir.File("absent.toml"))),
                     "foresight train", "absent.toml");
}

TEST(CliE2E, FailuresExitOne) {
  testing::TempDir dir;
  const Result r = Foresight("train " + Quote(dir.File("no-such-dataset")) + " --quiet");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("foresight train: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("no-such-dataset"), std::string::npos) << r.err;
  const Result e = Foresight("eval " + Quote(dir.File("ds")) + " --checkpoint " + Quote(dir.File("c")));
  EXPECT_EQ(e.code, 1) << e.err;
  EXPECT_EQ(e.err.rfind("foresight eval: ", 0), 0u) << e.err;
  const Result p = Foresight("preprocess --format linqs --input " + Quote(dir.File("nothing")) +
                             " --output " + Quote(dir.File("out")) + " --quiet");
  EXPECT_EQ(p.code, 1) << p.err;
  EXPECT_EQ(p.err.rfind("foresight preprocess: ", 0), 0u) << p.err;
  EXPECT_FALSE(testing::PathExists(dir.File("out")));
}

TEST(CliE2E, CoraPreprocessTrainEvalExport) {
  testing::TempDir dir;
  const std::string data = dir.File("cora");
  PreprocessCora(data);
  if (HasFatalFailure() || IsSkipped()) return;

  const std::string metrics = dir.File("metrics.jsonl");
  const std::string ckpt = dir.File("ckpt");
  const Result t = Foresight("train " + Quote(data) +
                             " --model gcn --full-graph --epochs 3 --hidden 16 --seed 1 --threads 2"
                             " --metrics " + Quote(metrics) + " --checkpoint " + Quote(ckpt));
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("best epoch"), std::string::npos) << t.out;
  // Not a terminal: plain progress lines only, never carriage returns.
  EXPECT_EQ(t.err.find('\r'), std::string::npos);
  EXPECT_NE(t.err.find("epoch 3/3"), std::string::npos) << t.err;

  const std::vector<nlohmann::json> lines = testing::ReadJsonLines(metrics);
  ASSERT_EQ(lines.size(), 4u);
  for (int e = 0; e < 3; ++e) {
    const nlohmann::json& j = lines[e];
    for (const char* key : {"epoch", "loss", "train_acc", "val_acc", "test_acc", "epoch_seconds",
                            "seeds_per_second", "sampled_edges_per_second", "seeds",
                            "sampled_edges", "sample_seconds", "gather_seconds",
                            "forward_seconds", "backward_seconds", "optimizer_seconds",
                            "eval_seconds"}) {
      EXPECT_TRUE(j.contains(key)) << "line " << e << " lacks " << key << ": " << j.dump();
    }
    EXPECT_EQ(j.value("epoch", 0), e + 1);
    EXPECT_EQ(j.value("seeds", 0), 140) << "the Planetoid training split";
  }
  const nlohmann::json& final_line = lines.back();
  for (const char* key : {"final", "best_epoch", "val_acc", "test_acc", "epochs", "stopped_early"}) {
    EXPECT_TRUE(final_line.contains(key)) << key << ": " << final_line.dump();
  }
  EXPECT_EQ(final_line.value("final", false), true);
  EXPECT_EQ(final_line.value("epochs", 0), 3);

  const Result ev = Foresight("eval " + Quote(data) + " --checkpoint " + Quote(ckpt) + " --threads 2 --json");
  ASSERT_EQ(ev.code, 0) << ev.err;
  const nlohmann::json acc = nlohmann::json::parse(ev.out);
  EXPECT_EQ(acc.value("epoch", 0), final_line.value("best_epoch", -1));
  EXPECT_EQ(acc.value("train_count", 0), 140);
  EXPECT_EQ(acc.value("val_count", 0), 500);
  EXPECT_EQ(acc.value("test_count", 0), 1000);
  EXPECT_DOUBLE_EQ(acc.value("test_acc", -1.0), final_line.value("test_acc", -2.0));
  const Result last = Foresight("eval " + Quote(data) + " --checkpoint " + Quote(ckpt) + " --last --json");
  ASSERT_EQ(last.code, 0) << last.err;
  EXPECT_EQ(nlohmann::json::parse(last.out).value("epoch", 0), 3);

  const std::string out = dir.File("export");
  const Result ex = Foresight("export " + Quote(data) + " --checkpoint " + Quote(ckpt) +
                              " --output " + Quote(out) + " --logits");
  ASSERT_EQ(ex.code, 0) << ex.err;
  for (const char* f : {"embeddings.npy", "predictions.npy", "logits.npy"}) {
    EXPECT_TRUE(testing::PathExists(out + "/" + f)) << f;
  }
  EXPECT_FALSE(testing::PathExists(out + "/probabilities.npy"));
  EXPECT_NE(testing::ReadFile(out + "/predictions.npy").find("'shape': (2708,)"), std::string::npos);
  EXPECT_NE(testing::ReadFile(out + "/logits.npy").find("'shape': (2708, 7)"), std::string::npos);
}

// The same run from flags, a YAML file and a TOML file: identical losses and
// accuracies (the metrics' non-timing fields), and flags override the file.
TEST(CliE2E, ConfigFilesTrainLikeFlags) {
  testing::TempDir dir;
  const std::string data = dir.File("cora");
  PreprocessCora(data);
  if (HasFatalFailure() || IsSkipped()) return;

  testing::WriteFile(dir.File("c.yaml"),
                     "model: gcn\nfull_graph: true\nepochs: 2\nhidden: 16\nlr: 0.02\nseed: 5\n"
                     "dropout: 0.3\nquiet: true\n");
  testing::WriteFile(dir.File("c.toml"),
                     "model = \"gcn\"\nfull-graph = true\nepochs = 9\nhidden = 16\nlr = 0.02\n"
                     "seed = 5\ndropout = 0.3\nquiet = true\n");
  const std::string common = " --threads 2 --metrics ";
  const Result flags = Foresight("train " + Quote(data) +
                                 " --model gcn --full-graph --epochs 2 --hidden 16 --lr 0.02"
                                 " --seed 5 --dropout 0.3 --quiet" + common + Quote(dir.File("f.jsonl")));
  ASSERT_EQ(flags.code, 0) << flags.err;
  EXPECT_EQ(flags.err, "") << "--quiet prints no progress";
  const Result yaml = Foresight("train " + Quote(data) + " --config " + Quote(dir.File("c.yaml")) +
                                common + Quote(dir.File("y.jsonl")));
  ASSERT_EQ(yaml.code, 0) << yaml.err;
  // TOML says 9 epochs; the flag wins.
  const Result toml = Foresight("train " + Quote(data) + " --config " + Quote(dir.File("c.toml")) +
                                " --epochs 2" + common + Quote(dir.File("t.jsonl")));
  ASSERT_EQ(toml.code, 0) << toml.err;

  const auto f = testing::ReadJsonLines(dir.File("f.jsonl"));
  const auto y = testing::ReadJsonLines(dir.File("y.jsonl"));
  const auto t = testing::ReadJsonLines(dir.File("t.jsonl"));
  ASSERT_EQ(f.size(), 3u);
  ASSERT_EQ(y.size(), f.size());
  ASSERT_EQ(t.size(), f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    for (const char* key : {"epoch", "loss", "train_acc", "val_acc", "test_acc", "best_epoch"}) {
      if (!f[i].contains(key)) continue;
      EXPECT_EQ(f[i][key], y[i][key]) << "line " << i << " " << key;
      EXPECT_EQ(f[i][key], t[i][key]) << "line " << i << " " << key;
    }
  }
}

}  // namespace
}  // namespace foresight
