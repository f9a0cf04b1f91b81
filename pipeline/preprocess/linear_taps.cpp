#include "pipeline/preprocess/linear_taps.h"

#include <cmath>

#include "runtime/status.h"

namespace edgefuse {

LinearTaps linear_taps(int src_size, int dst_size) {
  EF_ASSERT(src_size >= 2 && dst_size >= 1, "src ", src_size, ", dst ", dst_size);
  LinearTaps taps;
  taps.index.resize(static_cast<size_t>(dst_size));
  taps.weight.resize(static_cast<size_t>(dst_size));
  // OpenCV computes the scale in double from the inverse ratio and the position in float.
  const double scale = 1.0 / (static_cast<double>(dst_size) / src_size);
  for (int d = 0; d < dst_size; ++d) {
    const auto position = static_cast<float>((d + 0.5) * scale - 0.5);
    auto index = static_cast<int>(std::floor(position));
    float weight = position - static_cast<float>(index);
    if (index < 0) {
      index = 0;
      weight = 0;
    }
    if (index >= src_size - 1) {
      index = src_size - 2;
      weight = 1;
    }
    taps.index[static_cast<size_t>(d)] = index;
    taps.weight[static_cast<size_t>(d)] = weight;
  }
  return taps;
}

}  // namespace edgefuse
