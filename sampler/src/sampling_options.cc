// The --order and --sampling choices (declared in partition_order.h).
#include <string>

#include "foresight/sampler/partition_order.h"

namespace foresight::sampler {

StatusOr<OrderKind> ParseOrderKind(const std::string& name) {
  if (name == "random") return OrderKind::kRandom;
  if (name == "partition") return OrderKind::kPartition;
  return InvalidArgument("unknown seed order '" + name + "' (expected 'random' or 'partition')");
}

StatusOr<SamplingScope> ParseSamplingScope(const std::string& name) {
  if (name == "full") return SamplingScope::kFull;
  if (name == "resident") return SamplingScope::kResident;
  return InvalidArgument("unknown sampling scope '" + name + "' (expected 'full' or 'resident')");
}

}  // namespace foresight::sampler
