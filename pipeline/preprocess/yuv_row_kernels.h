// The inner loops of fused YUV preprocessing, one output row at a time. Vertical blending runs
// in 16-bit fixed point (values x 256) so it vectorises on baseline SSE2 / NEON. The horizontal
// gather is scalar but only moves neighbour pairs (one 32- or 64-bit load each), so the
// arithmetic after it (interpolation, colour transform, clamping) runs in vectorisable loops.
#pragma once

#include <cstdint>

#include "pipeline/preprocess/yuv_image.h"

namespace edgefuse {

// out[k] = a[k] * (256 - weight256) + b[k] * weight256, i.e. the blend in 1/256 units.
// weight256 in [0, 256]; the result fits 16 bits (255 * 256).
void blend_rows(const uint8_t* a, const uint8_t* b, int weight256, int n, uint16_t* out);

// Per output column j: luma columns luma[j] and luma[j] + 1 blended by weight[j]; chroma columns
// chroma[j] and chroma[j] + 1 (one plane's element index; NV12: of the U of an interleaved pair)
// blended by chroma_weight[j]. Nearest-neighbour 4:2:0 upsampling then bilinear resizing reads
// one chroma column (weight 0) or two neighbours (the luma weight): the result equals bilinear
// resizing of the full-resolution image.
struct ColumnTaps {
  const int32_t* luma = nullptr;
  const float* weight = nullptr;
  const int32_t* chroma = nullptr;
  const float* chroma_weight = nullptr;
  int count = 0;
};

// Copies each column's neighbour pairs from vertically blended rows into `samples`: three runs of
// taps.count 32-bit words, each two 16-bit samples (first in the low half): Y pairs, then for
// I420 U pairs and V pairs, for NV12 (U, V) at the left and (U, V) at the right chroma column.
// Chroma rows must be readable one column past their end (the right neighbour of a weight-0 tap).
void gather_columns(PixelFormat format, const uint16_t* y, const uint16_t* u, const uint16_t* v, const ColumnTaps& taps,
                    uint32_t* samples);

// Gathered samples (1/256 units) -> tensor values. Per channel:
//   value = clamp(y_gain * Y + from_u * U + from_v * V + bias, lo, hi)
// with Y, U, V the interpolated samples; the colour matrix, the 16 / 128 offsets, the fixed-point
// unit and the model's scale and offset are all folded into the coefficients.
struct PixelTransform {
  float y_gain = 0;
  float r_from_v = 0, g_from_u = 0, g_from_v = 0, b_from_u = 0;
  float r_bias = 0, g_bias = 0, b_bias = 0;
  float lo = 0, hi = 0;
};

// Three rows of taps.count floats (R, G, B).
void convert_to_planes(PixelFormat format, const uint32_t* samples, const ColumnTaps& taps,
                       const PixelTransform& transform, float* r_out, float* g_out, float* b_out);

// out[3 j + k] = plane k [j]: planar rows to interleaved pixels.
void interleave(const float* first, const float* second, const float* third, int n, float* out);

}  // namespace edgefuse
