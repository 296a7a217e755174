#include "sasrec_eval.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "foresight/kernels/ops.h"

namespace foresight::trainer::internal {

namespace {

constexpr uint64_t kEvalStream = 0x53415345;  // "SASE": evaluation negatives

double Ndcg(int64_t rank) { return rank < 10 ? 1.0 / std::log2(static_cast<double>(rank) + 2.0) : 0.0; }

}  // namespace

Status EvaluateSasrec(const ExecContext& ctx, SasrecModel& model, const SasrecData& data, const Tensor& items,
                      SasrecSplit split, uint64_t seed, int64_t batch_users, SasrecMetrics* out) {
  *out = SasrecMetrics();
  const std::vector<int64_t>& users = data.eval_users();
  if (users.empty()) return Status::OK();
  const int64_t d = items.size(1), num_items = data.num_items();
  const float* emb = items.data<float>();
  const int32_t* seq = data.dataset().items();
  const RngKey neg_key = RngKey::FromSeed(seed).Fold(kEvalStream).Fold(split == SasrecSplit::kValid ? 0 : 1);
  double hr = 0, ndcg = 0, hr_full = 0, ndcg_full = 0;
  for (size_t begin = 0; begin < users.size(); begin += static_cast<size_t>(batch_users)) {
    const size_t end = std::min(users.size(), begin + static_cast<size_t>(batch_users));
    const int64_t b = static_cast<int64_t>(end - begin);
    std::vector<int64_t> lengths, firsts;
    int64_t tokens = 0;
    for (size_t i = begin; i < end; ++i) {
      int64_t len = 0;
      firsts.push_back(data.EvalInput(users[i], split, &len));
      lengths.push_back(len);
      tokens += len;
    }
    Tensor x = Tensor::Empty({tokens, d}, DType::kF32), pos = Tensor::Empty({tokens}, DType::kI64);
    int64_t row = 0;
    for (int64_t i = 0; i < b; ++i) {
      for (int64_t t = 0; t < lengths[i]; ++t, ++row) {
        std::memcpy(x.data<float>() + row * d, emb + seq[firsts[i] + t] * d, sizeof(float) * d);
        pos.data<int64_t>()[row] = data.max_length() - lengths[i] + t;
      }
    }
    FS_ASSIGN_OR_RETURN(autograd::PackedSequences packed, autograd::PackedSequences::FromLengths(lengths));
    autograd::Tape tape(ctx, /*training=*/false, /*record=*/false);
    FS_ASSIGN_OR_RETURN(autograd::Var h, model.Forward(tape, autograd::Var(x), pos, packed));
    // Each user's state after its last token, then its score for every item.
    Tensor last = Tensor::Empty({b, d}, DType::kF32);
    for (int64_t i = 0; i < b; ++i) {
      std::memcpy(last.data<float>() + i * d, h.value().data<float>() + (packed.offsets()[i + 1] - 1) * d,
                  sizeof(float) * d);
    }
    Tensor scores = Tensor::Empty({b, num_items + 1}, DType::kF32);
    FS_RETURN_IF_ERROR(kernels::Gemm(ctx, last, false, items, true, 1.0f, 0.0f, &scores));
    std::vector<double> part(static_cast<size_t>(4 * b), 0.0);
    ctx.pool->ParallelFor(b, 8, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        const int64_t u = users[begin + static_cast<size_t>(i)];
        const float* sc = scores.data<float>() + i * (num_items + 1);
        const int32_t target = data.Target(u, split);
        const float st = sc[target];
        int64_t rank = 0;
        for (int64_t k = 0; k < kSasrecEvalNegatives; ++k) {
          rank += sc[data.Negative(neg_key, u, static_cast<uint64_t>(k))] >= st ? 1 : 0;
        }
        // Full ranking: every item above the target, less the user's other
        // items (never negatives).
        int64_t above = 0;
        for (int64_t j = 1; j <= num_items; ++j) above += sc[j] >= st ? 1 : 0;
        for (const int32_t* it = data.SeenBegin(u); it != data.SeenEnd(u); ++it) {
          if (*it != target && sc[*it] >= st) --above;
        }
        const int64_t full = above - 1;  // the target itself
        part[static_cast<size_t>(4 * i)] = rank < 10 ? 1.0 : 0.0;
        part[static_cast<size_t>(4 * i + 1)] = Ndcg(rank);
        part[static_cast<size_t>(4 * i + 2)] = full < 10 ? 1.0 : 0.0;
        part[static_cast<size_t>(4 * i + 3)] = Ndcg(full);
      }
    });
    for (int64_t i = 0; i < b; ++i) {  // in user order: the same sums for any pool
      hr += part[static_cast<size_t>(4 * i)];
      ndcg += part[static_cast<size_t>(4 * i + 1)];
      hr_full += part[static_cast<size_t>(4 * i + 2)];
      ndcg_full += part[static_cast<size_t>(4 * i + 3)];
    }
  }
  const double n = static_cast<double>(users.size());
  out->hr10 = hr / n;
  out->ndcg10 = ndcg / n;
  out->hr10_full = hr_full / n;
  out->ndcg10_full = ndcg_full / n;
  return Status::OK();
}

}  // namespace foresight::trainer::internal
