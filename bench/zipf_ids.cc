#include "zipf_ids.h"

#include <algorithm>
#include <cmath>

namespace foresight::bench {

Zipf::Zipf(int64_t n, double s) : cdf_(static_cast<size_t>(n)) {
  double sum = 0;
  for (int64_t r = 0; r < n; ++r) cdf_[r] = (sum += std::pow(static_cast<double>(r + 1), -s));
  for (double& c : cdf_) c /= sum;
}

int64_t Zipf::Draw(std::mt19937_64& rng) const {
  const double u = std::uniform_real_distribution<double>(0, 1)(rng);
  return std::min<int64_t>(static_cast<int64_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin()),
                           static_cast<int64_t>(cdf_.size()) - 1);
}

void DrawTableMajorIds(const Zipf& z, std::mt19937_64& rng, int64_t tables, int64_t rows, int64_t per_table,
                       int64_t* ids) {
  for (int64_t t = 0; t < tables; ++t) {
    for (int64_t k = t * per_table; k < (t + 1) * per_table; ++k) {
      // A multiplicative hash of the rank, offset per table.
      ids[k] = static_cast<int64_t>((static_cast<uint64_t>(z.Draw(rng)) * 2654435761ull +
                                     static_cast<uint64_t>(t) * 40503ull) %
                                    static_cast<uint64_t>(rows));
    }
  }
}

}  // namespace foresight::bench
