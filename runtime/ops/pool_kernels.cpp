// One plane of the f32 MaxPool on one CPU ISA level (compiled once per level, see
// cpu_kernel_table.h); pool_cpu.cpp threads the planes. Max is separable: the plane is reduced
// along x into `rows` (input rows x output columns), then along y; both passes run vectorisable
// loops over whole rows, which keeps large same-padded windows (YOLOX's SPP: 5, 9, 13) cheap.
#include <algorithm>
#include <limits>

#include "runtime/ops/cpu_kernel_table.h"

EF_DECLARE_CPU_KERNELS(EF_ISA_NAMESPACE)

namespace edgefuse::EF_ISA_NAMESPACE {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

constexpr float kLowest = -std::numeric_limits<float>::infinity();

// 2x2 windows, stride 2, no padding, even sizes (the common downsampling pool): one pass, the
// same max sequence as the separable path below (x taps into -inf, then rows into -inf), so that
// results, NaN handling included, are identical.
void max_pool_2x2(const MaxPool2d& p, const float* in, float* out) {
  for (int64_t oy = 0; oy < p.oh; ++oy) {
    const float* top = in + 2 * oy * p.iw;
    const float* bottom = top + p.iw;
    float* dst = out + oy * p.ow;
    for (int64_t ox = 0; ox < p.ow; ++ox) {
      const float upper = std::max(std::max(kLowest, top[2 * ox]), top[2 * ox + 1]);
      const float lower = std::max(std::max(kLowest, bottom[2 * ox]), bottom[2 * ox + 1]);
      dst[ox] = std::max(std::max(kLowest, upper), lower);
    }
  }
}

// Stride 1 (YOLOX's SPP: 5x5 windows on 13 x 13 planes): the plane is copied into a -inf padded
// one of W = ow + kw - 1 columns, and both passes run over it flattened, as single long loops: on
// small planes the row-by-row loops below are a handful of floats each. Flattened, x positions
// ow..W-1 of each row mix two rows; they are computed and dropped. A -inf tap leaves a max as it
// is, so the results, NaN included, equal the separable path's.
void max_pool_stride1(const MaxPool2d& p, const float* in, float* out, float* scratch) {
  const int64_t width = p.ow + p.kw - 1, height = p.oh + p.kh - 1;
  float* padded = scratch;
  float* reduced = padded + height * width;  // along x: row r, column ox at r * width + ox
  float* rows = reduced + height * width;    // along y, before compaction
  std::fill(padded, padded + height * width, kLowest);
  for (int64_t iy = 0; iy < p.ih; ++iy) std::copy_n(in + iy * p.iw, p.iw, padded + (iy + p.ph) * width + p.pw);
  // The last kw - 1 positions (dropped columns of the last row) have no full window: left at -inf.
  const int64_t along_x = height * width - (p.kw - 1);
  std::fill(reduced, reduced + height * width, kLowest);
  for (int64_t kx = 0; kx < p.kw; ++kx) {
    const float* src = padded + kx;
    for (int64_t i = 0; i < along_x; ++i) reduced[i] = std::max(reduced[i], src[i]);
  }
  const int64_t along_y = p.oh * width;
  std::fill(rows, rows + along_y, kLowest);
  for (int64_t ky = 0; ky < p.kh; ++ky) {
    const float* src = reduced + ky * width;
    for (int64_t i = 0; i < along_y; ++i) rows[i] = std::max(rows[i], src[i]);
  }
  for (int64_t oy = 0; oy < p.oh; ++oy) std::copy_n(rows + oy * width, p.ow, out + oy * p.ow);
}

}  // namespace

void max_pool_plane(const MaxPool2d& p, const float* in, float* out, float* scratch) {
  if (p.kh == 2 && p.kw == 2 && p.sh == 2 && p.sw == 2 && p.ph == 0 && p.pw == 0 && p.ih == 2 * p.oh &&
      p.iw == 2 * p.ow) {
    max_pool_2x2(p, in, out);
    return;
  }
  // Stride 1 with the input inside the padded window grid (no input row or column left out).
  if (p.sh == 1 && p.sw == 1 && p.ih + p.ph <= p.oh + p.kh - 1 && p.iw + p.pw <= p.ow + p.kw - 1) {
    max_pool_stride1(p, in, out, scratch);
    return;
  }
  float* rows = scratch;
  std::fill(rows, rows + p.ih * p.ow, kLowest);
  for (int64_t kx = 0; kx < p.kw; ++kx) {
    // Output columns whose tap kx reads input column ox * sw + offset inside [0, iw).
    const int64_t offset = kx - p.pw;
    const int64_t lo = std::clamp<int64_t>(ceil_div(-offset, p.sw), 0, p.ow);
    const int64_t hi = std::clamp<int64_t>(ceil_div(p.iw - offset, p.sw), lo, p.ow);
    for (int64_t iy = 0; iy < p.ih; ++iy) {
      const float* src = in + iy * p.iw + offset;
      float* dst = rows + iy * p.ow;
      if (p.sw == 1) {
        for (int64_t ox = lo; ox < hi; ++ox) dst[ox] = std::max(dst[ox], src[ox]);
      } else {
        for (int64_t ox = lo; ox < hi; ++ox) dst[ox] = std::max(dst[ox], src[ox * p.sw]);
      }
    }
  }
  for (int64_t oy = 0; oy < p.oh; ++oy) {
    float* dst = out + oy * p.ow;
    std::fill(dst, dst + p.ow, kLowest);
    const int64_t first = std::max<int64_t>(0, oy * p.sh - p.ph);
    const int64_t last = std::min<int64_t>(p.ih, oy * p.sh - p.ph + p.kh);
    for (int64_t iy = first; iy < last; ++iy) {
      const float* src = rows + iy * p.ow;
      for (int64_t ox = 0; ox < p.ow; ++ox) dst[ox] = std::max(dst[ox], src[ox]);
    }
  }
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
