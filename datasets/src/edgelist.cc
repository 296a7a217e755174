// Edge-list input: text "u v" lines or binary (src, dst) pairs, with
// optional features (.npy or text rows) and labels (.npy, one per line, or
// "id label"). Integer ids are row numbers; string ids are relabelled.
#include <algorithm>
#include <cstring>

#include "foresight/datasets/tokenizer.h"
#include "foresight/core/progress.h"
#include "preprocess_internal.h"
#include "row_reader.h"

namespace foresight::datasets::internal {
namespace {

std::string Range(int64_t n) { return "[0, " + std::to_string(n) + ")"; }

// Parses an integer node id of the current line; `n` < 0 when N is not known.
Status ParseIntId(const RowReader& r, std::string_view field, int64_t n, int64_t* id) {
  if (!ParseInt64(field, id)) return r.Error("node id " + Quote(field) + " is not an integer");
  if (*id < 0 || (n >= 0 && *id >= n)) {
    return r.Error("id " + std::to_string(*id) + " out of range " + (n >= 0 ? Range(n) : "[0, 2^63)"));
  }
  return Status::OK();
}

// Labels of int-id graphs: .npy (one per row) or text (labels.cc).
Status ReadIntLabels(Job* job, const std::string& path, int64_t n, LabelFileInfo* info) {
  auto& labels = job->labels;
  if (EndsWith(path, ".npy")) {
    FS_ASSIGN_OR_RETURN(Tensor t, storage::LoadNpy(path));
    if (t.dim() != 1 || (t.dtype() != DType::kI32 && t.dtype() != DType::kI64)) {
      return InvalidArgument(path + ": labels must be a 1-D i32 or i64 array, got an array of " +
                             DTypeName(t.dtype()) + " with shape " + ShapeToString(t.shape()));
    }
    labels.resize(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i) {
      labels[i] = t.dtype() == DType::kI32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
      if (labels[i] < -1) {
        return InvalidArgument(path + ": row " + std::to_string(i) + ": label " + std::to_string(labels[i]) +
                               " is not >= -1 (-1 = unlabelled)");
      }
    }
    info->per_row = true;
    return Status::OK();
  }
  return ReadTextLabels(job, path, n, info);
}

Status ReadStringLabels(Job* job, const std::string& path) {
  if (EndsWith(path, ".npy")) {
    return InvalidArgument(path + ": with --ids string, labels must be text lines 'id label'");
  }
  LabelFileInfo info;
  return ReadTextLabels(job, path, -1, &info);
}

// Text rows "id f1 f2 ..." for string ids: buffered, then written in id order.
Status ReadStringFeatures(Job* job, const std::string& path) {
  if (EndsWith(path, ".npy")) {
    return InvalidArgument(path + ": with --ids string, features must be text rows whose first column is the node id");
  }
  FS_ASSIGN_OR_RETURN(auto r, LineReader::Open(path));
  std::vector<std::string_view> f;
  std::string_view line;
  int64_t dim = -1;
  std::vector<float> values;
  std::vector<int64_t> row_of;  // node -> buffered row
  int64_t rows = 0;
  Delimiter delim = Delimiter::kAuto;
  while (r->Next(&line)) {
    if (IsBlankOrComment(line)) continue;
    if (delim == Delimiter::kAuto) delim = DetectDelimiter(line);
    SplitFields(line, delim, &f);
    if (dim < 0) {
      if (f.size() < 2) return r->Error("expected an id and at least 1 feature, got " + std::to_string(f.size()) + " columns");
      dim = static_cast<int64_t>(f.size()) - 1;
    }
    if (static_cast<int64_t>(f.size()) != dim + 1) {
      return r->Error("expected " + std::to_string(dim + 1) + " columns, got " + std::to_string(f.size()));
    }
    const int64_t id = job->opt->allow_isolated_nodes ? job->ids.Intern(f[0]) : job->ids.Find(f[0]);
    if (id < 0) {
      return r->Error("node " + Quote(f[0]) + " has a feature row but no edge names it; pass " +
                      "--allow-isolated-nodes to keep such nodes as isolated nodes");
    }
    if (id >= static_cast<int64_t>(row_of.size())) row_of.resize(static_cast<size_t>(id) + 1, -1);
    if (row_of[id] >= 0) return r->Error("duplicate feature row for node " + Quote(f[0]));
    row_of[id] = rows++;
    values.resize(static_cast<size_t>(rows * dim));
    float* dst = values.data() + (rows - 1) * dim;
    for (int64_t j = 0; j < dim; ++j) FS_RETURN_IF_ERROR(ParseFeature(*r, f[j + 1], j + 2, &dst[j]));
  }
  FS_RETURN_IF_ERROR(r->status());
  if (dim < 0) return InvalidArgument(path + ": no feature rows");
  const int64_t n = job->ids.size();
  row_of.resize(static_cast<size_t>(n), -1);
  for (int64_t v = 0; v < n; ++v) {
    if (row_of[v] < 0) {
      return InvalidArgument(path + ": no feature row for node " + Quote(job->ids.name(v)) + " (" +
                             std::to_string(rows) + " rows for " + std::to_string(n) + " nodes)");
    }
  }
  FS_ASSIGN_OR_RETURN(auto sink, FeatureSink::Create(job->Staging(storage::kFeaturesFile), dim, job->feature_dtype,
                                                     job->opt->normalize_features, job->pool));
  for (int64_t v = 0; v < n; ++v) FS_RETURN_IF_ERROR(sink->AppendRow(values.data() + row_of[v] * dim));
  FS_RETURN_IF_ERROR(sink->Finish());
  job->feature_dim = dim;
  return Status::OK();
}

// Whether the first row of an edge file is a header ("id_1,id_2").
HeaderVerdict EdgeHeaderTest(bool string_ids, const Row& first, const Row* second) {
  if (first.size() != 2) return HeaderVerdict::Data();  // reported as a column-count error on its line
  int64_t x;
  const bool ints = ParseInt64(first[0], &x) || ParseInt64(first[1], &x);
  if (ints) return HeaderVerdict::Data();
  if (!string_ids) return HeaderVerdict::Header("its ids are not integers");
  // With string ids any token may be a node: trust only a line of words
  // above a line of integer ids, or conventional column names.
  if (second != nullptr && second->size() == 2 && ParseInt64((*second)[0], &x) && ParseInt64((*second)[1], &x)) {
    return HeaderVerdict::Header("its ids are not integers, unlike the next line's");
  }
  if (IsIdColumnName(first[0]) && IsIdColumnName(first[1])) {
    return HeaderVerdict::Header("it holds conventional column names");
  }
  return HeaderVerdict::Data("with --ids string a header cannot be told from an edge of string ids");
}

Status ReadTextEdges(Job* job, const std::string& path, int64_t n) {
  RowReaderOptions ro;
  ro.header = job->opt->header;
  ro.blanks_mix = true;
  ro.role = "edge file";
  const bool string_ids = job->string_ids;
  ro.test = [string_ids](const Row& first, const Row* second) { return EdgeHeaderTest(string_ids, first, second); };
  FS_ASSIGN_OR_RETURN(auto r, RowReader::Open(path, std::move(ro)));
  if (!r->header().empty()) job->source["edge_file"] = {{"header", r->header()}};
  // Reading and sorting a billion lines takes a while: progress against the
  // up-front estimate, with rate and time left.
  ProgressOptions po;
  po.unit = "edges";
  Progress progress("read edges " + path, job->estimated_edges, po);
  constexpr int64_t kProgressEvery = 1 << 16;
  int64_t unreported = 0;
  while (r->Next()) {
    if (++unreported == kProgressEvery) {
      progress.Advance(unreported);
      unreported = 0;
    }
    const Row& f = r->fields();
    if (f.size() != 2) return r->Error("expected 2 columns, got " + std::to_string(f.size()));
    int64_t u, v;
    if (string_ids) {
      u = job->ids.Intern(f[0]);
      v = job->ids.Intern(f[1]);
    } else {
      FS_RETURN_IF_ERROR(ParseIntId(*r, f[0], n, &u));
      FS_RETURN_IF_ERROR(ParseIntId(*r, f[1], n, &v));
    }
    FS_RETURN_IF_ERROR(job->builder->Add(u, v));
  }
  FS_RETURN_IF_ERROR(r->status());
  progress.Advance(unreported);
  progress.Finish(std::to_string(r->rows()) + " edges read");
  if (r->rows() == 0 && !job->opt->allow_empty_edges) {
    return InvalidArgument(path + ": no edges (" +
                           (r->lines_read() == 0 ? std::string("the file is empty")
                                                 : "its " + std::to_string(r->lines_read()) +
                                                       " lines are blank, comments or a header") +
                           "); pass --allow-empty-edges for a graph without edges");
  }
  return Status::OK();
}

template <typename T>
Status ReadBinaryEdges(Job* job, const std::string& path, int64_t n) {
  FS_ASSIGN_OR_RETURN(auto br, ByteReader::Open(path));
  const size_t pair = 2 * sizeof(T);
  const char* type = sizeof(T) == 4 ? "int32" : "int64";
  if (br->compression() == Compression::kNone) {
    // Fail before reading anything when the size is wrong.
    FILE* fp = fopen(path.c_str(), "rb");
    if (fp != nullptr) {
      fseeko(fp, 0, SEEK_END);
      const off_t size = ftello(fp);
      fclose(fp);
      if (size >= 0 && static_cast<size_t>(size) % pair != 0) {
        return InvalidArgument(path + ": file size " + std::to_string(size) + " bytes is not a multiple of " +
                               std::to_string(pair) + " (" + type + " src, dst pairs)");
      }
    }
  }
  std::vector<char> buf(size_t{1} << 20);  // a multiple of every pair size
  size_t have = 0;
  int64_t edge = 0;
  uint64_t total = 0;
  while (true) {
    FS_ASSIGN_OR_RETURN(size_t got, br->Read(buf.data() + have, buf.size() - have));
    total += got;
    have += got;
    const size_t whole = have / pair;
    for (size_t k = 0; k < whole; ++k, ++edge) {
      T e[2];
      std::memcpy(e, buf.data() + k * pair, pair);
      for (int j = 0; j < 2; ++j) {
        const int64_t id = static_cast<int64_t>(e[j]);
        if (id < 0 || (n >= 0 && id >= n)) {
          return InvalidArgument(path + ": edge " + std::to_string(edge) + " (byte offset " +
                                 std::to_string(static_cast<uint64_t>(edge) * pair) + "): id " + std::to_string(id) +
                                 " out of range " + (n >= 0 ? Range(n) : "[0, 2^63)"));
        }
      }
      FS_RETURN_IF_ERROR(job->builder->Add(static_cast<int64_t>(e[0]), static_cast<int64_t>(e[1])));
    }
    std::memmove(buf.data(), buf.data() + whole * pair, have - whole * pair);
    have -= whole * pair;
    if (got == 0) break;
  }
  if (total == 0 && !job->opt->allow_empty_edges) {
    return InvalidArgument(path + ": no edges (the file is empty); pass --allow-empty-edges for a graph without edges");
  }
  if (have != 0) {
    return InvalidArgument(path + ": data size " + std::to_string(total) + " bytes is not a multiple of " +
                           std::to_string(pair) + " (" + type + " src, dst pairs)");
  }
  return Status::OK();
}

Status ReadEdges(Job* job, int64_t n) {
  const std::string& path = job->opt->edges;
  switch (job->opt->edge_dtype) {
    case EdgeDType::kText: return ReadTextEdges(job, path, n);
    case EdgeDType::kInt32: return ReadBinaryEdges<int32_t>(job, path, n);
    case EdgeDType::kInt64: return ReadBinaryEdges<int64_t>(job, path, n);
  }
  return Internal("bad edge dtype");
}

// A dataset needs nodes, and a label file that labels nothing (0 classes)
// is a mistake: an unlabelled graph leaves out --labels.
Status CheckNodesAndLabels(Job* job) {
  const PreprocessOptions& o = *job->opt;
  if (job->num_nodes == 0) {
    return InvalidArgument("edgelist: 0 nodes: " + o.edges +
                           " has no edges and no feature or label file gives a node count");
  }
  if (!o.labels.empty() &&
      std::none_of(job->labels.begin(), job->labels.end(), [](int64_t l) { return l >= 0; })) {
    return InvalidArgument(o.labels + ": no node has a label (every label is -1 = unlabelled, so 0 classes); " +
                           "leave out --labels for an unlabelled graph");
  }
  return Status::OK();
}

}  // namespace

Status ReadEdgeList(Job* job) {
  const PreprocessOptions& o = *job->opt;
  if (o.edges.empty()) return InvalidArgument("edgelist: --edges FILE is required");
  FS_RETURN_IF_ERROR(CheckInputFile(o.edges, "edgelist: edge file"));
  nlohmann::json inputs = {{"edges", o.edges}};
  if (!o.features.empty()) inputs["features"] = o.features;
  if (!o.sparse_features.empty()) inputs["sparse_features"] = o.sparse_features;
  // Sparse features (JSON or COO) are read after the edges and labels: their
  // nodes may be any subset, so they never decide N for integer ids.
  const bool sparse = !o.sparse_features.empty() || IsJsonFeatures(o.features);
  SparseEntries sparse_entries;
  if (!o.labels.empty()) inputs["labels"] = o.labels;
  job->source["inputs"] = inputs;

  if (o.ids == IdKind::kString) {
    if (o.edge_dtype != EdgeDType::kText) {
      return InvalidArgument("edgelist: --ids string needs text edges (--edge-dtype text)");
    }
    job->string_ids = true;
    FS_RETURN_IF_ERROR(ReadEdges(job, -1));
    if (!o.labels.empty()) FS_RETURN_IF_ERROR(ReadStringLabels(job, o.labels));
    if (sparse) {
      FS_RETURN_IF_ERROR(ReadSparseFeatures(job, -1, &sparse_entries));
    } else if (!o.features.empty()) {
      FS_RETURN_IF_ERROR(ReadStringFeatures(job, o.features));
    }
    job->num_nodes = job->ids.size();
    if (!job->labels.empty()) job->labels.resize(static_cast<size_t>(job->num_nodes), -1);
    FS_RETURN_IF_ERROR(CheckNodesAndLabels(job));
    return sparse ? WriteSparseFeatures(job, &sparse_entries) : Status::OK();
  }

  // Integer ids: N comes from features, else per-row labels, else the ids.
  int64_t n = -1;
  std::string n_from;
  if (!o.features.empty() && !sparse) {
    StatusOr<int64_t> rows = EndsWith(o.features, ".npy") ? CopyNpyFeatures(job, o.features)
                                                          : CopyTextFeatures(job, o.features);
    FS_RETURN_IF_ERROR(rows.status());
    n = *rows;
    n_from = BaseName(o.features);
  }
  const bool n_from_features = n >= 0;
  LabelFileInfo label_info;
  if (!o.labels.empty()) {
    FS_RETURN_IF_ERROR(ReadIntLabels(job, o.labels, n, &label_info));
    // The labels stay in RAM while the edges are sorted (0.8 GB at 100M
    // nodes): the sort's buffer gives them up, so the run keeps its budget.
    FS_RETURN_IF_ERROR(job->builder->ChargeHeldBytes(job->labels.capacity() * sizeof(job->labels[0])));
    if (label_info.per_row) {
      const int64_t rows = static_cast<int64_t>(job->labels.size());
      if (n >= 0 && rows != n) {
        return InvalidArgument(o.labels + ": " + std::to_string(rows) + " labels, but " + n_from + " has " +
                               std::to_string(n) + " rows");
      }
      n = rows;
    }
  }
  FS_RETURN_IF_ERROR(ReadEdges(job, n));
  // "id label" rows define nodes only through their ids: an id past every
  // edge's is most likely a label file of another graph (or another id
  // space), so it is refused unless isolated nodes are intended.
  const int64_t max_edge_id = job->builder->max_id();
  if (sparse) FS_RETURN_IF_ERROR(ReadSparseFeatures(job, n, &sparse_entries));
  if (!n_from_features && !label_info.per_row && label_info.max_id > max_edge_id && !o.allow_isolated_nodes) {
    int64_t beyond = 0;
    for (size_t i = static_cast<size_t>(max_edge_id + 1); i < label_info.seen.size(); ++i) beyond += label_info.seen[i];
    return InvalidArgument(o.labels + ":" + std::to_string(label_info.max_id_line) + ": node " +
                           std::to_string(label_info.max_id) + " has a label but no edge names it (" +
                           std::to_string(beyond) + " labelled node" + (beyond == 1 ? "" : "s") + " above " +
                           BaseName(o.edges) + "'s largest id " + std::to_string(max_edge_id) +
                           "); pass --allow-isolated-nodes to keep such nodes as isolated nodes");
  }
  if (n < 0) {
    n = std::max<int64_t>({max_edge_id + 1, static_cast<int64_t>(job->labels.size()), sparse_entries.max_node + 1});
  }
  job->num_nodes = n;
  if (!job->labels.empty()) job->labels.resize(static_cast<size_t>(n), -1);
  FS_RETURN_IF_ERROR(CheckNodesAndLabels(job));
  return sparse ? WriteSparseFeatures(job, &sparse_entries) : Status::OK();
}

}  // namespace foresight::datasets::internal
