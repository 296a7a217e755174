#include "foresight/trainer/train_device.h"

#include "foresight/core/cuda_available.h"
#include "foresight/core/device.h"

namespace foresight::trainer {

Status DecideTrainDevice(const std::string& device, bool cuda_compiled, int gpus, const std::string& why_no_gpu) {
  FS_ASSIGN_OR_RETURN(const Device d, ParseDevice(device));
  if (d.is_cpu()) return Status::OK();
  const std::string name = d.ToString();
  const std::string no_fallback = "; training does not fall back to the CPU: pass --device cpu";
  if (!cuda_compiled) {
    return Unimplemented("device: " + name +
                         " requested, but this foresight build has no CUDA device (rebuild with "
                         "-DFORESIGHT_CUDA=ON where nvcc is installed)" + no_fallback);
  }
  if (gpus == 0) {
    return FailedPrecondition("device: " + name + " requested, but no GPU is visible (" +
                              (why_no_gpu.empty() ? "no driver, no device, or CUDA_VISIBLE_DEVICES hides them"
                                                  : why_no_gpu) +
                              ")" + no_fallback);
  }
  if (d.index >= gpus) {
    return InvalidArgument("device: " + name + " requested, but " + std::to_string(gpus) +
                           " GPU(s) are visible (cuda:0" +
                           (gpus > 1 ? " to cuda:" + std::to_string(gpus - 1) : std::string()) + ")");
  }
  // Every kernel has a CUDA version (kernels/src/cuda/), but the trainer
  // still keeps parameters, optimizer state and batches in host memory.
  return Unimplemented("device: " + name +
                       " is visible and every kernel has a CUDA version, but training does not run on a GPU yet "
                       "(parameters, optimizer steps and batches stay in host memory)" + no_fallback);
}

Status CheckTrainDevice(const TrainOptions& options) {
  // A CPU run asks nothing of CUDA: asking would load the driver.
  FS_ASSIGN_OR_RETURN(const Device d, ParseDevice(options.device));
  if (d.is_cpu() || !CudaCompiledIn()) return DecideTrainDevice(options.device, CudaCompiledIn(), 0);
  const Status available = CudaAvailable();
  return DecideTrainDevice(options.device, true, CudaDeviceCount(), available.ok() ? "" : available.message());
}

}  // namespace foresight::trainer
