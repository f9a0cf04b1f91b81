// Which depthwise Convs the device's tile kernel takes (depthwise_conv.h): host code, no device
// needed. Its arithmetic is checked on a device by the op cases (cuda_executor_test.cpp).
#include <doctest/doctest.h>

#include <initializer_list>

#include "runtime/cuda/depthwise_conv.h"
#include "runtime/cuda/depthwise_conv_step.h"

namespace edgefuse::test {
namespace {

gpu::DepthwiseConvStep depthwise(int32_t kh, int32_t kw, int32_t sy, int32_t sx) {
  gpu::DepthwiseConvStep s;
  s.batch = 1;
  s.channels = 64;
  s.input[0] = s.input[1] = 104;
  s.output[0] = s.output[1] = 104 / sy;
  s.kernel[0] = kh;
  s.kernel[1] = kw;
  s.stride[0] = sy;
  s.stride[1] = sx;
  return s;
}

TEST_CASE("the depthwise tile kernel takes square 3x3 and 5x5 windows with equal strides of 1 or 2") {
  for (int32_t k : {3, 5}) {
    for (int32_t stride : {1, 2}) CHECK(gpu::depthwise_tile_fits(depthwise(k, k, stride, stride)));
  }
  CHECK_FALSE(gpu::depthwise_tile_fits(depthwise(5, 5, 2, 1)));  // unequal strides
  CHECK_FALSE(gpu::depthwise_tile_fits(depthwise(3, 5, 1, 1)));  // not square
  CHECK_FALSE(gpu::depthwise_tile_fits(depthwise(1, 1, 1, 1)));
  CHECK_FALSE(gpu::depthwise_tile_fits(depthwise(4, 4, 1, 1)));
  gpu::DepthwiseConvStep wide = depthwise(3, 3, 1, 1);
  wide.channels = 70000;  // past the grid's y limit
  CHECK_FALSE(gpu::depthwise_tile_fits(wide));
}

}  // namespace
}  // namespace edgefuse::test
