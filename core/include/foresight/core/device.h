// Device: where a tensor's bytes live and where an op runs.
#pragma once

#include <string>

#include "foresight/core/status.h"

namespace foresight {

enum class DeviceType : int { kCPU = 0, kCUDA = 1 };

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;  // GPU ordinal for kCUDA; always 0 for kCPU

  static Device Cpu() { return Device{DeviceType::kCPU, 0}; }
  static Device Cuda(int index = 0) { return Device{DeviceType::kCUDA, index}; }
  bool is_cpu() const { return type == DeviceType::kCPU; }
  bool is_cuda() const { return type == DeviceType::kCUDA; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string ToString() const;  // "cpu", "cuda:0"
};

// Parses "cpu", "cuda", "cuda:1".
StatusOr<Device> ParseDevice(const std::string& text);

// True when this build has the CUDA device compiled in (it may still have no
// GPU at run time: see CudaDeviceCount()).
bool CudaCompiledIn();
// Number of usable GPUs; 0 when none or when CUDA is not compiled in.
int CudaDeviceCount();

}  // namespace foresight
