// Test helpers for autograd: random small graphs, random tensors, a scalar
// projection loss, finite-difference gradient checks, and naive (double)
// references of the layers' forward math.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "foresight/autograd/functional.h"
#include "foresight/autograd/tape.h"
#include "testing/testing.h"

namespace foresight::autograd::testing {

// Uniform values in [lo, hi) from a seeded stream (deterministic).
Tensor RandomTensor(const Shape& shape, uint64_t seed, float lo = -1.0f, float hi = 1.0f);

enum class SelfLoops { kNone, kAll, kSome };

// A block with num_dst destinations (the first num_dst of num_src sources),
// degrees in [0, max_degree] with some rows forced empty, distinct sources
// per row, self loops as asked. Indices i64 or i32.
kernels::Csr RandomBlock(int64_t num_dst, int64_t num_src, int max_degree, SelfLoops loops, uint64_t seed,
                         bool i32_indices = false);

// A dense [num_dst, num_src] adjacency (edge multiplicity as weight, or the
// edge weight when present) for references.
std::vector<std::vector<double>> DenseAdjacency(const kernels::Csr& csr);

// loss = sum(out * r) with r fixed and random; recorded on the tape.
Var ProjectionLoss(Tape& tape, const Var& out, const Tensor& r);
// The same loss in double on the host, for finite differences.
double ProjectionValue(const Tensor& out, const Tensor& r);

// Builds the output on a tape from the current values of the checked Vars.
using ForwardFn = std::function<StatusOr<Var>(Tape& tape)>;

struct Checked {
  std::string name;
  Var var;  // its value is perturbed in place
};

struct GradCheckOptions {
  double eps = 2e-3;
  double atol = 4e-3;
  double rtol = 3e-2;
  // With training=true every evaluation uses the same context key, so
  // dropout draws the same mask each time and is differentiable here.
  bool training = false;
};

// Runs forward + Backward once on a recording tape, then
// compares each checked Var's gradient with central differences of
// ProjectionValue. Reports each mismatching element with its name.
void CheckGradients(const ForwardFn& forward, const std::vector<Checked>& checked, uint64_t seed,
                    const GradCheckOptions& options = {});

// Copies a tensor into a double vector (host, any contiguous f32).
std::vector<double> ToDoubles(const Tensor& t);
// Checks equal shapes and |a - b| <= tol elementwise.
void ExpectNear(const Tensor& actual, const std::vector<double>& expected, double tol, const std::string& what);
// Bitwise equality of two f32 tensors.
void ExpectBitwiseEqual(const Tensor& a, const Tensor& b, const std::string& what);

// Naive references (row-major vectors of doubles).
using Matrix = std::vector<std::vector<double>>;
Matrix ToMatrix(const Tensor& t);  // 2-D f32
Matrix MatMulRef(const Matrix& a, const Matrix& b);
std::vector<double> Flatten(const Matrix& m);
// The GCN-normalised block (self loops added where missing), as DenseAdjacency.
Matrix GcnAdjacencyRef(const kernels::Csr& csr);

}  // namespace foresight::autograd::testing
