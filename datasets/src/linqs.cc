// LINQS citation format (Cora, CiteSeer): <name>.content lines
// "<paper id> <features...> <class name>" and <name>.cites lines
// "<cited id> <citing id>" (the edge is citing -> cited).
#include <dirent.h>

#include <algorithm>
#include <map>

#include "foresight/datasets/tokenizer.h"
#include "preprocess_internal.h"

namespace foresight::datasets::internal {
namespace {

bool HasKind(const std::string& name, const std::string& kind) {
  return EndsWith(name, kind) || EndsWith(name, kind + ".gz") || EndsWith(name, kind + ".xz");
}

// The one file in `dir` whose name ends in `kind` (optionally .gz / .xz).
StatusOr<std::string> FindOne(const std::string& dir, const std::string& kind) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return NotFound("linqs: input folder " + dir + " cannot be opened");
  std::vector<std::string> found;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (HasKind(name, kind) && IsFile(dir + "/" + name)) found.push_back(name);
  }
  closedir(d);
  std::sort(found.begin(), found.end());
  if (found.size() != 1) {
    std::string list;
    for (const auto& f : found) list += (list.empty() ? "" : ", ") + f;
    return InvalidArgument("linqs: expected exactly one *" + kind + " file in " + dir + ", found " +
                           std::to_string(found.size()) + (list.empty() ? "" : " (" + list + ")"));
  }
  return dir + "/" + found[0];
}

}  // namespace

Status ReadLinqs(Job* job) {
  const std::string& dir = job->opt->input;
  if (dir.empty()) return InvalidArgument("linqs: --input DIR is required");
  FS_ASSIGN_OR_RETURN(const std::string content_path, FindOne(dir, ".content"));
  FS_ASSIGN_OR_RETURN(const std::string cites_path, FindOne(dir, ".cites"));
  job->string_ids = true;

  // Content: relabel papers in file order, stream features, collect labels.
  FS_ASSIGN_OR_RETURN(auto content, LineReader::Open(content_path));
  std::unique_ptr<FeatureSink> sink;
  std::vector<std::string_view> fields;
  std::vector<float> row;
  std::vector<int64_t> first_line;           // line of each paper, for duplicates
  std::map<std::string, int64_t> class_tmp;  // name -> first-seen index
  std::vector<std::string> tmp_names;
  std::vector<int64_t> tmp_labels;
  std::string_view line;
  int64_t columns = -1;
  while (content->Next(&line)) {
    if (IsBlankOrComment(line)) continue;
    SplitFields(line, Delimiter::kWhitespace, &fields);
    if (columns < 0) {
      if (fields.size() < 3) {
        return content->Error("expected at least 3 columns (paper id, features..., class), got " +
                              std::to_string(fields.size()));
      }
      columns = static_cast<int64_t>(fields.size());
      FS_ASSIGN_OR_RETURN(sink, FeatureSink::Create(job->Staging(storage::kFeaturesFile), columns - 2,
                                                    job->feature_dtype, job->opt->normalize_features, job->pool));
      row.resize(static_cast<size_t>(columns - 2));
    }
    if (static_cast<int64_t>(fields.size()) != columns) {
      return content->Error("expected " + std::to_string(columns) + " columns, got " + std::to_string(fields.size()));
    }
    const int64_t before = job->ids.size();
    const int64_t id = job->ids.Intern(fields[0]);
    if (id < before) {
      return content->Error("duplicate paper id " + Quote(fields[0]) + " (first on line " +
                            std::to_string(first_line[static_cast<size_t>(id)]) + ")");
    }
    first_line.push_back(content->line_number());
    for (int64_t j = 1; j + 1 < columns; ++j) {
      FS_RETURN_IF_ERROR(ParseFeature(*content, fields[static_cast<size_t>(j)], j + 1, &row[static_cast<size_t>(j - 1)]));
    }
    FS_RETURN_IF_ERROR(sink->AppendRow(row.data()));
    const std::string cls(fields.back());
    auto [it, inserted] = class_tmp.try_emplace(cls, static_cast<int64_t>(tmp_names.size()));
    if (inserted) tmp_names.push_back(cls);
    tmp_labels.push_back(it->second);
  }
  FS_RETURN_IF_ERROR(content->status());
  if (!sink) return InvalidArgument(content_path + ": no papers");
  FS_RETURN_IF_ERROR(sink->Finish());
  job->feature_dim = columns - 2;
  job->num_nodes = job->ids.size();

  // Classes in sorted name order (std::map iterates sorted).
  std::vector<int64_t> remap(tmp_names.size());
  for (const auto& [name, tmp] : class_tmp) {
    remap[static_cast<size_t>(tmp)] = static_cast<int64_t>(job->class_names.size());
    job->class_names.push_back(name);
  }
  job->labels.resize(tmp_labels.size());
  for (size_t i = 0; i < tmp_labels.size(); ++i) job->labels[i] = remap[static_cast<size_t>(tmp_labels[i])];

  // Cites: "<cited> <citing>" -> edge citing -> cited.
  FS_ASSIGN_OR_RETURN(auto cites, LineReader::Open(cites_path));
  std::vector<std::string> examples;
  int64_t cite_rows = 0;
  while (cites->Next(&line)) {
    if (IsBlankOrComment(line)) continue;
    ++cite_rows;
    SplitFields(line, Delimiter::kWhitespace, &fields);
    if (fields.size() != 2) {
      return cites->Error("expected 2 columns, got " + std::to_string(fields.size()));
    }
    const int64_t cited = job->ids.Find(fields[0]);
    const int64_t citing = job->ids.Find(fields[1]);
    if (cited < 0 || citing < 0) {
      if (++job->dropped_missing <= 3) {
        examples.push_back("line " + std::to_string(cites->line_number()) + ": " +
                           Quote(cited < 0 ? fields[0] : fields[1]));
      }
      continue;
    }
    FS_RETURN_IF_ERROR(job->builder->Add(citing, cited));
  }
  FS_RETURN_IF_ERROR(cites->status());
  if (cite_rows == 0 && !job->opt->allow_empty_edges) {
    return InvalidArgument(cites_path + ": no citations (" +
                           (cites->line_number() == 0 ? std::string("the file is empty")
                                                      : "its " + std::to_string(cites->line_number()) +
                                                            " lines are blank or comments") +
                           "); pass --allow-empty-edges for a graph without edges");
  }
  if (job->dropped_missing > 0) {
    std::string ex;
    for (const auto& e : examples) ex += (ex.empty() ? "" : ", ") + e;
    job->Warn(BaseName(cites_path) + ": dropped " + std::to_string(job->dropped_missing) +
              " edges citing papers missing from " + BaseName(content_path) + " (" + ex +
              (job->dropped_missing > 3 ? ", ..." : "") + ")");
  }
  job->source["inputs"] = {content_path, cites_path};
  job->source["classes"] = job->class_names;
  return Status::OK();
}

}  // namespace foresight::datasets::internal
