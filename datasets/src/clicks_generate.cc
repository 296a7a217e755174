// `foresight generate clicks`: a synthetic click log labelled by a hidden
// teacher DLRM (datasets/clicks.h).
//
// Why the teacher looks the way it does. A teacher with 26 large random
// tables is not learnable: most lookups hit rows a student sees a handful of
// times, whose random teacher embeddings it can never recover, so students
// stop about 0.1 AUC below the teacher. The default here keeps the DLRM
// shape (tables, bottom MLP, dot interaction, top MLP, sigmoid) but makes the
// signal live where data lives:
//  * Each row's teacher embedding is scaled by its popularity,
//    s(rank) = P / (P + rank) (P = --popularity-scale, 2000): rows a 5M-sample
//    log visits hundreds of times carry the signal, the long tail (which a
//    student leaves near its small initial values) carries little, so an
//    unlearned tail row is almost right.
//  * Tables are low rank (--teacher-rank 4): row = A_t z_row with z_row in
//    R^rank, so the interactions have few directions to find.
//  * The first --informative-tables (8) tables carry full weight; the others
//    a quarter of it, so they matter but noise in their tails matters less.
//  * The logit is standardised to a standard deviation of --sharpness (1.6)
//    and shifted to the mean click rate --ctr (0.25): a moderate temperature,
//    so the teacher's AUC is Criteo-like (~0.83) instead of near 1, and
//    labels are not a deterministic function a student must match exactly.
// Measured (bench/RESULTS.md): a same-shape student ends 0.023 AUC below
// this teacher after one pass over 4M samples (the train split of 5M); with
// rows at full weight, full-rank tables and all tables informative it ends
// 0.12 below (320K samples).
// Every draw is a Philox value keyed by the seed and the sample index (or
// the table row), so chunks run in parallel in any order with the same bytes.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "foresight/core/progress.h"
#include "foresight/core/rng.h"
#include "foresight/core/thread_pool.h"
#include "foresight/datasets/clicks.h"
#include "foresight/storage/clicks_dataset.h"
#include "foresight/storage/dataset.h"
#include "permutation.h"
#include "zipf.h"

namespace foresight::datasets {
namespace {

using internal::FeistelPermutation;
using internal::ZipfSampler;

enum Stream : uint64_t { kSamples = 1, kTableRows = 2, kWeights = 3, kPerm = 4, kCalibration = 5 };

constexpr int64_t kChunk = 8192;                // samples per parallel task
constexpr int64_t kCalibrationSamples = 16384;  // samples that fix the logit's mean and scale
constexpr int64_t kAucBins = int64_t{1} << 20;  // probability bins of the test AUC
constexpr int64_t kBottomHidden = 64;
constexpr int64_t kTopHidden = 64;
constexpr float kWeakTableScale = 0.25f;
// Draw counters within a sample's stream.
constexpr uint64_t kLabelDraw = uint64_t{1} << 20;
constexpr uint64_t kIdDrawBase = uint64_t{1} << 24;

double Uniform53(const Uint4& b) {
  return static_cast<double>(((static_cast<uint64_t>(b.x) << 32) | b.y) >> 11) * (1.0 / 9007199254740992.0);
}

// Two standard normals from one Philox draw (Box-Muller).
void Normals(const Uint4& b, float* a, float* c) {
  const double u1 = (static_cast<double>(b.x) + 1.0) * (1.0 / 4294967296.0);  // (0, 1]
  const double u2 = static_cast<double>(b.y) * (1.0 / 4294967296.0);
  const double r = std::sqrt(-2.0 * std::log(u1));
  *a = static_cast<float>(r * std::cos(6.283185307179586 * u2));
  const double u3 = (static_cast<double>(b.z) + 1.0) * (1.0 / 4294967296.0);
  const double u4 = static_cast<double>(b.w) * (1.0 / 4294967296.0);
  *c = static_cast<float>(std::sqrt(-2.0 * std::log(u3)) * std::cos(6.283185307179586 * u4));
}

// n normals N(0, stddev^2) of stream `key`, element `e`.
void FillNormals(const RngKey& key, uint64_t e, int64_t n, float stddev, float* out) {
  for (int64_t i = 0; i < n; i += 2) {
    float a, c;
    Normals(key.Bits(e, static_cast<uint64_t>(i / 2)), &a, &c);
    out[i] = a * stddev;
    if (i + 1 < n) out[i + 1] = c * stddev;
  }
}

struct Teacher {
  const GenerateClicksOptions* o = nullptr;
  int64_t T = 0, D = 0, Dd = 0, R = 0, rank = 0, max_bag = 0, top_in = 0;
  std::vector<int64_t> bag;
  std::vector<int64_t> bag_offset;  // first id slot of table t in a sample
  int64_t ids_per_sample = 0;
  RngKey rows_key;
  std::vector<float> A;               // [T, D, rank]
  std::vector<float> table_scale;     // [T]
  std::vector<float> dense_scale;     // [Dd]
  std::vector<float> w1, b1, w2, b2;  // bottom: [Hb, Dd], [Hb], [D, Hb], [D]
  std::vector<float> w3, b3, w4;      // top: [Ht, top_in], [Ht], [Ht]
  float b4 = 0;
  std::vector<FeistelPermutation> perm;
  std::unique_ptr<ZipfSampler> zipf;
  double mu = 0, sigma = 1, bias = 0;

  // Sample `i` of stream `key`: dense features, ids, the teacher's raw logit.
  double Sample(const RngKey& key, uint64_t i, float* dense, int64_t* ids, float* scratch) const {
    for (int64_t j = 0; j < Dd; j += 4) {
      const Uint4 b = key.Bits(i, static_cast<uint64_t>(j / 4));
      const uint32_t w[4] = {b.x, b.y, b.z, b.w};
      for (int64_t q = 0; q < 4 && j + q < Dd; ++q) {
        const double u = (static_cast<double>(w[q]) + 0.5) * (1.0 / 4294967296.0);
        // Exponential counts through Criteo's transform log(1 + x).
        dense[j + q] = static_cast<float>(std::log1p(-std::log(u) * dense_scale[static_cast<size_t>(j + q)]));
      }
    }
    // Bottom MLP: Dd -> Hb (ReLU) -> D.
    float* hb = scratch;
    float* vecs = hb + kBottomHidden;  // [T + 1, D]: bottom output, then pooled tables
    float* z = vecs + (T + 1) * D;     // [rank]
    float* top = z + rank + 1;         // [top_in]
    for (int64_t h = 0; h < kBottomHidden; ++h) {
      float a = b1[static_cast<size_t>(h)];
      for (int64_t j = 0; j < Dd; ++j) a += w1[static_cast<size_t>(h * Dd + j)] * dense[j];
      hb[h] = std::max(a, 0.0f);
    }
    for (int64_t d = 0; d < D; ++d) {
      float a = b2[static_cast<size_t>(d)];
      for (int64_t h = 0; h < kBottomHidden; ++h) a += w2[static_cast<size_t>(d * kBottomHidden + h)] * hb[h];
      vecs[d] = a;
    }
    // Tables: Zipf ranks, permuted ids, popularity-scaled low-rank rows, summed.
    for (int64_t t = 0; t < T; ++t) {
      float* pooled = vecs + (t + 1) * D;
      std::fill(pooled, pooled + D, 0.0f);
      for (int64_t j = 0; j < bag[static_cast<size_t>(t)]; ++j) {
        const uint64_t slot = static_cast<uint64_t>(t * max_bag + j);
        uint64_t attempt = 0;
        const int64_t r =
            (*zipf)([&] { return Uniform53(key.Bits(i, kIdDrawBase + (slot << 8) + (attempt++ & 255))); });
        ids[bag_offset[static_cast<size_t>(t)] + j] = perm[static_cast<size_t>(t)](r);
        FillNormals(rows_key, static_cast<uint64_t>(t * R + r), rank, 1.0f, z);
        const float s = table_scale[static_cast<size_t>(t)] *
                        static_cast<float>(o->popularity_scale / (o->popularity_scale + static_cast<double>(r)));
        const float* a = A.data() + t * D * rank;
        for (int64_t d = 0; d < D; ++d) {
          float v = 0;
          for (int64_t k = 0; k < rank; ++k) v += a[d * rank + k] * z[k];
          pooled[d] += s * v;
        }
      }
    }
    // Dot interaction: the bottom output, then every pair i < j of the T + 1 vectors.
    int64_t n = 0;
    for (int64_t d = 0; d < D; ++d) top[n++] = vecs[d];
    for (int64_t a = 0; a <= T; ++a) {
      for (int64_t b = a + 1; b <= T; ++b) {
        float dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += vecs[a * D + d] * vecs[b * D + d];
        top[n++] = dot;
      }
    }
    // Top MLP: top_in -> Ht (ReLU) -> 1.
    double logit = b4;
    for (int64_t h = 0; h < kTopHidden; ++h) {
      float a = b3[static_cast<size_t>(h)];
      const float* w = w3.data() + h * top_in;
      for (int64_t j = 0; j < top_in; ++j) a += w[j] * top[j];
      logit += static_cast<double>(w4[static_cast<size_t>(h)]) * std::max(a, 0.0f);
    }
    return logit;
  }
  int64_t ScratchFloats() const { return kBottomHidden + (T + 1) * D + rank + 1 + top_in; }
  double Probability(double raw) const { return 1.0 / (1.0 + std::exp(-(o->sharpness * (raw - mu) / sigma + bias))); }
};

Status CheckOptions(const GenerateClicksOptions& o) {
  if (o.output.empty()) return InvalidArgument("--output is required");
  if (o.num_tables < 1) return InvalidArgument("--tables must be >= 1");
  if (o.rows < 1) return InvalidArgument("--rows must be >= 1");
  if (o.dim < 1) return InvalidArgument("--dim must be >= 1");
  if (o.num_samples < 1) return InvalidArgument("--samples must be >= 1");
  if (o.num_dense < 0 || o.num_dense > 4096) return InvalidArgument("--dense-features must lie in [0, 4096]");
  if (!(o.zipf > 0)) return InvalidArgument("--zipf must be > 0");
  if (o.bag_sizes.size() != 1 && static_cast<int64_t>(o.bag_sizes.size()) != o.num_tables) {
    return InvalidArgument("--bag-sizes takes one size for all tables or one per table (" +
                           std::to_string(o.num_tables) + "), got " + std::to_string(o.bag_sizes.size()));
  }
  for (int64_t b : o.bag_sizes) {
    if (b < 1 || b > 255) return InvalidArgument("--bag-sizes must lie in [1, 255], got " + std::to_string(b));
  }
  if (o.informative_tables < 0) return InvalidArgument("--informative-tables must be >= 0");
  if (o.rank < 1 || o.rank > 64) return InvalidArgument("--teacher-rank must lie in [1, 64]");
  if (!(o.popularity_scale > 0)) return InvalidArgument("--popularity-scale must be > 0");
  if (!(o.sharpness > 0)) return InvalidArgument("--sharpness must be > 0");
  if (!(o.ctr > 0 && o.ctr < 1)) return InvalidArgument("--ctr must lie in (0, 1)");
  if (o.split_fractions.size() != 3) return InvalidArgument("--split takes three fractions: train,val,test");
  double sum = 0;
  for (double f : o.split_fractions) {
    if (!(f >= 0 && f <= 1)) return InvalidArgument("--split fractions must lie in [0, 1]");
    sum += f;
  }
  if (std::fabs(sum - 1.0) > 1e-6) return InvalidArgument("--split fractions must sum to 1");
  return Status::OK();
}

// Builds the teacher's weights and fixes the logit's scale and shift on a
// calibration stream.
void BuildTeacher(const GenerateClicksOptions& o, const RngKey& root, Teacher* t) {
  t->o = &o;
  t->T = o.num_tables;
  t->D = o.dim;
  t->Dd = o.num_dense;
  t->R = o.rows;
  t->rank = o.rank;
  t->top_in = t->D + t->T * (t->T + 1) / 2;
  for (int64_t k = 0; k < t->T; ++k) {
    const int64_t b = o.bag_sizes.size() == 1 ? o.bag_sizes[0] : o.bag_sizes[static_cast<size_t>(k)];
    t->bag.push_back(b);
    t->bag_offset.push_back(t->ids_per_sample);
    t->ids_per_sample += b;
    t->max_bag = std::max(t->max_bag, b);
    t->perm.emplace_back(o.rows, Mix64(root.Fold(kPerm).key ^ static_cast<uint64_t>(k)));
    t->table_scale.push_back(k < o.informative_tables ? 1.0f : kWeakTableScale);
  }
  t->rows_key = root.Fold(kTableRows);
  t->zipf = std::make_unique<ZipfSampler>(o.rows, o.zipf);
  const RngKey w = root.Fold(kWeights);
  uint64_t e = 0;
  auto normals = [&](int64_t n, double stddev) {
    std::vector<float> v(static_cast<size_t>(n));
    FillNormals(w, e++, n, static_cast<float>(stddev), v.data());
    return v;
  };
  // Rows get entries of variance 1/D (unit norm on average) before scaling.
  t->A = normals(t->T * t->D * t->rank, 1.0 / std::sqrt(static_cast<double>(t->D * t->rank)));
  t->dense_scale.resize(static_cast<size_t>(t->Dd));
  for (int64_t j = 0; j < t->Dd; ++j) t->dense_scale[static_cast<size_t>(j)] = static_cast<float>(1 << (j % 8));
  // He initialisation: activations keep their scale through the ReLUs.
  t->w1 = normals(kBottomHidden * std::max<int64_t>(t->Dd, 1), std::sqrt(2.0 / std::max<int64_t>(t->Dd, 1)));
  t->b1 = normals(kBottomHidden, 0.1);
  t->w2 = normals(t->D * kBottomHidden, std::sqrt(1.0 / kBottomHidden));
  t->b2 = normals(t->D, 0.1);
  t->w3 = normals(kTopHidden * t->top_in, std::sqrt(2.0 / static_cast<double>(t->top_in)));
  t->b3 = normals(kTopHidden, 0.1);
  t->w4 = normals(kTopHidden, std::sqrt(1.0 / kTopHidden));

  // Calibration: mean and spread of the raw logit, then the shift giving the
  // mean click rate (bisection; the mean probability rises with the shift).
  const RngKey cal = root.Fold(kCalibration);
  std::vector<double> raw(static_cast<size_t>(kCalibrationSamples));
  std::vector<float> dense(static_cast<size_t>(std::max<int64_t>(t->Dd, 1)));
  std::vector<int64_t> ids(static_cast<size_t>(t->ids_per_sample));
  std::vector<float> scratch(static_cast<size_t>(t->ScratchFloats()));
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < kCalibrationSamples; ++i) {
    raw[static_cast<size_t>(i)] = t->Sample(cal, static_cast<uint64_t>(i), dense.data(), ids.data(), scratch.data());
    sum += raw[static_cast<size_t>(i)];
  }
  t->mu = sum / kCalibrationSamples;
  for (double r : raw) sq += (r - t->mu) * (r - t->mu);
  t->sigma = std::sqrt(sq / kCalibrationSamples);
  if (!(t->sigma > 1e-12)) t->sigma = 1.0;  // a constant teacher (no tables or features to vary)
  double lo = -30, hi = 30;
  for (int it = 0; it < 100; ++it) {
    t->bias = 0.5 * (lo + hi);
    double mean = 0;
    for (double r : raw) mean += t->Probability(r);
    (mean / kCalibrationSamples < o.ctr ? lo : hi) = t->bias;
  }
}

struct ChunkOut {
  std::vector<float> dense, prob;
  std::vector<uint8_t> labels;
  std::vector<int64_t> ids;  // [n, ids_per_sample]
};

}  // namespace

Status GenerateClicks(const GenerateClicksOptions& o, const ExecContext& ctx, GenerateClicksReport* report) {
  FS_RETURN_IF_ERROR(CheckOptions(o));
  ThreadPool* pool = ctx.pool != nullptr ? ctx.pool : DefaultThreadPool();
  const RngKey root = RngKey::FromSeed(o.seed).Fold(static_cast<uint64_t>(RngPurpose::kGenerate)).Fold(0xC11C5);
  Teacher teacher;
  BuildTeacher(o, root, &teacher);
  const Teacher& t = teacher;
  const RngKey samples_key = root.Fold(kSamples);

  const int64_t n = o.num_samples;
  const int64_t train_end = std::llround(static_cast<double>(n) * o.split_fractions[0]);
  const int64_t val_end =
      std::min<int64_t>(n, std::llround(static_cast<double>(n) * (o.split_fractions[0] + o.split_fractions[1])));

  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::DatasetWriter> writer,
                      storage::DatasetWriter::Create(o.output, o.overwrite));
  const bool wide = o.rows > INT32_MAX;
  FS_ASSIGN_OR_RETURN(auto dense_w,
                      writer->OpenArray(std::string(storage::kClickDenseArray) + ".npy", DType::kF32, {o.num_dense}));
  FS_ASSIGN_OR_RETURN(auto labels_w,
                      writer->OpenArray(std::string(storage::kClickLabelsArray) + ".npy", DType::kU8, {}));
  FS_ASSIGN_OR_RETURN(auto prob_w, writer->OpenArray(std::string(storage::kClickProbArray) + ".npy", DType::kF32, {}));
  std::vector<std::unique_ptr<storage::NpyWriter>> ids_w;
  for (int64_t k = 0; k < t.T; ++k) {
    const int64_t b = t.bag[static_cast<size_t>(k)];
    FS_ASSIGN_OR_RETURN(auto w, writer->OpenArray(storage::ClickIdsArray(k) + ".npy", wide ? DType::kI64 : DType::kI32,
                                                  b == 1 ? Shape{} : Shape{b}));
    ids_w.push_back(std::move(w));
  }

  std::vector<int64_t> auc_pos(static_cast<size_t>(kAucBins), 0), auc_neg(static_cast<size_t>(kAucBins), 0);
  double test_logloss = 0;
  int64_t positives = 0;
  const int64_t chunks_per_round = std::max(1, pool->num_threads()) * 4;
  std::vector<ChunkOut> outs(static_cast<size_t>(chunks_per_round));
  std::vector<int32_t> narrow;
  std::vector<int64_t> table_ids;
  ProgressOptions po;
  po.unit = "samples";
  Progress progress("generate clicks", n, po);
  for (int64_t first = 0; first < n; first += chunks_per_round * kChunk) {
    const int64_t round_chunks = std::min(chunks_per_round, (n - first + kChunk - 1) / kChunk);
    pool->ParallelFor(round_chunks, 1, [&](int64_t cb, int64_t ce) {
      std::vector<float> scratch(static_cast<size_t>(t.ScratchFloats()));
      for (int64_t c = cb; c < ce; ++c) {
        ChunkOut& out = outs[static_cast<size_t>(c)];
        const int64_t b = first + c * kChunk, e = std::min(n, b + kChunk), m = e - b;
        out.dense.resize(static_cast<size_t>(m * t.Dd));
        out.prob.resize(static_cast<size_t>(m));
        out.labels.resize(static_cast<size_t>(m));
        out.ids.resize(static_cast<size_t>(m * t.ids_per_sample));
        for (int64_t i = 0; i < m; ++i) {
          const uint64_t s = static_cast<uint64_t>(b + i);
          const double raw = t.Sample(samples_key, s, out.dense.data() + i * t.Dd,
                                      out.ids.data() + i * t.ids_per_sample, scratch.data());
          const double p = t.Probability(raw);
          out.prob[static_cast<size_t>(i)] = static_cast<float>(p);
          out.labels[static_cast<size_t>(i)] = Uniform53(samples_key.Bits(s, kLabelDraw)) < p ? 1 : 0;
        }
      }
    });
    for (int64_t c = 0; c < round_chunks; ++c) {
      const ChunkOut& out = outs[static_cast<size_t>(c)];
      const int64_t b = first + c * kChunk, m = static_cast<int64_t>(out.labels.size());
      FS_RETURN_IF_ERROR(dense_w->Append(out.dense.data(), m));
      FS_RETURN_IF_ERROR(labels_w->Append(out.labels.data(), m));
      FS_RETURN_IF_ERROR(prob_w->Append(out.prob.data(), m));
      for (int64_t k = 0; k < t.T; ++k) {
        const int64_t bag = t.bag[static_cast<size_t>(k)], off = t.bag_offset[static_cast<size_t>(k)];
        table_ids.resize(static_cast<size_t>(m * bag));
        for (int64_t i = 0; i < m; ++i) {
          std::copy_n(out.ids.data() + i * t.ids_per_sample + off, bag, table_ids.data() + i * bag);
        }
        if (wide) {
          FS_RETURN_IF_ERROR(ids_w[static_cast<size_t>(k)]->Append(table_ids.data(), m));
        } else {
          narrow.assign(table_ids.begin(), table_ids.end());
          FS_RETURN_IF_ERROR(ids_w[static_cast<size_t>(k)]->Append(narrow.data(), m));
        }
      }
      for (int64_t i = 0; i < m; ++i) {
        const uint8_t y = out.labels[static_cast<size_t>(i)];
        positives += y;
        if (b + i < val_end) continue;  // test split only below
        const double p = out.prob[static_cast<size_t>(i)];
        const int64_t bin = std::min<int64_t>(kAucBins - 1, static_cast<int64_t>(p * kAucBins));
        (y ? auc_pos : auc_neg)[static_cast<size_t>(bin)]++;
        test_logloss -= y ? std::log(std::max(p, 1e-12)) : std::log(std::max(1.0 - p, 1e-12));
      }
      progress.Advance(m);
    }
  }
  progress.Finish(std::to_string(positives) + " positive");
  FS_RETURN_IF_ERROR(dense_w->Finish());
  FS_RETURN_IF_ERROR(labels_w->Finish());
  FS_RETURN_IF_ERROR(prob_w->Finish());
  for (auto& w : ids_w) FS_RETURN_IF_ERROR(w->Finish());

  // AUC over probability bins: ties inside a bin count one half (the bins are
  // 2^-20 wide, far below any difference a model's AUC can resolve).
  double pairs = 0, neg_below = 0, total_pos = 0, total_neg = 0;
  for (int64_t bin = 0; bin < kAucBins; ++bin) {
    const double p = static_cast<double>(auc_pos[static_cast<size_t>(bin)]);
    const double q = static_cast<double>(auc_neg[static_cast<size_t>(bin)]);
    pairs += p * (neg_below + 0.5 * q);
    neg_below += q;
    total_pos += p;
    total_neg += q;
  }
  const int64_t num_test = n - val_end;
  const double auc = total_pos > 0 && total_neg > 0 ? pairs / (total_pos * total_neg) : std::nan("");
  const double logloss = num_test > 0 ? test_logloss / static_cast<double>(num_test) : std::nan("");

  storage::ClicksLayout layout;
  layout.num_samples = n;
  for (int64_t j = 0; j < o.num_dense; ++j) layout.dense.push_back("I" + std::to_string(j + 1));
  for (int64_t k = 0; k < t.T; ++k) {
    storage::ClickField f;
    f.name = "C" + std::to_string(k + 1);
    f.rows = o.rows;
    f.bag_size = t.bag[static_cast<size_t>(k)];
    layout.fields.push_back(f);
  }
  layout.train = {0, train_end};
  layout.val = {train_end, val_end};
  layout.test = {val_end, n};
  layout.id_mode = "generated";
  storage::DatasetManifest& m = writer->manifest();
  m.kind = storage::kKindClicks;
  m.name = o.name;
  m.clicks = layout.ToJson();
  auto number_or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  m.clicks["teacher"] = {
      {"test_auc", number_or_null(auc)},
      {"test_logloss", number_or_null(logloss)},
      {"embedding_dim", o.dim},
      {"bottom_mlp", {o.num_dense, kBottomHidden, o.dim}},
      {"top_mlp", {t.top_in, kTopHidden, 1}},
      {"interaction", "dot"},
      {"pooling", "sum"},
  };
  m.source = {
      {"tool", "foresight generate clicks"},
      {"seed", o.seed},
      {"tables", o.num_tables},
      {"rows", o.rows},
      {"dim", o.dim},
      {"samples", o.num_samples},
      {"dense_features", o.num_dense},
      {"bag_sizes", o.bag_sizes},
      {"zipf", o.zipf},
      {"informative_tables", o.informative_tables},
      {"teacher_rank", o.rank},
      {"popularity_scale", o.popularity_scale},
      {"sharpness", o.sharpness},
      {"ctr", o.ctr},
      {"positives", positives},
  };
  FS_RETURN_IF_ERROR(writer->Commit());
  if (report != nullptr) {
    report->num_samples = n;
    report->num_train = train_end;
    report->num_val = val_end - train_end;
    report->num_test = num_test;
    report->positives = positives;
    report->teacher_test_auc = auc;
    report->teacher_test_logloss = logloss;
  }
  return Status::OK();
}

}  // namespace foresight::datasets
