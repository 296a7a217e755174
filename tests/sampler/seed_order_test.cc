// SeedOrder: coverage per epoch, the Fisher-Yates permutation keyed by
// (seed, epoch), random access (resume), drop_last, no shuffle, errors.
#include "foresight/sampler/seed_order.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "testing/testing.h"

namespace foresight::sampler {
namespace {

Tensor Ids(int64_t n, int64_t offset, DType dtype = DType::kI64) {
  Tensor t = Tensor::Empty({n}, dtype);
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == DType::kI32) {
      t.data<int32_t>()[i] = static_cast<int32_t>(offset + 3 * i);
    } else {
      t.data<int64_t>()[i] = offset + 3 * i;
    }
  }
  return t;
}

std::vector<int64_t> Vec(const Tensor& t) { return testing::VectorOf<int64_t>(t); }

std::vector<int64_t> WholeEpoch(const BatchOrder& order, int64_t epoch) {
  std::vector<int64_t> all;
  for (int64_t b = 0; b < order.num_batches(); ++b) {
    const std::vector<int64_t> v = Vec(order.Batch(epoch, b));
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

TEST(SeedOrder, EveryIdOncePerEpochAndBatchSizes) {
  const Tensor ids = Ids(103, 5);
  SeedOrder order(ids, 10, 77);
  ASSERT_OK(order.status());
  EXPECT_EQ(order.num_batches(), 11);
  std::vector<int64_t> sorted_ids = Vec(ids);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    for (int64_t b = 0; b < 11; ++b) {
      const Tensor t = order.Batch(epoch, b);
      ASSERT_EQ(t.dtype(), DType::kI64);
      EXPECT_EQ(t.numel(), b < 10 ? 10 : 3);
    }
    std::vector<int64_t> all = WholeEpoch(order, epoch);
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, sorted_ids) << "epoch " << epoch;
  }
  EXPECT_FALSE(order.Batch(0, 11).defined());
  EXPECT_FALSE(order.Batch(0, -1).defined());
}

TEST(SeedOrder, IsTheKeyedFisherYatesPermutation) {
  const Tensor ids = Ids(50, 0);
  SeedOrder order(ids, 7, 1234);
  for (int64_t epoch : {0, 1, 5}) {
    std::vector<int64_t> p = Vec(ids);
    const RngKey key = RngKey::FromSeed(1234).Fold(static_cast<uint64_t>(RngPurpose::kShuffle)).Fold(epoch);
    for (int64_t i = 49; i > 0; --i) std::swap(p[i], p[key.Below(i + 1, i, 0)]);
    EXPECT_EQ(WholeEpoch(order, epoch), p) << "epoch " << epoch;
  }
}

TEST(SeedOrder, DiffersAcrossEpochsSameAcrossInstancesAndAccessOrder) {
  const Tensor ids = Ids(1000, 0);
  SeedOrder a(ids, 64, 9), b(ids, 64, 9), other_seed(ids, 64, 10);
  EXPECT_NE(WholeEpoch(a, 0), WholeEpoch(a, 1));
  EXPECT_NE(WholeEpoch(a, 0), WholeEpoch(other_seed, 0));
  EXPECT_NE(WholeEpoch(a, 0), Vec(ids)) << "epoch 0 is not shuffled";
  // A resumed run jumps straight to (epoch 3, batch 5), and hops between
  // epochs (a lookahead crossing an epoch boundary) without changes.
  const std::vector<int64_t> direct = Vec(b.Batch(3, 5));
  const std::vector<int64_t> e2 = Vec(b.Batch(2, 15));
  const std::vector<int64_t> e4 = Vec(b.Batch(4, 0));
  EXPECT_EQ(Vec(b.Batch(3, 5)), direct);
  EXPECT_EQ(Vec(a.Batch(3, 5)), direct);
  EXPECT_EQ(Vec(a.Batch(2, 15)), e2);
  EXPECT_EQ(Vec(a.Batch(4, 0)), e4);
  // A batch handed out earlier keeps its contents after other epochs ran.
  const Tensor held = a.Batch(0, 1);
  const std::vector<int64_t> before = Vec(held);
  for (int64_t e = 1; e < 5; ++e) a.Batch(e, 0);
  EXPECT_EQ(Vec(held), before);
}

TEST(SeedOrder, DropLastNoShuffleAndI32) {
  SeedOrder drop(Ids(103, 0), 10, 1, /*shuffle=*/true, /*drop_last=*/true);
  EXPECT_EQ(drop.num_batches(), 10);
  std::vector<int64_t> seen = WholeEpoch(drop, 0);
  EXPECT_EQ(seen.size(), 100u);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());

  SeedOrder plain(Ids(25, 2, DType::kI32), 10, 1, /*shuffle=*/false);
  EXPECT_EQ(WholeEpoch(plain, 0), Vec(Ids(25, 2)));
  EXPECT_EQ(WholeEpoch(plain, 7), Vec(Ids(25, 2)));
  EXPECT_EQ(Vec(plain.Batch(0, 2)), (std::vector<int64_t>{62, 65, 68, 71, 74}));

  // The interface is usable polymorphically.
  std::unique_ptr<BatchOrder> order = std::make_unique<SeedOrder>(Ids(5, 0), 2, 3);
  EXPECT_EQ(order->num_batches(), 3);
}

TEST(SeedOrder, InvalidArguments) {
  SeedOrder zero(Ids(10, 0), 0, 1);
  EXPECT_ERROR_CONTAINS(zero.status(), "batch_size must be >= 1, got 0");
  EXPECT_EQ(zero.num_batches(), 0);
  EXPECT_FALSE(zero.Batch(0, 0).defined());
  SeedOrder floats(Tensor::Zeros({4}, DType::kF32), 2, 1);
  EXPECT_ERROR_CONTAINS(floats.status(), "train_ids", "i32 or i64");
  SeedOrder undefined(Tensor(), 2, 1);
  EXPECT_ERROR_CONTAINS(undefined.status(), "undefined");
  SeedOrder empty(Ids(0, 0), 4, 1);
  ASSERT_OK(empty.status());
  EXPECT_EQ(empty.num_batches(), 0);
}

}  // namespace
}  // namespace foresight::sampler
