#include "tests/support/numerics.h"

#include <cmath>
#include <sstream>

namespace edgefuse::test {

Tensor random_tensor(DType dtype, Shape shape, std::mt19937& rng, double lo, double hi) {
  Tensor t = Tensor::empty(dtype, std::move(shape));
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* data = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_same_v<T, Half>) {
        data[i] = float_to_half(static_cast<float>(std::uniform_real_distribution<double>(lo, hi)(rng)));
      } else if constexpr (std::is_same_v<T, bool>) {
        data[i] = (rng() & 1) != 0;
      } else if constexpr (std::is_floating_point_v<T>) {
        data[i] = static_cast<T>(std::uniform_real_distribution<double>(lo, hi)(rng));
      } else {
        data[i] = static_cast<T>(
            std::uniform_int_distribution<int64_t>(static_cast<int64_t>(lo), static_cast<int64_t>(hi))(rng));
      }
    }
  });
  return t;
}

std::string ErrorStats::to_string() const {
  std::ostringstream out;
  out << "relative L2 " << relative_l2 << ", max abs " << max_abs << ", NaN mismatches " << mismatched_nan;
  return out.str();
}

ErrorStats compare_tensors(const Tensor& actual, const Tensor& expected) {
  ErrorStats stats;
  double diff_sq = 0;
  double ref_sq = 0;
  const int64_t n = std::min(actual.numel(), expected.numel());
  for (int64_t i = 0; i < n; ++i) {
    const double a = actual.double_at(i);
    const double b = expected.double_at(i);
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) ++stats.mismatched_nan;
      continue;
    }
    if (std::isinf(a) || std::isinf(b)) {
      if (a != b) stats.max_abs = INFINITY;
      continue;
    }
    diff_sq += (a - b) * (a - b);
    ref_sq += b * b;
    stats.max_abs = std::max(stats.max_abs, std::abs(a - b));
  }
  stats.relative_l2 = std::sqrt(diff_sq) / std::max(std::sqrt(ref_sq), 1e-30);
  if (ref_sq == 0 && diff_sq == 0) stats.relative_l2 = 0;
  return stats;
}

}  // namespace edgefuse::test
