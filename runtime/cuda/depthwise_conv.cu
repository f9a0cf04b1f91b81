// The device kernel of DepthwiseConvStep for square 3x3 and 5x5 windows with equal strides of 1
// or 2 (every depthwise Conv of YOLOX-nano and BlazeFace): a block computes an 8 x 32 tile of one
// channel's output plane, one output per thread, from the input rows and columns the tile's
// windows cover, staged once in shared memory (a 3x3 stride-1 tile reads 10 x 34 inputs instead
// of 9 per output). Taps in the padding are staged as zeros, which add nothing, and each output
// is the bias plus the taps in the order DepthwiseConvStep::run sums them.
#include <cuda_runtime.h>

#include "runtime/cuda/depthwise_conv.h"
#include "runtime/cuda/depthwise_conv_step.h"

namespace edgefuse::gpu {
namespace {

constexpr int kTileRows = 8;
constexpr int kTileColumns = 32;
constexpr int kThreads = kTileRows * kTileColumns;

template <int kKernel, int kStride>
__global__ void __launch_bounds__(kThreads) depthwise_tile(DepthwiseConvStep s, int32_t tiles_across) {
  constexpr int kInputRows = (kTileRows - 1) * kStride + kKernel;
  constexpr int kInputColumns = (kTileColumns - 1) * kStride + kKernel;
  __shared__ float tile[kInputRows * kInputColumns];

  const auto height = static_cast<int32_t>(s.input[0]), width = static_cast<int32_t>(s.input[1]);
  const auto out_height = static_cast<int32_t>(s.output[0]), out_width = static_cast<int32_t>(s.output[1]);
  const int32_t c = static_cast<int32_t>(blockIdx.y);
  const int64_t plane = static_cast<int64_t>(blockIdx.z) * s.channels + c;
  const int32_t oy0 = static_cast<int32_t>(blockIdx.x) / tiles_across * kTileRows;
  const int32_t ox0 = static_cast<int32_t>(blockIdx.x) % tiles_across * kTileColumns;
  const int32_t iy0 = oy0 * kStride - s.pad_begin[0], ix0 = ox0 * kStride - s.pad_begin[1];
  const int64_t in_plane = plane * height * width;
  for (int e = static_cast<int>(threadIdx.x); e < kInputRows * kInputColumns; e += kThreads) {
    const int32_t iy = iy0 + e / kInputColumns, ix = ix0 + e % kInputColumns;
    tile[e] = iy >= 0 && iy < height && ix >= 0 && ix < width ? s.load(0, in_plane + iy * width + ix) : 0.0f;
  }
  float w[kKernel * kKernel];
#pragma unroll
  for (int j = 0; j < kKernel * kKernel; ++j) w[j] = s.load(1, c * kKernel * kKernel + j);
  __syncthreads();

  const int ty = static_cast<int>(threadIdx.x) / kTileColumns, tx = static_cast<int>(threadIdx.x) % kTileColumns;
  const int32_t oy = oy0 + ty, ox = ox0 + tx;
  if (oy >= out_height || ox >= out_width) return;
  float acc = s.in[2] != nullptr ? s.load(2, c) : 0.0f;
#pragma unroll
  for (int ky = 0; ky < kKernel; ++ky) {
#pragma unroll
    for (int kx = 0; kx < kKernel; ++kx) {
      acc += tile[(ty * kStride + ky) * kInputColumns + tx * kStride + kx] * w[ky * kKernel + kx];
    }
  }
  const int64_t o = (plane * out_height + oy) * out_width + ox;
  if (!s.has_residual) {
    s.store(o, apply_activation(s.activation, acc));
  } else if (s.residual_after_activation) {
    s.store(o, apply_activation(s.activation, acc) + s.load(3, o));
  } else {
    s.store(o, apply_activation(s.activation, acc + s.load(3, o)));
  }
}

template <int kKernel, int kStride>
int launch(const DepthwiseConvStep& s, cudaStream_t stream) {
  const int64_t tiles_across = (s.output[1] + kTileColumns - 1) / kTileColumns;
  const int64_t tiles_down = (s.output[0] + kTileRows - 1) / kTileRows;
  const dim3 grid(static_cast<unsigned>(tiles_across * tiles_down), static_cast<unsigned>(s.channels),
                  static_cast<unsigned>(s.batch));
  depthwise_tile<kKernel, kStride><<<grid, kThreads, 0, stream>>>(s, static_cast<int32_t>(tiles_across));
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

int launch_depthwise_tile(const DepthwiseConvStep& step, void* stream) {
  if (step.batch == 0 || step.channels == 0 || step.output[0] == 0 || step.output[1] == 0) return 0;
  const auto s = static_cast<cudaStream_t>(stream);
  if (step.kernel[0] == 3) {
    return step.stride[0] == 1 ? launch<3, 1>(step, s) : launch<3, 2>(step, s);
  }
  return step.stride[0] == 1 ? launch<5, 1>(step, s) : launch<5, 2>(step, s);
}

}  // namespace edgefuse::gpu
