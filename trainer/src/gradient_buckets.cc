#include "gradient_buckets.h"

#include <cstring>
#include <string>

#include "foresight/core/stopwatch.h"

namespace foresight::trainer::internal {

GradientBuckets::GradientBuckets(Communicator* comm, std::vector<autograd::Parameter*> params, int64_t bucket_bytes)
    : comm_(comm), params_(std::move(params)), bucket_values_(bucket_bytes / static_cast<int64_t>(sizeof(float))) {
  packed_.assign(params_.size(), 0);
  // Reverse parameter order: the order backward usually finishes the layers.
  std::vector<int> order;
  for (int i = static_cast<int>(params_.size()) - 1; i >= 0; --i) order.push_back(i);
  Plan(order);
}

void GradientBuckets::Plan(const std::vector<int>& order) {
  buckets_.clear();
  bucket_of_.assign(params_.size(), -1);
  fill_order_ = order;
  gradient_bytes_ = 0;
  for (int i : order) {
    const int64_t n = params_[i]->value().numel();
    if (buckets_.empty() || (buckets_.back().values > 0 && buckets_.back().values + n > bucket_values_)) {
      buckets_.emplace_back();
    }
    Bucket& b = buckets_.back();
    b.params.push_back(i);
    b.at.push_back(b.values);
    b.values += n;
    bucket_of_[i] = static_cast<int>(buckets_.size()) - 1;
    gradient_bytes_ += n * static_cast<int64_t>(sizeof(float));
  }
  for (Bucket& b : buckets_) b.data.assign(static_cast<size_t>(b.values) + b.params.size(), 0.0f);
}

Status GradientBuckets::Replan(const std::vector<int>& ready) {
  if (armed_) return Internal("data parallel: gradient buckets re-planned during a step");
  const int n = static_cast<int>(params_.size());
  std::vector<char> seen(params_.size(), 0);
  std::vector<int> order;
  for (int i : ready) {
    if (i < 0 || i >= n || seen[i]) {
      return InvalidArgument("data parallel: gradient-ready order names parameter " + std::to_string(i) +
                             (i < 0 || i >= n ? " of " + std::to_string(n) : " twice"));
    }
    seen[i] = 1;
    order.push_back(i);
  }
  // Parameters no hook reported keep their planned place, after the rest.
  for (int i : fill_order_) {
    if (!seen[i]) order.push_back(i);
  }
  Plan(order);
  return Status::OK();
}

Status GradientBuckets::LearnOrder() {
  if (learned_) return Status::OK();
  if (armed_) return Internal("data parallel: LearnOrder before the step's Finish");
  // Rank 0's order, padded with -1 to one entry per parameter, so every
  // rank sends the same count.
  Tensor order = Tensor::Empty({static_cast<int64_t>(params_.size())}, DType::kI64);
  int64_t* o = order.data<int64_t>();
  for (size_t i = 0; i < params_.size(); ++i) o[i] = i < recorded_.size() ? recorded_[i] : -1;
  FS_RETURN_IF_ERROR(comm_->Broadcast(&order, /*root=*/0));
  std::vector<int> ready;
  for (size_t i = 0; i < params_.size() && o[i] >= 0; ++i) ready.push_back(static_cast<int>(o[i]));
  FS_RETURN_IF_ERROR(Replan(ready));
  learned_ = true;
  return Status::OK();
}

GradientBuckets::~GradientBuckets() {
  for (Bucket& b : buckets_) {
    if (b.pending.valid()) (void)comm_->Wait(&b.pending);
  }
  if (armed_) {
    for (autograd::Parameter* p : params_) p->SetGradReadyHook(nullptr);
  }
}

void GradientBuckets::Arm(float scale) {
  scale_ = scale;
  next_start_ = 0;
  hook_seconds_ = 0;
  error_ = Status::OK();
  std::fill(packed_.begin(), packed_.end(), 0);
  for (Bucket& b : buckets_) {
    b.remaining = static_cast<int>(b.params.size());
    b.started = false;
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    params_[i]->SetGradReadyHook([this, i](autograd::Parameter&) { OnReady(static_cast<int>(i)); });
  }
  armed_ = true;
  recording_ = !recorded_once_;
  recorded_once_ = true;
}

void GradientBuckets::OnReady(int index) {
  if (!error_.ok() || packed_[index]) return;
  Stopwatch watch;
  if (recording_) recorded_.push_back(index);
  Pack(index);
  StartReady();
  // Open MPI moves started sums along only inside MPI calls.
  if (error_.ok()) error_ = comm_->Progress();
  hook_seconds_ += watch.Lap();
}

void GradientBuckets::Pack(int index) {
  Bucket& b = buckets_[bucket_of_[index]];
  size_t slot = 0;
  while (b.params[slot] != index) ++slot;
  const autograd::Parameter& p = *params_[index];
  const int64_t n = p.value().numel();
  float* out = b.data.data() + b.at[slot];
  float* flag = b.data.data() + b.values + slot;
  if (p.grad().defined()) {
    if (!p.grad().is_contiguous() || p.grad().numel() != n || p.grad().dtype() != DType::kF32 ||
        !p.grad().device().is_cpu()) {
      error_ = Internal("data parallel: the gradient of " + p.name() + " is " + p.grad().ToString());
      return;
    }
    const float* g = p.grad().data<float>();
    for (int64_t k = 0; k < n; ++k) out[k] = g[k] * scale_;
    *flag = 1.0f;
  } else {
    std::memset(out, 0, static_cast<size_t>(n) * sizeof(float));
    *flag = 0.0f;
  }
  packed_[index] = 1;
  --b.remaining;
}

void GradientBuckets::StartReady() {
  while (error_.ok() && next_start_ < static_cast<int>(buckets_.size()) && buckets_[next_start_].remaining == 0) {
    Bucket& b = buckets_[next_start_];
    error_ = comm_->StartAllReduceSum(b.data.data(), static_cast<int64_t>(b.data.size()),
                                      Communicator::SumType::kF32, &b.pending);
    b.started = true;
    ++next_start_;
  }
}

Status GradientBuckets::StartRest() {
  for (size_t i = 0; i < params_.size() && error_.ok(); ++i) {
    if (!packed_[i]) Pack(static_cast<int>(i));
  }
  StartReady();
  return error_;
}

Status GradientBuckets::Finish() {
  for (autograd::Parameter* p : params_) p->SetGradReadyHook(nullptr);
  armed_ = false;
  recording_ = false;
  FS_RETURN_IF_ERROR(error_);
  if (next_start_ != static_cast<int>(buckets_.size())) {
    return Internal("data parallel: Finish before every gradient bucket was started (StartRest)");
  }
  for (Bucket& b : buckets_) FS_RETURN_IF_ERROR(comm_->Wait(&b.pending));
  for (const Bucket& b : buckets_) {
    for (size_t slot = 0; slot < b.params.size(); ++slot) {
      if (b.data[static_cast<size_t>(b.values) + slot] == 0.0f) continue;  // no rank had a gradient
      autograd::Parameter& p = *params_[b.params[slot]];
      const int64_t n = p.value().numel();
      if (!p.grad().defined()) p.mutable_grad() = Tensor::Zeros(p.value().shape(), DType::kF32);
      std::memcpy(p.mutable_grad().data<float>(), b.data.data() + b.at[slot], static_cast<size_t>(n) * sizeof(float));
    }
  }
  return Status::OK();
}

}  // namespace foresight::trainer::internal
