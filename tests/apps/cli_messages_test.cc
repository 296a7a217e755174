// End-to-end: what the built `foresight` binary tells a user - error
// messages that name the flag and the real problem, help that reads as the
// command is typed, readable eval output, one edge cut, export's files,
// --quiet, and a training display whose times are the metrics file's.
// Works on a small generated graph so every case runs in a second or two.
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "foresight/core/device.h"
#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

using testing::Quote;
using Result = testing::CliResult;

Result Foresight(const std::string& args) { return testing::RunForesight(args); }

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

class CliMessages : public ::testing::Test {
 protected:
  // A 300-node planted-class graph (ids kept: no original_ids.npy).
  std::string Graph(const std::string& name = "g") {
    const std::string out = dir_.File(name);
    const Result r = Foresight("generate graph --nodes 300 --edges 3000 --features 8 --classes 3 --seed 1 "
                               "--threads 2 --quiet --output " + Quote(out));
    EXPECT_EQ(r.code, 0) << r.err;
    return out;
  }
  // Trains 2 full-graph epochs into a checkpoint.
  std::string Checkpoint(const std::string& data) {
    const std::string ckpt = dir_.File("ckpt");
    const Result r = Foresight("train " + Quote(data) + " --model gcn --full-graph --epochs 2 --hidden 8 "
                               "--threads 2 --quiet --checkpoint " + Quote(ckpt));
    EXPECT_EQ(r.code, 0) << r.err;
    return ckpt;
  }

  testing::TempDir dir_;
};

TEST_F(CliMessages, FolderGivenAsFileSaysItIsAFolder) {
  const std::string folder = dir_.File("folder");
  ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
  const Result edges = Foresight("preprocess --format edgelist --edges " + Quote(folder) + " --quiet --output " +
                                 Quote(dir_.File("out")));
  EXPECT_NE(edges.code, 0);
  EXPECT_TRUE(Contains(edges.err, folder + " is a directory; expected a file")) << edges.err;
  EXPECT_FALSE(Contains(edges.err, "does not exist")) << edges.err;

  testing::WriteFile(dir_.File("e.txt"), "0 1\n1 2\n");
  const Result split = Foresight("preprocess --format edgelist --edges " + Quote(dir_.File("e.txt")) +
                                 " --split-file " + Quote(folder) + " --quiet --output " + Quote(dir_.File("out")));
  EXPECT_NE(split.code, 0);
  EXPECT_TRUE(Contains(split.err, "--split-file " + folder + " is a directory; expected a file")) << split.err;
  // A path that is really missing still says so.
  const Result missing = Foresight("preprocess --format edgelist --edges " + Quote(dir_.File("nope")) +
                                   " --quiet --output " + Quote(dir_.File("out")));
  EXPECT_TRUE(Contains(missing.err, "does not exist")) << missing.err;
}

TEST_F(CliMessages, ExistingOutputNamesTheOverwriteFlag) {
  const std::string g = Graph();
  const Result again = Foresight("generate graph --nodes 300 --edges 3000 --quiet --output " + Quote(g));
  EXPECT_EQ(again.code, 1);
  EXPECT_TRUE(Contains(again.err, "pass --overwrite to replace it")) << again.err;
}

TEST_F(CliMessages, ValidationErrorsNameTheFlag) {
  const Result batch = Foresight("train ds --batch-size 0");
  EXPECT_EQ(batch.code, 2);
  EXPECT_TRUE(Contains(batch.err, "foresight train: --batch-size: must be >= 1, got 0")) << batch.err;
  EXPECT_FALSE(Contains(batch.err, "batch_size")) << batch.err;
  const Result full = Foresight("train ds --full-graph --feature-store disk");
  EXPECT_EQ(full.code, 2);
  EXPECT_TRUE(Contains(full.err, "--feature-store: disk applies to mini-batch training; --full-graph")) << full.err;
  EXPECT_FALSE(Contains(full.err, "full_graph")) << full.err;
}

TEST_F(CliMessages, ThreadsZeroIsRefused) {
  // Every path in the temporary folder: a build that took --threads 0 would
  // otherwise write there, not into the working directory.
  const std::string ds = Quote(dir_.File("ds")), out = Quote(dir_.File("out"));
  for (const std::string& args :
       {"train " + ds + " --threads 0", "eval " + ds + " --checkpoint " + Quote(dir_.File("c")) + " --threads 0",
        "partition " + ds + " --parts 2 --threads 0",
        "generate graph --nodes 100 --edges 1000 --output " + out + " --threads 0",
        "preprocess --format linqs --input " + Quote(dir_.File("in")) + " --output " + out + " --threads 0"}) {
    const Result r = Foresight(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, "--threads")) << args << ": " << r.err;
    EXPECT_TRUE(Contains(r.err, "at least 1 thread")) << args << ": " << r.err;
  }
  const std::string yaml = dir_.File("t.yaml");
  testing::WriteFile(yaml, "threads: 0\n");
  const Result config = Foresight("train ds --config " + Quote(yaml));
  EXPECT_EQ(config.code, 2);
  EXPECT_TRUE(Contains(config.err, "key 'threads': expected at least 1 thread")) << config.err;
}

TEST_F(CliMessages, UnknownConfigKeySuggestsTheNearest) {
  const std::string yaml = dir_.File("c.yaml");
  testing::WriteFile(yaml, "epoch: 3\n");
  const Result r = Foresight("train ds --config " + Quote(yaml));
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(Contains(r.err, "unknown key 'epoch'; did you mean 'epochs'?")) << r.err;
  testing::WriteFile(yaml, "batch_sise: 3\n");
  EXPECT_TRUE(Contains(Foresight("train ds --config " + Quote(yaml)).err, "did you mean 'batch-size'?"));
}

TEST_F(CliMessages, JsonConfigTrains) {
  const std::string g = Graph();
  const std::string json = dir_.File("c.json");
  testing::WriteFile(json, "{\"model\": \"gcn\", \"full_graph\": true, \"epochs\": 2, \"hidden\": 8, "
                           "\"fanouts\": [5, 5], \"lr\": 0.02, \"quiet\": true}\n");
  const Result r = Foresight("train " + Quote(g) + " --config " + Quote(json) + " --threads 2 --metrics " +
                             Quote(dir_.File("m.jsonl")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(testing::ReadJsonLines(dir_.File("m.jsonl")).size(), 3u) << "2 epochs and the final line";
}

TEST_F(CliMessages, HelpReadsAsTheCommandIsTyped) {
  const Result gen = Foresight("help generate graph");
  EXPECT_EQ(gen.code, 0);
  EXPECT_TRUE(Contains(gen.out, "Usage: foresight generate graph [OPTIONS]")) << gen.out;
  EXPECT_FALSE(Contains(gen.out, "{false}")) << gen.out;
  EXPECT_FALSE(Contains(gen.out, "--keep-multi-edges,--no-multi-edges")) << gen.out;
  EXPECT_TRUE(Contains(gen.out, "--no-multi-edges")) << gen.out;
  // --help on the command prints the same.
  EXPECT_EQ(Foresight("generate graph --help").out, gen.out);

  const Result train = Foresight("help train");
  EXPECT_TRUE(Contains(train.out, "Usage: foresight train [OPTIONS] DATASET\n")) << train.out;
  EXPECT_TRUE(std::regex_search(train.out, std::regex("DATASET DIR REQUIRED"))) << train.out;
  EXPECT_TRUE(Contains(Foresight("help eval").out, "Usage: foresight eval [OPTIONS] DATASET"));

  // --no-multi-edges still drops repeated edges.
  const Result drop = Foresight("generate graph --nodes 100 --edges 3000 --features 4 --classes 2 --quiet "
                                "--no-multi-edges --output " + Quote(dir_.File("dedup")));
  const Result keep = Foresight("generate graph --nodes 100 --edges 3000 --features 4 --classes 2 --quiet "
                                "--output " + Quote(dir_.File("multi")));
  ASSERT_EQ(drop.code, 0) << drop.err;
  ASSERT_EQ(keep.code, 0) << keep.err;
  EXPECT_NE(drop.out, keep.out) << "fewer edges without repeats: " << drop.out;
}

// Help and --version say where things run: only `train --device cuda`
// trains on a GPU, and only in a build with CUDA compiled in.
TEST_F(CliMessages, HelpSaysWhatRunsWhere) {
  for (const char* args : {"--help", "--version"}) {
    const Result r = Foresight(args);
    EXPECT_EQ(r.code, 0) << args;
    EXPECT_TRUE(Contains(r.out, "Runs on the CPU, except `train --device cuda[:N]`")) << args << ":\n" << r.out;
    EXPECT_TRUE(Contains(r.out, CudaCompiledIn() ? "This build has CUDA support compiled in."
                                                 : "This build has no CUDA support compiled in"))
        << args << ":\n" << r.out;
  }
}

// --version names the GEMMs' library and the instruction set its kernels
// were generated for on this CPU.
TEST_F(CliMessages, VersionNamesTheBlasAndItsKernels) {
  const Result r = Foresight("--version");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "BLAS: oneDNN ")) << r.out;
  EXPECT_TRUE(Contains(r.out, " sgemm, ")) << r.out;
  EXPECT_TRUE(Contains(r.out, " kernels")) << r.out;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    EXPECT_TRUE(Contains(r.out, "avx512_core")) << r.out;
  } else if (__builtin_cpu_supports("avx2")) {
    EXPECT_TRUE(Contains(r.out, "avx2")) << r.out;
  }
}

TEST_F(CliMessages, EvalPrintsATableOrJson) {
  const std::string g = Graph();
  const std::string ckpt = Checkpoint(g);
  const Result table = Foresight("eval " + Quote(g) + " --checkpoint " + Quote(ckpt) + " --threads 2");
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_TRUE(Contains(table.out, "checkpoint epoch ")) << table.out;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("split +accuracy +nodes\n"))) << table.out;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\ntrain +[01]\\.[0-9]{4} +32\n"))) << table.out;
  EXPECT_TRUE(std::regex_search(table.out, std::regex("\ntest +[01]\\.[0-9]{4} +238\n"))) << table.out;
  const Result json = Foresight("eval " + Quote(g) + " --checkpoint " + Quote(ckpt) + " --threads 2 --json");
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out).value("test_count", 0), 238);
}

TEST_F(CliMessages, PartitionReportsOneEdgeCut) {
  const std::string g = Graph();
  const Result r = Foresight("partition " + Quote(g) + " --parts 4 --method metis --threads 2");
  ASSERT_EQ(r.code, 0) << r.err;
  const int64_t cut = nlohmann::json::parse(r.out).value("edge_cut", int64_t{-1});
  // Any cut the log mentions is the report's.
  const std::regex logged("edge.cut[^0-9]*([0-9]+)");
  for (std::sregex_iterator it(r.err.begin(), r.err.end(), logged), end; it != end; ++it) {
    EXPECT_EQ(std::stoll((*it)[1].str()), cut) << r.err;
  }
}

TEST_F(CliMessages, ExportAlwaysWritesOriginalIds) {
  const std::string g = Graph();
  ASSERT_FALSE(testing::PathExists(g + "/original_ids.npy")) << "the generated graph keeps its ids";
  const std::string out = dir_.File("export");
  const Result r = Foresight("export " + Quote(g) + " --checkpoint " + Quote(Checkpoint(g)) + " --output " +
                             Quote(out) + " --threads 2");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(testing::PathExists(out + "/original_ids.npy"));
  const std::string npy = testing::ReadFile(out + "/original_ids.npy");
  EXPECT_TRUE(Contains(npy, "'descr': '<i8'")) << npy.substr(0, 128);
  EXPECT_TRUE(Contains(npy, "'shape': (300,)")) << npy.substr(0, 128);
  // Row i is node i: the last 8 bytes are 299.
  int64_t last = -1;
  std::memcpy(&last, npy.data() + npy.size() - 8, 8);
  EXPECT_EQ(last, 299);
}

// A .npy header for `descr` and a 1-D shape, padded to 128 bytes.
std::string NpyHeader(const std::string& descr, int64_t n) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + std::to_string(n) + ",), }";
  dict.resize(128 - 10 - 1, ' ');
  dict += '\n';
  std::string h = "\x93NUMPY";
  h += '\x01';
  h += '\x00';
  h += static_cast<char>(dict.size() & 0xff);
  h += static_cast<char>(dict.size() >> 8);
  return h + dict;
}

TEST_F(CliMessages, NoInternalTypeNamesInMessages) {
  testing::WriteFile(dir_.File("e.txt"), "0 1\n1 2\n2 0\n");
  std::string labels = NpyHeader("<f4", 3);
  labels.append(12, '\0');
  testing::WriteFile(dir_.File("labels.npy"), labels);
  const Result r = Foresight("preprocess --format edgelist --edges " + Quote(dir_.File("e.txt")) + " --labels " +
                             Quote(dir_.File("labels.npy")) + " --quiet --output " + Quote(dir_.File("out")));
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(Contains(r.err, "labels must be a 1-D i32 or i64 array, got an array of f32 with shape [3]"))
      << r.err;
  EXPECT_FALSE(Contains(r.err, "Tensor(")) << r.err;
}

TEST_F(CliMessages, QuietPrintsNothingButErrors) {
  const std::string g = Graph();
  const Result r = Foresight("train " + Quote(g) + " --epochs 1 --batch-size 16 --fanouts 3,3 --threads 2 --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  const Result bad = Foresight("train " + Quote(dir_.File("none")) + " --quiet");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err, "");
}

// The display's epoch lines quote the metrics file: the training time, the
// batch and seed rates, and the evaluation time; a run without a cache
// shows no hit rate; a resumed run names the epoch it goes on from.
TEST_F(CliMessages, EpochLinesAgreeWithTheMetricsFile) {
  const std::string g = Graph();
  const std::string metrics = dir_.File("m.jsonl");
  const std::string ckpt = dir_.File("ck");
  const std::string common = "train " + Quote(g) + " --batch-size 8 --fanouts 3,3 --threads 2 --feature-store disk "
                             "--cache-size 0 --metrics " + Quote(metrics) + " --checkpoint " + Quote(ckpt);
  const Result first = Foresight(common + " --epochs 2");
  ASSERT_EQ(first.code, 0) << first.err;
  const Result resumed = Foresight(common + " --epochs 3 --resume");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_TRUE(Contains(resumed.err, "resuming from epoch 3 of 3: 2 epochs done in " + ckpt)) << resumed.err;
  EXPECT_FALSE(Contains(first.err, "resuming")) << first.err;

  const std::string err = first.err + resumed.err;
  EXPECT_FALSE(Contains(err, "% hits")) << "no cache, no hit rate:\n" << err;
  std::map<int, nlohmann::json> by_epoch;  // the resumed run appends to the file
  for (const nlohmann::json& j : testing::ReadJsonLines(metrics)) {
    if (!j.value("final", false)) by_epoch[j.value("epoch", 0)] = j;
  }
  const std::regex epoch_line("epoch ([0-9]+)/[0-9]+: ([0-9]+) batch in ([0-9.]+)s \\(.*\\| eval ([0-9.]+)s");
  int seen = 0;
  for (std::sregex_iterator it(err.begin(), err.end(), epoch_line), end; it != end; ++it) {
    const int epoch = std::stoi((*it)[1].str());
    ASSERT_EQ(by_epoch.count(epoch), 1u) << (*it)[0].str();
    const nlohmann::json& m = by_epoch[epoch];
    char expected[32];
    std::snprintf(expected, sizeof(expected), "%.2f", m.value("epoch_seconds", -1.0));
    EXPECT_EQ((*it)[3].str(), expected) << "epoch " << epoch << ": " << (*it)[0].str();
    std::snprintf(expected, sizeof(expected), "%.2f", m.value("eval_seconds", -1.0));
    EXPECT_EQ((*it)[4].str(), expected) << "epoch " << epoch << ": " << (*it)[0].str();
    ++seen;
  }
  EXPECT_EQ(seen, 3) << err;
}

}  // namespace
}  // namespace foresight

namespace foresight {
namespace {

// --device cuda on this machine: refused with the reason, before any data
// is read, and never trained on the CPU instead (a GPU machine is refused
// too until training runs there).
TEST(CliDevice, CudaIsRefusedNotReplacedByTheCpu) {
  const testing::CliResult r = testing::RunForesight("train /nonexistent/data --device cuda --epochs 1 --quiet");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--device: cuda:0 requested"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("does not fall back to the CPU"), std::string::npos) << r.err;
  const testing::CliResult bad = testing::RunForesight("train /nonexistent/data --device tpu --quiet");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("--device: 'tpu' is not cpu, cuda or cuda:N"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace foresight
