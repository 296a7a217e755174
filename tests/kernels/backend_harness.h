// The backend harness (as ggml's test-backend-ops): a case builds host
// inputs once, runs one op (or a short chain: a forward and its backward)
// on a device, and returns its outputs; the harness runs it on the CPU as
// the reference and on the device under test, and compares every output:
// bit for bit where the op promises it (ids, samples, masks, transposes,
// sums in the CPU's order), else within the case's tolerance. A case that
// fails must fail with the reference's status code and message. Devices
// other than the CPU also run each case twice and must repeat their own
// bits (no order-dependent atomics).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/tensor.h"
#include "foresight/core/thread_pool.h"

namespace foresight::kernels::backend {

// |device - cpu| <= atol + rtol * |cpu| per f32 element; {0, 0}: bit for bit.
struct Tol {
  double atol = 0.0;
  double rtol = 0.0;
  bool exact() const { return atol == 0.0 && rtol == 0.0; }
};
// The CPU's bits: no multiply-add, no transcendental, the CPU's order.
constexpr Tol kExact{};
// Products accumulated with or without FMA contraction (the CPU build
// contracts; the CUDA kernels mirror it, but the test does not rely on
// the compiler's choice), over sums of up to a few hundred terms of
// magnitude <= 1: a few ulps of the partial sums. A wrong index, weight or
// order of operands errs by far more (1e-2 and up).
constexpr Tol kRounding{2e-5, 2e-5};
// exp / log / expm1 from CUDA's library instead of glibc's (an ulp or two),
// carried through a softmax and its sums.
constexpr Tol kMath{2e-5, 5e-5};

using Tensors = std::vector<Tensor>;

struct Case {
  std::string name;
  Tensors inputs;  // on the host; an undefined tensor stays undefined
  // Runs the op with `in` on ctx.device (fresh copies: it may write
  // them); returns the outputs on ctx.device (or the host, for scalars).
  std::function<StatusOr<Tensors>(const ExecContext& ctx, Tensors& in)> run;
  std::vector<Tol> tol;  // per output; the last one repeats; empty: exact
  bool expect_error = false;  // an error path: the CPU must refuse it
};

// The device a harness run tests: the CPU (against a CPU with another
// thread count: the results must be the same bits) or cuda:N.
struct Target {
  Device device;
  std::string name;
};

inline Tensor ToHost(const Tensor& t) {
  if (!t.defined()) return t;
  Tensor h = t.device().is_cpu() ? t : t.To(Device::Cpu()).value();
  return h.is_contiguous() ? h : h.Contiguous().value();
}

// Copies of the inputs on `device` (the CPU gets clones too: cases may
// write their inputs).
inline Tensors Place(const Tensors& in, Device device) {
  Tensors out;
  for (const Tensor& t : in) {
    if (!t.defined()) {
      out.push_back(t);
    } else if (device.is_cpu()) {
      out.push_back(t.is_contiguous() ? t.Clone() : t.Contiguous().value().Clone());
    } else {
      out.push_back(t.To(device).value());
    }
  }
  return out;
}

inline double ElementAsDouble(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kF32: return t.data<float>()[i];
    case DType::kF16: return HalfToFloat(t.data<Half>()[i].bits);
    case DType::kBF16: return BFloat16ToFloat(t.data<BFloat16>()[i].bits);
    case DType::kI32: return t.data<int32_t>()[i];
    case DType::kI64: return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kU8: return t.data<uint8_t>()[i];
  }
  return 0;
}

// Compares one output; reports the first few differences.
inline void Compare(const std::string& what, const Tensor& want_dev, const Tensor& got_dev, Tol tol) {
  ASSERT_EQ(want_dev.defined(), got_dev.defined()) << what << ": one side has no output";
  if (!want_dev.defined()) return;
  const Tensor want = ToHost(want_dev), got = ToHost(got_dev);
  ASSERT_EQ(DTypeName(want.dtype()), std::string(DTypeName(got.dtype()))) << what;
  ASSERT_EQ(ShapeToString(want.shape()), ShapeToString(got.shape())) << what;
  const bool bitwise = tol.exact() || want.dtype() != DType::kF32;
  int reported = 0;
  double worst = 0.0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const size_t es = want.element_size();
    const char* pw = static_cast<const char*>(want.raw_data()) + i * es;
    const char* pg = static_cast<const char*>(got.raw_data()) + i * es;
    bool ok;
    const double w = ElementAsDouble(want, i), g = ElementAsDouble(got, i);
    if (bitwise) {
      ok = std::memcmp(pw, pg, es) == 0;
    } else {
      const double err = std::fabs(g - w);
      ok = (std::isnan(w) && std::isnan(g)) || err <= tol.atol + tol.rtol * std::fabs(w);
      if (std::isfinite(err)) worst = std::max(worst, err);
    }
    if (!ok && reported++ < 5) {
      ADD_FAILURE() << what << ": element " << i << " of " << ShapeToString(want.shape()) << " is " << g
                    << ", the CPU's is " << w
                    << (bitwise ? " (expected the same bits)"
                                : " (tolerance " + std::to_string(tol.atol + tol.rtol * std::fabs(w)) + ")");
    }
  }
  if (reported > 5) ADD_FAILURE() << what << ": " << reported << " elements differ in all";
}

inline std::string StatusText(const Status& s) { return s.ToString(); }

// Runs `c` on the CPU (the reference, on `ref_pool`) and on `target`
// (on `pool`), and compares.
inline void RunCase(const Case& c, const Target& target, ThreadPool* ref_pool, ThreadPool* pool) {
  SCOPED_TRACE(c.name + " on " + target.name);
  ExecContext ref_ctx = CpuContext(7, ref_pool);
  ExecContext dev_ctx = CpuContext(7, pool);
  dev_ctx.device = target.device;
  Tensors ref_in = Place(c.inputs, Device::Cpu());
  StatusOr<Tensors> want = c.run(ref_ctx, ref_in);
  ASSERT_EQ(c.expect_error, !want.ok()) << c.name << ": the CPU gives " << StatusText(want.status())
                                        << (c.expect_error ? ", expected an error" : "");
  Tensors dev_in = Place(c.inputs, target.device);
  StatusOr<Tensors> got = c.run(dev_ctx, dev_in);
  if (!want.ok()) {
    ASSERT_FALSE(got.ok()) << c.name << ": the CPU fails with " << StatusText(want.status())
                           << " but " << target.name << " succeeds";
    EXPECT_EQ(StatusText(want.status()), StatusText(got.status())) << c.name << ": a different error";
    return;
  }
  ASSERT_TRUE(got.ok()) << c.name << " on " << target.name << ": " << StatusText(got.status());
  ASSERT_EQ(want->size(), got->size()) << c.name;
  for (size_t i = 0; i < want->size(); ++i) {
    Tol tol = c.tol.empty() ? kExact : c.tol[std::min(i, c.tol.size() - 1)];
    if (target.device.is_cpu()) tol = kExact;  // any thread count: the same bits
    Compare(c.name + " output " + std::to_string(i), (*want)[i], (*got)[i], tol);
  }
  if (!target.device.is_cpu()) {
    // Run to run: the device must repeat its own bits.
    Tensors again_in = Place(c.inputs, target.device);
    StatusOr<Tensors> again = c.run(dev_ctx, again_in);
    ASSERT_TRUE(again.ok()) << StatusText(again.status());
    for (size_t i = 0; i < got->size(); ++i) {
      Compare(c.name + " output " + std::to_string(i) + " (second run)", (*got)[i], (*again)[i], kExact);
    }
  }
}

}  // namespace foresight::kernels::backend
