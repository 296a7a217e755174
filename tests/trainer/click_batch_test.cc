// MakeClickBatch gathers a batch's dense features, labels and every field's
// ids (multi-hot bags included) as the dataset holds them, and gives the
// same batch whether its fields are gathered on one thread or over a pool.
#include "click_batch.h"

#include <cstring>
#include <memory>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/thread_pool.h"
#include "foresight/datasets/clicks.h"
#include "testing/testing.h"

namespace foresight::trainer::internal {
namespace {

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.numel()) * DTypeSize(a.dtype())) == 0;
}

// Generates `g` into dir/clicks (on one thread) and opens it.
StatusOr<std::unique_ptr<storage::ClicksDataset>> Generated(const testing::TempDir& dir,
                                                           datasets::GenerateClicksOptions g) {
  g.output = dir.File("clicks");
  ThreadPool one(1);
  FS_RETURN_IF_ERROR(datasets::GenerateClicks(g, CpuContext(0, &one)));
  return storage::ClicksDataset::Open(g.output);
}

TEST(ClickBatchTest, GathersTheDatasetRowsOnOneThreadAndOverAPool) {
  testing::TempDir dir;
  datasets::GenerateClicksOptions g;
  g.num_tables = 5;
  g.rows = 50;
  g.dim = 4;
  g.num_samples = 400;
  g.num_dense = 3;
  g.bag_sizes = {1, 2, 1, 3, 1};
  g.seed = 5;
  auto data = Generated(dir, g);
  ASSERT_OK(data.status());
  const storage::ClicksDataset& d = **data;

  // Rows out of order, one repeated.
  const std::vector<int64_t> picked = {17, 3, 399, 0, 17, 250, 42};
  Tensor rows = Tensor::Empty({static_cast<int64_t>(picked.size())}, DType::kI64);
  std::memcpy(rows.data<int64_t>(), picked.data(), picked.size() * sizeof(int64_t));
  const int64_t b = rows.size(0);

  auto serial = MakeClickBatch(d, rows);
  ASSERT_OK(serial.status());
  // What the dataset holds, read here without MakeClickBatch.
  int64_t n = 0;
  for (int64_t k = 0; k < d.num_fields(); ++k) {
    const Tensor& field = d.ids(k);
    const int64_t bag = d.field(k).bag_size;
    for (int64_t i = 0; i < b; ++i) {
      for (int64_t j = 0; j < bag; ++j, ++n) {
        const int64_t at = picked[static_cast<size_t>(i)] * bag + j;
        const int64_t want = field.dtype() == DType::kI32 ? field.data<int32_t>()[at] : field.data<int64_t>()[at];
        ASSERT_EQ(serial->ids.data<int64_t>()[n], want) << "field " << k << " sample " << i << " slot " << j;
      }
      ASSERT_EQ(serial->offsets.data<int64_t>()[k * b + i + 1], n) << "field " << k << " sample " << i;
    }
  }
  EXPECT_EQ(serial->ids.numel(), n);
  EXPECT_EQ(serial->offsets.data<int64_t>()[0], 0);
  for (int64_t i = 0; i < b; ++i) {
    const int64_t r = picked[static_cast<size_t>(i)];
    EXPECT_EQ(serial->targets.data<float>()[i], static_cast<float>(d.labels().data<uint8_t>()[r]));
    for (int64_t c = 0; c < d.num_dense(); ++c) {
      EXPECT_EQ(serial->dense.data<float>()[i * d.num_dense() + c], d.dense().data<float>()[r * d.num_dense() + c]);
    }
  }

  for (int threads : {2, 3, 8}) {
    ThreadPool pool(threads);
    auto pooled = MakeClickBatch(d, rows, &pool);
    ASSERT_OK(pooled.status());
    EXPECT_TRUE(SameBytes(pooled->ids, serial->ids)) << threads << " threads";
    EXPECT_TRUE(SameBytes(pooled->offsets, serial->offsets)) << threads << " threads";
    EXPECT_TRUE(SameBytes(pooled->dense, serial->dense)) << threads << " threads";
    EXPECT_TRUE(SameBytes(pooled->targets, serial->targets)) << threads << " threads";
  }
}

TEST(ClickBatchTest, RefusesARowOutsideTheDataset) {
  testing::TempDir dir;
  datasets::GenerateClicksOptions g;
  g.num_tables = 2;
  g.rows = 10;
  g.num_samples = 20;
  auto data = Generated(dir, g);
  ASSERT_OK(data.status());
  Tensor rows = Tensor::Empty({2}, DType::kI64);
  rows.data<int64_t>()[0] = 1;
  rows.data<int64_t>()[1] = 20;
  ThreadPool pool(2);
  const auto batch = MakeClickBatch(**data, rows, &pool);
  ASSERT_FALSE(batch.ok());
  EXPECT_NE(batch.status().message().find("row 20 is outside the dataset's 20 samples"), std::string::npos)
      << batch.status().ToString();
}

}  // namespace
}  // namespace foresight::trainer::internal
