// The pipeline's write path end to end (feature_pipeline.h): compute hands
// each batch's changed input rows back with WriteRows, the write-back stage
// writes bypass rows and releases the batch as dirty, the read stage waits
// for a writer before reading a row it changed (read-after-write), plans
// write evicted dirty rows back, and Finish writes the rest and flushes.
//
// The step: every input row a batch receives gets a per-batch amount added.
// A sequential reference applies the same step in batch order, so each
// batch must receive exactly the reference's rows (a stale read shows up as
// a missing addend), and after Finish the store must equal the reference,
// bit for bit, on the memory and the disk store, f32 and f16, for every
// policy, 1 and 2 threads, and caches far smaller than a batch (everything
// bypasses) or a fraction of the rows (slots shared by batches in flight).
// Each run also checks that the rules it is meant to exercise were hit.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "foresight/core/dtype.h"
#include "foresight/core/thread_pool.h"
#include "foresight/storage/row_store.h"
#include "pipeline/feature_pipeline.h"
#include "pipeline_config_util.h"
#include "pipeline_test_util.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

using internal::BatchPtr;
using internal::FeaturePipeline;
using internal::PipelineConfig;
using foresight::testing::TempDir;

constexpr int kEpochs = 2;

struct WriteCase {
  std::string store;  // "memory" or "disk"
  DType dtype;
  cache::Policy policy;
  int64_t slots;
  int threads;
  std::string Name() const {
    return store + ", " + DTypeName(dtype) + ", " + cache::PolicyName(policy) + ", " + std::to_string(slots) +
           " slots, " + std::to_string(threads) + " thread(s)";
  }
};

// How often each rule of the write path was exercised by one run.
struct RulesHit {
  int64_t waits = 0;          // plans that waited for a writer's release
  int64_t bypass_writes = 0;  // changed rows written back by the write-back stage
  int64_t evictions = 0;      // dirty rows written back by a later plan
  int64_t dirty_at_end = 0;   // rows only Finish writes: the store differs from the reference before it
};

// The store's value of every row, widened to f32.
std::vector<float> StoreRows(storage::RowStore* store, int64_t rows) {
  const int64_t width = store->row_width();
  std::vector<uint8_t> raw(static_cast<size_t>(rows * store->row_bytes()));
  std::vector<storage::RowRequest> reqs;
  for (int64_t r = 0; r < rows; ++r) reqs.push_back({r, raw.data() + r * store->row_bytes()});
  const Status read = store->Read(reqs);
  EXPECT_TRUE(read.ok()) << read.ToString();
  std::vector<float> out(static_cast<size_t>(rows * width));
  for (int64_t i = 0; i < rows * width; ++i) {
    out[i] = store->dtype() == DType::kF32 ? reinterpret_cast<const float*>(raw.data())[i]
                                           : HalfToFloat(reinterpret_cast<const uint16_t*>(raw.data())[i]);
  }
  return out;
}

// What the store keeps of a value.
float Stored(float v, DType dtype) { return dtype == DType::kF32 ? v : HalfToFloat(FloatToHalf(v)); }

class PipelineWritePathTest : public foresight::testing::PipelineSuite {
 protected:
  // A writable store holding the dataset's features (rounded to `dtype`).
  StatusOr<std::unique_ptr<storage::RowStore>> MakeStore(const WriteCase& c, const Tensor& features,
                                                         const TempDir& tmp) {
    const int64_t rows = features.size(0), width = features.size(1);
    Tensor init = Tensor::Empty({rows, width}, c.dtype);
    for (int64_t i = 0; i < rows * width; ++i) {
      const float v = features.data<float>()[i];
      if (c.dtype == DType::kF32) {
        init.data<float>()[i] = v;
      } else {
        static_cast<uint16_t*>(init.raw_data())[i] = FloatToHalf(v);
      }
    }
    if (c.store == "memory") return storage::MemoryRowStore(init, /*writable=*/true);
    storage::RowStoreOptions o;
    o.kind = storage::RowStoreKind::kDisk;
    o.path = tmp.File("rows.npy");
    o.writable = true;
    o.create = true;
    o.dtype = c.dtype;
    o.row_width = width;
    o.rows = rows;
    FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::RowStore> store, storage::OpenRowStore(o));
    std::vector<storage::RowRequest> reqs;
    for (int64_t r = 0; r < rows; ++r) reqs.push_back({r, static_cast<uint8_t*>(init.raw_data()) + r * store->row_bytes()});
    FS_RETURN_IF_ERROR(store->Write(reqs));
    return store;
  }

  // Runs the pipeline with the adding step as compute; checks every batch's
  // x and the store's final rows against the sequential reference.
  RulesHit Run(const WriteCase& c) {
    RulesHit hit;
    auto in_or = foresight::testing::OpenPipelineInputs(DataDir());
    EXPECT_TRUE(in_or.ok()) << in_or.status().ToString();
    if (!in_or.ok()) return hit;
    foresight::testing::PipelineInputs in = std::move(*in_or);
    const Tensor& features = in.dataset->features();
    const int64_t rows = features.size(0), width = features.size(1);
    TempDir tmp;
    auto store_or = MakeStore(c, features, tmp);
    EXPECT_TRUE(store_or.ok()) << store_or.status().ToString();
    if (!store_or.ok()) return hit;
    std::unique_ptr<storage::RowStore> store = std::move(*store_or);

    ThreadPool pool(c.threads);
    PipelineConfig config = foresight::testing::BasicPipelineConfig(in, store.get(), &pool, kEpochs);
    config.cache.policy = c.policy;
    config.cache.capacity_bytes = c.slots * store->row_bytes();
    config.cache.writable = true;
    config.cache.lookahead = 4;
    if (c.policy == cache::Policy::kStatic) {
      config.static_keys.resize(static_cast<size_t>(rows));
      std::iota(config.static_keys.begin(), config.static_keys.end(), 0);
    }
    auto started = FeaturePipeline::Start(config);
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (!started.ok()) return hit;
    std::unique_ptr<FeaturePipeline> p = std::move(*started);

    std::vector<float> ref(static_cast<size_t>(rows * width));
    for (int64_t i = 0; i < rows * width; ++i) ref[i] = Stored(features.data<float>()[i], c.dtype);
    for (int64_t seq = 0; seq < config.end_seq; ++seq) {
      BatchPtr b;
      double waited = 0;
      const Status next = p->Next(&b, &waited);
      EXPECT_TRUE(next.ok()) << c.Name() << ": " << next.ToString();
      if (!next.ok()) return hit;
      if (b->plan.wait_for_seq >= 0) ++hit.waits;
      hit.bypass_writes += static_cast<int64_t>(b->plan.bypass.size());
      hit.evictions += static_cast<int64_t>(b->plan.writebacks.size());
      const int64_t n = b->sampled.input_nodes.numel();
      const int64_t* ids = b->sampled.input_nodes.data<int64_t>();
      const float* x = b->x.data<float>();
      const float add = 0.25f * static_cast<float>(seq % 7 + 1);
      Tensor changed = Tensor::Empty({n, width}, DType::kF32);
      int64_t stale = 0;
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t k = 0; k < width; ++k) {
          float& want = ref[ids[r] * width + k];
          if (x[r * width + k] != want) ++stale;
          changed.data<float>()[r * width + k] = x[r * width + k] + add;
          want = Stored(want + add, c.dtype);
        }
      }
      EXPECT_EQ(stale, 0) << c.Name() << ": batch " << seq << " received rows that are not the reference's";
      const Status wrote = p->WriteRows(b.get(), changed);
      EXPECT_TRUE(wrote.ok()) << wrote.ToString();
      EXPECT_TRUE(p->Done(std::move(b), &waited).ok());
    }
    EXPECT_TRUE(p->WaitReleased(config.end_seq - 1).ok());
    {
      // Every stage is idle: the store holds what was written back so far.
      std::unique_lock<std::mutex> lock = p->LockStore();
      const std::vector<float> before = StoreRows(store.get(), rows);
      for (int64_t r = 0; r < rows; ++r) {
        if (std::memcmp(&before[r * width], &ref[r * width], static_cast<size_t>(width) * 4) != 0) ++hit.dirty_at_end;
      }
    }
    const Status finished = p->Finish();
    EXPECT_TRUE(finished.ok()) << finished.ToString();
    const std::vector<float> after = StoreRows(store.get(), rows);
    int64_t wrong = 0;
    for (int64_t i = 0; i < rows * width; ++i) {
      if (std::memcmp(&after[i], &ref[i], 4) != 0) ++wrong;
    }
    EXPECT_EQ(wrong, 0) << c.Name() << ": values of the store differ from the reference after Finish";
    EXPECT_GT(hit.waits, 0) << c.Name() << ": no read waited for a writer";
    return hit;
  }
};

TEST_F(PipelineWritePathTest, EveryBatchReadsTheRowsEarlierBatchesWrote) {
  for (const std::string store : {"memory", "disk"}) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      for (cache::Policy policy : {cache::Policy::kLookahead, cache::Policy::kLru, cache::Policy::kStatic}) {
        for (int threads : {1, 2}) {
          // 8 slots: nearly every row of a ~500-row batch bypasses; 600:
          // batches in flight share slots, and eviction writes dirty rows.
          for (int64_t slots : {8, 600}) {
            const WriteCase c{store, dtype, policy, slots, threads};
            const RulesHit hit = Run(c);
            EXPECT_GT(hit.bypass_writes, 0) << c.Name();
            EXPECT_GT(hit.dirty_at_end, 0) << c.Name() << ": Finish had nothing left to write";
            if (policy != cache::Policy::kStatic) {
              // The static set never changes: it evicts nothing.
              EXPECT_GT(hit.evictions, 0) << c.Name() << ": no plan wrote an evicted dirty row back";
            }
          }
        }
      }
    }
  }
}

TEST_F(PipelineWritePathTest, RefusesWritesItCannotKeep) {
  ASSERT_OK_AND_ASSIGN(foresight::testing::PipelineInputs in, foresight::testing::OpenPipelineInputs(DataDir()));
  const Tensor& features = in.dataset->features();
  ThreadPool pool(1);
  {
    // A writable cache over a read-only store.
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<storage::RowStore> ro, storage::MemoryRowStore(features, false));
    PipelineConfig config = foresight::testing::BasicPipelineConfig(in, ro.get(), &pool, 1);
    config.cache.capacity_bytes = 16 * ro->row_bytes();
    config.cache.writable = true;
    auto started = FeaturePipeline::Start(config);
    ASSERT_FALSE(started.ok());
    EXPECT_EQ(started.status().ToString(),
              "FailedPrecondition: pipeline: a writable cache over a read-only memory store");
  }
  Tensor copy = Tensor::Empty(features.shape(), DType::kF32);
  std::memcpy(copy.raw_data(), features.raw_data(), features.nbytes());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<storage::RowStore> rw, storage::MemoryRowStore(copy, true));
  for (bool writable : {false, true}) {
    PipelineConfig config = foresight::testing::BasicPipelineConfig(in, rw.get(), &pool, 1);
    config.cache.capacity_bytes = 16 * rw->row_bytes();
    config.cache.writable = writable;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<FeaturePipeline> p, FeaturePipeline::Start(config));
    BatchPtr b;
    double waited = 0;
    ASSERT_OK(p->Next(&b, &waited));
    const int64_t n = b->sampled.input_nodes.numel();
    if (!writable) {
      const Status s = p->WriteRows(b.get(), b->x);
      EXPECT_EQ(s.ToString(),
                "FailedPrecondition: WriteRows: batch 0: the pipeline was started read-only (cache.writable is false)");
    } else {
      const Status s = p->WriteRows(b.get(), Tensor::Zeros({n, 3}, DType::kF32));
      EXPECT_EQ(s.ToString(), "InvalidArgument: WriteRows: batch 0: expected contiguous f32 rows [" +
                                  std::to_string(n) + ", 16], got Tensor(f32, [" + std::to_string(n) + ", 3], cpu)");
      EXPECT_FALSE(b->wrote);
    }
    ASSERT_OK(p->Done(std::move(b), &waited));
  }
}

}  // namespace
}  // namespace foresight::trainer
