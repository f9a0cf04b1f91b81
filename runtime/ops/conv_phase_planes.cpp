// Phase planes of Conv inputs (conv_phase_planes.h), compiled once per CPU ISA level.
#include "runtime/ops/conv_phase_planes.h"

#include <algorithm>

#include "runtime/ops/isa_eigen.h"  // first: Eigen under this level's namespace
#include "runtime/ops/simd_packet.h"

namespace edgefuse::EF_ISA_NAMESPACE {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

// Row i of phase planes (py, px) for every px of this py: dst[px] gets cols floats.
void fill_phase_rows(const Conv2d& c, const float* in, int64_t py, int64_t i, float* const* dst) {
  const int64_t cols = c.phase_cols;
  const int64_t iy = i * c.sh + py - c.ph;
  if (iy < 0 || iy >= c.ih) {
    for (int64_t px = 0; px < c.sw; ++px) simd::fill_zero(dst[px], cols);
    return;
  }
  const float* row = in + iy * c.iw;
  // Columns j whose input column j * sw + px - pw lies inside the image, per phase.
  const auto valid = [&](int64_t px, int64_t& lo, int64_t& hi) {
    lo = std::clamp<int64_t>(ceil_div(c.pw - px, c.sw), 0, cols);
    hi = std::clamp<int64_t>(ceil_div(c.iw + c.pw - px, c.sw), lo, cols);
  };
  if (c.sw == 2) {
    // Both phases in one pass over the row: a stride-2 pair the compiler turns into vector
    // deinterleaves; the columns where only one phase is inside are done one by one.
    int64_t lo0 = 0, hi0 = 0, lo1 = 0, hi1 = 0;
    valid(0, lo0, hi0);
    valid(1, lo1, hi1);
    const int64_t lo = std::max(lo0, lo1), hi = std::max(std::min(hi0, hi1), lo);
    float* even = dst[0];
    float* odd = dst[1];
    const float* pair = row - c.pw;  // pair[2 * j] is phase 0 of column j, pair[2 * j + 1] phase 1
    for (int64_t j = 0; j < cols; ++j) {
      if (j == lo) j = hi;  // the common range is filled below
      if (j >= cols) break;
      even[j] = j >= lo0 && j < hi0 ? pair[2 * j] : 0.0f;
      odd[j] = j >= lo1 && j < hi1 ? pair[2 * j + 1] : 0.0f;
    }
    for (int64_t j = lo; j < hi; ++j) {
      even[j] = pair[2 * j];
      odd[j] = pair[2 * j + 1];
    }
    return;
  }
  for (int64_t px = 0; px < c.sw; ++px) {
    int64_t lo = 0, hi = 0;
    valid(px, lo, hi);
    const float* src = row + px - c.pw;  // input column of j: src[j * sw]
    float* out = dst[px];
    simd::fill_zero(out, lo);
    if (c.sw == 1) {
      simd::copy(out + lo, src + lo, hi - lo);
    } else {
      for (int64_t j = lo; j < hi; ++j) out[j] = src[j * c.sw];
    }
    simd::fill_zero(out + hi, cols - hi);
  }
}

}  // namespace

void fill_phase_rows_range(const Conv2d& c, const float* in, int64_t row_begin, int64_t row_end, float* planes,
                           int64_t plane_floats) {
  const int64_t cols = c.phase_cols;
  float* dst[kConvPhaseMaxStride];
  for (int64_t py = 0; py < c.sh; ++py) {
    float* const phase = planes + py * c.sw * plane_floats;
    for (int64_t i = row_begin; i < row_end; ++i) {
      for (int64_t px = 0; px < c.sw; ++px) dst[px] = phase + px * plane_floats + (i - row_begin) * cols;
      fill_phase_rows(c, in, py, i, dst);
    }
    for (int64_t px = 0; px < c.sw; ++px) {
      float* const plane = phase + px * plane_floats;
      std::fill(plane + (row_end - row_begin) * cols, plane + plane_floats, 0.0f);
    }
  }
}

void fill_phase_planes(const Conv2d& c, const float* in, float* planes) {
  fill_phase_rows_range(c, in, 0, c.phase_rows, planes, c.phase_plane_floats);
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
