#include "foresight/core/dtype.h"

namespace foresight {

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
    case DType::kU8: return 1;
  }
  return 0;
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kU8: return "u8";
  }
  return "?";
}

StatusOr<DType> ParseDType(const std::string& name) {
  if (name == "f32" || name == "float32") return DType::kF32;
  if (name == "f16" || name == "float16") return DType::kF16;
  if (name == "bf16" || name == "bfloat16") return DType::kBF16;
  if (name == "i32" || name == "int32") return DType::kI32;
  if (name == "i64" || name == "int64") return DType::kI64;
  if (name == "u8" || name == "uint8") return DType::kU8;
  return InvalidArgument("dtype '" + name + "': expected f32, f16, bf16, i32, i64 or u8");
}

}  // namespace foresight
