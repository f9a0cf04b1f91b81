// Bilinear taps along one axis with OpenCV INTER_LINEAR's pixel-centre mapping:
//   s = (d + 0.5) * src / dst - 0.5, clamped to [0, src - 1].
#pragma once

#include <cstdint>
#include <vector>

namespace edgefuse {

// Destination element d reads source elements index[d] and index[d] + 1:
//   value = v[index] + weight * (v[index + 1] - v[index]).
// Taps clamped to the last source element are expressed as (src - 2, weight 1), so index + 1 is
// always inside the source and kernels need no border case.
struct LinearTaps {
  std::vector<int32_t> index;
  std::vector<float> weight;  // in [0, 1]
};

// src_size >= 2 and dst_size >= 1 (EF_ASSERT).
LinearTaps linear_taps(int src_size, int dst_size);

}  // namespace edgefuse
