// The CPU dot interaction's two code paths: AVX-512 (where the CPU has it:
// the entry points FeatureInteraction / FeatureInteractionBackward pass
// HaveAvx512()) and AVX2. Both give the same bits; tests run each.
// Private to the kernels.
#pragma once

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

// As FeatureInteraction / FeatureInteractionBackward, with the AVX-512
// paths on (only where the CPU has AVX-512) or off.
Status FeatureInteractionWith(bool avx512, const ExecContext& ctx, Interaction kind, int64_t num_tables,
                              const Tensor& x, const Tensor& emb, Tensor* out);
Status FeatureInteractionBackwardWith(bool avx512, const ExecContext& ctx, Interaction kind, int64_t num_tables,
                                      const Tensor& x, const Tensor& emb, const Tensor& grad_out, Tensor* grad_x,
                                      Tensor* grad_emb);

}  // namespace foresight::kernels::cpu
