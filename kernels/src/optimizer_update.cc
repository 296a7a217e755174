// Dense optimizer updates: argument checks and the device dispatch. Every
// parameter of one call lives on one device (the first value's).
#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

namespace {

// Value, gradient and the `states` state tensors of every parameter:
// contiguous f32 of the value's shape, on the first value's device.
Status CheckUpdate(const char* op, const std::vector<DenseUpdateTensors>& params, int states, Device* device) {
  for (size_t i = 0; i < params.size(); ++i) {
    const DenseUpdateTensors& p = params[i];
    const std::string at = std::string(op) + ": parameter " + std::to_string(i);
    FS_RETURN_IF_ERROR(internal::CheckF32(p.w, (at + " value").c_str()));
    FS_RETURN_IF_ERROR(internal::CheckF32Shape(p.g, p.w.shape(), (at + " gradient").c_str()));
    if (states > 0) FS_RETURN_IF_ERROR(internal::CheckF32Shape(p.s0, p.w.shape(), (at + " state 0").c_str()));
    if (states > 1) FS_RETURN_IF_ERROR(internal::CheckF32Shape(p.s1, p.w.shape(), (at + " state 1").c_str()));
    if (i == 0) *device = p.w.device();
    const Tensor* s0 = states > 0 ? &p.s0 : nullptr;
    const Tensor* s1 = states > 1 ? &p.s1 : nullptr;
    FS_RETURN_IF_ERROR(internal::CheckOnDevice(*device, {&p.w, &p.g, s0, s1}, op));
  }
  return Status::OK();
}

}  // namespace

Status AdamUpdate(const ExecContext& ctx, const AdamUpdateArgs& args, const std::vector<DenseUpdateTensors>& params) {
  Device device;
  FS_RETURN_IF_ERROR(CheckUpdate("AdamUpdate", params, 2, &device));
  if (params.empty()) return Status::OK();
  if (device.is_cpu()) return cpu::AdamUpdate(ctx, args, params);
  return cuda::AdamUpdate(ctx, args, params);
}

Status SgdUpdate(const ExecContext& ctx, float lr, float weight_decay, float momentum,
                 const std::vector<DenseUpdateTensors>& params) {
  Device device;
  FS_RETURN_IF_ERROR(CheckUpdate("SgdUpdate", params, momentum > 0.0f ? 1 : 0, &device));
  if (params.empty()) return Status::OK();
  if (device.is_cpu()) return cpu::SgdUpdate(ctx, lr, weight_decay, momentum, params);
  return cuda::SgdUpdate(ctx, lr, weight_decay, momentum, params);
}

}  // namespace foresight::kernels
