// FeatureInteraction (DLRM's dot / cat interaction): argument checks and
// the device dispatch.
#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

StatusOr<Interaction> ParseInteraction(const std::string& name) {
  if (name == "dot") return Interaction::kDot;
  if (name == "cat") return Interaction::kCat;
  return InvalidArgument("interaction: '" + name + "' is not one of dot, cat");
}

const char* InteractionName(Interaction i) { return i == Interaction::kDot ? "dot" : "cat"; }

int64_t InteractionWidth(Interaction kind, int64_t num_tables, int64_t x_dim, int64_t emb_dim) {
  if (kind == Interaction::kCat) return x_dim + num_tables * emb_dim;
  return x_dim + (num_tables + 1) * num_tables / 2;
}

namespace {

// x [B, D], emb [B, T*E] with T = num_tables; dot needs D == E.
Status CheckInputs(const char* op, Interaction kind, int64_t num_tables, const Tensor& x, const Tensor& emb,
                   int64_t* emb_dim) {
  if (num_tables < 1) return InvalidArgument(std::string(op) + ": num_tables must be >= 1");
  FS_RETURN_IF_ERROR(internal::CheckF32(x, (std::string(op) + ": x").c_str()));
  FS_RETURN_IF_ERROR(internal::CheckF32(emb, (std::string(op) + ": emb").c_str()));
  FS_RETURN_IF_ERROR(CheckDim(x, 2, (std::string(op) + ": x").c_str()));
  FS_RETURN_IF_ERROR(CheckDim(emb, 2, (std::string(op) + ": emb").c_str()));
  if (emb.size(0) != x.size(0) || emb.size(1) % num_tables != 0) {
    return InvalidArgument(std::string(op) + ": emb " + ShapeToString(emb.shape()) + " must be [" +
                           std::to_string(x.size(0)) + ", " + std::to_string(num_tables) + " * E] for x " +
                           ShapeToString(x.shape()));
  }
  *emb_dim = emb.size(1) / num_tables;
  if (kind == Interaction::kDot && *emb_dim != x.size(1)) {
    return InvalidArgument(std::string(op) + ": the dot interaction needs x's width (" + std::to_string(x.size(1)) +
                           ") to equal the embedding dim (" + std::to_string(*emb_dim) + ")");
  }
  return Status::OK();
}

}  // namespace

Status FeatureInteraction(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                          const Tensor& emb, Tensor* out) {
  int64_t e = 0;
  FS_RETURN_IF_ERROR(CheckInputs("FeatureInteraction", kind, num_tables, x, emb, &e));
  const Shape shape{x.size(0), InteractionWidth(kind, num_tables, x.size(1), e)};
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, shape, DType::kF32, "FeatureInteraction: out"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(x.device(), {&emb, out}, "FeatureInteraction"));
  if (x.device().is_cpu()) return cpu::FeatureInteraction(ctx, kind, num_tables, x, emb, out);
  return cuda::FeatureInteraction(ctx, kind, num_tables, x, emb, out);
}

Status FeatureInteractionBackward(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                                  const Tensor& emb, const Tensor& grad_out, Tensor* grad_x, Tensor* grad_emb) {
  int64_t e = 0;
  FS_RETURN_IF_ERROR(CheckInputs("FeatureInteractionBackward", kind, num_tables, x, emb, &e));
  const Shape shape{x.size(0), InteractionWidth(kind, num_tables, x.size(1), e)};
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(grad_out, shape, "FeatureInteractionBackward: grad_out"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(grad_x, x.shape(), DType::kF32, "FeatureInteractionBackward: grad_x"));
  FS_RETURN_IF_ERROR(
      internal::CheckOutput(grad_emb, emb.shape(), DType::kF32, "FeatureInteractionBackward: grad_emb"));
  FS_RETURN_IF_ERROR(
      internal::CheckOnDevice(x.device(), {&emb, &grad_out, grad_x, grad_emb}, "FeatureInteractionBackward"));
  if (x.device().is_cpu()) {
    return cpu::FeatureInteractionBackward(ctx, kind, num_tables, x, emb, grad_out, grad_x, grad_emb);
  }
  return cuda::FeatureInteractionBackward(ctx, kind, num_tables, x, emb, grad_out, grad_x, grad_emb);
}

}  // namespace foresight::kernels
