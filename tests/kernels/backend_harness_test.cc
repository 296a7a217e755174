// The backend harness itself: it must report a device whose outputs,
// errors or run-to-run bits differ from the CPU's, and accept differences
// within a case's tolerance (otherwise a GPU run could pass by accident).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "backend_harness.h"

namespace foresight::kernels::backend {
namespace {

Tensor Filled(float v, int64_t n = 1) {
  Tensor t = Tensor::Empty({n}, DType::kF32);
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = v;
  return t;
}

// A case whose output is 1 + eps on the target's pool (3 threads) and 1 on
// the reference's (1 thread).
Case ThreadDependent(float eps, Tol tol) {
  Case c;
  c.name = "thread-dependent";
  c.run = [eps](const ExecContext& ctx, Tensors&) -> StatusOr<Tensors> {
    return Tensors{Filled(ctx.pool->num_threads() == 1 ? 1.0f : 1.0f + eps)};
  };
  c.tol = {tol};
  return c;
}

TEST(BackendHarness, ReportsADifferentOutput) {
  ThreadPool one(1), three(3);
  const Target cpu{Device::Cpu(), "cpu"};
  EXPECT_NONFATAL_FAILURE(RunCase(ThreadDependent(1e-3f, kExact), cpu, &one, &three), "the CPU's is 1");
}

// Fatal failures are checked from a function of their own (gtest-spi
// cannot see the test's locals).
void RunOnCpu(const Case& c) {
  ThreadPool one(1), three(3);
  RunCase(c, Target{Device::Cpu(), "cpu"}, &one, &three);
}

void ErrorOnOneSide() {
  Case c;
  c.name = "fails on 3 threads";
  c.run = [](const ExecContext& ctx, Tensors&) -> StatusOr<Tensors> {
    if (ctx.pool->num_threads() == 3) return Internal("boom");
    return Tensors{Filled(1.0f)};
  };
  RunOnCpu(c);
}

TEST(BackendHarness, ReportsAnErrorOnOneSideOnly) { EXPECT_FATAL_FAILURE(ErrorOnOneSide(), "boom"); }

TEST(BackendHarness, ReportsADifferentError) {
  ThreadPool one(1), three(3);
  Case c;
  c.name = "errors differ";
  c.expect_error = true;
  c.run = [](const ExecContext& ctx, Tensors&) -> StatusOr<Tensors> {
    return InvalidArgument(ctx.pool->num_threads() == 3 ? "ids[4] is bad" : "ids[3] is bad");
  };
  EXPECT_NONFATAL_FAILURE(RunCase(c, Target{Device::Cpu(), "cpu"}, &one, &three), "a different error");
}

void ErrorCaseSucceeds() {
  Case c;
  c.name = "should fail";
  c.expect_error = true;
  c.run = [](const ExecContext&, Tensors&) -> StatusOr<Tensors> { return Tensors{Filled(1.0f)}; };
  RunOnCpu(c);
}

TEST(BackendHarness, ReportsAnErrorCaseThatSucceeds) {
  EXPECT_FATAL_FAILURE(ErrorCaseSucceeds(), "expected an error");
}

TEST(BackendHarness, ToleranceAcceptsRoundingAndRejectsMore) {
  const Tensor want = Filled(1.0f);
  Compare("within", want, Filled(1.0f + 1e-6f), kRounding);
  EXPECT_NONFATAL_FAILURE(Compare("beyond", want, Filled(1.0f + 1e-3f), kRounding), "tolerance");
  // Integers are compared exactly whatever the tolerance.
  Tensor a = Tensor::Zeros({3}, DType::kI64), b = Tensor::Zeros({3}, DType::kI64);
  b.data<int64_t>()[1] = 1;
  EXPECT_NONFATAL_FAILURE(Compare("ids", a, b, kMath), "expected the same bits");
}

void ShapesDiffer() { Compare("shape", Tensor::Zeros({3}, DType::kI64), Tensor::Zeros({4}, DType::kI64), kExact); }

TEST(BackendHarness, ReportsADifferentShape) { EXPECT_FATAL_FAILURE(ShapesDiffer(), "[3]"); }

}  // namespace
}  // namespace foresight::kernels::backend
