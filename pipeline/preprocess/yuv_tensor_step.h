// Fused YUV preprocessing as one work item per output pixel, for the GPU: the same letterbox
// tables (yuv_resize_plan.h) and the same arithmetic, in the same order, as the CPU row kernels
// (yuv_row_kernels.cpp): vertical blend in 1/256 fixed point, horizontal lerp, one affine map per
// channel, clamp. nvcc compiles run() for the device (gpu_yuv_preprocessor); the host compiles it
// for the emulation the tests compare with the CPU preprocessor. C++17, plain data.
#pragma once

#include <cstdint>

#include "runtime/cuda/device_math.h"

namespace edgefuse {

struct YuvTensorStep {
  // Source planes (NV12: `u` is the interleaved UV plane, `v` unused) and their row strides.
  const uint8_t* y = nullptr;
  const uint8_t* u = nullptr;
  const uint8_t* v = nullptr;
  int y_stride = 0, u_stride = 0, v_stride = 0;
  bool nv12 = false;
  // Resize tables, resized_w and resized_h entries (YuvResizePlan's).
  const int32_t* luma_columns = nullptr;
  const float* column_weights = nullptr;
  const int32_t* chroma_columns = nullptr;
  const float* chroma_weights = nullptr;
  const int32_t* rows = nullptr;
  const uint16_t* row_weights256 = nullptr;
  // Output geometry: the letterboxed image inside a width x height tensor.
  int width = 0, height = 0;
  int pad_x = 0, pad_y = 0, resized_w = 0, resized_h = 0;
  bool nchw = true;
  bool rgb = false;  // channel order of the tensor: RGB, or BGR
  float pad_value = 0;
  // PixelTransform's coefficients (1/256 sample units folded in).
  float y_gain = 0, r_from_v = 0, g_from_u = 0, g_from_v = 0, b_from_u = 0;
  float r_bias = 0, g_bias = 0, b_bias = 0, lo = 0, hi = 0;
  float* out = nullptr;

  EF_HOST_DEVICE int64_t count() const { return static_cast<int64_t>(width) * height; }

  EF_HOST_DEVICE static float lerp(float a, float b, float w) { return a + w * (b - a); }
  EF_HOST_DEVICE static float clamp_to(float x, float lo_value, float hi_value) {
    x = x < lo_value ? lo_value : x;
    return x > hi_value ? hi_value : x;
  }
  // Rows r0 and r0 + 1 of a plane at element `at`, blended in 1/256 units (blend_rows).
  EF_HOST_DEVICE static float blend(const uint8_t* plane, int stride, int r0, int r1, int at, int weight256) {
    const auto a = static_cast<uint16_t>(plane[static_cast<int64_t>(r0) * stride + at]);
    const auto b = static_cast<uint16_t>(plane[static_cast<int64_t>(r1) * stride + at]);
    const auto blended =
        static_cast<uint16_t>(a * static_cast<uint16_t>(256 - weight256) + b * static_cast<uint16_t>(weight256));
    return static_cast<float>(static_cast<int32_t>(blended));
  }

  EF_HOST_DEVICE void store(int x, int y_out, int channel, float value) const {
    const int64_t at = nchw ? (static_cast<int64_t>(channel) * height + y_out) * width + x
                            : (static_cast<int64_t>(y_out) * width + x) * 3 + channel;
    out[at] = value;
  }

  EF_HOST_DEVICE void run(int64_t i) const {
    const int x = static_cast<int>(i % width);
    const int y_out = static_cast<int>(i / width);
    const int row = y_out - pad_y;
    const int column = x - pad_x;
    if (row < 0 || row >= resized_h || column < 0 || column >= resized_w) {
      for (int c = 0; c < 3; ++c) store(x, y_out, c, pad_value);
      return;
    }
    const int r0 = rows[row];
    const int weight = row_weights256[row];
    const int c0 = r0 >> 1;  // 4:2:0: the chroma rows under luma rows r0 and r0 + 1
    const int c1 = (r0 + 1) >> 1;
    const int lx = luma_columns[column];
    const float luma = y_gain * lerp(blend(y, y_stride, r0, r0 + 1, lx, weight),
                                     blend(y, y_stride, r0, r0 + 1, lx + 1, weight), column_weights[column]);
    const int cx = chroma_columns[column];
    const float cw = chroma_weights[column];
    // A weight-0 tap never reads its right neighbour (which may lie past the plane's end);
    // lerp(a, b, 0) is exactly a, as on the CPU.
    const int step = nv12 ? 2 : 1;
    const uint8_t* v_plane = nv12 ? u : v;
    const int v_stride_used = nv12 ? u_stride : v_stride;
    const int vx = nv12 ? cx + 1 : cx;
    float cu = blend(u, u_stride, c0, c1, cx, weight);
    float cv = blend(v_plane, v_stride_used, c0, c1, vx, weight);
    if (cw != 0.0f) {
      cu = lerp(cu, blend(u, u_stride, c0, c1, cx + step, weight), cw);
      cv = lerp(cv, blend(v_plane, v_stride_used, c0, c1, vx + step, weight), cw);
    }
    const float r = clamp_to(luma + r_from_v * cv + r_bias, lo, hi);
    const float g = clamp_to(luma + g_from_u * cu + g_from_v * cv + g_bias, lo, hi);
    const float b = clamp_to(luma + b_from_u * cu + b_bias, lo, hi);
    store(x, y_out, 0, rgb ? r : b);
    store(x, y_out, 1, g);
    store(x, y_out, 2, rgb ? b : r);
  }
};

}  // namespace edgefuse
