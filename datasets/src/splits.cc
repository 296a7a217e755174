// Train / val / test splits: read from a split file, or drawn at random
// (seeded, counter-based: the same seed gives the same split anywhere).
#include "splits.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>
#include <utility>

#include "foresight/core/rng.h"
#include "foresight/datasets/tokenizer.h"

namespace foresight::datasets::internal {

Status ReadSplitFile(const Job& job, const std::string& path, std::vector<int64_t> out[3]) {
  FS_ASSIGN_OR_RETURN(auto r, LineReader::Open(path));
  const int64_t n = job.num_nodes;
  std::vector<int8_t> which(static_cast<size_t>(n), -1);
  std::vector<std::string_view> f;
  std::string_view line;
  static const char* kNames[3] = {"train", "val", "test"};
  while (r->Next(&line)) {
    if (IsBlankOrComment(line)) continue;
    SplitFields(line, Delimiter::kAuto, &f);
    if (f.size() < 2) return r->Error("expected 2 columns (id, train|val|test), got " + std::to_string(f.size()));
    int64_t id = -1;
    if (job.string_ids) {
      id = job.ids.Find(f[0]);
      if (id < 0) return r->Error("unknown node id " + Quote(f[0]));
    } else {
      if (!ParseInt64(f[0], &id)) return r->Error("node id " + Quote(f[0]) + " is not an integer");
      if (id < 0 || id >= n) return r->Error("id " + std::to_string(id) + " out of range [0, " + std::to_string(n) + ")");
    }
    int k;
    if (f[1] == "train") k = 0;
    else if (f[1] == "val" || f[1] == "valid") k = 1;
    else if (f[1] == "test") k = 2;
    else return r->Error("bad split name " + Quote(f[1]) + " (expected train, val or test)");
    if (which[id] >= 0) {
      return r->Error("node " + Quote(f[0]) + " is already in " + kNames[which[id]]);
    }
    which[id] = static_cast<int8_t>(k);
    out[k].push_back(id);
  }
  FS_RETURN_IF_ERROR(r->status());
  for (int k = 0; k < 3; ++k) std::sort(out[k].begin(), out[k].end());
  return Status::OK();
}

Status RandomSplit(Job* job, std::vector<int64_t> out[3]) {
  const PreprocessOptions& o = *job->opt;
  const int64_t n = job->num_nodes;
  const bool labelled = !job->labels.empty();
  // Eligible nodes in a seeded random order: sort by (random key, id).
  const RngKey key = RngKey::FromSeed(o.seed).Fold(static_cast<uint64_t>(RngPurpose::kSplit));
  std::vector<std::pair<uint64_t, int64_t>> order;
  for (int64_t v = 0; v < n; ++v) {
    if (labelled && job->labels[v] < 0) continue;
    const Uint4 b = key.Bits(static_cast<uint64_t>(v), 0);
    order.push_back({(static_cast<uint64_t>(b.x) << 32) | b.y, v});
  }
  std::sort(order.begin(), order.end());
  const int64_t total = static_cast<int64_t>(order.size());
  std::vector<char> taken(order.size(), 0);
  if (o.train_per_class > 0) {
    if (!labelled) return InvalidArgument("--train-per-class needs labels");
    int64_t classes = 0;
    for (int64_t l : job->labels) classes = std::max(classes, l + 1);
    // Counts of the classes that occur: class ids may run to 2^24, and a
    // dense array over all of them (plus a scan of it) cost more than the
    // rest of a small preprocess.
    std::unordered_map<int64_t, int64_t> count;
    for (size_t i = 0; i < order.size(); ++i) {
      const int64_t c = job->labels[order[i].second];
      int64_t& k = count[c];
      if (k < o.train_per_class) {
        ++k;
        taken[i] = 1;
        out[0].push_back(order[i].second);
      }
    }
    // One warning naming the first few short classes (absent ones are
    // short too): a line per class would swamp the log.
    int64_t full_classes = 0;
    for (const auto& [c, k] : count) full_classes += k >= o.train_per_class;
    const int64_t short_classes = classes - full_classes;
    std::string examples;
    int named = 0;
    for (int64_t c = 0; c < classes && named < 3 && named < short_classes; ++c) {
      const auto it = count.find(c);
      const int64_t k = it == count.end() ? 0 : it->second;
      if (k >= o.train_per_class) continue;
      examples += (examples.empty() ? "" : ", ") + ("class " + std::to_string(c) + " has " + std::to_string(k));
      ++named;
    }
    if (short_classes > 0) {
      job->Warn(std::to_string(short_classes) + (short_classes == 1 ? " class has" : " classes have") +
                " fewer labelled nodes than --train-per-class " + std::to_string(o.train_per_class) + " (" +
                examples + (short_classes > 3 ? ", ..." : "") + ")");
    }
  }
  const int64_t want[3] = {o.train_per_class > 0 ? 0 : std::llround(o.train_frac * total),
                           std::llround(o.val_frac * total), std::llround(o.test_frac * total)};
  size_t i = 0;
  for (int k = 0; k < 3; ++k) {
    for (int64_t got = 0; got < want[k] && i < order.size(); ++i) {
      if (taken[i]) continue;
      out[k].push_back(order[i].second);
      ++got;
    }
  }
  for (int k = 0; k < 3; ++k) std::sort(out[k].begin(), out[k].end());
  return Status::OK();
}

}  // namespace foresight::datasets::internal
