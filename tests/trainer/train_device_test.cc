// --device: a CUDA device is refused with its reason wherever training
// cannot use it, and never replaced by the CPU.
#include "foresight/trainer/train_device.h"

#include <functional>
#include <string>
#include <vector>

#include "foresight/core/device.h"
#include "foresight/trainer/trainer.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

TEST(TrainDevice, CpuIsAlwaysFine) {
  EXPECT_OK(DecideTrainDevice("cpu", false, 0));
  EXPECT_OK(DecideTrainDevice("cpu", true, 4));
}

TEST(TrainDevice, EachReasonForRefusingCuda) {
  Status s = DecideTrainDevice("cuda", false, 0);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_ERROR_CONTAINS(s, "device: cuda:0", "no CUDA device", "-DFORESIGHT_CUDA=ON", "does not fall back");
  s = DecideTrainDevice("cuda:0", true, 0);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_ERROR_CONTAINS(s, "no GPU is visible", "--device cpu");
  // Why, when the probe said (CudaAvailable(): the driver library's dlerror).
  s = DecideTrainDevice("cuda", true, 0, "libcuda.so.1 could not be loaded: no such file");
  EXPECT_ERROR_CONTAINS(s, "no GPU is visible (libcuda.so.1 could not be loaded: no such file)", "--device cpu");
  EXPECT_ERROR_CONTAINS(DecideTrainDevice("cuda:2", true, 2), "cuda:2", "2 GPU(s) are visible (cuda:0 to cuda:1)");
  EXPECT_ERROR_CONTAINS(DecideTrainDevice("cuda:1", true, 1), "1 GPU(s) are visible (cuda:0)");
  // A visible GPU: the hardware says yes (CudaTrainingSupports decides the run).
  EXPECT_OK(DecideTrainDevice("cuda:1", true, 2));
  EXPECT_OK(DecideTrainDevice("cuda", true, 1));
  EXPECT_ERROR_CONTAINS(DecideTrainDevice("gpu", true, 1), "gpu", "cpu, cuda or cuda:N");
}

// The full-graph GNN run that trains on a GPU.
TrainOptions FullGraphOnCuda(const std::string& model) {
  TrainOptions o;
  o.dataset = "/nonexistent";
  o.device = "cuda";
  o.model = model;
  o.full_graph = true;
  return o;
}

TEST(TrainDevice, InMemoryGnnsWithDenseFeaturesTrainOnCuda) {
  for (const char* model : {"sage", "gcn", "gat"}) {
    SCOPED_TRACE(model);
    EXPECT_OK(CudaTrainingSupports(FullGraphOnCuda(model)));
    TrainOptions o = FullGraphOnCuda(model);
    o.node_features = "degree";
    o.device = "cuda:3";
    EXPECT_OK(CudaTrainingSupports(o));
  }
  // Mini-batches with the features in memory (mapped or loaded).
  for (const char* store : {"mmap", "memory"}) {
    SCOPED_TRACE(store);
    TrainOptions o = FullGraphOnCuda("gat");
    o.full_graph = false;
    o.feature_store = store;
    EXPECT_OK(CudaTrainingSupports(o));
  }
  // The CPU runs everything: nothing is refused for it here.
  TrainOptions o = FullGraphOnCuda("sage");
  o.device = "cpu";
  o.full_graph = false;
  o.task = "link";
  EXPECT_OK(CudaTrainingSupports(o));
}

TEST(TrainDevice, EveryOtherModeIsRefusedOnCudaByName) {
  struct Refused {
    const char* what;  // in the message
    std::function<void(TrainOptions*)> set;
  };
  const std::vector<Refused> refused = {
      {"out-of-core training (--feature-store disk", [](TrainOptions* o) {
         o->full_graph = false;
         o->feature_store = "disk";
       }},
      {"link prediction (--task link)", [](TrainOptions* o) { o->task = "link"; o->model = "distmult"; }},
      {"link prediction (--task link)", [](TrainOptions* o) { o->task = "link"; }},
      {"dlrm", [](TrainOptions* o) { o->model = "dlrm"; o->full_graph = false; }},
      {"sasrec", [](TrainOptions* o) { o->model = "sasrec"; o->full_graph = false; }},
      {"--node-features one-hot", [](TrainOptions* o) {
         o->node_features = "one-hot";
         o->full_graph = false;
       }},
      {"--node-features one-hot", [](TrainOptions* o) { o->node_features = "one-hot"; }},
      {"--node-features learned:16", [](TrainOptions* o) { o->node_features = "learned:16"; }},
      {"--node-features file+learned:8", [](TrainOptions* o) { o->node_features = "file+learned:8"; }},
      {"checkpointing", [](TrainOptions* o) { o->checkpoint_dir = "/tmp/ckpt"; }},
      {"checkpointing", [](TrainOptions* o) { o->resume = true; }},
  };
  for (const Refused& r : refused) {
    TrainOptions o = FullGraphOnCuda("gcn");
    r.set(&o);
    SCOPED_TRACE(r.what);
    const Status s = CudaTrainingSupports(o);
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
    EXPECT_ERROR_CONTAINS(s, "device: cuda:0", r.what, "does not run on a GPU yet", "--full-graph",
                          "in-memory mini-batches", "does not fall back");
  }
}

TEST(TrainDevice, ValidateNamesABadDevice) {
  TrainOptions o;
  o.dataset = "/nonexistent";
  o.device = "cuda:x";
  EXPECT_ERROR_CONTAINS(o.Validate(), "device: 'cuda:x'", "cpu, cuda or cuda:N");
}

TEST(TrainDevice, TrainRefusesCudaHereBeforeReadingTheDataset) {
  TrainOptions o;
  o.dataset = "/nonexistent/dataset";
  o.device = "cuda";
  TrainSummary summary;
  const Status s = Train(o, &summary);
  EXPECT_ERROR_CONTAINS(s, "device: cuda:0", "does not fall back");
  EXPECT_EQ(s.message().find("/nonexistent"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace foresight::trainer
