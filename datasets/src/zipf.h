// Zipf(s) over ranks [0, n) in O(1) memory and expected O(1) time:
// rejection-inversion sampling (Hoermann and Derflinger, "Rejection-inversion
// to generate variates from monotone discrete distributions", 1996). A table
// of n cumulative weights would cost 8n bytes per table; this costs nothing
// and works for any n up to 2^53. Private to foresight_datasets.
#pragma once

#include <cmath>
#include <cstdint>

namespace foresight::datasets::internal {

class ZipfSampler {
 public:
  // P(rank k) proportional to (k + 1)^-s, k in [0, n); s > 0, n >= 1.
  ZipfSampler(int64_t n, double s) : n_(static_cast<double>(n)), s_(s) {
    h_x1_ = HIntegral(1.5) - 1.0;
    h_n_ = HIntegral(n_ + 0.5);
    threshold_ = 2.0 - HIntegralInverse(HIntegral(2.5) - H(2.0));
  }

  // One rank from uniforms in [0, 1): `next()` returns a fresh one per call
  // (the loop rejects with probability well under 10%).
  template <typename Uniform>
  int64_t operator()(Uniform&& next) const {
    for (;;) {
      const double u = h_n_ + next() * (h_x1_ - h_n_);
      const double x = HIntegralInverse(u);
      double k = std::floor(x + 0.5);
      if (k < 1) k = 1;
      if (k > n_) k = n_;
      if (k - x <= threshold_ || u >= HIntegral(k + 0.5) - H(k)) return static_cast<int64_t>(k) - 1;
    }
  }

 private:
  // H(x) = integral of x^-s, in a form stable near s = 1.
  double HIntegral(double x) const {
    const double lx = std::log(x);
    return Helper2((1.0 - s_) * lx) * lx;
  }
  double H(double x) const { return std::exp(-s_ * std::log(x)); }
  double HIntegralInverse(double x) const {
    double t = x * (1.0 - s_);
    if (t < -1.0) t = -1.0;  // numerical guard at the lower end
    return std::exp(Helper1(t) * x);
  }
  // log(1 + x) / x and (exp(x) - 1) / x, both -> 1 as x -> 0.
  static double Helper1(double x) { return std::fabs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x / 2.0; }
  static double Helper2(double x) { return std::fabs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x / 2.0; }

  double n_, s_;
  double h_x1_, h_n_, threshold_;
};

}  // namespace foresight::datasets::internal
