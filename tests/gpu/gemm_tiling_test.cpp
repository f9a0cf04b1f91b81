// The device's tilings for its Conv GEMM and the choice among them (conv_gemm.h): plain host
// arithmetic.
#include <doctest/doctest.h>

#include <string>

#include "runtime/cuda/conv_gemm.h"

namespace edgefuse::test {
namespace {

std::string tiling_name(const gpu::GemmTiling& t) {
  return std::to_string(t.rows) + "x" + std::to_string(t.columns) + "/" + std::to_string(t.k_splits) +
         (t.tensor_cores ? " tc" : "");
}

std::string chosen(int64_t batch, int64_t out_channels, int64_t in_channels, int64_t positions,
                   int multiprocessors = 132, bool tensor_cores = false) {
  return tiling_name(
      gpu::choose_gemm_tiling(batch, out_channels, in_channels, positions, multiprocessors, tensor_cores));
}

TEST_CASE("every f32 tiling is one 4x4 tile per thread over a whole block") {
  for (const gpu::GemmTiling& t : gpu::kGemmTilings) {
    if (t.tensor_cores) continue;
    INFO(tiling_name(t));
    CHECK(t.rows % gpu::kGemmThreadRows == 0);
    CHECK(t.columns % gpu::kGemmThreadColumns == 0);
    CHECK(t.rows / gpu::kGemmThreadRows * (t.columns / gpu::kGemmThreadColumns) * t.k_splits == gpu::kGemmThreads);
    CHECK(t.stage_channels % 8 == 0);
  }
}

TEST_CASE("every tensor-core tiling is one 16 x 32 part per warp, whole wmma blocks, in static shared memory") {
  constexpr int kWarp = 32;
  int count = 0;
  for (const gpu::GemmTiling& t : gpu::kGemmTilings) {
    if (!t.tensor_cores) continue;
    INFO(tiling_name(t));
    ++count;
    CHECK(t.rows % gpu::kTensorCoreWarpRows == 0);
    CHECK(t.columns % gpu::kTensorCoreWarpColumns == 0);
    CHECK(t.rows / gpu::kTensorCoreWarpRows * (t.columns / gpu::kTensorCoreWarpColumns) * kWarp * t.k_splits ==
          gpu::kGemmThreads);
    CHECK(t.stage_channels % 16 == 0);
    // A group's threads stage whole rows of their columns of X.
    CHECK((gpu::kGemmThreads / t.k_splits) % t.columns == 0);
    CHECK(gpu::tensor_core_shared_bytes(t) <= 48 * 1024);
    // Partial tiles for the epilogue fit where the stages were.
    CHECK(gpu::tensor_core_shared_bytes(t) >= t.k_splits * t.rows * t.columns * 4);
    CHECK(gpu::gemm_tiling_index(t) >= 0);
  }
  CHECK(count == 5);
  // An f32 tiling and a tensor-core one of the same shape are different entries.
  CHECK(gpu::gemm_tiling_index(gpu::GemmTiling{64, 64, 1, 32}) !=
        gpu::gemm_tiling_index(gpu::GemmTiling{64, 64, 1, 32, true}));
}

TEST_CASE("tensor-core tilings are chosen only for steps that allow them, and then for layers of 32 channels or more") {
  for (const gpu::GemmTiling& t : gpu::kGemmTilings) {
    CHECK(gpu::gemm_tiling_allowed(t, true));
    CHECK(gpu::gemm_tiling_allowed(t, false) == !t.tensor_cores);
  }
  for (int64_t channels : {32, 64, 128, 256}) {
    for (int64_t positions : {169, 676, 2704, 10816, 43264}) {
      INFO(channels, " channels over ", positions, " positions");
      CHECK_FALSE(gpu::choose_gemm_tiling(1, channels, channels, positions, 132, false).tensor_cores);
      CHECK(gpu::choose_gemm_tiling(1, channels, channels, positions, 132, true).tensor_cores);
    }
  }
  // The deepest layers split their channels over tensor cores as over f32 ones.
  CHECK(chosen(1, 256, 256, 13 * 13, 132, true) == "16x32/8 tc");
  // Eight channels are one f32 stage: a tensor-core stage of 32 (zeros past the eighth) is no cheaper.
  CHECK(chosen(1, 64, 8, 208 * 208, 132, true) == chosen(1, 64, 8, 208 * 208, 132, false));
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
