// Feature rows to features.npy (normalisation, f16), string-id relabelling,
// and the feature readers shared by the formats.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "foresight/core/logging.h"
#include "foresight/datasets/tokenizer.h"
#include "preprocess_internal.h"

namespace foresight::datasets::internal {
namespace {
constexpr int64_t kBlockBytes = int64_t{4} << 20;
}  // namespace

StatusOr<std::unique_ptr<FeatureSink>> FeatureSink::Create(const std::string& path, int64_t dim, DType dtype,
                                                           FeatureNorm norm, ThreadPool* pool) {
  if (dtype != DType::kF32 && dtype != DType::kF16) {
    return InvalidArgument(std::string("feature dtype must be f32 or f16, got ") + DTypeName(dtype));
  }
  std::unique_ptr<FeatureSink> s(new FeatureSink());
  FS_ASSIGN_OR_RETURN(s->writer_, storage::NpyWriter::Create(path, dtype, {dim}));
  s->dim_ = dim;
  s->dtype_ = dtype;
  s->norm_ = norm;
  s->pool_ = pool;
  s->capacity_rows_ = std::max<int64_t>(1, kBlockBytes / std::max<int64_t>(1, dim * 4));
  return s;
}

Status FeatureSink::AppendRow(const float* row) {
  if (static_cast<size_t>((block_rows_ + 1) * dim_) > block_.size()) {
    // The block grows with the rows up to capacity_rows_: a small file does
    // not pay for zeroing the full 4 MiB block.
    const int64_t rows = std::min(capacity_rows_, std::max<int64_t>({2 * block_rows_, block_rows_ + 1, 64}));
    block_.resize(static_cast<size_t>(rows * dim_));
  }
  float* dst = block_.data() + block_rows_ * dim_;
  if (norm_ == FeatureNorm::kRow) {
    // Summed in a fixed order (left to right): deterministic.
    double sum = 0;
    for (int64_t j = 0; j < dim_; ++j) sum += row[j];
    if (sum != 0) {
      const double inv = 1.0 / sum;
      for (int64_t j = 0; j < dim_; ++j) dst[j] = static_cast<float>(row[j] * inv);
    } else {
      std::fill(dst, dst + dim_, 0.0f);  // an all-zero row stays zero
    }
  } else if (dim_ > 0) {  // [N, 0] features: block_ is empty and its data() may be null
    std::memcpy(dst, row, static_cast<size_t>(dim_) * sizeof(float));
  }
  ++rows_;
  if (++block_rows_ == capacity_rows_) return Flush();
  return Status::OK();
}

Status FeatureSink::Flush() {
  if (block_rows_ == 0) return Status::OK();
  const int64_t n = block_rows_ * dim_;
  Status s;
  if (dtype_ == DType::kF16) {
    half_.resize(static_cast<size_t>(n));
    const float* src = block_.data();
    uint16_t* dst = half_.data();
    pool_->ParallelFor(n, 1 << 16, [src, dst](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = FloatToHalf(src[i]);
    });
    s = writer_->Append(half_.data(), block_rows_);
  } else {
    s = writer_->Append(block_.data(), block_rows_);
  }
  block_rows_ = 0;
  return s;
}

Status FeatureSink::Finish() {
  FS_RETURN_IF_ERROR(Flush());
  return writer_->Finish();
}

int64_t StringIds::Intern(std::string_view token) {
  auto [it, inserted] = map_.try_emplace(std::string(token), size());
  if (inserted) names_.emplace_back(token);
  return it->second;
}

int64_t StringIds::Find(std::string_view token) const {
  auto it = map_.find(std::string(token));
  return it == map_.end() ? -1 : it->second;
}

Status StringIds::Write(const std::string& path) const {
  size_t width = 1;
  for (const auto& n : names_) width = std::max(width, n.size());
  FS_ASSIGN_OR_RETURN(auto w, storage::NpyWriter::CreateBytes(path, static_cast<int>(width)));
  // Blocks of about 1 MiB, no larger than the names need.
  const size_t block = std::min(names_.size(), std::max<size_t>(1, (size_t{1} << 20) / width));
  std::vector<char> buf(block * width);
  for (size_t i = 0; i < names_.size(); i += block) {
    const size_t k = std::min(block, names_.size() - i);
    std::fill(buf.begin(), buf.end(), '\0');
    for (size_t j = 0; j < k; ++j) std::memcpy(buf.data() + j * width, names_[i + j].data(), names_[i + j].size());
    FS_RETURN_IF_ERROR(w->Append(buf.data(), static_cast<int64_t>(k)));
  }
  return w->Finish();
}

void Job::Warn(const std::string& text) {
  FS_LOG(WARNING) << text;
  warnings.push_back(text);
}

Status ParseFeature(const LineReader& reader, std::string_view field, int64_t column, float* out) {
  const FloatParse r = ParseFloat(field, out);
  if (r == FloatParse::kOk) return Status::OK();
  if (r == FloatParse::kNaN || r == FloatParse::kInf) {
    return reader.Error(std::string(r == FloatParse::kNaN ? "NaN" : "infinite") + " feature in column " +
                        std::to_string(column));
  }
  return reader.Error("feature in column " + std::to_string(column) + " is " + FloatParseReason(r) + ": " +
                      Quote(field));
}

namespace {

template <typename T>
float AsFloat(const void* p, int64_t i) {
  return static_cast<float>(static_cast<const T*>(p)[i]);
}

}  // namespace

StatusOr<int64_t> CopyNpyFeatures(Job* job, const std::string& path) {
  storage::NpyInfo info;
  FS_ASSIGN_OR_RETURN(Tensor t, storage::MmapNpy(path, &info));
  if (info.is_bytes) return InvalidArgument(path + ": features must be numeric, got byte strings");
  if (t.dim() != 2) {
    return InvalidArgument(path + ": features must be a 2-D array [N, F], got shape " + ShapeToString(t.shape()));
  }
  const int64_t n = t.size(0), f = t.size(1);
  FS_ASSIGN_OR_RETURN(auto sink, FeatureSink::Create(job->Staging(storage::kFeaturesFile), f, job->feature_dtype,
                                                     job->opt->normalize_features, job->pool));
  std::vector<float> row(static_cast<size_t>(f));
  const char* base = static_cast<const char*>(t.raw_data());
  const size_t row_bytes = static_cast<size_t>(f) * t.element_size();
  for (int64_t i = 0; i < n; ++i) {
    const void* src = base + static_cast<size_t>(i) * row_bytes;
    switch (t.dtype()) {
      case DType::kF32: std::memcpy(row.data(), src, row_bytes); break;
      case DType::kF16:
        for (int64_t j = 0; j < f; ++j) row[j] = HalfToFloat(static_cast<const uint16_t*>(src)[j]);
        break;
      case DType::kI32: for (int64_t j = 0; j < f; ++j) row[j] = AsFloat<int32_t>(src, j); break;
      case DType::kI64: for (int64_t j = 0; j < f; ++j) row[j] = AsFloat<int64_t>(src, j); break;
      case DType::kU8: for (int64_t j = 0; j < f; ++j) row[j] = AsFloat<uint8_t>(src, j); break;
      default: return InvalidArgument(path + ": unsupported feature dtype " + DTypeName(t.dtype()));
    }
    for (int64_t j = 0; j < f; ++j) {
      if (!std::isfinite(row[j])) {
        return InvalidArgument(path + ": row " + std::to_string(i) + ": " + (std::isnan(row[j]) ? "NaN" : "infinite") +
                               " feature in column " + std::to_string(j));
      }
    }
    FS_RETURN_IF_ERROR(sink->AppendRow(row.data()));
  }
  FS_RETURN_IF_ERROR(sink->Finish());
  job->feature_dim = f;
  return n;
}

StatusOr<int64_t> CopyTextFeatures(Job* job, const std::string& path) {
  FS_ASSIGN_OR_RETURN(auto reader, LineReader::Open(path));
  std::unique_ptr<FeatureSink> sink;
  std::vector<std::string_view> fields;
  std::vector<float> row;
  std::string_view line;
  Delimiter delim = Delimiter::kAuto;
  while (reader->Next(&line)) {
    if (IsBlankOrComment(line)) continue;
    if (delim == Delimiter::kAuto) delim = DetectDelimiter(line);
    SplitFields(line, delim, &fields);
    if (!sink) {
      FS_ASSIGN_OR_RETURN(sink, FeatureSink::Create(job->Staging(storage::kFeaturesFile),
                                                    static_cast<int64_t>(fields.size()), job->feature_dtype,
                                                    job->opt->normalize_features, job->pool));
      row.resize(fields.size());
    }
    if (static_cast<int64_t>(fields.size()) != sink->dim()) {
      return reader->Error("expected " + std::to_string(sink->dim()) + " columns, got " +
                           std::to_string(fields.size()));
    }
    for (size_t j = 0; j < fields.size(); ++j) {
      FS_RETURN_IF_ERROR(ParseFeature(*reader, fields[j], static_cast<int64_t>(j) + 1, &row[j]));
    }
    FS_RETURN_IF_ERROR(sink->AppendRow(row.data()));
  }
  FS_RETURN_IF_ERROR(reader->status());
  if (!sink) return InvalidArgument(path + ": no feature rows");
  FS_RETURN_IF_ERROR(sink->Finish());
  job->feature_dim = sink->dim();
  return sink->rows();
}

Status WriteEmptyFeatures(Job* job) {
  FS_ASSIGN_OR_RETURN(auto sink, FeatureSink::Create(job->Staging(storage::kFeaturesFile), 0, job->feature_dtype,
                                                     FeatureNorm::kNone, job->pool));
  std::vector<float> none(1);
  for (int64_t i = 0; i < job->num_nodes; ++i) FS_RETURN_IF_ERROR(sink->AppendRow(none.data()));
  job->feature_dim = 0;
  return sink->Finish();
}

std::string BaseName(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t k = p.rfind('/');
  return k == std::string::npos ? p : p.substr(k + 1);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status CheckInputFile(const std::string& path, const std::string& what) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFound(what + " " + path + " does not exist");
    return ErrnoError(what + " " + path, errno);
  }
  if (S_ISDIR(st.st_mode)) return InvalidArgument(what + " " + path + " is a directory; expected a file");
  return Status::OK();
}

}  // namespace foresight::datasets::internal
