// Preprocess entry point: validates options, runs the format reader into a
// DatasetWriter staging dir, then writes the graph, labels, splits and
// original ids, records provenance and commits.
#include "foresight/datasets/preprocess.h"

#include <algorithm>
#include <cmath>

#include "foresight/core/logging.h"
#include "edge_split.h"
#include "foresight/storage/link_triples.h"
#include "preprocess_internal.h"
#include "splits.h"

namespace foresight::datasets {
namespace {

// Class names, ids quoted in warnings and paths come from the input as raw
// bytes; JSON strings must be UTF-8, so invalid sequences become U+FFFD
// here instead of making the manifest unwritable.
nlohmann::json ValidUtf8(const nlohmann::json& j) {
  return nlohmann::json::parse(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

template <typename E>
StatusOr<E> ParseEnum(const std::string& s, const char* flag,
                      std::initializer_list<std::pair<const char*, E>> values) {
  std::string all;
  for (const auto& [name, v] : values) {
    if (s == name) return v;
    all += (all.empty() ? "" : ", ") + std::string(name);
  }
  return InvalidArgument(std::string(flag) + ": unknown value '" + s + "' (expected one of " + all + ")");
}

const char* FormatName(InputFormat f) {
  switch (f) {
    case InputFormat::kLinqs: return "linqs";
    case InputFormat::kEdgeList: return "edgelist";
    case InputFormat::kOgb: return "ogb";
  }
  return "?";
}

Status CheckFraction(double v, const char* flag) {
  if (!(v >= 0.0 && v <= 1.0)) return InvalidArgument(std::string(flag) + " must be in [0, 1], got " + std::to_string(v));
  return Status::OK();
}

// Every input named as a file exists and is not a folder (a folder would
// otherwise read as "does not exist" or fail mid-run on read()).
Status CheckInputFiles(const PreprocessOptions& o) {
  const std::pair<const char*, const std::string*> files[] = {
      {"--edges", &o.edges},           {"--features", &o.features},     {"--sparse-features", &o.sparse_features},
      {"--labels", &o.labels},         {"--split-file", &o.split_file}};
  for (const auto& [flag, path] : files) {
    if (!path->empty()) FS_RETURN_IF_ERROR(internal::CheckInputFile(*path, flag));
  }
  return Status::OK();
}

Status ValidateOptions(const PreprocessOptions& o) {
  if (o.output.empty()) return InvalidArgument("preprocess: --output is required");
  FS_RETURN_IF_ERROR(CheckFraction(o.train_frac, "--train-frac"));
  FS_RETURN_IF_ERROR(CheckFraction(o.val_frac, "--val-frac"));
  FS_RETURN_IF_ERROR(CheckFraction(o.test_frac, "--test-frac"));
  const double sum = (o.train_per_class > 0 ? 0.0 : o.train_frac) + o.val_frac + o.test_frac;
  if (sum > 1.0 + 1e-9) {
    return InvalidArgument("split fractions sum to " + std::to_string(sum) + " (> 1)");
  }
  if (o.train_per_class < 0) return InvalidArgument("--train-per-class must be >= 0");
  if (o.split == SplitMode::kFile && o.split_file.empty()) return InvalidArgument("--split file needs --split-file");
  if (o.split == SplitMode::kRandom && !o.split_file.empty()) {
    return InvalidArgument("--split random and --split-file are exclusive");
  }
  if (o.split == SplitMode::kOgb && o.format != InputFormat::kOgb) {
    return InvalidArgument("--split ogb needs --format ogb");
  }
  if (o.feature_dtype != "f32" && o.feature_dtype != "f16") {
    return InvalidArgument("--feature-dtype must be f32 or f16, got '" + o.feature_dtype + "'");
  }
  if (o.format != InputFormat::kEdgeList) {
    if (!o.edges.empty() || !o.features.empty() || !o.labels.empty() || !o.sparse_features.empty() ||
        !o.label_column.empty() || !o.id_column.empty() || o.class_names || o.header != HeaderMode::kAuto) {
      return InvalidArgument(std::string("--edges/--features/--sparse-features/--labels and the label file and "
                                         "header flags apply to --format edgelist, not ") +
                             FormatName(o.format));
    }
  }
  if (!o.features.empty() && !o.sparse_features.empty()) {
    return InvalidArgument("--features and --sparse-features are exclusive (one feature file per dataset)");
  }
  const bool sparse = !o.sparse_features.empty() || internal::IsJsonFeatures(o.features);
  if (o.feature_dim < 0) return InvalidArgument("--feature-dim must be >= 1, got " + std::to_string(o.feature_dim));
  if (o.feature_dim > 0 && !sparse) {
    return InvalidArgument("--feature-dim applies to sparse features (--features F.json or --sparse-features); "
                           "dense features take their width from the file");
  }
  if (o.feature_layout != "auto" && o.feature_layout != "sparse" && o.feature_layout != "dense") {
    return InvalidArgument("--feature-layout must be auto, sparse or dense, got '" + o.feature_layout + "'");
  }
  if (o.feature_layout != "auto" && !sparse) {
    return InvalidArgument("--feature-layout applies to sparse features (--features F.json or --sparse-features)");
  }
  if (sparse && o.feature_layout != "dense" && o.feature_dtype != "f32") {
    return InvalidArgument("--feature-dtype " + o.feature_dtype + " applies to dense features; sparse feature "
                           "values are stored as f32 (pass --feature-layout dense to store them densely)");
  }
  if (o.task != "node" && o.task != "link") return InvalidArgument("--task must be node or link, got '" + o.task + "'");
  if (o.task == "link") FS_RETURN_IF_ERROR(internal::CheckEdgeSplit(o.edge_split));
  return CheckInputFiles(o);
}

Status WriteIds(storage::DatasetWriter* w, const char* file, const std::vector<int64_t>& ids) {
  FS_ASSIGN_OR_RETURN(auto out, w->OpenArray(file, DType::kI64, {}));
  FS_RETURN_IF_ERROR(out->Append(ids.data(), static_cast<int64_t>(ids.size())));
  return out->Finish();
}

// Class ids become the width of the model's output layer (num_classes =
// max label + 1) and per-class tables in the split, so a stray huge label
// must be an error, not a multi-gigabyte allocation.
constexpr int64_t kMaxClasses = int64_t{1} << 24;

Status WriteLabels(internal::Job* job, int64_t* num_classes) {
  auto& labels = job->labels;
  int64_t max_label = -1;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] >= kMaxClasses) {
      const std::string& from = job->opt->labels;
      return InvalidArgument((from.empty() ? std::string("labels") : from) + ": node " + std::to_string(i) +
                             " has label " + std::to_string(labels[i]) + "; class ids must be below 2^24 = " +
                             std::to_string(kMaxClasses) + " (num_classes = largest label + 1)");
    }
    max_label = std::max(max_label, labels[i]);
  }
  *num_classes = job->class_names.empty() ? max_label + 1 : static_cast<int64_t>(job->class_names.size());
  const bool wide = max_label > INT32_MAX;
  FS_ASSIGN_OR_RETURN(auto out, job->writer->OpenArray(storage::kLabelsFile, wide ? DType::kI64 : DType::kI32, {}));
  if (wide) {
    FS_RETURN_IF_ERROR(out->Append(labels.data(), static_cast<int64_t>(labels.size())));
  } else {
    std::vector<int32_t> narrow(labels.begin(), labels.end());
    if (labels.empty()) narrow.assign(static_cast<size_t>(job->num_nodes), -1);
    FS_RETURN_IF_ERROR(out->Append(narrow.data(), static_cast<int64_t>(narrow.size())));
  }
  return out->Finish();
}

nlohmann::json OptionsJson(const PreprocessOptions& o) {
  static const char* kSplit[] = {"auto", "file", "random", "ogb"};
  nlohmann::json j = {
      {"undirected", o.undirected},
      {"keep_self_loops", o.keep_self_loops},
      {"keep_duplicates", o.keep_duplicates},
      {"normalize_features", o.normalize_features == FeatureNorm::kRow ? "row" : "none"},
      {"feature_dtype", o.feature_dtype},
      {"split", kSplit[static_cast<int>(o.split)]},
      {"seed", o.seed},
  };
  if (o.format == InputFormat::kEdgeList) {
    static const char* kDType[] = {"text", "int32", "int64"};
    j["edge_dtype"] = kDType[static_cast<int>(o.edge_dtype)];
    j["ids"] = o.ids == IdKind::kString ? "string" : "int";
    static const char* kHeader[] = {"auto", "present", "absent"};
    j["header"] = kHeader[static_cast<int>(o.header)];
    if (!o.label_column.empty()) j["label_column"] = o.label_column;
    if (!o.id_column.empty()) j["id_column"] = o.id_column;
    if (o.class_names) j["class_names"] = true;
    if (o.allow_empty_edges) j["allow_empty_edges"] = true;
    if (o.allow_isolated_nodes) j["allow_isolated_nodes"] = true;
  }
  if (!o.split_file.empty()) j["split_file"] = o.split_file;
  if (o.task == "link") {
    j["task"] = "link";
    j["edge_split"] = o.edge_split;
  }
  if (o.feature_dim > 0) j["feature_dim"] = o.feature_dim;
  if (o.feature_layout != "auto") j["feature_layout"] = o.feature_layout;
  if (o.train_per_class > 0) j["train_per_class"] = o.train_per_class;
  j["train_frac"] = o.train_frac;
  j["val_frac"] = o.val_frac;
  j["test_frac"] = o.test_frac;
  return j;
}

Status Run(const PreprocessOptions& o, const ExecContext& ctx, PreprocessReport* report) {
  FS_RETURN_IF_ERROR(ValidateOptions(o));
  // 16 bytes a spilled edge: CsrBuilder's (dst, src) pair.
  int64_t estimated_edges = 0;
  if (o.format == InputFormat::kEdgeList) {
    FS_ASSIGN_OR_RETURN(estimated_edges, internal::CheckEdgeListDiskSpace(o, 16));
  }
  FS_ASSIGN_OR_RETURN(auto writer, storage::DatasetWriter::Create(o.output, o.overwrite));
  graph::CsrBuildOptions bo;
  bo.memory_budget_bytes = o.memory_budget_bytes;
  bo.temp_dir = o.temp_dir;
  bo.undirected = o.undirected;
  bo.keep_self_loops = o.keep_self_loops;
  bo.keep_duplicates = o.keep_duplicates;
  bo.pool = ctx.pool ? ctx.pool : DefaultThreadPool();
  FS_ASSIGN_OR_RETURN(auto builder, graph::CsrBuilder::Create(bo));

  internal::Job job;
  job.opt = &o;
  job.writer = writer.get();
  job.builder = builder.get();
  job.pool = bo.pool;
  job.estimated_edges = estimated_edges;
  job.feature_dtype = o.feature_dtype == "f16" ? DType::kF16 : DType::kF32;
  switch (o.format) {
    case InputFormat::kLinqs: FS_RETURN_IF_ERROR(internal::ReadLinqs(&job)); break;
    case InputFormat::kEdgeList: FS_RETURN_IF_ERROR(internal::ReadEdgeList(&job)); break;
    case InputFormat::kOgb: FS_RETURN_IF_ERROR(internal::ReadOgb(&job)); break;
  }
  if (job.feature_dim < 0) {
    FS_RETURN_IF_ERROR(internal::WriteEmptyFeatures(&job));
    job.Warn("no node features: `foresight train` needs --node-features degree, one-hot or learned:DIM for this "
             "dataset (pass --features or --sparse-features here to use a feature file)");
  }

  FS_RETURN_IF_ERROR(builder->Finish(job.num_nodes, writer->StagingPath(storage::kIndptrFile),
                                     writer->StagingPath(storage::kIndicesFile)));
  storage::LinkLayout link;
  int64_t graph_edges = builder->stats().num_edges;
  if (o.task == "link") {
    FS_RETURN_IF_ERROR(internal::SplitEdgesForLink(writer.get(), job.num_nodes, o.undirected, o.edge_split, o.seed,
                                                   &link, &graph_edges));
  }
  int64_t num_classes = 0;
  FS_RETURN_IF_ERROR(WriteLabels(&job, &num_classes));

  std::vector<int64_t> split[3];
  std::string split_source;
  if (!o.split_file.empty()) {
    FS_RETURN_IF_ERROR(internal::ReadSplitFile(job, o.split_file, split));
    split_source = "file";
  } else if (job.has_given_split) {
    for (int k = 0; k < 3; ++k) split[k] = std::move(job.given_split[k]);
    split_source = "ogb";
  } else {
    FS_RETURN_IF_ERROR(internal::RandomSplit(&job, split));
    split_source = "random";
  }
  FS_RETURN_IF_ERROR(WriteIds(writer.get(), storage::kTrainIdsFile, split[0]));
  FS_RETURN_IF_ERROR(WriteIds(writer.get(), storage::kValIdsFile, split[1]));
  FS_RETURN_IF_ERROR(WriteIds(writer.get(), storage::kTestIdsFile, split[2]));
  if (job.string_ids) FS_RETURN_IF_ERROR(job.ids.Write(writer->StagingPath(storage::kOriginalIdsFile)));

  const graph::CsrBuildStats& st = builder->stats();
  storage::DatasetManifest& m = writer->manifest();
  m.name = ValidUtf8(nlohmann::json(!o.name.empty() ? o.name
                                                    : internal::BaseName(o.format == InputFormat::kEdgeList ? o.edges
                                                                                                           : o.input)))
               .get<std::string>();
  m.num_nodes = job.num_nodes;
  m.num_edges = graph_edges;
  if (o.task == "link") m.link = link.ToJson();
  m.feature_dim = job.feature_dim;
  m.feature_dtype = job.feature_dtype;
  m.feature_layout = job.sparse_features ? storage::FeatureLayout::kSparse : storage::FeatureLayout::kDense;
  m.num_classes = num_classes;
  m.class_names = ValidUtf8(nlohmann::json(job.class_names)).get<std::vector<std::string>>();
  m.id_map = job.string_ids ? storage::IdMap::kString : storage::IdMap::kNone;
  nlohmann::json& src = job.source;
  src["tool"] = "foresight preprocess";
  src["format"] = FormatName(o.format);
  src["options"] = OptionsJson(o);
  src["split_source"] = split_source;
  src["counts"] = {{"nodes", job.num_nodes},          {"input_edges", st.input_edges},
                   {"edges", st.num_edges},           {"self_loops_dropped", st.self_loops_dropped},
                   {"duplicates_dropped", st.duplicates_dropped}, {"train", split[0].size()},
                   {"val", split[1].size()},          {"test", split[2].size()}};
  src["dropped_edges"] = {{"missing_nodes", job.dropped_missing},
                          {"self_loops", st.self_loops_dropped},
                          {"duplicates", st.duplicates_dropped}};
  if (!job.warnings.empty()) src["warnings"] = job.warnings;
  m.source = ValidUtf8(src);
  FS_RETURN_IF_ERROR(writer->Commit());

  if (report != nullptr) {
    report->num_nodes = job.num_nodes;
    report->num_edges = graph_edges;
    report->input_edges = st.input_edges;
    report->dropped_missing = job.dropped_missing;
    report->self_loops_dropped = st.self_loops_dropped;
    report->duplicates_dropped = st.duplicates_dropped;
    report->spilled_runs = st.num_runs;
    report->feature_dim = job.feature_dim;
    report->num_classes = num_classes;
    report->num_train = static_cast<int64_t>(split[0].size());
    report->num_val = static_cast<int64_t>(split[1].size());
    report->num_test = static_cast<int64_t>(split[2].size());
    report->warnings = job.warnings;
  }
  return Status::OK();
}

}  // namespace

StatusOr<InputFormat> ParseInputFormat(const std::string& s) {
  return ParseEnum<InputFormat>(s, "--format", {{"linqs", InputFormat::kLinqs}, {"edgelist", InputFormat::kEdgeList},
                                                {"ogb", InputFormat::kOgb}});
}
StatusOr<EdgeDType> ParseEdgeDType(const std::string& s) {
  return ParseEnum<EdgeDType>(s, "--edge-dtype", {{"text", EdgeDType::kText}, {"int32", EdgeDType::kInt32},
                                                  {"int64", EdgeDType::kInt64}});
}
StatusOr<IdKind> ParseIdKind(const std::string& s) {
  return ParseEnum<IdKind>(s, "--ids", {{"int", IdKind::kInt}, {"string", IdKind::kString}});
}
StatusOr<FeatureNorm> ParseFeatureNorm(const std::string& s) {
  return ParseEnum<FeatureNorm>(s, "--normalize-features", {{"none", FeatureNorm::kNone}, {"row", FeatureNorm::kRow}});
}
StatusOr<SplitMode> ParseSplitMode(const std::string& s) {
  return ParseEnum<SplitMode>(s, "--split", {{"auto", SplitMode::kAuto}, {"file", SplitMode::kFile},
                                             {"random", SplitMode::kRandom}, {"ogb", SplitMode::kOgb}});
}

Status Preprocess(const PreprocessOptions& options, const ExecContext& ctx, PreprocessReport* report) {
  return Run(options, ctx, report);
}

}  // namespace foresight::datasets
