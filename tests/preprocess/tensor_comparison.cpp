#include "tests/preprocess/tensor_comparison.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

namespace edgefuse::test {
namespace {

// Offset of channel c (0, 1, 2 in the tensor's own order) of pixel (x, y).
int64_t element(const ModelInputSpec& spec, int x, int y, int c) {
  if (spec.layout == TensorLayout::kNCHW) return (static_cast<int64_t>(c) * spec.height + y) * spec.width + x;
  return (static_cast<int64_t>(y) * spec.width + x) * 3 + c;
}

}  // namespace

std::string InputDifference::to_string() const {
  std::ostringstream out;
  out << "mean |d| " << mean_abs << ", p99.9 " << percentile_999 << ", max " << max_abs << ", padding mismatches "
      << padding_mismatches;
  return out.str();
}

InputDifference compare_inputs(const float* actual, const float* expected, const ModelInputSpec& spec,
                               const Letterbox& lb, float padding_value, int shift_x, bool swap_rb) {
  InputDifference diff;
  std::vector<double> image_diffs;
  for (int y = 0; y < spec.height; ++y) {
    for (int x = 0; x < spec.width; ++x) {
      const bool inside = x >= lb.pad_x && x < lb.pad_x + lb.resized_w && y >= lb.pad_y && y < lb.pad_y + lb.resized_h;
      for (int c = 0; c < 3; ++c) {
        const float a = actual[element(spec, x, y, c)];
        if (!inside) {
          if (a != padding_value) ++diff.padding_mismatches;
          continue;
        }
        const int ex = std::clamp(x + shift_x, lb.pad_x, lb.pad_x + lb.resized_w - 1);
        const int ec = swap_rb && c != 1 ? 2 - c : c;
        const float e = expected[element(spec, ex, y, ec)];
        image_diffs.push_back(std::abs(static_cast<double>(a) - e) / spec.scale);
      }
    }
  }
  if (image_diffs.empty()) return diff;
  double sum = 0;
  for (double d : image_diffs) sum += d;
  diff.mean_abs = sum / static_cast<double>(image_diffs.size());
  const auto rank = static_cast<size_t>(0.999 * static_cast<double>(image_diffs.size() - 1));
  std::nth_element(image_diffs.begin(), image_diffs.begin() + static_cast<std::ptrdiff_t>(rank), image_diffs.end());
  diff.percentile_999 = image_diffs[rank];
  diff.max_abs = *std::max_element(image_diffs.begin(), image_diffs.end());
  return diff;
}

}  // namespace edgefuse::test
