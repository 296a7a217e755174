// Floyd's draws of up to sixteen positions (floyd.h) with AVX-512, chosen
// at run time where the CPU has it.
#pragma once

#include <cstdint>

#include "foresight/core/rng.h"
#include "philox_avx512.h"

namespace foresight::kernels::cpu {

#if defined(FS_HAVE_AVX512_PHILOX)
// k <= 16 distinct positions of [0, n) for node s, n < 2^32, into
// dst[0..k): the positions FloydPositions (floyd.h) draws. One Philox step
// of eight counters makes all sixteen draws' words, the bounded draws are
// vector multiplies, and the taken set is one register of sixteen 32-bit
// lanes: membership is one compare, and draw j enters lane j by a masked
// broadcast.
FS_AVX512 void FloydSmallAvx512(RngKey key, uint64_t s, int64_t k, int64_t n, int64_t* dst);
#endif

}  // namespace foresight::kernels::cpu
