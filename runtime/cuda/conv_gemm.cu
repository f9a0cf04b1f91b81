// The f32 device kernel of PointwiseConvStep and ConvGemmStep (see conv_gemm.h for the tiling),
// the launches of every tiling (tensor-core ones: conv_gemm_tensor_cores.cuh) and their timing.
// Per stage each group of threads copies its channels' slice of W (transposed, so a thread's 4
// rows are one 16-byte read) and of X into shared memory, while the next stage's values are
// already on their way into registers; double buffering leaves one __syncthreads per stage.
// Operands are read through Operands::load, so f32 and fp16 storage share the kernel; all
// arithmetic is f32.
#include <limits>
#include <utility>

#include <cuda_runtime.h>

#include "runtime/cuda/conv_gemm.h"
#include "runtime/cuda/conv_gemm_step.h"
#include "runtime/cuda/conv_gemm_tensor_cores.cuh"
#include "runtime/cuda/conv_gemm_views.cuh"
#include "runtime/cuda/pointwise_conv_step.h"

namespace edgefuse::gpu {
namespace {

// The f32 kernel keeps its staging and epilogue written out here rather than through the
// tensor-core kernel's GemmStages (conv_gemm_tensor_cores.cuh): through them nvcc allocates its
// registers differently (16x32/8 over windows: 79 registers instead of 64, a block fewer per
// multiprocessor; some tilings spill), and this form is the one measured on an H200.
template <typename View, int kRows, int kColumns, int kSplits, int kStage>
__global__ void __launch_bounds__(kGemmThreads) conv_gemm(View v) {
  constexpr int kGroupThreads = kGemmThreads / kSplits;
  static_assert(kRows * kColumns == kGroupThreads * kGemmThreadRows * kGemmThreadColumns, "one 4x4 tile per thread");
  constexpr int kColumnThreads = kColumns / kGemmThreadColumns;
  constexpr int kStageFloats = kStage * (kRows + kColumns);  // per group: W^T [stage][rows], X [stage][columns]
  constexpr int kStagingFloats = 2 * kSplits * kStageFloats;
  constexpr int kPartialFloats = kSplits > 1 ? kSplits * kRows * kColumns : 0;
  constexpr int kSharedFloats = kStagingFloats > kPartialFloats ? kStagingFloats : kPartialFloats;
  constexpr int kWeightLoads = (kStage * kRows + kGroupThreads - 1) / kGroupThreads;
  constexpr int kInputLoads = (kStage * kColumns + kGroupThreads - 1) / kGroupThreads;
  __shared__ __align__(16) float shared[kSharedFloats];

  const int group = static_cast<int>(threadIdx.x) / kGroupThreads;
  const int t = static_cast<int>(threadIdx.x) % kGroupThreads;
  const int tile_row = t / kColumnThreads * kGemmThreadRows;
  const int tile_column = t % kColumnThreads * kGemmThreadColumns;
  const int64_t n = blockIdx.z;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kRows;
  const int64_t p0 = static_cast<int64_t>(blockIdx.x) * kColumns;
  const auto& s = v.s;
  const int64_t depth = v.depth();
  const int64_t positions = v.positions();

  // Each thread stages one column of X (kInputLoads rows of it per stage).
  static_assert(kGroupThreads % kColumns == 0 && kInputLoads * kGroupThreads == kStage * kColumns,
                "a thread stages whole rows of one column");
  const int64_t column = p0 + t % kColumns;
  const bool column_inside = column < positions;
  const typename View::Column source = v.column(n, column_inside ? column : 0);
  float w_next[kWeightLoads];
  float x_next[kInputLoads];
  // Channels past the end (and rows or columns past the edge) stage zeros: they add nothing.
  auto fetch = [&](int64_t k0) {
#pragma unroll
    for (int j = 0; j < kWeightLoads; ++j) {
      const int e = t + j * kGroupThreads;
      const int64_t m = m0 + e / kStage, k = k0 + e % kStage;
      w_next[j] = e < kStage * kRows && m < s.out_channels && k < depth ? s.load(1, m * depth + k) : 0.0f;
    }
    if (column_inside) {
      v.template load_rows<kInputLoads, kGroupThreads / kColumns>(source, k0 + t / kColumns, x_next);
    } else {
#pragma unroll
      for (int j = 0; j < kInputLoads; ++j) x_next[j] = 0.0f;
    }
  };
  auto stash = [&](int buffer) {
    float* w = shared + (buffer * kSplits + group) * kStageFloats;
    float* x = w + kStage * kRows;
#pragma unroll
    for (int j = 0; j < kWeightLoads; ++j) {
      const int e = t + j * kGroupThreads;
      if (e < kStage * kRows) w[(e % kStage) * kRows + e / kStage] = w_next[j];
    }
#pragma unroll
    for (int j = 0; j < kInputLoads; ++j) {
      const int e = t + j * kGroupThreads;
      if (e < kStage * kColumns) x[e] = x_next[j];
    }
  };

  float acc[kGemmThreadRows][kGemmThreadColumns] = {};
  const int64_t per_stage = static_cast<int64_t>(kSplits) * kStage;
  const int64_t stages = (depth + per_stage - 1) / per_stage;
  fetch(static_cast<int64_t>(group) * kStage);
  stash(0);
  __syncthreads();
  for (int64_t stage = 0; stage < stages; ++stage) {
    const int buffer = static_cast<int>(stage & 1);
    const bool more = stage + 1 < stages;
    if (more) fetch((stage + 1) * per_stage + static_cast<int64_t>(group) * kStage);
    const float* w = shared + (buffer * kSplits + group) * kStageFloats;
    const float* x = w + kStage * kRows;
#pragma unroll
    for (int k = 0; k < kStage; ++k) {
      const float4 a = *reinterpret_cast<const float4*>(w + k * kRows + tile_row);
      const float4 b = *reinterpret_cast<const float4*>(x + k * kColumns + tile_column);
      const float wa[4] = {a.x, a.y, a.z, a.w};
      const float xb[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int r = 0; r < kGemmThreadRows; ++r) {
#pragma unroll
        for (int q = 0; q < kGemmThreadColumns; ++q) acc[r][q] = fmaf(wa[r], xb[q], acc[r][q]);
      }
    }
    // The other buffer was last read before the previous stage's barrier.
    if (more) stash(buffer ^ 1);
    __syncthreads();
  }

  if constexpr (kSplits == 1) {
#pragma unroll
    for (int r = 0; r < kGemmThreadRows; ++r) {
      const int64_t m = m0 + tile_row + r;
#pragma unroll
      for (int q = 0; q < kGemmThreadColumns; ++q) {
        const int64_t p = p0 + tile_column + q;
        if (m < s.out_channels && p < positions) store_output(v, n, m, p, acc[r][q]);
      }
    }
  } else {
    // The groups' partial tiles, summed in group order (deterministic), one output per thread at
    // a time so that consecutive threads store consecutive positions.
    float* partial = shared + group * kRows * kColumns;
#pragma unroll
    for (int r = 0; r < kGemmThreadRows; ++r) {
#pragma unroll
      for (int q = 0; q < kGemmThreadColumns; ++q) partial[(tile_row + r) * kColumns + tile_column + q] = acc[r][q];
    }
    __syncthreads();
    for (int e = static_cast<int>(threadIdx.x); e < kRows * kColumns; e += kGemmThreads) {
      const int64_t m = m0 + e / kColumns, p = p0 + e % kColumns;
      if (m >= s.out_channels || p >= positions) continue;
      float sum = 0.0f;
#pragma unroll
      for (int g = 0; g < kSplits; ++g) sum += shared[g * kRows * kColumns + e];
      store_output(v, n, m, p, sum);
    }
  }
}
template <typename View, int kIndex>
int launch_tiling(const View& v, int64_t batch, int64_t out_channels, cudaStream_t stream) {
  constexpr GemmTiling t = kGemmTilings[kIndex];
  const dim3 grid(static_cast<unsigned>((v.positions() + t.columns - 1) / t.columns),
                  static_cast<unsigned>((out_channels + t.rows - 1) / t.rows), static_cast<unsigned>(batch));
  if constexpr (t.tensor_cores) {
    conv_gemm_tensor_cores<View, t.rows, t.columns, t.k_splits, t.stage_channels><<<grid, kGemmThreads, 0, stream>>>(v);
  } else {
    conv_gemm<View, t.rows, t.columns, t.k_splits, t.stage_channels><<<grid, kGemmThreads, 0, stream>>>(v);
  }
  return static_cast<int>(cudaGetLastError());
}

// The launch of kGemmTilings[index], one instantiation per entry of the table.
template <typename View, int... kIndex>
int launch_index(int index, const View& v, int64_t batch, int64_t out_channels, cudaStream_t stream,
                 std::integer_sequence<int, kIndex...>) {
  int result = static_cast<int>(cudaErrorInvalidConfiguration);
  (void)((index == kIndex ? (result = launch_tiling<View, kIndex>(v, batch, out_channels, stream), true) : false) ||
         ...);
  return result;
}

template <typename View>
int launch_view(const View& v, int64_t batch, int64_t out_channels, void* stream) {
  if (batch == 0 || out_channels == 0 || v.positions() == 0) return 0;
  int index = v.s.gemm_tiling;
  if (index < 0 || index >= kGemmTilingCount || !gemm_tiling_allowed(kGemmTilings[index], v.s.tensor_cores)) {
    // the cost model's, for this device's multiprocessors
    int device = 0;
    int multiprocessors = 0;
    if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return static_cast<int>(e);
    if (const cudaError_t e = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
        e != cudaSuccess) {
      return static_cast<int>(e);
    }
    index = gemm_tiling_index(
        choose_gemm_tiling(batch, out_channels, v.depth(), v.positions(), multiprocessors, v.s.tensor_cores));
  }
  return launch_index(index, v, batch, out_channels, static_cast<cudaStream_t>(stream),
                      std::make_integer_sequence<int, kGemmTilingCount>{});
}

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// A kernel of a few microseconds takes about as long to launch from the host: timed as launched,
// the launches would be measured. So the stream first spins for ~100 us while the host queues the
// timed launches, which then run back to back.
template <typename Step>
int time_tilings(const Step& step, void* stream, int launches, float (&ms)[kGemmTilingCount]) {
  constexpr long long kSpinCycles = 200000;
  const auto s = static_cast<cudaStream_t>(stream);
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaError_t error = cudaEventCreate(&start);
  if (error == cudaSuccess) error = cudaEventCreate(&stop);
  for (int i = 0; i < kGemmTilingCount && error == cudaSuccess; ++i) {
    if (!gemm_tiling_allowed(kGemmTilings[i], step.tensor_cores)) {
      ms[i] = std::numeric_limits<float>::infinity();
      continue;
    }
    Step tiled = step;
    tiled.gemm_tiling = i;
    error = static_cast<cudaError_t>(launch_conv_gemm(tiled, stream));
    if (error == cudaSuccess) error = static_cast<cudaError_t>(spin_stream(stream, kSpinCycles));
    if (error == cudaSuccess) error = cudaEventRecord(start, s);
    for (int l = 0; l < launches && error == cudaSuccess; ++l) {
      error = static_cast<cudaError_t>(launch_conv_gemm(tiled, stream));
    }
    if (error == cudaSuccess) error = cudaEventRecord(stop, s);
    if (error == cudaSuccess) error = cudaEventSynchronize(stop);
    float elapsed = 0;
    if (error == cudaSuccess) error = cudaEventElapsedTime(&elapsed, start, stop);
    ms[i] = elapsed / static_cast<float>(launches > 0 ? launches : 1);
  }
  if (start != nullptr) cudaEventDestroy(start);
  if (stop != nullptr) cudaEventDestroy(stop);
  return static_cast<int>(error);
}

}  // namespace

int spin_stream(void* stream, long long cycles) {
  spin<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(cycles);
  return static_cast<int>(cudaGetLastError());
}

int launch_conv_gemm(const PointwiseConvStep& step, void* stream) {
  return launch_view(PointwiseView{step}, step.batch, step.out_channels, stream);
}

int launch_conv_gemm(const ConvGemmStep& step, void* stream) {
  return launch_view(WindowView{step}, step.batch, step.out_channels, stream);
}

int time_gemm_tilings(const PointwiseConvStep& step, void* stream, int launches, float (&ms)[kGemmTilingCount]) {
  return time_tilings(step, stream, launches, ms);
}

int time_gemm_tilings(const ConvGemmStep& step, void* stream, int launches, float (&ms)[kGemmTilingCount]) {
  return time_tilings(step, stream, launches, ms);
}

}  // namespace edgefuse::gpu
