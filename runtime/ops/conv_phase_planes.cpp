// Phase planes of Conv inputs (conv_phase_planes.h), compiled once per CPU ISA level.
#include "runtime/ops/conv_phase_planes.h"

#include <algorithm>

#include "runtime/ops/isa_eigen.h"  // first: Eigen under this level's namespace
#include "runtime/ops/simd_packet.h"

EF_DECLARE_CPU_KERNELS(EF_ISA_NAMESPACE)

namespace edgefuse::EF_ISA_NAMESPACE {

namespace {

constexpr int64_t kLanes = simd::kLanes;

int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

// Columns j of phase px whose input column j * sw + px - pw lies inside the image: [lo, hi).
struct ValidColumns {
  int64_t lo = 0, hi = 0;
};

ValidColumns valid_columns(const Conv2d& c, int64_t px) {
  ValidColumns v;
  v.lo = std::clamp<int64_t>(ceil_div(c.pw - px, c.sw), 0, c.phase_cols);
  v.hi = std::clamp<int64_t>(ceil_div(c.iw + c.pw - px, c.sw), v.lo, c.phase_cols);
  return v;
}

// Short runs (the padding columns, a few floats) without a call or a vector tail.
inline void zero_run(float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = 0.0f;
}

// A row of phase planes (py, px) for every px of one py: dst[px] gets cols floats from input row
// `row` (iw contiguous floats), or zeros where the row is padding (nullptr). `valid` holds each
// phase's inside columns (they do not depend on the row, so the caller computes them once).
void fill_phase_rows(const Conv2d& c, const float* row, const ValidColumns* valid, float* const* dst) {
  const int64_t cols = c.phase_cols;
  if (row == nullptr) {
    for (int64_t px = 0; px < c.sw; ++px) simd::fill_zero(dst[px], cols);
    return;
  }
  if (c.sw == 1) {
    float* out = dst[0];
    const int64_t lo = valid[0].lo, hi = valid[0].hi;
    if (lo <= kLanes && cols - hi <= kLanes && hi - lo >= kLanes) {
      // The usual few padding columns as one vector store each: the left one before the copy
      // overwrites its tail, the right one runs into the next row (filled after this one) or the
      // plane's slack. Short loops here would become memset calls, as costly as the copy itself.
      simd::store(out, simd::zero());
      simd::copy(out + lo, row - c.pw + lo, hi - lo);
      simd::store(out + hi, simd::zero());
      return;
    }
    zero_run(out, valid[0].lo);
    simd::copy(out + valid[0].lo, row - c.pw + valid[0].lo, valid[0].hi - valid[0].lo);
    zero_run(out + valid[0].hi, cols - valid[0].hi);
    return;
  }
  if (c.sw == 2) {
    // Both phases in one pass over the row: a stride-2 pair the compiler turns into vector
    // deinterleaves; the columns where only one phase is inside are done one by one.
    const int64_t lo = std::max(valid[0].lo, valid[1].lo);
    const int64_t hi = std::max(std::min(valid[0].hi, valid[1].hi), lo);
    float* even = dst[0];
    float* odd = dst[1];
    const float* pair = row - c.pw;  // pair[2 * j] is phase 0 of column j, pair[2 * j + 1] phase 1
    const auto edge = [&](int64_t j) {
      even[j] = j >= valid[0].lo && j < valid[0].hi ? pair[2 * j] : 0.0f;
      odd[j] = j >= valid[1].lo && j < valid[1].hi ? pair[2 * j + 1] : 0.0f;
    };
    for (int64_t j = 0; j < lo; ++j) edge(j);
    for (int64_t j = lo; j < hi; ++j) {
      even[j] = pair[2 * j];
      odd[j] = pair[2 * j + 1];
    }
    for (int64_t j = hi; j < cols; ++j) edge(j);
    return;
  }
  for (int64_t px = 0; px < c.sw; ++px) {
    const float* src = row + px - c.pw;  // input column of j: src[j * sw]
    float* out = dst[px];
    zero_run(out, valid[px].lo);
    for (int64_t j = valid[px].lo; j < valid[px].hi; ++j) out[j] = src[j * c.sw];
    zero_run(out + valid[px].hi, cols - valid[px].hi);
  }
}

// Readers run at most a row and a vector past the last row (conv_phase_planes.h): zeros there,
// not over the rest of a plane sized for more rows than the range filled.
void zero_phase_tails(const Conv2d& c, int64_t rows, float* planes, int64_t plane_floats) {
  const int64_t used = rows * c.phase_cols;
  for (int64_t plane = 0; plane < c.sh * c.sw; ++plane) {
    simd::fill_zero(planes + plane * plane_floats + used,
                    std::min(plane_floats - used, c.phase_cols + kConvPhaseSlack));
  }
}

// Input row iy of a plane whose rows are iw floats apart, or nullptr where it is padding.
const float* input_row(const Conv2d& c, const float* in, int64_t iy) {
  return iy < 0 || iy >= c.ih ? nullptr : in + iy * c.iw;
}

}  // namespace

void fill_phase_rows_range(const Conv2d& c, const float* in, int64_t row_begin, int64_t row_end, float* planes,
                           int64_t plane_floats) {
  const int64_t cols = c.phase_cols;
  float* dst[kConvPhaseMaxStride];
  ValidColumns valid[kConvPhaseMaxStride];
  for (int64_t px = 0; px < c.sw; ++px) valid[px] = valid_columns(c, px);
  // Phase row i of every py before row i + 1: input rows i * sh + py are then read in order, one
  // stream the hardware prefetchers follow, where a pass per py reads every sh-th row.
  for (int64_t i = row_begin; i < row_end; ++i) {
    for (int64_t py = 0; py < c.sh; ++py) {
      float* const phase = planes + py * c.sw * plane_floats;
      for (int64_t px = 0; px < c.sw; ++px) dst[px] = phase + px * plane_floats + (i - row_begin) * cols;
      fill_phase_rows(c, input_row(c, in, i * c.sh + py - c.ph), valid, dst);
    }
  }
  zero_phase_tails(c, row_end - row_begin, planes, plane_floats);
}

void fill_phase_rows_range_channels_last(const Conv2d& c, const float* image, int64_t first_channel, int64_t channels,
                                         int64_t row_begin, int64_t row_end, float* planes, int64_t plane_floats,
                                         float* split) {
  const int64_t cols = c.phase_cols;
  const int64_t per_channel = c.sh * c.sw * plane_floats;
  float* dst[kConvPhaseMaxStride];
  ValidColumns valid[kConvPhaseMaxStride];
  for (int64_t px = 0; px < c.sw; ++px) valid[px] = valid_columns(c, px);
  for (int64_t i = row_begin; i < row_end; ++i) {
    for (int64_t py = 0; py < c.sh; ++py) {
      const int64_t iy = i * c.sh + py - c.ph;
      const bool inside = iy >= 0 && iy < c.ih;
      if (inside) {
        // The row's positions hold every channel: transposed into one row per channel (in L1).
        transpose_f32(image + iy * c.iw * c.channels + first_channel, c.channels, split, c.iw, channels, c.iw);
      }
      for (int64_t ch = 0; ch < channels; ++ch) {
        float* const phase = planes + ch * per_channel + py * c.sw * plane_floats;
        for (int64_t px = 0; px < c.sw; ++px) dst[px] = phase + px * plane_floats + (i - row_begin) * cols;
        fill_phase_rows(c, inside ? split + ch * c.iw : nullptr, valid, dst);
      }
    }
  }
  for (int64_t ch = 0; ch < channels; ++ch) {
    zero_phase_tails(c, row_end - row_begin, planes + ch * per_channel, plane_floats);
  }
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
