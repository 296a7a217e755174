// Log-softmax, negative log-likelihood and accuracy. Reductions over rows use
// fixed chunks of kLossRowGrain rows, combined in chunk order.
#include <cmath>
#include <string>
#include <vector>

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

namespace {

constexpr int64_t kLossRowGrain = 1024;

template <typename L>
int64_t LabelAt(const Tensor& labels, int64_t i) {
  return static_cast<int64_t>(labels.data<L>()[i]);
}

int64_t Label(const Tensor& labels, int64_t i) {
  return labels.dtype() == DType::kI32 ? LabelAt<int32_t>(labels, i) : LabelAt<int64_t>(labels, i);
}

// Counts rows with a label >= 0; fails on the first label >= c.
Status CountLabels(const char* op, const Tensor& labels, int64_t c, int64_t* count) {
  int64_t n = 0;
  for (int64_t i = 0; i < labels.size(0); ++i) {
    const int64_t y = Label(labels, i);
    if (y >= c) {
      return OutOfRange(std::string(op) + ": labels[" + std::to_string(i) + "] = " + std::to_string(y) +
                        " is out of range for " + std::to_string(c) + " classes");
    }
    n += y >= 0;
  }
  *count = n;
  return Status::OK();
}

}  // namespace

Status LogSoftmax(const ExecContext& ctx, const Tensor& logits, Tensor* out) {
  const int64_t n = logits.size(0), c = logits.size(1);
  const float* px = logits.data<float>();
  float* po = out->data<float>();
  ctx.pool->ParallelFor(n, RowGrain(c), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* x = px + r * c;
      float* o = po + r * c;
      float m = -INFINITY;
      for (int64_t j = 0; j < c; ++j) m = std::fmax(m, x[j]);
      float s = 0.0f;
      for (int64_t j = 0; j < c; ++j) s += std::exp(x[j] - m);
      const float lse = m + std::log(s);
      for (int64_t j = 0; j < c; ++j) o[j] = x[j] - lse;
    }
  });
  return Status::OK();
}

Status LogSoftmaxBackward(const ExecContext& ctx, const Tensor& out, const Tensor& grad_out,
                          Tensor* grad_logits) {
  const int64_t n = out.size(0), c = out.size(1);
  const float* py = out.data<float>();
  const float* pg = grad_out.data<float>();
  float* po = grad_logits->data<float>();
  ctx.pool->ParallelFor(n, RowGrain(c), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* y = py + r * c;
      const float* g = pg + r * c;
      float* o = po + r * c;
      float s = 0.0f;
      for (int64_t j = 0; j < c; ++j) s += g[j];
      for (int64_t j = 0; j < c; ++j) o[j] = g[j] - std::exp(y[j]) * s;
    }
  });
  return Status::OK();
}

Status NllLoss(const ExecContext& ctx, const Tensor& logp, const Tensor& labels, float* loss,
               Tensor* grad_logp) {
  const int64_t n = logp.size(0), c = logp.size(1);
  int64_t count = 0;
  FS_RETURN_IF_ERROR(CountLabels("NllLoss", labels, c, &count));
  const float* pl = logp.data<float>();
  float* pg = grad_logp != nullptr ? grad_logp->data<float>() : nullptr;
  const float g = count > 0 ? -1.0f / static_cast<float>(count) : 0.0f;
  std::vector<double> partial(static_cast<size_t>(ThreadPool::NumChunks(n, kLossRowGrain)), 0.0);
  ctx.pool->ParallelForChunks(n, kLossRowGrain, [&](int64_t chunk, int64_t r0, int64_t r1) {
    double s = 0.0;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t y = Label(labels, r);
      if (pg != nullptr) {
        float* grow = pg + r * c;
        for (int64_t j = 0; j < c; ++j) grow[j] = 0.0f;
        if (y >= 0) grow[y] = g;
      }
      if (y >= 0) s += pl[r * c + y];
    }
    partial[chunk] = s;
  });
  double total = 0.0;
  for (double s : partial) total += s;
  *loss = count > 0 ? static_cast<float>(-total / static_cast<double>(count)) : 0.0f;
  return Status::OK();
}

Status Accuracy(const ExecContext& ctx, const Tensor& scores, const Tensor& labels, int64_t* correct,
                int64_t* counted) {
  const int64_t n = scores.size(0), c = scores.size(1);
  int64_t count = 0;
  FS_RETURN_IF_ERROR(CountLabels("Accuracy", labels, c, &count));
  const float* ps = scores.data<float>();
  std::vector<int64_t> partial(static_cast<size_t>(ThreadPool::NumChunks(n, kLossRowGrain)), 0);
  ctx.pool->ParallelForChunks(n, kLossRowGrain, [&](int64_t chunk, int64_t r0, int64_t r1) {
    int64_t hits = 0;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t y = Label(labels, r);
      if (y < 0) continue;
      const float* s = ps + r * c;
      int64_t best = 0;
      for (int64_t j = 1; j < c; ++j) {
        if (s[j] > s[best]) best = j;  // first max wins
      }
      hits += best == y;
    }
    partial[chunk] = hits;
  });
  int64_t total = 0;
  for (int64_t h : partial) total += h;
  *correct = total;
  *counted = count;
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
