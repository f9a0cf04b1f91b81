// The Conv GEMM on tensor cores (conv_gemm.h: the tilings with tensor_cores set), for steps
// whose input is binary16. The block, its groups, their double-buffered stages and the epilogue
// are the f32 kernel's (conv_gemm.cu); what differs is the multiply: each warp owns a 16 x 32
// part of its group's tile as two wmma accumulator blocks, and each stage is staged as binary16,
// W as a high part and the binary16 rounding of the rest (exact sums of two products per block,
// so the f32 weights keep about 22 of their bits). Device code, included by conv_gemm.cu only.
#pragma once

#include <cuda_fp16.h>
#include <mma.h>

#include "runtime/cuda/conv_gemm.h"
#include "runtime/cuda/conv_gemm_views.cuh"

namespace edgefuse::gpu {

// tensor_core_shared_bytes as a constant (a host function cannot be called from device code).
template <int kRows, int kColumns, int kSplits, int kStage>
inline constexpr int kTensorCoreSharedBytes = tensor_core_shared_bytes(GemmTiling{kRows, kColumns, kSplits, kStage,
                                                                                  true});

template <typename View, int kRows, int kColumns, int kSplits, int kStage>
__global__ void __launch_bounds__(kGemmThreads) conv_gemm_tensor_cores(View v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
  __trap();  // no tensor cores before sm_70: the executor never allows these tilings there
#else
  namespace wmma = nvcuda::wmma;
  constexpr int kBlock = 16;  // wmma's m, n and k
  constexpr int kWarpSize = 32;
  constexpr int kGroupThreads = kGemmThreads / kSplits;
  constexpr int kWarpsAcross = kColumns / kTensorCoreWarpColumns;
  static_assert(kRows % kTensorCoreWarpRows == 0 && kColumns % kTensorCoreWarpColumns == 0 &&
                    kRows / kTensorCoreWarpRows * kWarpsAcross * kWarpSize == kGroupThreads,
                "each warp of a group owns one 16 x 32 part of its tile");
  static_assert(kStage % kBlock == 0, "stages of whole 16-channel blocks");
  constexpr int kWeightStride = kStage + kTensorCoreRowPadding;   // halves from one staged W row to the next
  constexpr int kInputStride = kColumns + kTensorCoreRowPadding;  // the same for X
  constexpr int kWeightHalves = kRows * kWeightStride;
  constexpr int kStageHalves = 2 * kWeightHalves + kStage * kInputStride;  // per group: W high, W low, X
  constexpr int kSharedBytes = kTensorCoreSharedBytes<kRows, kColumns, kSplits, kStage>;
  static_assert(kSharedBytes <= 48 * 1024, "static shared memory");
  static_assert(2 * kSplits * kStageHalves * 2 <= kSharedBytes && kSplits * kRows * kColumns * 4 <= kSharedBytes,
                "staging and partial tiles fit");
  using Loads = StageLoads<View, kRows, kColumns, kStage, kGroupThreads>;
  // wmma pointers must be 32-byte aligned: every offset below is a multiple of 16 halves.
  __shared__ __align__(32) unsigned char shared[kSharedBytes];
  __half* const staging = reinterpret_cast<__half*>(shared);

  const int group = static_cast<int>(threadIdx.x) / kGroupThreads;
  const int t = static_cast<int>(threadIdx.x) % kGroupThreads;
  const int warp = t / kWarpSize;
  const int warp_row = warp / kWarpsAcross * kTensorCoreWarpRows;
  const int warp_column = warp % kWarpsAcross * kTensorCoreWarpColumns;
  const int64_t n = blockIdx.z;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kRows;
  const int64_t p0 = static_cast<int64_t>(blockIdx.x) * kColumns;
  const int64_t column = p0 + t % kColumns;
  const bool column_inside = column < v.positions();
  const typename View::Column source = v.column(n, column_inside ? column : 0);
  Loads next;
  // W row-major [rows][stage] (wmma's matrix_a), X row-major [stage][columns] (matrix_b). X's
  // values are binary16 already (the lowering allows tensor cores only then): converting back is
  // exact.
  auto stash = [&](int buffer) {
    __half* const high = staging + (buffer * kSplits + group) * kStageHalves;
    __half* const low = high + kWeightHalves;
    __half* const x = low + kWeightHalves;
#pragma unroll
    for (int j = 0; j < Loads::kWeightLoads; ++j) {
      const int e = t + j * kGroupThreads;
      if (e >= kStage * kRows) continue;
      const int at = e / kStage * kWeightStride + e % kStage;
      const __half w_high = __float2half_rn(next.w[j]);
      high[at] = w_high;
      low[at] = __float2half_rn(next.w[j] - __half2float(w_high));
    }
#pragma unroll
    for (int j = 0; j < Loads::kInputLoads; ++j) {
      const int e = t + j * kGroupThreads;
      x[e / kColumns * kInputStride + e % kColumns] = __float2half_rn(next.x[j]);
    }
  };

  wmma::fragment<wmma::accumulator, kBlock, kBlock, kBlock, float> acc[2];
  wmma::fill_fragment(acc[0], 0.0f);
  wmma::fill_fragment(acc[1], 0.0f);
  const int64_t per_stage = static_cast<int64_t>(kSplits) * kStage;
  const int64_t stages = (v.depth() + per_stage - 1) / per_stage;
  next.fetch(v, t, m0, static_cast<int64_t>(group) * kStage, column_inside, source);
  stash(0);
  __syncthreads();
  for (int64_t stage = 0; stage < stages; ++stage) {
    const int buffer = static_cast<int>(stage & 1);
    const bool more = stage + 1 < stages;
    if (more)
      next.fetch(v, t, m0, (stage + 1) * per_stage + static_cast<int64_t>(group) * kStage, column_inside, source);
    const __half* const high = staging + (buffer * kSplits + group) * kStageHalves;
    const __half* const low = high + kWeightHalves;
    const __half* const x = low + kWeightHalves;
#pragma unroll
    for (int k = 0; k < kStage; k += kBlock) {
      wmma::fragment<wmma::matrix_a, kBlock, kBlock, kBlock, __half, wmma::row_major> w_high, w_low;
      wmma::load_matrix_sync(w_high, high + warp_row * kWeightStride + k, kWeightStride);
      wmma::load_matrix_sync(w_low, low + warp_row * kWeightStride + k, kWeightStride);
#pragma unroll
      for (int f = 0; f < 2; ++f) {
        wmma::fragment<wmma::matrix_b, kBlock, kBlock, kBlock, __half, wmma::row_major> b;
        wmma::load_matrix_sync(b, x + k * kInputStride + warp_column + f * kBlock, kInputStride);
        wmma::mma_sync(acc[f], w_low, b, acc[f]);
        wmma::mma_sync(acc[f], w_high, b, acc[f]);
      }
    }
    // The other buffer was last read before the previous stage's barrier.
    if (more) stash(buffer ^ 1);
    __syncthreads();
  }

  // The staging is no longer read (the loop ended on a barrier): the partial tiles take its place.
  float* const partials = reinterpret_cast<float*>(shared);
  float* const partial = partials + group * kRows * kColumns;
#pragma unroll
  for (int f = 0; f < 2; ++f) {
    wmma::store_matrix_sync(partial + warp_row * kColumns + warp_column + f * kBlock, acc[f], kColumns,
                            wmma::mem_row_major);
  }
  __syncthreads();
  store_partial_sums<kRows, kColumns, kSplits>(v, partials, n, m0, p0);
#endif
}

}  // namespace edgefuse::gpu
