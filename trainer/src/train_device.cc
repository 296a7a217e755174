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
  return Status::OK();
}

Status CudaTrainingSupports(const TrainOptions& o) {
  FS_ASSIGN_OR_RETURN(const Device d, ParseDevice(o.device));
  if (d.is_cpu()) return Status::OK();
  // What runs on a GPU today: GNN node classification in memory with dense
  // node features. Parameters, gradients and optimizer state live in
  // device memory; full graph: the graph, features and labels too, copied
  // once; mini-batch: sampling and the feature rows stay on the host and
  // each batch's blocks, rows and labels are copied to the device.
  const std::string runs = "; on a GPU, training runs GNN node classification (sage, gcn, gat) over the full "
                           "graph (--full-graph) or in-memory mini-batches (--feature-store memory or mmap) with "
                           "dense node features (file or degree); pass --device cpu for the rest, training does "
                           "not fall back to the CPU";
  auto refuse = [&](const std::string& what) {
    return Unimplemented("device: " + d.ToString() + " requested, but " + what + " does not run on a GPU yet" +
                         runs);
  };
  if (o.task == "link") return refuse("link prediction (--task link)");
  if (o.model == "dlrm") return refuse("dlrm");
  if (o.model == "sasrec") return refuse("sasrec");
  if (o.model != "sage" && o.model != "gcn" && o.model != "gat") return refuse("model " + o.model);
  if (!o.full_graph && o.feature_store == "disk") {
    return refuse("out-of-core training (--feature-store disk: the device tier of the feature cache)");
  }
  if (o.node_features != "file" && o.node_features != "degree") {
    return refuse("--node-features " + o.node_features + " (an input table or learned rows)");
  }
  if (!o.checkpoint_dir.empty() || o.resume) return refuse("checkpointing (--checkpoint / --resume)");
  return Status::OK();
}

Status CheckTrainDevice(const TrainOptions& options) {
  // A CPU run asks nothing of CUDA: asking would load the driver.
  FS_ASSIGN_OR_RETURN(const Device d, ParseDevice(options.device));
  if (d.is_cpu() || !CudaCompiledIn()) return DecideTrainDevice(options.device, CudaCompiledIn(), 0);
  const Status available = CudaAvailable();
  FS_RETURN_IF_ERROR(
      DecideTrainDevice(options.device, true, CudaDeviceCount(), available.ok() ? "" : available.message()));
  return CudaTrainingSupports(options);
}

}  // namespace foresight::trainer
