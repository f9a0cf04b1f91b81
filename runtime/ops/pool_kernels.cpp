// One plane of the f32 MaxPool on one CPU ISA level (compiled once per level, see
// cpu_kernel_table.h); pool_cpu.cpp threads the planes. Max is separable: the plane is reduced
// along x into `rows` (input rows x output columns), then along y; both passes run vectorisable
// loops over whole rows, which keeps large same-padded windows (YOLOX's SPP: 5, 9, 13) cheap.
#include <algorithm>
#include <limits>

#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/isa_eigen.h"  // first: Eigen under this level's namespace
#include "runtime/ops/simd_packet.h"

EF_DECLARE_CPU_KERNELS(EF_ISA_NAMESPACE)

namespace edgefuse::EF_ISA_NAMESPACE {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

constexpr float kLowest = -std::numeric_limits<float>::infinity();
constexpr int64_t kLanes = simd::kLanes;

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
// one whose rows are whole vectors plus kw - 1 floats, so that output vector j of a row reduces
// along x as kw loads at offsets j * L + kx, and then along y as kh rows of those. The same max
// sequence as the general path below (each pass from -inf, taps in order), so results, NaN
// handling included, are identical; the loops run on whole vectors with no remainders, which on
// planes of a vector or two a row were most of the cost (128 x 13 x 13, hot: 28 -> 17.5 us).
void max_pool_stride1(const MaxPool2d& p, const float* in, float* out, float* scratch) {
  using simd::Vec;
  const int64_t vectors = (p.ow + kLanes - 1) / kLanes;
  const int64_t stride = (vectors * kLanes + p.kw - 1 + kLanes - 1) / kLanes * kLanes;
  const int64_t height = p.oh + p.kh - 1;
  float* padded = scratch;
  float* reduced = padded + height * stride;  // along x: row r, output column ox at r * stride + ox
  const Vec lowest = simd::broadcast(kLowest);
  for (int64_t i = 0; i < height * stride; i += kLanes) simd::store(padded + i, lowest);
  for (int64_t iy = 0; iy < p.ih; ++iy) {
    float* row = padded + (iy + p.ph) * stride + p.pw;
    if (p.iw < kLanes && (iy + 1) * p.iw + kLanes > p.ih * p.iw) {
      for (int64_t x = 0; x < p.iw; ++x) row[x] = in[iy * p.iw + x];  // the plane's end: no read past it
      continue;
    }
    // Whole vectors, the last one running past the row (into the input's next row, then the
    // padding here), whose right padding is then written again; it reaches at most the next
    // padded row's left padding, or the buffer after the plane, neither read yet.
    if (p.iw < kLanes) {
      simd::store(row, simd::load(in + iy * p.iw));
    } else {
      simd::copy(row, in + iy * p.iw, p.iw);
    }
    simd::store(row + p.iw, lowest);
  }
  for (int64_t r = 0; r < height; ++r) {
    const float* row = padded + r * stride;
    for (int64_t j = 0; j < vectors; ++j) {
      Vec acc = lowest;
      for (int64_t kx = 0; kx < p.kw; ++kx) acc = Eigen::internal::pmax(acc, simd::load(row + j * kLanes + kx));
      simd::store(reduced + r * stride + j * kLanes, acc);
    }
  }
  for (int64_t oy = 0; oy < p.oh; ++oy) {
    float* dst = out + oy * p.ow;
    for (int64_t j = 0; j < vectors; ++j) {
      Vec acc = lowest;
      for (int64_t ky = 0; ky < p.kh; ++ky) {
        acc = Eigen::internal::pmax(acc, simd::load(reduced + (oy + ky) * stride + j * kLanes));
      }
      if (oy * p.ow + (j + 1) * kLanes <= p.oh * p.ow) {
        // A vector past the row's end lands in the next output rows, written after.
        simd::store(dst + j * kLanes, acc);
      } else {
        simd::store(padded, acc);  // near the plane's end: only the row's own floats
        for (int64_t x = j * kLanes; x < p.ow; ++x) dst[x] = padded[x - j * kLanes];
      }
    }
  }
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
