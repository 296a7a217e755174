// The dropout of one span of the keyed stream (dropout.cc's DropoutSpan),
// for CPU kernels that drop elements they produce themselves: the gather
// that drops a batch's feature rows as it copies them (GatherRowsDropout).
#pragma once

#include <cstdint>

#include "foresight/core/rng.h"

namespace foresight::kernels::cpu {

// Elements [g, g + n) of rng's dropout stream applied to px, written to po
// (and 0/1 to pm unless null): the bits of Dropout / DropoutRows for the
// same positions, whatever the split into spans.
void DropoutStreamSpan(const RngKey& rng, uint64_t g, int64_t n, float p, const float* px, float* po, uint8_t* pm);

}  // namespace foresight::kernels::cpu
