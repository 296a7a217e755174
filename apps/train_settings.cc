#include "train_settings.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <type_traits>

#include "cli_values.h"

namespace foresight::apps {

namespace {

const char* kTypeString = "a string";
const char* kTypeInt = "an integer";
const char* kTypeUint = "a non-negative integer";
const char* kTypeFloat = "a number";
const char* kTypeBool = "true or false";
const char* kTypeIntList = "a list of integers (e.g. 15,10 or [15, 10])";
const char* kTypeBytes = "a byte size (e.g. 0, 512M, 4G; K/M/G = KiB/MiB/GiB)";

Status TypeError(const std::string& where, const std::string& expected, const ConfigValue& v) {
  return InvalidArgument(where + ": expected " + expected + ", got " + v.Describe());
}

// Whole-string integer parse; false on junk or overflow.
bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

bool ParseFloat(const std::string& s, double* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

// YAML 1.1 and command-line spellings of a boolean.
bool ParseBool(const std::string& s, bool* out) {
  for (const char* t : {"true", "True", "TRUE", "yes", "Yes", "on", "On", "1"}) {
    if (s == t) {
      *out = true;
      return true;
    }
  }
  for (const char* f : {"false", "False", "FALSE", "no", "No", "off", "Off", "0"}) {
    if (s == f) {
      *out = false;
      return true;
    }
  }
  return false;
}

StatusOr<int64_t> ToInt(const ConfigValue& v, const std::string& where, const char* expected) {
  int64_t x = 0;
  if (v.kind == ConfigValue::Kind::kInt) return v.integer;
  if (v.kind == ConfigValue::Kind::kText && ParseInt(v.text, &x)) return x;
  return TypeError(where, expected, v);
}

StatusOr<double> ToFloat(const ConfigValue& v, const std::string& where) {
  double x = 0;
  if (v.kind == ConfigValue::Kind::kFloat) return v.real;
  if (v.kind == ConfigValue::Kind::kInt) return static_cast<double>(v.integer);
  if (v.kind == ConfigValue::Kind::kText && ParseFloat(v.text, &x)) return x;
  return TypeError(where, kTypeFloat, v);
}

StatusOr<std::vector<int64_t>> ToIntList(const ConfigValue& v, const std::string& where) {
  std::vector<int64_t> out;
  if (v.kind == ConfigValue::Kind::kList) {
    for (const ConfigValue& item : v.items) {
      int64_t x = 0;
      if (item.kind == ConfigValue::Kind::kInt) {
        x = item.integer;
      } else if (item.kind != ConfigValue::Kind::kText || !ParseInt(item.text, &x)) {
        return InvalidArgument(where + ": expected " + kTypeIntList + ", got the item " +
                               item.Describe());
      }
      out.push_back(x);
    }
    return out;
  }
  if (v.kind == ConfigValue::Kind::kInt) return std::vector<int64_t>{v.integer};
  if (v.kind != ConfigValue::Kind::kText) return TypeError(where, kTypeIntList, v);
  // "15,10" (the flag's form; also a plain YAML scalar).
  size_t start = 0;
  while (true) {
    const size_t comma = v.text.find(',', start);
    std::string part = v.text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    int64_t x = 0;
    if (!ParseInt(part, &x)) return TypeError(where, kTypeIntList, v);
    out.push_back(x);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Status CheckChoice(const TrainKey& key, const std::string& value, const std::string& where) {
  if (key.choices == nullptr) return Status::OK();
  const std::string choices = key.choices;
  size_t start = 0;
  while (start <= choices.size()) {
    const size_t bar = std::min(choices.find('|', start), choices.size());
    if (choices.compare(start, bar - start, value) == 0 && value.size() == bar - start) {
      return Status::OK();
    }
    start = bar + 1;
  }
  return InvalidArgument(where + ": expected one of " + choices + ", got '" + value + "'");
}

// Applies a converted value to the field; one overload per field type.
struct Setter {
  const TrainKey& key;
  const ConfigValue& value;
  const std::string& where;
  TrainOptions* options;

  Status operator()(std::string TrainOptions::*f) const {
    if (value.kind != ConfigValue::Kind::kText && value.kind != ConfigValue::Kind::kString) {
      return TypeError(where, kTypeString, value);
    }
    FS_RETURN_IF_ERROR(CheckChoice(key, value.text, where));
    options->*f = value.text;
    return Status::OK();
  }
  Status operator()(int TrainOptions::*f) const {
    if (key.unset_word != nullptr && (value.kind == ConfigValue::Kind::kText ||
                                      value.kind == ConfigValue::Kind::kString) &&
        value.text == key.unset_word) {
      options->*f = static_cast<int>(key.unset_value);
      return Status::OK();
    }
    const std::string expected = ExpectedType(key);
    FS_ASSIGN_OR_RETURN(int64_t x, ToInt(value, where, expected.c_str()));
    if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) {
      return InvalidArgument(where + ": " + std::to_string(x) + " is out of range");
    }
    options->*f = static_cast<int>(x);
    return Status::OK();
  }
  Status operator()(int64_t TrainOptions::*f) const {
    if (key.bytes) {
      FS_ASSIGN_OR_RETURN(options->*f, ToBytes());
      return Status::OK();
    }
    FS_ASSIGN_OR_RETURN(options->*f, ToInt(value, where, kTypeInt));
    return Status::OK();
  }
  // A byte count: an integer, a size with a suffix, or the key's unset word.
  StatusOr<int64_t> ToBytes() const {
    const std::string expected = std::string(kTypeBytes) +
                                 (key.unset_word ? std::string(" or '") + key.unset_word + "'" : std::string());
    if (value.kind == ConfigValue::Kind::kInt) {
      if (value.integer < 0) return TypeError(where, expected, value);
      return value.integer;
    }
    if (value.kind != ConfigValue::Kind::kText && value.kind != ConfigValue::Kind::kString) {
      return TypeError(where, expected, value);
    }
    if (key.unset_word != nullptr && value.text == key.unset_word) return key.unset_value;
    if (value.text == "0") return int64_t{0};
    auto bytes = ParseByteSize(value.text, where);
    if (!bytes.ok()) return TypeError(where, expected, value);
    return static_cast<int64_t>(*bytes);
  }
  Status operator()(uint64_t TrainOptions::*f) const {
    FS_ASSIGN_OR_RETURN(int64_t x, ToInt(value, where, kTypeUint));
    if (x < 0) return TypeError(where, kTypeUint, value);
    options->*f = static_cast<uint64_t>(x);
    return Status::OK();
  }
  Status operator()(float TrainOptions::*f) const {
    FS_ASSIGN_OR_RETURN(double x, ToFloat(value, where));
    options->*f = static_cast<float>(x);
    return Status::OK();
  }
  Status operator()(bool TrainOptions::*f) const {
    bool b = false;
    if (value.kind == ConfigValue::Kind::kBool) {
      b = value.boolean;
    } else if (value.kind != ConfigValue::Kind::kText || !ParseBool(value.text, &b)) {
      return TypeError(where, kTypeBool, value);
    }
    options->*f = key.negate ? !b : b;
    return Status::OK();
  }
  Status operator()(std::vector<int64_t> TrainOptions::*f) const {
    FS_ASSIGN_OR_RETURN(options->*f, ToIntList(value, where));
    return Status::OK();
  }
};

struct TypeNamer {
  const char* operator()(std::string TrainOptions::*) const { return kTypeString; }
  const char* operator()(int TrainOptions::*) const { return kTypeInt; }
  const char* operator()(int64_t TrainOptions::*) const { return kTypeInt; }
  const char* operator()(uint64_t TrainOptions::*) const { return kTypeUint; }
  const char* operator()(float TrainOptions::*) const { return kTypeFloat; }
  const char* operator()(bool TrainOptions::*) const { return kTypeBool; }
  const char* operator()(std::vector<int64_t> TrainOptions::*) const { return kTypeIntList; }
};

// Levenshtein distance (insertions, deletions, substitutions), for
// suggesting the key a typo meant; keys are short, so O(|a| |b|) is fine.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

const std::vector<TrainKey>& TrainKeys() {
  using O = TrainOptions;
  static const std::vector<TrainKey> keys = {
      {"dataset", "Dataset directory (the positional DATASET)", &O::dataset, nullptr, false},
      {"model", "Model: sage, gcn or gat on a graph dataset; dlrm on a clicks dataset; sasrec on a sequences "
       "dataset; --task link: distmult, complex, transe or dot (shallow), or sage, gcn or gat (a GNN encoder with "
       "--decoder)", &O::model, "sage|gcn|gat|dlrm|sasrec|distmult|complex|transe|dot", false},
      {"node-features",
       "What the model reads per node: file (the dataset's features, dense or sparse), degree (log-degree and "
       "degree buckets), one-hot (node identity as a learned row of the first layer), learned:DIM (a learned "
       "embedding of DIM values per node, kept on --feature-store behind --cache-size), file+learned:DIM (the "
       "dataset's dense features with DIM learned values beside them)",
       &O::node_features, nullptr, false},
      {"sparse-optimizer",
       "Optimizer of embedding rows (learned:DIM, dlrm tables, the shallow link models' entity and relation "
       "rows), fused into backward with its state beside each row: sgd, rowwise-adagrad or adam",
       &O::sparse_optimizer, "sgd|rowwise-adagrad|adam", false},
      {"sparse-lr", "Learning rate of the sparse optimizer (learned:DIM, dlrm tables, shallow --task link)",
       &O::sparse_lr, nullptr, false},
      {"table-dir",
       "Where file-backed embedding tables go: learned:DIM on --feature-store mmap or disk, the directory "
       "of its file; dlrm with --table-store mmap|disk|rocksdb, a new directory in it, removed at the end "
       "(default: a temporary directory, removed at the end)",
       &O::table_dir, nullptr, false},
      {"epochs", "Passes over the training ids", &O::epochs, nullptr, false},
      {"batch-size", "Training seeds per mini-batch", &O::batch_size, nullptr, false},
      {"fanouts", "Neighbours sampled per layer, seeds outward (e.g. 15,10; -1 = all)",
       &O::fanouts, nullptr, false},
      {"full-graph", "Train on the whole graph, one step per epoch", &O::full_graph, nullptr, false},
      {"hidden", "Hidden width (per head for gat)", &O::hidden, nullptr, false},
      {"layers", "Message-passing layers", &O::layers, nullptr, false},
      {"heads", "Attention heads of gat's hidden layers; sasrec's attention heads", &O::heads, nullptr, false},
      {"blocks", "sasrec: transformer blocks", &O::blocks, nullptr, false},
      {"max-length", "sasrec: each user's input is its last max-length actions", &O::max_length, nullptr, false},
      {"adam-beta2", "Adam's beta2 (sasrec: dense parameters and item table)", &O::adam_beta2, nullptr, false},
      {"lr", "Learning rate", &O::lr, nullptr, false},
      {"weight-decay", "L2 penalty (decoupled for adamw)", &O::weight_decay, nullptr, false},
      {"dropout", "Dropout probability", &O::dropout, nullptr, false},
      {"input-dropout",
       "sage, gcn, gat: dropout probability of the first layer's input, the node features (0 = between "
       "layers only, as DGL's and PyG's GraphSAGE examples; default: --dropout)",
       &O::input_dropout, nullptr, false},
      {"optimizer", "Optimizer of dense parameters: adam, adamw or sgd (--task link: a sage, gcn or gat "
       "encoder's; the shallow link models have none: see --sparse-optimizer)", &O::optimizer, "adam|adamw|sgd",
       false},
      {"patience", "Stop after this many epochs without a better validation accuracy (0 = never)",
       &O::patience, nullptr, false},
      {"seed", "Random seed", &O::seed, nullptr, false},
      {"threads", "CPU threads, at least 1 (default: every online CPU)", &O::threads, nullptr, false},
      {"device",
       "Where training runs: cpu, or cuda[:N] (refused with the reason where no usable GPU is visible; "
       "never falls back to the CPU)",
       &O::device, nullptr, false},
      {"metrics", "JSON-lines metrics file (one line per epoch and a final line)",
       &O::metrics_file, nullptr, false},
      {"checkpoint", "Checkpoint directory, written after every epoch", &O::checkpoint_dir,
       nullptr, false},
      {"resume", "Continue from the last epoch in --checkpoint (from epoch 1 while it holds none)",
       &O::resume, nullptr, false},
      {"eval-batch-size", "Destination nodes per chunk in layer-wise evaluation",
       &O::eval_batch_size, nullptr, false},
      {"quiet", "Print nothing but errors (no progress, logs or result line; see --metrics)", &O::progress,
       nullptr, true},
      {"feature-store",
       "Where training reads node features: memory (loaded into RAM), mmap (mapped; pages count as RSS) or "
       "disk (O_DIRECT reads on io_uring)",
       &O::feature_store, "memory|mmap|disk", false},
      {"topology",
       "How sampling holds the graph: mapped (mmap'd; pages read stay resident) or paged (each sampler call "
       "reads its rows' 4 KiB pages and frees them after: the same samples, RAM for one batch's rows)",
       &O::topology, "mapped|paged", false},
      {"cache-policy",
       "Feature cache policy: lookahead (evict the row used farthest in the next --lookahead batches), lru, or "
       "static (highest in-degree rows, filled once)",
       &O::cache_policy, "lookahead|lru|static", false},
      {"cache-size",
       "Feature cache capacity (K/M/G = KiB/MiB/GiB; 0 = no cache; default: auto = what --memory-budget "
       "leaves, else 0)",
       &O::cache_size, nullptr, false, true, "auto", -1},
      {"lookahead",
       "Batches the sampler runs ahead of training (the cache's window W); auto = 64 for node features on the "
       "disk store under --order partition with the lookahead cache, else 32",
       &O::lookahead, nullptr, false, false, "auto", -1},
      {"io-depth", "Disk store: I/O requests in flight", &O::io_depth, nullptr, false},
      {"page-companions",
       "Disk store, lookahead cache: with each miss also fetch the rows on its 4 KiB page that the window "
       "needs and the cache admits (one read serves them; results unchanged)",
       &O::page_companions, "on|off", false},
      {"read-gap",
       "Disk store: a batch's reads that lie at most this many bytes apart join one request, the bytes between "
       "read and dropped (K/M/G = KiB/MiB/GiB; fewer, longer reads; results unchanged); auto = 12K for node "
       "features on the disk store under --order partition with the lookahead cache, else 0",
       &O::read_gap, nullptr, false, true, "auto", -1},
      {"companion-span",
       "Disk store, page companions on: bring with each miss the rows the window needs from its aligned span of "
       "this many bytes, a multiple of 4K (results unchanged); auto = 64K for node features on the disk store "
       "under --order partition, else 4K (its page)",
       &O::companion_span, nullptr, false, true, "auto", -1},
      {"planner-index",
       "Lookahead feature cache: the planner's index of keys, an array over the nodes (flat: 24 B a node, fastest) "
       "or a map of the window's and the cache's keys (window: 64 B a key); auto = whichever leaves the cache more "
       "rows (results unchanged)",
       &O::planner_index, "auto|flat|window", false},
      {"hot-fraction",
       "Lookahead feature cache: the fraction of its slots pinned to the rows of highest in-degree (a static "
       "tier, read once) beside the lookahead tier; -1 = auto (0: measured, such a tier reads more; results unchanged)",
       &O::hot_fraction, nullptr, false},
      {"hot-rank",
       "Lookahead feature cache's static tier: rank rows by in-degree, or (--order partition) by the edges from "
       "other partitions that point to them (halo: the rows many partition groups read)",
       &O::hot_rank, "in-degree|halo", false},
      {"memory-budget",
       "Peak RSS of the whole process (K/M/G = KiB/MiB/GiB); sizes the cache when --cache-size is not given "
       "(default: none)",
       &O::memory_budget, nullptr, false, true, "none", 0},
      {"allreduce-bucket",
       "Several ranks: gradient bytes per all-reduce bucket (K/M/G = KiB/MiB/GiB), each summed as soon as "
       "backward has finished its gradients, overlapping the rest of backward; 0 = one sum after backward",
       &O::allreduce_bucket, nullptr, false, true},
      {"order",
       "Seed order: random, or partition (random groups of partitions, redrawn every epoch, one after another, "
       "seeds shuffled within a group; needs `foresight partition`); --task link: random, or buckets (edge "
       "buckets of --entity-partitions in an order that loads few partitions into a buffer of "
       "--resident-partitions)",
       &O::order, "random|partition|buckets", false},
      {"entity-partitions", "Link with --order buckets: partitions of the entity table (contiguous id ranges)",
       &O::entity_partitions, nullptr, false},
      {"sampling",
       "Neighbour sampling: full, or resident (only in-neighbours in the batch's partition group; needs "
       "--order partition)",
       &O::sampling, "full|resident", false},
      {"bottom-mlp", "dlrm: widths of the bottom MLP over the dense features (with --interaction dot the last "
       "is --embedding-dim)", &O::bottom_mlp, nullptr, false},
      {"top-mlp", "dlrm: widths of the top MLP; the last is 1, the click logit", &O::top_mlp, nullptr, false},
      {"embedding-dim", "Columns of every embedding row: dlrm's tables; link prediction's entity and relation rows (complex: "
       "dim/2 complex numbers)", &O::embedding_dim, nullptr, false},
      {"interaction", "dlrm: dot (pairwise dot products) or cat (concatenation)", &O::interaction, "dot|cat",
       false},
      {"eval-every", "dlrm: also evaluate (and write a metrics line) every N training steps (0 = at epoch ends "
       "only)", &O::eval_every, nullptr, false},
      {"table-store",
       "Where embedding tables live (dlrm; link prediction's entity table: memory or disk): memory, mmap, disk "
       "(O_DIRECT on io_uring) or rocksdb; all but a memory store with no cache train behind the "
       "--cache-policy/--cache-size cache",
       &O::table_store, "memory|mmap|disk|rocksdb", false},
      {"sharding",
       "dlrm on several ranks (mpirun -np N): split the tables by row (row id to rank id % N) or by table (each "
       "table whole on one rank; needs at least N tables); each rank keeps its shard on its own --table-store "
       "behind its own cache",
       &O::sharding, "row|table", false},
      {"resident-partitions",
       "Partitions per group of --order partition, resident together for --sampling resident (default: 0 = "
       "as many as the feature cache holds, at least 1)",
       &O::resident_partitions, nullptr, false},
      {"rank-partitions",
       "--order partition on several ranks: each rank owns a balanced set of partitions and takes its part of "
       "every global batch from them (reads its own rows and their halo); 0 = the job's ranks. N on one rank "
       "trains the global batches of N ranks",
       &O::rank_partitions, nullptr, false},
      // Link prediction (--task link).
      {"task", "What to train: node (classification) or link (prediction on the triples of `preprocess --format "
       "triples`)", &O::task, "node|link", false},
      {"negatives", "Link: negatives per chunk of positives and side, shared by the chunk (one GEMM)",
       &O::negatives, nullptr, false},
      {"negative-chunk", "Link: positives sharing one set of negatives (0 = the whole batch)", &O::negative_chunk,
       nullptr, false},
      {"negative-sampling", "Link: uniform over entities, or degree (by training-triple ends)",
       &O::negative_sampling, "uniform|degree", false},
      {"loss", "Link: softmax (cross entropy against the negatives) or logistic", &O::loss, "softmax|logistic",
       false},
      {"sampled-softmax", "Link, softmax loss over uniform negatives: add log(entities / negatives) to each "
       "negative's logit, so the loss estimates the softmax over all entities", &O::sampled_softmax, nullptr,
       false},
      {"regularizer", "Link: none, l2 or l3 (N3) on the positives' rows", &O::regularizer, "none|l2|l3", false},
      {"regularization-weight", "Link: weight of --regularizer", &O::regularization_weight, nullptr, false},
      {"reciprocal", "Link: a second row per relation for the reverse direction; heads are ranked as tails of "
       "(t, r', ?)", &O::reciprocal, nullptr, false},
      {"margin", "Link: transe score offset (margin - ||h + r - t||)", &O::margin, nullptr, false},
      {"init-scale", "Link: initial rows uniform in [-init-scale, init-scale)", &O::init_scale, nullptr, false},
      {"eval-negatives", "Link: rank against this many sampled entities (0 = all)", &O::eval_negatives, nullptr,
       false},
      {"eval-epochs", "Link, sasrec: evaluate every this many epochs (and after the last)", &O::eval_epochs, nullptr,
       false},
      {"decoder", "Link with a GNN encoder (sage, gcn, gat): dot (<h, t>) or distmult (<h, r, t>, a learned row "
       "per relation) on the encoder's output rows", &O::link_decoder, "dot|distmult", false},
      {"export", "Link: directory for entity/relation embeddings (.npy) and their names after training",
       &O::export_dir, nullptr, false},
  };
  return keys;
}

const TrainKey* FindTrainKey(const std::string& name) {
  const std::string key = NormalizeKey(name);
  for (const TrainKey& k : TrainKeys()) {
    if (key == k.name) return &k;
  }
  return nullptr;
}

std::string ExpectedType(const TrainKey& key) {
  if (key.choices != nullptr) return std::string("one of ") + key.choices;
  if (key.bytes) return kTypeBytes;
  const std::string type = std::visit(TypeNamer{}, key.field);
  return key.unset_word != nullptr ? type + " or '" + key.unset_word + "'" : type;
}

std::string FormatTrainValue(const TrainKey& key, const TrainOptions& options) {
  return std::visit(
      [&](auto field) -> std::string {
        using T = std::decay_t<decltype(options.*field)>;
        const T& v = options.*field;
        if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, int>) {
          if (key.unset_word != nullptr && v == key.unset_value) return key.unset_word;
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          return (key.negate ? !v : v) ? "true" : "false";
        } else if constexpr (std::is_same_v<T, float>) {
          std::ostringstream ss;
          ss << v;
          return ss.str();
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          std::string out;
          for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
          return out;
        } else {
          return std::to_string(v);
        }
      },
      key.field);
}

Status ApplyTrainValue(const TrainKey& key, const ConfigValue& value, const std::string& where,
                       TrainOptions* options) {
  FS_RETURN_IF_ERROR(std::visit(Setter{key, value, where, options}, key.field));
  // TrainOptions::threads = 0 means every online CPU; a user leaves the key
  // out for that, so an explicit 0 is a mistake (a typo, an empty variable).
  if (std::string(key.name) == "threads" && options->threads < 1) {
    return InvalidArgument(where + ": expected at least 1 thread, got " + std::to_string(options->threads) +
                           " (leave it out to use every online CPU)");
  }
  return Status::OK();
}

std::string NearestTrainKey(const std::string& name) {
  const std::string key = NormalizeKey(name);
  std::string best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (const TrainKey& k : TrainKeys()) {
    // The "quiet"/"dataset" entries are keys too; every key is a candidate.
    const size_t d = EditDistance(key, k.name);
    if (d < best_distance) {
      best_distance = d;
      best = k.name;
    }
  }
  return best;
}

Status ApplyConfigFile(const ConfigFile& file, TrainOptions* options) {
  for (const ConfigEntry& e : file.entries) {
    const TrainKey* key = FindTrainKey(e.key);
    if (key == nullptr) {
      std::string known;
      for (const TrainKey& k : TrainKeys()) known += (known.empty() ? "" : ", ") + std::string(k.name);
      return InvalidArgument(file.path + ": unknown key '" + e.key + "'; did you mean '" + NearestTrainKey(e.key) +
                             "'? (known keys: " + known + ")");
    }
    FS_RETURN_IF_ERROR(ApplyTrainValue(*key, e.value, file.path + ": key '" + e.key + "'", options));
  }
  return Status::OK();
}

Status WithFlagNames(const Status& s) {
  if (s.ok()) return s;
  // Validate() names TrainOptions fields ("batch_size: must be >= 1"); a
  // user typed --batch-size (or batch-size / batch_size in a config file).
  std::string message = s.message();
  const size_t colon = message.find(':');
  // "dataset" is the positional DATASET, not a flag.
  if (colon != std::string::npos && message.compare(0, colon, "dataset") != 0 &&
      FindTrainKey(message.substr(0, colon)) != nullptr) {
    message = "--" + NormalizeKey(message.substr(0, colon)) + message.substr(colon);
  }
  for (const TrainKey& k : TrainKeys()) {
    // Only snake_case field names are unambiguous inside a sentence.
    std::string field = k.name;
    std::replace(field.begin(), field.end(), '-', '_');
    if (field == k.name) continue;
    for (size_t at = message.find(field); at != std::string::npos; at = message.find(field, at)) {
      const bool word_start = at == 0 || !(std::isalnum(static_cast<unsigned char>(message[at - 1])) ||
                                           message[at - 1] == '_' || message[at - 1] == '-');
      const size_t end = at + field.size();
      const bool word_end = end == message.size() ||
                            !(std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '_');
      if (word_start && word_end) {
        message.replace(at, field.size(), "--" + std::string(k.name));
        at += field.size() + 2;
      } else {
        at = end;
      }
    }
  }
  return Status(s.code(), message);
}

StatusOr<TrainOptions> ResolveTrainOptions(const std::string& config_path,
                                           const std::vector<FlagValue>& flags,
                                           const std::string& dataset) {
  TrainOptions options;
  if (!config_path.empty()) {
    FS_ASSIGN_OR_RETURN(ConfigFile file, ReadConfigFile(config_path));
    FS_RETURN_IF_ERROR(ApplyConfigFile(file, &options));
  }
  for (const FlagValue& f : flags) {
    const TrainKey* key = FindTrainKey(f.key);
    if (key == nullptr) return Internal("no train option named '" + f.key + "'");
    FS_RETURN_IF_ERROR(ApplyTrainValue(*key, f.value, "--" + f.key, &options));
  }
  if (!dataset.empty()) options.dataset = dataset;
  return options;
}

}  // namespace foresight::apps
