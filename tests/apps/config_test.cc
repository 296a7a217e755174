// Config files and flags map onto the same TrainOptions (train_settings.h).
#include <filesystem>
#include <string>
#include <vector>

#include "config.h"
#include "testing/testing.h"
#include "train_settings.h"

namespace foresight::apps {
namespace {

// Every key's value, so two TrainOptions compare field by field.
std::string Dump(const TrainOptions& o) {
  std::string out;
  for (const TrainKey& k : TrainKeys()) out += std::string(k.name) + "=" + FormatTrainValue(k, o) + "\n";
  return out;
}

// Every key set to a value that differs from its default.
const char* kYaml = R"(# every option, none at its default
dataset: /data/cora
model: gat
epochs: 7
batch_size: 256
fanouts: [5, 3, -1]
full-graph: true
hidden: 32
layers: 3
heads: 4
lr: 0.005
weight_decay: 0.001
dropout: 0.25
input_dropout: 0.125
optimizer: adamw
patience: 9
seed: 42
threads: 3
device: cuda:1
metrics: /tmp/m.jsonl
checkpoint: /tmp/ckpt
resume: yes
eval-batch-size: 128
quiet: true
feature_store: disk
cache-policy: lru
cache_size: 64M
lookahead: 4
io_depth: 16
page_companions: "off"
planner_index: flat
hot_fraction: 0
hot_rank: halo
read_gap: 8K
companion-span: 64K
memory-budget: 1G
allreduce-bucket: 64K
order: partition
sampling: resident
topology: paged
resident_partitions: 2
rank_partitions: 3
node_features: degree
bottom_mlp: [32, 16]
top-mlp: 64,1
embedding_dim: 16
interaction: cat
sparse-optimizer: adam
sparse_lr: 0.5
eval_every: 100
table-store: disk
sharding: table
table_dir: /tmp/tables
task: link
negatives: 50
negative_chunk: 10
negative-sampling: degree
loss: logistic
regularizer: l3
regularization-weight: 0.01
reciprocal: true
sampled-softmax: true
margin: 2.5
init-scale: 0.1
eval-negatives: 500
eval-epochs: 3
export: /tmp/emb
blocks: 3
max-length: 40
adam_beta2: 0.98
decoder: distmult
entity-partitions: 4
)";

const char* kToml = R"(# the same options in TOML
dataset = "/data/cora"
model = "gat"
epochs = 7
batch_size = 256
fanouts = [5, 3, -1]
full-graph = true
hidden = 32
layers = 3
heads = 4
lr = 0.005
weight_decay = 1e-3
dropout = 0.25
input_dropout = 0.125
optimizer = "adamw"
patience = 9
seed = 42
threads = 3
device = "cuda:1"
metrics = "/tmp/m.jsonl"
checkpoint = "/tmp/ckpt"
resume = true
eval-batch-size = 128
quiet = true
feature-store = "disk"
cache_policy = "lru"
cache-size = "64M"
lookahead = 4
io-depth = 16
page-companions = "off"
planner-index = "flat"
hot-fraction = 0.0
hot_rank = "halo"
read-gap = 8192
companion_span = "64K"
memory_budget = 1073741824
allreduce_bucket = 65536
order = "partition"
sampling = "resident"
topology = "paged"
resident-partitions = 2
rank-partitions = 3
node-features = "degree"
bottom_mlp = [32, 16]
top-mlp = [64, 1]
embedding_dim = 16
interaction = "cat"
sparse-optimizer = "adam"
sparse_lr = 0.5
eval_every = 100
table-store = "disk"
sharding = "table"
table_dir = "/tmp/tables"
task = "link"
negatives = 50
negative-chunk = 10
negative_sampling = "degree"
loss = "logistic"
regularizer = "l3"
regularization_weight = 0.01
reciprocal = true
sampled_softmax = true
margin = 2.5
init_scale = 0.1
eval_negatives = 500
eval_epochs = 3
export = "/tmp/emb"
blocks = 3
max_length = 40
adam-beta2 = 0.98
decoder = "distmult"
entity_partitions = 4
)";

std::vector<FlagValue> kFlags = {
    {"model", ConfigValue::Text("gat")},
    {"epochs", ConfigValue::Text("7")},
    {"batch-size", ConfigValue::Text("256")},
    {"fanouts", ConfigValue::Text("5,3,-1")},
    {"full-graph", ConfigValue::Bool(true)},
    {"hidden", ConfigValue::Text("32")},
    {"layers", ConfigValue::Text("3")},
    {"heads", ConfigValue::Text("4")},
    {"lr", ConfigValue::Text("0.005")},
    {"weight-decay", ConfigValue::Text("1e-3")},
    {"dropout", ConfigValue::Text("0.25")},
    {"input-dropout", ConfigValue::Text("0.125")},
    {"optimizer", ConfigValue::Text("adamw")},
    {"patience", ConfigValue::Text("9")},
    {"seed", ConfigValue::Text("42")},
    {"threads", ConfigValue::Text("3")},
    {"device", ConfigValue::Text("cuda:1")},
    {"metrics", ConfigValue::Text("/tmp/m.jsonl")},
    {"checkpoint", ConfigValue::Text("/tmp/ckpt")},
    {"resume", ConfigValue::Bool(true)},
    {"eval-batch-size", ConfigValue::Text("128")},
    {"quiet", ConfigValue::Bool(true)},
    {"feature-store", ConfigValue::Text("disk")},
    {"cache-policy", ConfigValue::Text("lru")},
    {"cache-size", ConfigValue::Text("65536K")},
    {"lookahead", ConfigValue::Text("4")},
    {"io-depth", ConfigValue::Text("16")},
    {"page-companions", ConfigValue::Text("off")},
    {"planner-index", ConfigValue::Text("flat")},
    {"hot-fraction", ConfigValue::Text("0")},
    {"hot-rank", ConfigValue::Text("halo")},
    {"read-gap", ConfigValue::Text("8K")},
    {"companion-span", ConfigValue::Text("65536")},
    {"memory-budget", ConfigValue::Text("1G")},
    {"allreduce-bucket", ConfigValue::Text("64K")},
    {"order", ConfigValue::Text("partition")},
    {"sampling", ConfigValue::Text("resident")},
    {"topology", ConfigValue::Text("paged")},
    {"resident-partitions", ConfigValue::Text("2")},
    {"rank-partitions", ConfigValue::Text("3")},
    {"node-features", ConfigValue::Text("degree")},
    {"bottom-mlp", ConfigValue::Text("32,16")},
    {"top-mlp", ConfigValue::Text("64,1")},
    {"embedding-dim", ConfigValue::Text("16")},
    {"interaction", ConfigValue::Text("cat")},
    {"sparse-optimizer", ConfigValue::Text("adam")},
    {"sparse-lr", ConfigValue::Text("0.5")},
    {"eval-every", ConfigValue::Text("100")},
    {"table-store", ConfigValue::Text("disk")},
    {"sharding", ConfigValue::Text("table")},
    {"table-dir", ConfigValue::Text("/tmp/tables")},
    {"task", ConfigValue::Text("link")},
    {"negatives", ConfigValue::Text("50")},
    {"negative-chunk", ConfigValue::Text("10")},
    {"negative-sampling", ConfigValue::Text("degree")},
    {"loss", ConfigValue::Text("logistic")},
    {"regularizer", ConfigValue::Text("l3")},
    {"regularization-weight", ConfigValue::Text("0.01")},
    {"reciprocal", ConfigValue::Bool(true)},
    {"sampled-softmax", ConfigValue::Bool(true)},
    {"margin", ConfigValue::Text("2.5")},
    {"init-scale", ConfigValue::Text("0.1")},
    {"eval-negatives", ConfigValue::Text("500")},
    {"eval-epochs", ConfigValue::Text("3")},
    {"export", ConfigValue::Text("/tmp/emb")},
    {"blocks", ConfigValue::Text("3")},
    {"max-length", ConfigValue::Text("40")},
    {"adam-beta2", ConfigValue::Text("0.98")},
    {"decoder", ConfigValue::Text("distmult")},
    {"entity-partitions", ConfigValue::Text("4")},
};

TEST(TrainConfig, YamlTomlAndFlagsGiveTheSameOptions) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("c.yaml"), kYaml);
  testing::WriteFile(dir.File("c.toml"), kToml);
  ASSERT_OK_AND_ASSIGN(TrainOptions from_yaml, ResolveTrainOptions(dir.File("c.yaml"), {}, ""));
  ASSERT_OK_AND_ASSIGN(TrainOptions from_toml, ResolveTrainOptions(dir.File("c.toml"), {}, ""));
  ASSERT_OK_AND_ASSIGN(TrainOptions from_flags, ResolveTrainOptions("", kFlags, "/data/cora"));
  EXPECT_EQ(Dump(from_yaml), Dump(from_flags));
  EXPECT_EQ(Dump(from_toml), Dump(from_flags));

  // And the fields themselves, against literals (not only each other).
  const TrainOptions& o = from_yaml;
  EXPECT_EQ(o.dataset, "/data/cora");
  EXPECT_EQ(o.model, "gat");
  EXPECT_EQ(o.epochs, 7);
  EXPECT_EQ(o.batch_size, 256);
  EXPECT_EQ(o.fanouts, (std::vector<int64_t>{5, 3, -1}));
  EXPECT_TRUE(o.full_graph);
  EXPECT_EQ(o.hidden, 32);
  EXPECT_EQ(o.layers, 3);
  EXPECT_EQ(o.heads, 4);
  EXPECT_FLOAT_EQ(o.lr, 0.005f);
  EXPECT_FLOAT_EQ(o.weight_decay, 0.001f);
  EXPECT_FLOAT_EQ(o.dropout, 0.25f);
  EXPECT_FLOAT_EQ(o.input_dropout, 0.125f);
  EXPECT_EQ(o.optimizer, "adamw");
  EXPECT_EQ(o.patience, 9);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_EQ(o.threads, 3);
  EXPECT_EQ(o.device, "cuda:1");
  EXPECT_EQ(o.metrics_file, "/tmp/m.jsonl");
  EXPECT_EQ(o.checkpoint_dir, "/tmp/ckpt");
  EXPECT_TRUE(o.resume);
  EXPECT_EQ(o.eval_batch_size, 128);
  EXPECT_FALSE(o.progress);  // quiet
  EXPECT_EQ(o.feature_store, "disk");
  EXPECT_EQ(o.cache_policy, "lru");
  EXPECT_EQ(o.cache_size, int64_t{64} << 20);
  EXPECT_EQ(o.lookahead, 4);
  EXPECT_EQ(o.io_depth, 16);
  EXPECT_EQ(o.page_companions, "off");
  EXPECT_EQ(o.planner_index, "flat");
  EXPECT_EQ(o.hot_fraction, 0.0);
  EXPECT_EQ(o.hot_rank, "halo");
  EXPECT_EQ(o.read_gap, int64_t{8} << 10);
  EXPECT_EQ(o.companion_span, int64_t{64} << 10);
  EXPECT_EQ(o.memory_budget, int64_t{1} << 30);
  EXPECT_EQ(o.order, "partition");
  EXPECT_EQ(o.sampling, "resident");
  EXPECT_EQ(o.topology, "paged");
  EXPECT_EQ(o.resident_partitions, 2);
  EXPECT_EQ(o.rank_partitions, 3);
  EXPECT_EQ(o.task, "link");
  EXPECT_EQ(o.negatives, 50);
  EXPECT_EQ(o.negative_chunk, 10);
  EXPECT_EQ(o.negative_sampling, "degree");
  EXPECT_EQ(o.loss, "logistic");
  EXPECT_EQ(o.regularizer, "l3");
  EXPECT_FLOAT_EQ(o.regularization_weight, 0.01f);
  EXPECT_TRUE(o.reciprocal);
  EXPECT_TRUE(o.sampled_softmax);
  EXPECT_FLOAT_EQ(o.margin, 2.5f);
  EXPECT_FLOAT_EQ(o.init_scale, 0.1f);
  EXPECT_EQ(o.eval_negatives, 500);
  EXPECT_EQ(o.eval_epochs, 3);
  EXPECT_EQ(o.export_dir, "/tmp/emb");
  EXPECT_EQ(o.blocks, 3);
  EXPECT_EQ(o.max_length, 40);
  EXPECT_FLOAT_EQ(o.adam_beta2, 0.98f);
  EXPECT_EQ(o.link_decoder, "distmult");
  EXPECT_EQ(o.entity_partitions, 4);
  EXPECT_EQ(o.node_features, "degree");
  EXPECT_EQ(o.bottom_mlp, (std::vector<int64_t>{32, 16}));
  EXPECT_EQ(o.top_mlp, (std::vector<int64_t>{64, 1}));
  EXPECT_EQ(o.embedding_dim, 16);
  EXPECT_EQ(o.interaction, "cat");
  EXPECT_EQ(o.sparse_optimizer, "adam");
  EXPECT_EQ(o.sparse_lr, 0.5f);
  EXPECT_EQ(o.eval_every, 100);
  EXPECT_EQ(o.table_store, "disk");
  EXPECT_EQ(o.sharding, "table");
  EXPECT_EQ(o.table_dir, "/tmp/tables");
}

TEST(TrainConfig, EveryKeyIsCoveredByTheTestConfig) {
  // A new TrainKey must be added to kYaml / kToml / kFlags above.
  const TrainOptions defaults;
  testing::TempDir dir;
  testing::WriteFile(dir.File("c.yaml"), kYaml);
  ASSERT_OK_AND_ASSIGN(TrainOptions o, ResolveTrainOptions(dir.File("c.yaml"), {}, ""));
  for (const TrainKey& k : TrainKeys()) {
    EXPECT_NE(FormatTrainValue(k, o), FormatTrainValue(k, defaults)) << k.name;
  }
  EXPECT_EQ(kFlags.size() + 1, TrainKeys().size());  // + the positional dataset
}

TEST(TrainConfig, ExplicitFlagsOverrideTheFile) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("c.yml"), "epochs: 7\nmodel: gat\nfull_graph: true\n");
  ASSERT_OK_AND_ASSIGN(
      TrainOptions o,
      ResolveTrainOptions(dir.File("c.yml"),
                          {{"epochs", ConfigValue::Text("3")}, {"full-graph", ConfigValue::Bool(false)}},
                          "ds"));
  EXPECT_EQ(o.epochs, 3);
  EXPECT_EQ(o.model, "gat");  // from the file
  EXPECT_FALSE(o.full_graph);
  EXPECT_EQ(o.dataset, "ds");
  EXPECT_EQ(o.hidden, TrainOptions().hidden);  // untouched default
}

TEST(TrainConfig, FanoutsAsScalarString) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("c.yaml"), "fanouts: 25,10\n");
  ASSERT_OK_AND_ASSIGN(TrainOptions o, ResolveTrainOptions(dir.File("c.yaml"), {}, ""));
  EXPECT_EQ(o.fanouts, (std::vector<int64_t>{25, 10}));
  testing::WriteFile(dir.File("d.toml"), "fanouts = 5\n");
  ASSERT_OK_AND_ASSIGN(TrainOptions p, ResolveTrainOptions(dir.File("d.toml"), {}, ""));
  EXPECT_EQ(p.fanouts, (std::vector<int64_t>{5}));
}

TEST(TrainConfig, UnknownKeyNamesFileAndKey) {
  testing::TempDir dir;
  const std::string yaml = dir.File("bad.yaml");
  testing::WriteFile(yaml, "epochs: 3\nlearning_rate: 0.1\n");
  EXPECT_ERROR_CONTAINS(ResolveTrainOptions(yaml, {}, ""), yaml, "unknown key 'learning-rate'",
                        "known keys: dataset, model");
  const std::string toml = dir.File("bad.toml");
  testing::WriteFile(toml, "epochs = 3\nepoch = 4\n");
  EXPECT_ERROR_CONTAINS(ResolveTrainOptions(toml, {}, ""), toml, "unknown key 'epoch'");
}

TEST(TrainConfig, WrongTypesNameKeyAndExpectedType) {
  testing::TempDir dir;
  struct Case {
    const char* file;
    const char* text;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"a.yaml", "epochs: ten\n", {"key 'epochs'", "expected an integer", "'ten'"}},
      {"b.yaml", "epochs: \"10\"\n", {"key 'epochs'", "expected an integer", "the string \"10\""}},
      {"c.yaml", "lr: fast\n", {"key 'lr'", "expected a number"}},
      {"d.yaml", "full_graph: maybe\n", {"key 'full-graph'", "expected true or false"}},
      {"e.yaml", "fanouts: [15, x]\n", {"key 'fanouts'", "list of integers", "'x'"}},
      {"f.yaml", "seed: -1\n", {"key 'seed'", "non-negative integer"}},
      {"g.yaml", "model: gpt\n", {"key 'model'", "expected one of sage|gcn|gat", "'gpt'"}},
      {"h.yaml", "hidden:\n", {"key 'hidden'", "expected an integer", "an empty value"}},
      {"i.yaml", "hidden:\n  a: 1\n", {"key 'hidden'", "a table"}},
      {"j.yaml", "epochs: 1.5\n", {"key 'epochs'", "expected an integer"}},
      {"a.toml", "epochs = \"10\"\n", {"key 'epochs'", "expected an integer"}},
      {"b.toml", "lr = true\n", {"key 'lr'", "expected a number", "true"}},
      {"c.toml", "model = 3\n", {"key 'model'", "expected a string", "3"}},
      {"d.toml", "full_graph = 1\n", {"key 'full-graph'", "expected true or false"}},
      {"e.toml", "epochs = 99999999999\n", {"key 'epochs'", "out of range"}},
      {"f.toml", "[train]\nepochs = 3\n", {"key 'train'"}},
      {"g.toml", "fanouts = [1.5]\n", {"key 'fanouts'", "list of integers"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string path = dir.File(c.file);
    testing::WriteFile(path, c.text);
    const Status s = ResolveTrainOptions(path, {}, "").status();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    for (const std::string& part : c.parts) {
      EXPECT_NE(s.message().find(part), std::string::npos) << s.message() << " lacks " << part;
    }
  }
}

TEST(TrainConfig, FlagErrorsNameTheFlag) {
  EXPECT_ERROR_CONTAINS(ResolveTrainOptions("", {{"epochs", ConfigValue::Text("ten")}}, ""),
                        "--epochs: expected an integer, got 'ten'");
  EXPECT_ERROR_CONTAINS(ResolveTrainOptions("", {{"fanouts", ConfigValue::Text("15,,10")}}, ""),
                        "--fanouts: expected a list of integers");
  EXPECT_ERROR_CONTAINS(ResolveTrainOptions("", {{"optimizer", ConfigValue::Text("lion")}}, ""),
                        "--optimizer: expected one of adam|adamw|sgd, got 'lion'");
}

TEST(ConfigFile, SyntaxErrorsAndFiles) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("s.yaml"), "epochs: 3\nmodel: [gcn\n");
  EXPECT_ERROR_CONTAINS(ReadConfigFile(dir.File("s.yaml")), dir.File("s.yaml") + ":", "YAML syntax error");
  testing::WriteFile(dir.File("s.toml"), "epochs = 3\nmodel = \n");
  EXPECT_ERROR_CONTAINS(ReadConfigFile(dir.File("s.toml")), dir.File("s.toml"), "TOML syntax error");
  testing::WriteFile(dir.File("list.yaml"), "- epochs\n- 3\n");
  EXPECT_ERROR_CONTAINS(ReadConfigFile(dir.File("list.yaml")), "expected a mapping");
  testing::WriteFile(dir.File("c.ini"), "{}");
  EXPECT_ERROR_CONTAINS(ReadConfigFile(dir.File("c.ini")), "c.ini", ".yaml, .yml, .json or .toml");
  EXPECT_ERROR_CONTAINS(ReadConfigFile(dir.File("absent.yaml")), "absent.yaml");
  testing::WriteFile(dir.File("dup.yaml"), "batch_size: 3\nbatch-size: 4\n");
  EXPECT_ERROR_CONTAINS(ReadConfigFile(dir.File("dup.yaml")), "key 'batch-size' is given twice");
  testing::WriteFile(dir.File("empty.yaml"), "# nothing\n");
  ASSERT_OK_AND_ASSIGN(ConfigFile empty, ReadConfigFile(dir.File("empty.yaml")));
  EXPECT_TRUE(empty.entries.empty());
}

TEST(ConfigFile, TomlKeepsFileOrder) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("o.toml"), "zeta = 1\nalpha = 2\nmid = 3\n");
  ASSERT_OK_AND_ASSIGN(ConfigFile f, ReadConfigFile(dir.File("o.toml")));
  ASSERT_EQ(f.entries.size(), 3u);
  EXPECT_EQ(f.entries[0].key, "zeta");
  EXPECT_EQ(f.entries[1].key, "alpha");
  EXPECT_EQ(f.entries[2].key, "mid");
}

// The fuzz corpus keeps the config files with invalid UTF-8
// (tests/fuzz/corpus/config/invalid_utf8_*: a format byte, 1 = TOML, then
// the file), among them the 3 bytes '\xE5' on which toml11 read past its
// buffer. Each must be refused before any parser runs, naming the file, the
// line and column, and the byte offset.
TEST(ConfigFile, InvalidUtf8IsRefusedWithItsPosition) {
  testing::TempDir dir;
  int seen = 0;
  const std::string corpus = std::string(FORESIGHT_SOURCE_DIR) + "/tests/fuzz/corpus/config";
  for (const auto& e : std::filesystem::directory_iterator(corpus)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("invalid_utf8_", 0) != 0) continue;
    const std::string input = testing::ReadFile(e.path().string());
    ASSERT_FALSE(input.empty()) << name;
    const std::string path = dir.File(name + ((input[0] & 1) ? ".toml" : ".yaml"));
    testing::WriteFile(path, input.substr(1));
    EXPECT_ERROR_CONTAINS(ReadConfigFile(path), path + ":", ": invalid UTF-8 (byte 0x", "at byte offset");
    ++seen;
  }
  EXPECT_GE(seen, 10) << "the invalid UTF-8 corpus is missing from " << corpus;

  const std::string repro = dir.File("repro.toml");
  testing::WriteFile(repro, "'\xE5'");
  EXPECT_ERROR_CONTAINS(ReadConfigFile(repro), repro + ":1:2: invalid UTF-8 (byte 0xE5 at byte offset 1)");
  const std::string yaml = dir.File("second_line.yaml");
  testing::WriteFile(yaml, "epochs: 3\nmodel: g\xC3(\n");
  EXPECT_ERROR_CONTAINS(ReadConfigFile(yaml), yaml + ":2:9: invalid UTF-8 (byte 0xC3 at byte offset 18)");
  // Well-formed multi-byte text still reads.
  const std::string ok = dir.File("ok.toml");
  testing::WriteFile(ok, "name = \"caf\xC3\xA9 \xE2\x82\xAC\"\n");
  ASSERT_OK_AND_ASSIGN(ConfigFile f, ReadConfigFile(ok));
  ASSERT_EQ(f.entries.size(), 1u);
  EXPECT_EQ(f.entries[0].value.text, "caf\xC3\xA9 \xE2\x82\xAC");
}

TEST(TrainConfig, ShippedWn18rrConfigsResolveAndValidate) {
  // The link-prediction configs RESULTS.md's WN18RR figures come from: they
  // must stay valid as flags change (link's rows train with the shared
  // sparse optimizer keys).
  for (const char* model : {"distmult", "complex"}) {
    const std::string path = std::string(FORESIGHT_SOURCE_DIR) + "/examples/configs/wn18rr_" + model + ".yaml";
    ASSERT_OK_AND_ASSIGN(TrainOptions o, ResolveTrainOptions(path, {}, "/data/wn18rr"));
    EXPECT_OK(o.Validate());
    EXPECT_EQ(o.task, "link");
    EXPECT_EQ(o.model, model);
    EXPECT_EQ(o.sparse_optimizer, "adam");
    EXPECT_TRUE(o.sampled_softmax);
    EXPECT_TRUE(o.reciprocal);
  }
}

TEST(TrainConfig, ShippedGnnLinkConfigResolvesAndValidates) {
  // A GNN encoder's dense optimizer and lr are accepted for task link (the
  // shallow models refuse them).
  const std::string path = std::string(FORESIGHT_SOURCE_DIR) + "/examples/configs/email_eu_core_sage_link.yaml";
  ASSERT_OK_AND_ASSIGN(TrainOptions o, ResolveTrainOptions(path, {}, "/data/email"));
  EXPECT_OK(o.Validate());
  EXPECT_EQ(o.task, "link");
  EXPECT_EQ(o.model, "sage");
  EXPECT_EQ(o.optimizer, "adam");
  EXPECT_FLOAT_EQ(o.lr, 0.01f);
}

}  // namespace
}  // namespace foresight::apps
