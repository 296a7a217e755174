// GradientBuckets (trainer/src/gradient_buckets.h): the bucket plan, and
// the sums started from the gradient-ready hooks during a real Backward,
// against values every rank can compute by itself. Run as one process
// (discovered tests) and under `mpirun -np 2` / `-np 3`
// (tests/trainer/CMakeLists.txt); every rank runs every test in order.
#include "gradient_buckets.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "foresight/autograd/tape.h"
#include "foresight/core/communicator.h"
#include "testing/testing.h"

namespace foresight::trainer::internal {
namespace {

Communicator* World() {
  StatusOr<Communicator*> w = WorldCommunicator();
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? *w : nullptr;
}

std::vector<std::unique_ptr<autograd::Parameter>> MakeParams(const std::vector<int64_t>& sizes) {
  std::vector<std::unique_ptr<autograd::Parameter>> params;
  for (size_t i = 0; i < sizes.size(); ++i) {
    params.push_back(std::make_unique<autograd::Parameter>("p" + std::to_string(i),
                                                           Tensor::Zeros({sizes[i]}, DType::kF32)));
  }
  return params;
}

std::vector<autograd::Parameter*> Raw(const std::vector<std::unique_ptr<autograd::Parameter>>& params) {
  std::vector<autograd::Parameter*> raw;
  for (const auto& p : params) raw.push_back(p.get());
  return raw;
}

TEST(GradientBucketsTest, PlanFillsReverseParameterOrderAndGivesABigParameterItsOwn) {
  Communicator* c = World();
  ASSERT_NE(c, nullptr);
  auto params = MakeParams({10, 3, 5, 100, 2});
  // 8 floats per bucket: p4 (2) + p3 (100, alone: bigger than a bucket),
  // then p2 (5) + p1 (3), then p0 (10, alone).
  GradientBuckets buckets(c, Raw(params), 8 * sizeof(float));
  EXPECT_EQ(buckets.buckets(), 4);
  EXPECT_EQ(buckets.bucket_of(), (std::vector<int>{3, 2, 2, 1, 0}));
  EXPECT_EQ(buckets.gradient_bytes(), 120 * static_cast<int64_t>(sizeof(float)));
  // A bucket smaller than every parameter: one each.
  GradientBuckets tiny(c, Raw(params), 1);
  EXPECT_EQ(tiny.bucket_of(), (std::vector<int>{4, 3, 2, 1, 0}));
  GradientBuckets one(c, Raw(params), 1 << 20);
  EXPECT_EQ(one.bucket_of(), (std::vector<int>{0, 0, 0, 0, 0}));
}

// Rank 0's `v` on every rank (they are the same length).
std::vector<int> RankZeros(Communicator* c, const std::vector<int>& v) {
  Tensor t = Tensor::Empty({static_cast<int64_t>(v.size())}, DType::kI64);
  for (size_t i = 0; i < v.size(); ++i) t.data<int64_t>()[i] = v[i];
  EXPECT_OK(c->Broadcast(&t, 0));
  std::vector<int> out;
  for (size_t i = 0; i < v.size(); ++i) out.push_back(static_cast<int>(t.data<int64_t>()[i]));
  return out;
}

// One Backward over nodes that each give one parameter a known gradient:
// rank r's gradient of p_i is (r + 1) * (i + 1) + k at element k, scaled by
// `scale`; p1 gets one on rank 0 only, p3 on no rank. The nodes are
// recorded in the order 2,0,4,1,3 rotated left by the rank, so backward
// finishes the parameters neither in reverse order nor in the same order
// on every rank (only rank 0's may count).
void BackwardStep(Communicator* c, const std::vector<std::unique_ptr<autograd::Parameter>>& params,
                  GradientBuckets* buckets) {
  const int n = c->size(), r = c->rank();
  for (const auto& p : params) p->ZeroGrad();
  const float scale = 0.5f;
  buckets->Arm(scale);
  EXPECT_EQ(buckets->started(), 0);
  const ExecContext ctx = CpuContext();
  autograd::Tape tape(ctx, /*training=*/true);
  std::vector<autograd::Var> outs;
  const size_t base[] = {2, 0, 4, 1, 3};
  for (size_t j = 0; j < 5; ++j) {
    const size_t i = base[(j + static_cast<size_t>(r)) % 5];
    autograd::Parameter* p = params[i].get();
    const bool gets = i == 3 ? false : (i == 1 ? r == 0 : true);
    outs.push_back(tape.RecordGrad({p->var()}, Tensor::Zeros({1}, DType::kF32),
                                   [p, i, r, gets](const ExecContext& x, const Tensor&) -> Status {
                                     if (!gets) return Status::OK();
                                     Tensor g = Tensor::Empty(p->value().shape(), DType::kF32);
                                     for (int64_t k = 0; k < g.numel(); ++k) {
                                       g.data<float>()[k] = static_cast<float>((r + 1) * (int64_t(i) + 1) + k);
                                     }
                                     return p->var().AccumulateGrad(x, g);
                                   }));
  }
  autograd::Var loss = tape.RecordGrad(outs, Tensor::Zeros({1}, DType::kF32),
                                       [&outs](const ExecContext& x, const Tensor&) -> Status {
                                         Tensor one = Tensor::Empty({1}, DType::kF32);
                                         one.data<float>()[0] = 1;
                                         for (const autograd::Var& o : outs) FS_RETURN_IF_ERROR(o.AccumulateGrad(x, one));
                                         return Status::OK();
                                       });
  ASSERT_OK(tape.Backward(loss));
  // Every parameter took part, so backward's hooks started every bucket.
  EXPECT_EQ(buckets->started(), buckets->buckets());
  ASSERT_OK(buckets->StartRest());
  ASSERT_OK(buckets->Finish());
  const int64_t rank_terms = int64_t{n} * (n + 1) / 2;  // sum of r + 1
  for (size_t i = 0; i < params.size(); ++i) {
    const autograd::Parameter& p = *params[i];
    if (i == 3) {
      EXPECT_FALSE(p.grad().defined()) << "no rank had a gradient of p3";
      continue;
    }
    ASSERT_TRUE(p.grad().defined()) << p.name();
    for (int64_t k = 0; k < p.grad().numel(); ++k) {
      // Each rank's value times 0.5 is exact, and so is their sum.
      const double want = i == 1 ? scale * static_cast<double>(1 * 2 + k)
                                 : scale * static_cast<double>(rank_terms * (int64_t(i) + 1) + n * k);
      ASSERT_EQ(p.grad().data<float>()[k], static_cast<float>(want)) << p.name() << " element " << k;
    }
  }
}

// A step in the planned order, the order learned from it, and steps in the
// learned plan: every rank gets rank 0's plan, and the sums stay right.
void RunStep(Communicator* c, int64_t bucket_bytes) {
  auto params = MakeParams({7, 4, 300, 5, 33});
  GradientBuckets buckets(c, Raw(params), bucket_bytes);
  EXPECT_EQ(buckets.fill_order(), (std::vector<int>{4, 3, 2, 1, 0}));
  ASSERT_NO_FATAL_FAILURE(BackwardStep(c, params, &buckets));
  // Every hook fired once (p3's too: used, though no gradient reached it).
  std::vector<int> sorted = buckets.recorded_order();
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_NE(buckets.recorded_order(), (std::vector<int>{4, 3, 2, 1, 0})) << "the test needs a non-reverse order";
  const std::vector<int> rank0_recorded = RankZeros(c, buckets.recorded_order());
  ASSERT_OK(buckets.LearnOrder());
  EXPECT_TRUE(buckets.learned());
  EXPECT_EQ(buckets.fill_order(), rank0_recorded) << "rank " << c->rank();
  EXPECT_EQ(buckets.bucket_of(), RankZeros(c, buckets.bucket_of())) << "rank " << c->rank();
  const std::vector<int> learned = buckets.fill_order();
  for (int step = 0; step < 2; ++step) {
    ASSERT_NO_FATAL_FAILURE(BackwardStep(c, params, &buckets));
    ASSERT_OK(buckets.LearnOrder());  // once only: never re-planned again
    EXPECT_EQ(buckets.fill_order(), learned);
  }
}

TEST(GradientBucketsTest, ReplanFollowsTheReadyOrderThenThePlannedOne) {
  Communicator* c = World();
  ASSERT_NE(c, nullptr);
  auto params = MakeParams({10, 3, 5, 100, 2});
  GradientBuckets buckets(c, Raw(params), 8 * sizeof(float));
  // p3 (100, alone), p1 (3) + p4 (2), then the unreported ones in their
  // planned order: p2 (5, bucket full at 10), p0 (10, alone).
  ASSERT_OK(buckets.Replan({3, 1, 4}));
  EXPECT_EQ(buckets.fill_order(), (std::vector<int>{3, 1, 4, 2, 0}));
  EXPECT_EQ(buckets.bucket_of(), (std::vector<int>{3, 1, 2, 0, 1}));
  EXPECT_EQ(buckets.buckets(), 4);
  EXPECT_EQ(buckets.gradient_bytes(), 120 * static_cast<int64_t>(sizeof(float)));
  ASSERT_OK(buckets.Replan({0, 1, 2, 3, 4}));
  EXPECT_EQ(buckets.bucket_of(), (std::vector<int>{0, 1, 1, 2, 3}));
  EXPECT_EQ(buckets.Replan({5}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(buckets.Replan({1, 2, 1}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(buckets.fill_order(), (std::vector<int>{0, 1, 2, 3, 4})) << "a refused order leaves the plan";
}

TEST(GradientBucketsTest, SumsEveryBucketSize) {
  Communicator* c = World();
  ASSERT_NE(c, nullptr);
  for (int64_t bytes : {int64_t{1}, int64_t{64}, int64_t{1200}, int64_t{1} << 22}) {
    SCOPED_TRACE("bucket bytes " + std::to_string(bytes));
    RunStep(c, bytes);
  }
}

}  // namespace
}  // namespace foresight::trainer::internal
