// What both Conv GEMM kernels (conv_gemm.cu: f32 on CUDA cores; conv_gemm_tensor_cores.cuh)
// share: a step seen as a GEMM (its depth, positions and input columns) and the epilogue of one
// output. Device code, included by .cu files only.
#pragma once

#include <cstdint>

#include "runtime/cuda/conv_gemm.h"
#include "runtime/cuda/conv_gemm_step.h"
#include "runtime/cuda/pointwise_conv_step.h"

namespace edgefuse::gpu {

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

}  // namespace edgefuse::gpu
