// The device kernel of PointwiseConvStep and ConvGemmStep (see conv_gemm.h for the tiling). Per
// stage each group of threads copies its channels' slice of W (transposed, so a thread's 4 rows
// are one 16-byte read) and of X into shared memory, while the next stage's values are already on
// their way into registers; double buffering leaves one __syncthreads per stage. Operands are read
// through Operands::load, so f32 and fp16 storage share the kernel; all arithmetic is f32.
#include <utility>

#include <cuda_runtime.h>

#include "runtime/cuda/conv_gemm.h"
#include "runtime/cuda/conv_gemm_step.h"
#include "runtime/cuda/pointwise_conv_step.h"

namespace edgefuse::gpu {
namespace {

// A step as a GEMM: its depth K, its positions P, and the input matrix's column p of image n
// (column(), once per thread: a thread stages the same column at every stage), of which
// load_rows() reads rows first, first + step, ... (zero past the depth).
struct PointwiseView {
  PointwiseConvStep s;

  struct Column {
    int64_t offset;
  };
  __host__ __device__ int64_t depth() const { return s.in_channels; }
  __host__ __device__ int64_t positions() const { return s.positions; }
  __device__ Column column(int64_t n, int64_t p) const { return {n * s.in_channels * s.positions + p}; }
  template <int kCount, int kStep>
  __device__ void load_rows(const Column& column, int64_t first, float (&out)[kCount]) const {
#pragma unroll
    for (int j = 0; j < kCount; ++j) {
      const int64_t k = first + j * kStep;
      out[j] = k < s.in_channels ? s.load(0, column.offset + k * s.positions) : 0.0f;
    }
  }
};

// Row k of the implicit GEMM is input channel k / volume at tap k % volume of the window; taps
// in the padding read zero. A thread's rows are decomposed once per stage and then stepped, and
// the arithmetic within a window is 32-bit: per-row 64-bit division cost the stem of YOLOX-nano
// (K = 108, 43264 positions) more than its multiply-adds. A Conv's depth and an image's plane
// stay far below 2^31.
struct WindowView {
  ConvGemmStep s;

  struct Column {
    int64_t image;      // the image's first input element
    int32_t corner[3];  // the window's first input coordinate per axis (may be in the padding)
  };
  __host__ __device__ int64_t volume() const { return s.kernel[0] * s.kernel[1] * s.kernel[2]; }
  __host__ __device__ int64_t depth() const { return s.in_channels * volume(); }
  __host__ __device__ int64_t positions() const { return s.output[0] * s.output[1] * s.output[2]; }
  __device__ Column column(int64_t n, int64_t p) const {
    const int64_t oz = p / (s.output[1] * s.output[2]);
    const int64_t rest = p - oz * s.output[1] * s.output[2];
    const int64_t oy = rest / s.output[2], ox = rest - oy * s.output[2];
    return {n * s.in_channels * s.input[0] * s.input[1] * s.input[2],
            {static_cast<int32_t>(oz * s.stride[0] - s.pad_begin[0]),
             static_cast<int32_t>(oy * s.stride[1] - s.pad_begin[1]),
             static_cast<int32_t>(ox * s.stride[2] - s.pad_begin[2])}};
  }
  template <int kCount, int kStep>
  __device__ void load_rows(const Column& column, int64_t first, float (&out)[kCount]) const {
    const auto kd = static_cast<int32_t>(s.kernel[0]), kh = static_cast<int32_t>(s.kernel[1]),
               kw = static_cast<int32_t>(s.kernel[2]);
    const auto depth32 = static_cast<int32_t>(depth()), volume32 = static_cast<int32_t>(volume());
    const auto height = static_cast<int32_t>(s.input[1]), width = static_cast<int32_t>(s.input[2]);
    const int64_t plane = s.input[0] * s.input[1] * s.input[2];
    auto k = static_cast<int32_t>(first);
    int32_t c = k / volume32, tap = k - c * volume32;
    int32_t kz = tap / (kh * kw);
    tap -= kz * kh * kw;
    int32_t ky = tap / kw, kx = tap - ky * kw;
#pragma unroll
    for (int j = 0; j < kCount; ++j) {
      const int32_t iz = column.corner[0] + kz * static_cast<int32_t>(s.dilation[0]);
      const int32_t iy = column.corner[1] + ky * static_cast<int32_t>(s.dilation[1]);
      const int32_t ix = column.corner[2] + kx * static_cast<int32_t>(s.dilation[2]);
      const bool inside = k < depth32 && iz >= 0 && iz < s.input[0] && iy >= 0 && iy < height && ix >= 0 && ix < width;
      const int64_t position = (static_cast<int64_t>(iz) * height + iy) * width + ix;
      out[j] =
          inside
              ? s.load(0, column.image + (s.input_channels_last ? position * s.in_channels + c : c * plane + position))
              : 0.0f;
      k += kStep;
      for (kx += kStep; kx >= kw;) {  // the next row's tap: at most kStep carries
        kx -= kw;
        if (++ky < kh) continue;
        ky = 0;
        if (++kz < kd) continue;
        kz = 0;
        ++c;
      }
    }
  }
};

// Bias, activation and residual for one output, as the steps' run() apply them.
template <typename View>
__device__ void store_output(const View& v, int64_t n, int64_t m, int64_t p, float sum) {
  const auto& s = v.s;
  const float x = sum + (s.in[2] != nullptr ? s.load(2, m) : 0.0f);
  const int64_t o = (n * s.out_channels + m) * v.positions() + p;
  if (s.in[3] == nullptr || m >= s.residual_channels) {
    s.store(o, apply_activation(s.activation, x));
    return;
  }
  const float r = s.load(3, (n * s.residual_channels + m) * v.positions() + p);
  s.store(o,
          s.residual_after_activation ? apply_activation(s.activation, x) + r : apply_activation(s.activation, x + r));
}

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

template <typename View, int kRows, int kColumns, int kSplits, int kStage>
int launch(const View& v, int64_t batch, int64_t out_channels, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((v.positions() + kColumns - 1) / kColumns),
                  static_cast<unsigned>((out_channels + kRows - 1) / kRows), static_cast<unsigned>(batch));
  conv_gemm<View, kRows, kColumns, kSplits, kStage><<<grid, kGemmThreads, 0, stream>>>(v);
  return static_cast<int>(cudaGetLastError());
}

template <typename View, int kIndex>
int launch_tiling(const View& v, int64_t batch, int64_t out_channels, cudaStream_t stream) {
  constexpr GemmTiling t = kGemmTilings[kIndex];
  return launch<View, t.rows, t.columns, t.k_splits, t.stage_channels>(v, batch, out_channels, stream);
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
  if (index < 0 || index >= kGemmTilingCount) {  // the cost model's, for this device's multiprocessors
    int device = 0;
    int multiprocessors = 0;
    if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return static_cast<int>(e);
    if (const cudaError_t e = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
        e != cudaSuccess) {
      return static_cast<int>(e);
    }
    index = gemm_tiling_index(choose_gemm_tiling(batch, out_channels, v.depth(), v.positions(), multiprocessors));
  }
  return launch_index(index, v, batch, out_channels, static_cast<cudaStream_t>(stream),
                      std::make_integer_sequence<int, kGemmTilingCount>{});
}

// Keeps the stream busy for `cycles` clock cycles of one multiprocessor.
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
    Step tiled = step;
    tiled.gemm_tiling = i;
    error = static_cast<cudaError_t>(launch_conv_gemm(tiled, stream));
    if (error == cudaSuccess) {
      spin<<<1, 1, 0, s>>>(kSpinCycles);
      error = cudaGetLastError();
    }
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
