// The device's choice of tiling for 1x1 Convs (conv_gemm.h): plain host arithmetic.
#include <doctest/doctest.h>

#include <string>

#include "runtime/cuda/conv_gemm.h"

namespace edgefuse::test {
namespace {

std::string tiling_name(const gpu::GemmTiling& t) {
  return std::to_string(t.rows) + "x" + std::to_string(t.columns) + "/" + std::to_string(t.k_splits);
}

std::string chosen(int64_t batch, int64_t out_channels, int64_t in_channels, int64_t positions,
                   int multiprocessors = 132) {
  return tiling_name(gpu::choose_gemm_tiling(batch, out_channels, in_channels, positions, multiprocessors));
}

TEST_CASE("every pointwise tiling is one 4x4 tile per thread over a whole block") {
  for (const gpu::GemmTiling& t : gpu::kGemmTilings) {
    INFO(tiling_name(t));
    CHECK(t.rows % gpu::kGemmThreadRows == 0);
    CHECK(t.columns % gpu::kGemmThreadColumns == 0);
    CHECK(t.rows / gpu::kGemmThreadRows * (t.columns / gpu::kGemmThreadColumns) * t.k_splits == gpu::kGemmThreads);
    CHECK(t.stage_channels % 8 == 0);
  }
}

TEST_CASE("the cost model picks only tilings that stage 8 channels: the deeper stages are for timing to choose") {
  for (int64_t channels : {3, 8, 16, 24, 64, 100, 256, 1024}) {
    for (int64_t positions : {1, 169, 2704, 43264}) {
      for (int64_t out_channels : {1, 16, 64, 255}) {
        const gpu::GemmTiling t = gpu::choose_gemm_tiling(1, out_channels, channels, positions, 132);
        CHECK(t.stage_channels == 8);
      }
    }
  }
}

TEST_CASE("pointwise tiling: wide shallow layers take whole tiles, deep narrow ones split their channels") {
  // YOLOX-nano's stem side (208 x 208 positions, 32 channels) on an H200's 132 multiprocessors:
  // 32-row tiles waste no rows, and their 676 blocks fill it in two waves of two stages.
  CHECK(chosen(1, 32, 32, 208 * 208) == "32x64/2");
  // Batch 16 of a 104 x 104 layer: plenty of whole tiles, no split.
  CHECK(chosen(16, 64, 64, 104 * 104) == "64x64/1");
  // Its deepest layers (13 x 13 positions, 256 channels): 12 whole tiles, so the channels split 8
  // ways over 96 blocks.
  CHECK(chosen(1, 256, 256, 13 * 13) == "16x32/8");
  // On a 16-multiprocessor Jetson Orin the same layer splits less: 48 blocks already fill it.
  CHECK(chosen(1, 256, 256, 13 * 13, 16) == "32x32/4");
  // Eight or fewer input channels are one stage: nothing to split.
  CHECK(chosen(1, 5, 8, 5 * 7) == "64x64/1");
  // No multiprocessor count (an unknown device) is taken as one.
  CHECK(chosen(1, 256, 256, 13 * 13, 0) == chosen(1, 256, 256, 13 * 13, 1));
}

}  // namespace
}  // namespace edgefuse::test
