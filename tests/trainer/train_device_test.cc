// --device: a CUDA device is refused with its reason wherever training
// cannot use it, and never replaced by the CPU.
#include "foresight/trainer/train_device.h"

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
  // A visible GPU: the kernels have CUDA versions, the trainer does not use them yet.
  s = DecideTrainDevice("cuda:1", true, 2);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_ERROR_CONTAINS(s, "training does not run on a GPU yet", "does not fall back");
  EXPECT_ERROR_CONTAINS(DecideTrainDevice("gpu", true, 1), "gpu", "cpu, cuda or cuda:N");
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
