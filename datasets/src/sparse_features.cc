// Sparse node features as published (bag-of-features inputs such as the
// MUSAE graphs): a JSON object {"node": [feature ids], ...} (streamed through
// nlohmann's SAX parser, so the file is never held whole) or COO text lines
// "node feature [value]". Both become the dataset's CSR feature arrays
// (storage/dataset.h, feature_layout "sparse"): O(nnz) bytes instead of the
// N x F dense matrix.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <numeric>

#include <nlohmann/json.hpp>

#include "foresight/datasets/tokenizer.h"
#include "preprocess_internal.h"

namespace foresight::datasets::internal {
namespace {

// Feature ids are stored as i32 (the model's first-layer rows).
constexpr int64_t kMaxFeatureDim = int64_t{1} << 31;

// Decompressed bytes of a file, counted by offset and line so a JSON error
// can say where it is.
struct ByteSource {
  ByteReader* reader = nullptr;
  std::vector<char> buf = std::vector<char>(size_t{1} << 16);
  size_t pos = 0, len = 0;
  bool eof = false;
  Status status;
  int64_t offset = 0;  // bytes consumed
  int64_t line = 1;    // line of the next byte

  bool Available() {
    if (pos < len) return true;
    if (eof) return false;
    StatusOr<size_t> got = reader->Read(buf.data(), buf.size());
    if (!got.ok()) {
      status = got.status();
      eof = true;
      return false;
    }
    pos = 0;
    len = *got;
    eof = len == 0;
    return len > 0;
  }
};

// The input iterator nlohmann's parser reads from (one byte at a time).
class ByteIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  explicit ByteIterator(ByteSource* s = nullptr) : s_(s) {}
  reference operator*() const { return s_->buf[s_->pos]; }
  ByteIterator& operator++() {
    if (s_->buf[s_->pos] == '\n') ++s_->line;
    ++s_->pos;
    ++s_->offset;
    return *this;
  }
  bool operator==(const ByteIterator& o) const { return AtEnd() == o.AtEnd(); }
  bool operator!=(const ByteIterator& o) const { return !(*this == o); }

 private:
  bool AtEnd() const { return s_ == nullptr || !s_->Available(); }
  ByteSource* s_;
};

// Collects {"node": [feature ids]} into `out`; anything else is an error
// naming the byte offset and line where it was found.
class FeatureJsonHandler : public nlohmann::json_sax<nlohmann::json> {
 public:
  FeatureJsonHandler(Job* job, const std::string& path, const ByteSource* src, int64_t n, SparseEntries* out)
      : job_(job), path_(path), src_(src), n_(n), out_(out) {}

  bool null() override { return Unexpected("null"); }
  bool boolean(bool) override { return Unexpected("a boolean"); }
  bool number_integer(number_integer_t v) override { return Feature(static_cast<int64_t>(v), "a feature id"); }
  bool number_unsigned(number_unsigned_t v) override {
    return Feature(v > static_cast<uint64_t>(INT64_MAX) ? -1 : static_cast<int64_t>(v), "a feature id");
  }
  bool number_float(number_float_t, const string_t&) override { return Unexpected("a fractional number"); }
  bool string(string_t&) override { return Unexpected("a string"); }
  bool binary(binary_t&) override { return Unexpected("binary data"); }
  bool start_object(std::size_t) override {
    if (depth_ != 0) return Unexpected("an object");
    depth_ = 1;
    return true;
  }
  bool end_object() override {
    depth_ = 0;
    done_ = true;
    return true;
  }
  bool key(string_t& k) override {
    if (job_->string_ids) {
      node_ = job_->ids.Intern(k);
    } else if (!ParseInt64(k, &node_) || node_ < 0) {
      return Fail("node id " + Quote(k) + " is not an integer >= 0 (ids are row numbers; use --ids string "
                  "for other names)");
    } else if (n_ >= 0 && node_ >= n_) {
      return Fail("node id " + std::to_string(node_) + " is out of range [0, " + std::to_string(n_) + ")");
    }
    out_->max_node = std::max(out_->max_node, node_);  // a node listed with no features still exists
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ != 1) return Unexpected("an array");
    depth_ = 2;
    return true;
  }
  bool end_array() override {
    depth_ = 1;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    // nlohmann's message already says "at line L, column C"; keep its reason.
    std::string what = ex.what();
    const size_t k = what.find("] ");
    if (k != std::string::npos) what = what.substr(k + 2);
    error_ = InvalidArgument(path_ + ": byte offset " + std::to_string(position) + ": " + what);
    return false;
  }

  const Status& error() const { return error_; }
  bool done() const { return done_; }

 private:
  std::string Where() const {
    return path_ + ":" + std::to_string(src_->line) + " (byte offset " + std::to_string(src_->offset) + "): ";
  }
  bool Fail(const std::string& why) {
    error_ = InvalidArgument(Where() + why);
    return false;
  }
  bool Unexpected(const char* what) {
    const char* expected = depth_ == 0 ? "a JSON object {\"node\": [feature ids], ...}"
                           : depth_ == 1 ? "a list of feature ids for the node"
                                         : "an integer feature id";
    return Fail(std::string("expected ") + expected + ", got " + what);
  }
  bool Feature(int64_t f, const char* what) {
    if (depth_ != 2) return Unexpected(depth_ == 1 ? "a number (feature ids go in a list)" : "a number");
    const int64_t dim = job_->opt->feature_dim;
    if (f < 0 || f >= kMaxFeatureDim || (dim > 0 && f >= dim)) {
      return Fail(std::string(what) + " " + std::to_string(f) + " is out of range [0, " +
                  std::to_string(dim > 0 ? dim : kMaxFeatureDim) + ")" +
                  (dim > 0 ? " (--feature-dim)" : ""));
    }
    out_->Add(node_, f, 1.0f);
    return true;
  }

  Job* job_;
  const std::string& path_;
  const ByteSource* src_;
  int64_t n_;
  SparseEntries* out_;
  int depth_ = 0;
  int64_t node_ = -1;
  bool done_ = false;
  Status error_;
};

Status ReadJsonFeatures(Job* job, const std::string& path, int64_t n, SparseEntries* out) {
  FS_ASSIGN_OR_RETURN(auto reader, ByteReader::Open(path));
  ByteSource src;
  src.reader = reader.get();
  FeatureJsonHandler handler(job, path, &src, n, out);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(ByteIterator(&src), ByteIterator(), &handler);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(path + ": byte offset " + std::to_string(src.offset) + ": " + e.what());
  }
  FS_RETURN_IF_ERROR(src.status);
  if (!ok) return handler.error();
  if (!handler.done()) return InvalidArgument(path + ": expected a JSON object {\"node\": [feature ids], ...}");
  return Status::OK();
}

// "node feature [value]" lines: whitespace, CSV or TSV; '#'/'%' comments.
Status ReadCooFeatures(Job* job, const std::string& path, int64_t n, SparseEntries* out) {
  FS_ASSIGN_OR_RETURN(auto r, LineReader::Open(path));
  std::vector<std::string_view> f;
  std::string_view line;
  Delimiter delim = Delimiter::kAuto;
  const int64_t dim = job->opt->feature_dim;
  while (r->Next(&line)) {
    if (IsBlankOrComment(line)) continue;
    if (delim == Delimiter::kAuto) delim = DetectDelimiter(line);
    SplitFields(line, delim, &f);
    if (f.size() != 2 && f.size() != 3) {
      return r->Error("expected 'node feature' or 'node feature value', got " + std::to_string(f.size()) +
                      " columns");
    }
    int64_t node;
    if (job->string_ids) {
      node = job->ids.Intern(f[0]);
    } else if (!ParseInt64(f[0], &node) || node < 0) {
      return r->Error("node id " + Quote(f[0]) + " is not an integer >= 0");
    } else if (n >= 0 && node >= n) {
      return r->Error("node id " + std::to_string(node) + " is out of range [0, " + std::to_string(n) + ")");
    }
    int64_t feature;
    if (!ParseInt64(f[1], &feature) || feature < 0) {
      return r->Error("feature id " + Quote(f[1]) + " is not an integer >= 0");
    }
    if (feature >= kMaxFeatureDim || (dim > 0 && feature >= dim)) {
      return r->Error("feature id " + std::to_string(feature) + " is out of range [0, " +
                      std::to_string(dim > 0 ? dim : kMaxFeatureDim) + ")" + (dim > 0 ? " (--feature-dim)" : ""));
    }
    float value = 1.0f;
    if (f.size() == 3) FS_RETURN_IF_ERROR(ParseFeature(*r, f[2], 3, &value));
    out->Add(node, feature, value);
  }
  return r->status();
}

// The CSR rows expanded into features.npy, one row at a time (the dense
// layout: the store, cache and partition options apply).
Status WriteDenseRows(Job* job, const std::vector<int64_t>& indptr, const std::vector<int32_t>& indices,
                      const std::vector<float>& values, int64_t dim) {
  FS_ASSIGN_OR_RETURN(auto sink, FeatureSink::Create(job->Staging(storage::kFeaturesFile), dim, job->feature_dtype,
                                                     FeatureNorm::kNone, job->pool));
  std::vector<float> row(static_cast<size_t>(dim), 0.0f);
  for (size_t v = 0; v + 1 < indptr.size(); ++v) {
    for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) row[static_cast<size_t>(indices[k])] = values[k];
    FS_RETURN_IF_ERROR(sink->AppendRow(row.data()));
    for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) row[static_cast<size_t>(indices[k])] = 0.0f;
  }
  FS_RETURN_IF_ERROR(sink->Finish());
  job->feature_dim = dim;
  job->sparse_features = false;
  return Status::OK();
}

}  // namespace

void SparseEntries::Add(int64_t n, int64_t f, float v) {
  node.push_back(n);
  feature.push_back(static_cast<int32_t>(f));
  value.push_back(v);
  max_node = std::max(max_node, n);
  max_feature = std::max(max_feature, f);
}

bool IsJsonFeatures(const std::string& path) {
  return EndsWith(path, ".json") || EndsWith(path, ".json.gz") || EndsWith(path, ".json.xz");
}

Status ReadSparseFeatures(Job* job, int64_t n, SparseEntries* out) {
  const PreprocessOptions& o = *job->opt;
  if (!o.features.empty()) return ReadJsonFeatures(job, o.features, n, out);
  return ReadCooFeatures(job, o.sparse_features, n, out);
}

Status WriteSparseFeatures(Job* job, SparseEntries* e) {
  const int64_t n = job->num_nodes;
  const int64_t dim = job->opt->feature_dim > 0 ? job->opt->feature_dim : e->max_feature + 1;
  const std::string& from = job->opt->features.empty() ? job->opt->sparse_features : job->opt->features;
  if (dim < 1) {
    return InvalidArgument(from + ": no feature ids; pass --feature-dim, or drop the file and choose "
                           "`train --node-features` instead");
  }
  // Entries grouped by node, in file order within a node (a stable sort),
  // repeated ids summed: a node's row is the bag of its features.
  const size_t nnz_in = e->node.size();
  std::vector<int64_t> order(nnz_in);
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [e](int64_t a, int64_t b) {
    return e->node[a] != e->node[b] ? e->node[a] < e->node[b] : e->feature[a] < e->feature[b];
  });
  std::vector<int64_t> indptr(static_cast<size_t>(n) + 1, 0);
  std::vector<int32_t> indices;
  std::vector<float> values;
  indices.reserve(nnz_in);
  values.reserve(nnz_in);
  size_t k = 0;
  for (int64_t v = 0; v < n; ++v) {
    const size_t row_begin = indices.size();
    for (; k < nnz_in && e->node[order[k]] == v; ++k) {
      const int64_t i = order[k];
      if (indices.size() > row_begin && indices.back() == e->feature[i]) {
        values.back() += e->value[i];
      } else {
        indices.push_back(e->feature[i]);
        values.push_back(e->value[i]);
      }
    }
    if (job->opt->normalize_features == FeatureNorm::kRow) {
      double sum = 0;
      for (size_t j = row_begin; j < values.size(); ++j) sum += values[j];
      if (sum != 0) {
        for (size_t j = row_begin; j < values.size(); ++j) values[j] = static_cast<float>(values[j] / sum);
      }
    }
    indptr[static_cast<size_t>(v) + 1] = static_cast<int64_t>(indices.size());
  }
  if (k != nnz_in) return Internal("sparse features: entries beyond the node count");
  std::vector<int64_t>().swap(e->node);
  const int64_t nnz = static_cast<int64_t>(indices.size());
  job->source["sparse_features"] = {{"nnz", nnz}, {"dim", dim}};
  const std::string& layout = job->opt->feature_layout;
  // Bytes of the two layouts: CSR = indptr + indices + values.
  const double dense_bytes = 4.0 * static_cast<double>(n) * static_cast<double>(dim);
  const double sparse_bytes = 8.0 * static_cast<double>(n + 1) + 8.0 * static_cast<double>(nnz);
  if (layout == "dense" || (layout == "auto" && dense_bytes <= sparse_bytes)) {
    return WriteDenseRows(job, indptr, indices, values, dim);
  }
  FS_ASSIGN_OR_RETURN(auto w, job->writer->OpenArray(storage::kFeatureIndptrFile, DType::kI64, {}));
  FS_RETURN_IF_ERROR(w->Append(indptr.data(), static_cast<int64_t>(indptr.size())));
  FS_RETURN_IF_ERROR(w->Finish());
  FS_ASSIGN_OR_RETURN(w, job->writer->OpenArray(storage::kFeatureIndicesFile, DType::kI32, {}));
  FS_RETURN_IF_ERROR(w->Append(indices.data(), static_cast<int64_t>(indices.size())));
  FS_RETURN_IF_ERROR(w->Finish());
  FS_ASSIGN_OR_RETURN(w, job->writer->OpenArray(storage::kFeatureValuesFile, DType::kF32, {}));
  FS_RETURN_IF_ERROR(w->Append(values.data(), static_cast<int64_t>(values.size())));
  FS_RETURN_IF_ERROR(w->Finish());
  job->feature_dim = dim;
  job->sparse_features = true;
  return Status::OK();
}

}  // namespace foresight::datasets::internal
