// OGB node-property folders (as unpacked from the OGB zip): raw/edge.csv.gz,
// raw/node-feat.csv.gz, raw/node-label.csv.gz, raw/num-node-list.csv.gz and
// split/<name>/{train,valid,test}.csv.gz. Homogeneous, single-label only.
#include <dirent.h>

#include <algorithm>
#include <cmath>

#include "foresight/datasets/tokenizer.h"
#include "preprocess_internal.h"

namespace foresight::datasets::internal {
namespace {

// "raw/edge.csv" with an optional .gz / .xz suffix; "" when absent.
std::string FindCsv(const std::string& base) {
  for (const char* ext : {".gz", "", ".xz"}) {
    const std::string p = base + ext;
    if (IsFile(p)) return p;
  }
  return "";
}

std::vector<std::string> ListDir(const std::string& dir, bool dirs) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (IsDirectory(dir + "/" + name) == dirs) out.push_back(name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

Status CheckHomogeneous(const std::string& raw) {
  const auto subdirs = ListDir(raw, true);
  if (!subdirs.empty()) {
    return Unimplemented("ogb: " + raw + " has per-type folders (" + subdirs[0] +
                         "/...): heterogeneous OGB datasets are not supported");
  }
  for (const auto& f : ListDir(raw, false)) {
    if (f.rfind("triplet-type-list", 0) == 0 || f.rfind("num-node-dict", 0) == 0 ||
        f.rfind("nodetype-has-split", 0) == 0) {
      return Unimplemented("ogb: " + raw + "/" + f +
                           " marks a heterogeneous OGB dataset, which is not supported");
    }
  }
  return Status::OK();
}

Status ReadNumNodes(const std::string& path, int64_t* n) {
  FS_ASSIGN_OR_RETURN(auto r, LineReader::Open(path));
  std::string_view line;
  std::vector<std::string_view> f;
  int64_t lines = 0;
  while (r->Next(&line)) {
    if (IsBlankOrComment(line)) continue;
    if (++lines > 1) {
      return Unimplemented(r->Where() + "more than one graph: graph-property OGB datasets are not supported");
    }
    SplitFields(line, Delimiter::kAuto, &f);
    if (f.size() != 1 || !ParseInt64(f[0], n) || *n < 0) {
      return r->Error("expected one non-negative node count, got " + Quote(line));
    }
  }
  FS_RETURN_IF_ERROR(r->status());
  if (lines == 0) return InvalidArgument(path + ": empty (expected the node count)");
  return Status::OK();
}

// One label per line: an integer, or NaN for an unlabelled node.
Status ReadLabels(Job* job, const std::string& path) {
  FS_ASSIGN_OR_RETURN(auto r, LineReader::Open(path));
  std::string_view line;
  std::vector<std::string_view> f;
  while (r->Next(&line)) {
    if (IsBlankOrComment(line)) continue;
    SplitFields(line, Delimiter::kAuto, &f);
    if (f.size() > 1) {
      return Unimplemented(r->Where() + std::to_string(f.size()) +
                           " label columns: multi-label OGB datasets are not supported");
    }
    if (f.empty()) return r->Error("expected 1 column, got 0");
    int64_t label;
    if (ParseInt64(f[0], &label)) {
      if (label < 0) return r->Error("label " + Quote(f[0]) + " is negative");
    } else {
      float v;
      const FloatParse p = ParseFloat(f[0], &v);
      if (p == FloatParse::kNaN) {
        label = -1;  // OGB marks unlabelled nodes with NaN
      } else if (p == FloatParse::kOk && v >= 0 && std::floor(v) == v) {
        label = static_cast<int64_t>(v);
      } else {
        return r->Error("label " + Quote(f[0]) + " is not a non-negative integer or NaN");
      }
    }
    job->labels.push_back(label);
  }
  return r->status();
}

Status ReadEdges(Job* job, const std::string& path, int64_t n) {
  FS_ASSIGN_OR_RETURN(auto r, LineReader::Open(path));
  std::string_view line;
  std::vector<std::string_view> f;
  while (r->Next(&line)) {
    if (IsBlankOrComment(line)) continue;
    SplitFields(line, Delimiter::kComma, &f);
    if (f.size() != 2) return r->Error("expected 2 columns, got " + std::to_string(f.size()));
    int64_t e[2];
    for (int j = 0; j < 2; ++j) {
      if (!ParseInt64(f[j], &e[j])) return r->Error("node id " + Quote(f[j]) + " is not an integer");
      if (e[j] < 0 || (n >= 0 && e[j] >= n)) {
        return r->Error("id " + std::to_string(e[j]) + " out of range " +
                        (n >= 0 ? "[0, " + std::to_string(n) + ")" : std::string("[0, 2^63)")));
      }
    }
    FS_RETURN_IF_ERROR(job->builder->Add(e[0], e[1]));
  }
  return r->status();
}

Status ReadSplitIds(const std::string& path, int64_t n, std::vector<int64_t>* out) {
  FS_ASSIGN_OR_RETURN(auto r, LineReader::Open(path));
  std::string_view line;
  std::vector<std::string_view> f;
  while (r->Next(&line)) {
    if (IsBlankOrComment(line)) continue;
    SplitFields(line, Delimiter::kAuto, &f);
    if (f.size() != 1) return r->Error("expected 1 column (node id), got " + std::to_string(f.size()));
    int64_t id;
    if (!ParseInt64(f[0], &id)) return r->Error("node id " + Quote(f[0]) + " is not an integer");
    if (id < 0 || id >= n) return r->Error("id " + std::to_string(id) + " out of range [0, " + std::to_string(n) + ")");
    out->push_back(id);
  }
  return r->status();
}

}  // namespace

Status ReadOgb(Job* job) {
  const PreprocessOptions& o = *job->opt;
  if (o.input.empty()) return InvalidArgument("ogb: --input DIR is required");
  const std::string raw = o.input + "/raw";
  if (!IsDirectory(raw)) return NotFound("ogb: " + raw + " does not exist (expected an unpacked OGB folder)");
  FS_RETURN_IF_ERROR(CheckHomogeneous(raw));
  const std::string edge_path = FindCsv(raw + "/edge.csv");
  if (edge_path.empty()) return NotFound("ogb: " + raw + "/edge.csv.gz does not exist");
  nlohmann::json inputs = {{"edges", edge_path}};

  int64_t n = -1;
  if (const std::string p = FindCsv(raw + "/num-node-list.csv"); !p.empty()) {
    FS_RETURN_IF_ERROR(ReadNumNodes(p, &n));
    inputs["num_nodes"] = p;
  }
  if (const std::string p = FindCsv(raw + "/node-feat.csv"); !p.empty()) {
    FS_ASSIGN_OR_RETURN(int64_t rows, CopyTextFeatures(job, p));
    if (n >= 0 && rows != n) {
      return InvalidArgument(p + ": " + std::to_string(rows) + " feature rows, but num-node-list says " +
                             std::to_string(n) + " nodes");
    }
    n = rows;
    inputs["features"] = p;
  }
  if (const std::string p = FindCsv(raw + "/node-label.csv"); !p.empty()) {
    FS_RETURN_IF_ERROR(ReadLabels(job, p));
    const int64_t rows = static_cast<int64_t>(job->labels.size());
    if (n >= 0 && rows != n) {
      return InvalidArgument(p + ": " + std::to_string(rows) + " labels, but the graph has " + std::to_string(n) +
                             " nodes");
    }
    n = rows;
    inputs["labels"] = p;
  }
  FS_RETURN_IF_ERROR(ReadEdges(job, edge_path, n));
  if (n < 0) n = job->builder->max_id() + 1;
  job->num_nodes = n;
  if (!job->labels.empty()) job->labels.resize(static_cast<size_t>(n), -1);

  // The split folder, unless the caller asked for a split file / random split.
  const bool want = o.split == SplitMode::kOgb || (o.split == SplitMode::kAuto && o.split_file.empty());
  const std::string split_root = o.input + "/split";
  if (want && IsDirectory(split_root)) {
    std::string name = o.ogb_split;
    if (name.empty()) {
      const auto names = ListDir(split_root, true);
      if (names.size() != 1) {
        return InvalidArgument("ogb: " + split_root + " has " + std::to_string(names.size()) +
                               " split folders; choose one with --ogb-split");
      }
      name = names[0];
    }
    const char* files[3] = {"train", "valid", "test"};
    for (int k = 0; k < 3; ++k) {
      const std::string p = FindCsv(split_root + "/" + name + "/" + files[k] + ".csv");
      if (p.empty()) return NotFound("ogb: " + split_root + "/" + name + "/" + files[k] + ".csv.gz does not exist");
      FS_RETURN_IF_ERROR(ReadSplitIds(p, n, &job->given_split[k]));
    }
    job->has_given_split = true;
    inputs["split"] = split_root + "/" + name;
  } else if (o.split == SplitMode::kOgb) {
    return NotFound("ogb: --split ogb but " + split_root + " does not exist");
  }
  job->source["inputs"] = inputs;
  return Status::OK();
}

}  // namespace foresight::datasets::internal
