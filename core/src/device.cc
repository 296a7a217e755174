#include "foresight/core/device.h"

#include <cstdlib>

namespace foresight {

std::string Device::ToString() const {
  return is_cpu() ? "cpu" : "cuda:" + std::to_string(index);
}

StatusOr<Device> ParseDevice(const std::string& text) {
  if (text == "cpu") return Device::Cpu();
  if (text == "cuda") return Device::Cuda(0);
  if (text.rfind("cuda:", 0) == 0) {
    const std::string idx = text.substr(5);
    char* end = nullptr;
    const long v = std::strtol(idx.c_str(), &end, 10);
    if (!idx.empty() && *end == '\0' && v >= 0 && v < 1024) return Device::Cuda(static_cast<int>(v));
  }
  return InvalidArgument("device '" + text + "': expected cpu, cuda or cuda:N");
}

}  // namespace foresight
