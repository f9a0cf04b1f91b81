// The Conv GEMM on tensor cores (conv_gemm.h: the tilings with tensor_cores set), for steps
// whose input is binary16. The block, its groups, their double-buffered stages and the epilogue
// are the f32 kernel's (conv_gemm.cu); what differs is the multiply: each warp owns a 16 x 32
// part of its group's tile as two wmma accumulator blocks, and each stage is staged as binary16,
// W as a high part and the binary16 rounding of the rest times 2^11, multiplied into a second
// accumulator that is scaled back at the end (exact products, so the f32 weights keep about 22 of
// their bits at any magnitude: unscaled, the rest of a weight below about 0.1 is a subnormal
// binary16, and a weight of 1e-3 kept only 14 bits). Device code, included by conv_gemm.cu only.
#pragma once

#include <cuda_fp16.h>
#include <mma.h>

#include "runtime/cuda/conv_gemm.h"
#include "runtime/cuda/conv_gemm_views.cuh"

namespace edgefuse::gpu {

// One group's global loads of a stage, kept in registers while the previous stage is multiplied:
// element e = t + j * kGroupThreads of W's [kRows x kStage] slice is output row e / kStage at
// channel e % kStage (consecutive threads read consecutive channels); X's [kStage x kColumns]
// slice has each thread stage one column, element e being row e / kColumns at column e % kColumns.
// Channels past the depth (and rows or columns past the edge) load zeros: they add nothing.
template <typename View, int kRows, int kColumns, int kStage, int kGroupThreads>
struct StageLoads {
  static constexpr int kWeightLoads = (kStage * kRows + kGroupThreads - 1) / kGroupThreads;
  static constexpr int kInputLoads = (kStage * kColumns + kGroupThreads - 1) / kGroupThreads;
  static_assert(kGroupThreads % kColumns == 0 && kInputLoads * kGroupThreads == kStage * kColumns,
                "a thread stages whole rows of one column");

  float w[kWeightLoads];
  float x[kInputLoads];

  // Thread t's loads of the stage starting at channel k0, for output rows from m0; `column`
  // (valid when `column_inside`) is its column of X.
  __device__ void fetch(const View& v, int t, int64_t m0, int64_t k0, bool column_inside,
                        const typename View::Column& column) {
    const auto& s = v.s;
    const int64_t depth = v.depth();
#pragma unroll
    for (int j = 0; j < kWeightLoads; ++j) {
      const int e = t + j * kGroupThreads;
      const int64_t m = m0 + e / kStage, k = k0 + e % kStage;
      w[j] = e < kStage * kRows && m < s.out_channels && k < depth ? s.load(1, m * depth + k) : 0.0f;
    }
    if (column_inside) {
      v.template load_rows<kInputLoads, kGroupThreads / kColumns>(column, k0 + t / kColumns, x);
    } else {
#pragma unroll
      for (int j = 0; j < kInputLoads; ++j) x[j] = 0.0f;
    }
  }
};

// One thread's part in a block's double-buffered stages: its group of threads and place in it,
// the block's image, first output row and first position, its column of X, and the loads of the
// next stage in registers.
template <typename View, int kRows, int kColumns, int kSplits, int kStage>
struct GemmStages {
  static constexpr int kGroupThreads = kGemmThreads / kSplits;
  using Loads = StageLoads<View, kRows, kColumns, kStage, kGroupThreads>;

  int group;
  int t;  // within the group
  int64_t n;
  int64_t m0;
  int64_t p0;
  bool column_inside;
  typename View::Column source;
  Loads next;

  __device__ explicit GemmStages(const View& v)
      : group(static_cast<int>(threadIdx.x) / kGroupThreads),
        t(static_cast<int>(threadIdx.x) % kGroupThreads),
        n(blockIdx.z),
        m0(static_cast<int64_t>(blockIdx.y) * kRows),
        p0(static_cast<int64_t>(blockIdx.x) * kColumns) {
    const int64_t column = p0 + t % kColumns;
    column_inside = column < v.positions();
    source = v.column(n, column_inside ? column : 0);
  }

  // Every stage of the group's channels (group g takes channels g * kStage, ... of each
  // kSplits * kStage): stash(buffer) writes `next` into shared buffer 0 or 1, multiply(buffer)
  // consumes one. The next stage's loads are in flight during the multiply; one barrier a stage.
  template <typename Stash, typename Multiply>
  __device__ void run(const View& v, const Stash& stash, const Multiply& multiply) {
    const int64_t per_stage = static_cast<int64_t>(kSplits) * kStage;
    const int64_t stages = (v.depth() + per_stage - 1) / per_stage;
    const int64_t first = static_cast<int64_t>(group) * kStage;
    next.fetch(v, t, m0, first, column_inside, source);
    stash(0);
    __syncthreads();
    for (int64_t stage = 0; stage < stages; ++stage) {
      const int buffer = static_cast<int>(stage & 1);
      const bool more = stage + 1 < stages;
      if (more) next.fetch(v, t, m0, (stage + 1) * per_stage + first, column_inside, source);
      multiply(buffer);
      // The other buffer was last read before the previous stage's barrier.
      if (more) stash(buffer ^ 1);
      __syncthreads();
    }
  }
};

// The block's output tile from the groups' partial tiles in shared memory (`partials`: kSplits
// tiles of kRows x kColumns f32, row-major), summed in group order (deterministic), one output
// per thread at a time so that consecutive threads store consecutive positions. After a barrier.
template <int kRows, int kColumns, int kSplits, typename View>
__device__ void store_partial_sums(const View& v, const float* partials, int64_t n, int64_t m0, int64_t p0) {
  for (int e = static_cast<int>(threadIdx.x); e < kRows * kColumns; e += kGemmThreads) {
    const int64_t m = m0 + e / kColumns, p = p0 + e % kColumns;
    if (m >= v.s.out_channels || p >= v.positions()) continue;
    float sum = 0.0f;
#pragma unroll
    for (int g = 0; g < kSplits; ++g) sum += partials[g * kRows * kColumns + e];
    store_output(v, n, m, p, sum);
  }
}

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
  using Stages = GemmStages<View, kRows, kColumns, kSplits, kStage>;
  using Loads = typename Stages::Loads;
  constexpr int kGroupThreads = Stages::kGroupThreads;
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
  // wmma pointers must be 32-byte aligned: every offset below is a multiple of 16 halves.
  __shared__ __align__(32) unsigned char shared[kSharedBytes];
  __half* const staging = reinterpret_cast<__half*>(shared);

  Stages stages(v);
  const int t = stages.t;
  const int warp = t / kWarpSize;
  const int warp_row = warp / kWarpsAcross * kTensorCoreWarpRows;
  const int warp_column = warp % kWarpsAcross * kTensorCoreWarpColumns;
  // W row-major [rows][stage] (wmma's matrix_a), X row-major [stage][columns] (matrix_b). X's
  // values are binary16 already (the lowering allows tensor cores only then): converting back is
  // exact.
  const auto stash = [&](int buffer) {
    __half* const high = staging + (buffer * kSplits + stages.group) * kStageHalves;
    __half* const low = high + kWeightHalves;
    __half* const x = low + kWeightHalves;
#pragma unroll
    for (int j = 0; j < Loads::kWeightLoads; ++j) {
      const int e = t + j * kGroupThreads;
      if (e >= kStage * kRows) continue;
      const int at = e / kStage * kWeightStride + e % kStage;
      const __half w_high = __float2half_rn(stages.next.w[j]);
      high[at] = w_high;
      // At most half a binary16 ulp of w (16 below 65504), so times 2^11 it stays finite.
      low[at] = __float2half_rn((stages.next.w[j] - __half2float(w_high)) * 2048.0f);
    }
#pragma unroll
    for (int j = 0; j < Loads::kInputLoads; ++j) {
      const int e = t + j * kGroupThreads;
      x[e / kColumns * kInputStride + e % kColumns] = __float2half_rn(stages.next.x[j]);
    }
  };
  // The products of W's high parts, and those of its scaled low parts.
  wmma::fragment<wmma::accumulator, kBlock, kBlock, kBlock, float> acc[2], acc_low[2];
#pragma unroll
  for (int f = 0; f < 2; ++f) {
    wmma::fill_fragment(acc[f], 0.0f);
    wmma::fill_fragment(acc_low[f], 0.0f);
  }
  const auto multiply = [&](int buffer) {
    const __half* const high = staging + (buffer * kSplits + stages.group) * kStageHalves;
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
        wmma::mma_sync(acc_low[f], w_low, b, acc_low[f]);
        wmma::mma_sync(acc[f], w_high, b, acc[f]);
      }
    }
  };
  stages.run(v, stash, multiply);

  // The staging is no longer read (the loop ended on a barrier): the partial tiles take its place.
  float* const partials = reinterpret_cast<float*>(shared);
  float* const partial = partials + stages.group * kRows * kColumns;
#pragma unroll
  for (int f = 0; f < 2; ++f) {
    // Both accumulators have the same fragment layout: element by element, the low parts' sum
    // scaled back (an exact power of two) joins the high parts'.
#pragma unroll
    for (int i = 0; i < acc[f].num_elements; ++i) acc[f].x[i] += acc_low[f].x[i] * (1.0f / 2048.0f);
    wmma::store_matrix_sync(partial + warp_row * kColumns + warp_column + f * kBlock, acc[f], kColumns,
                            wmma::mem_row_major);
  }
  __syncthreads();
  store_partial_sums<kRows, kColumns, kSplits>(v, partials, stages.n, stages.m0, stages.p0);
#endif
}

}  // namespace edgefuse::gpu
