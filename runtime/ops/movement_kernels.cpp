// Data-movement loops on one CPU ISA level (compiled once per level, see cpu_kernel_table.h).
#include <algorithm>

#include "runtime/ops/cpu_kernel_table.h"
#include "runtime/ops/isa_eigen.h"  // first: Eigen under this level's namespace
#include "runtime/ops/simd_packet.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

EF_DECLARE_CPU_KERNELS(EF_ISA_NAMESPACE)

namespace edgefuse::EF_ISA_NAMESPACE {

namespace {

// The first n (< a vector) floats of v.
void store_first(float* dst, simd::Vec v, int64_t n) {
#if defined(__AVX512F__)
  _mm512_mask_storeu_ps(dst, static_cast<__mmask16>((1u << n) - 1u), v);
#else
  alignas(64) float lanes[simd::kLanes];
  simd::store(lanes, v);
  std::copy_n(lanes, n, dst);
#endif
}

// Rows of R interleaved values (src_stride == R, e.g. the 3 channels of an NHWC image) split into
// R rows: R is a constant, so the compiler turns the loop into vector loads and permutes.
template <int R>
void deinterleave(const float* src, float* dst, int64_t dst_stride, int64_t cols) {
  float* out[R];
  for (int r = 0; r < R; ++r) out[r] = dst + r * dst_stride;
  for (int64_t c = 0; c < cols; ++c) {
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) out[r][c] = src[c * R + r];
  }
}

}  // namespace

// Square tiles of one vector per side, transposed in registers (Eigen's ptranspose: shuffles, no
// strided element access); the edges that do not fill a tile element by element. Densely
// interleaved rows of 2 to 4 values (an NHWC image's channels) are split by deinterleave.
void transpose_f32(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t rows, int64_t cols) {
  constexpr int64_t kLanes = simd::kLanes;
  if (src_stride == rows && rows >= 2 && rows <= 4) {
    if (rows == 2) return deinterleave<2>(src, dst, dst_stride, cols);
    if (rows == 3) return deinterleave<3>(src, dst, dst_stride, cols);
    return deinterleave<4>(src, dst, dst_stride, cols);
  }
  const int64_t whole_rows = rows / kLanes * kLanes, whole_cols = cols / kLanes * kLanes;
  for (int64_t r = 0; r < whole_rows; r += kLanes) {
    for (int64_t c = 0; c < whole_cols; c += kLanes) {
      simd::Tile tile;
      for (int64_t i = 0; i < kLanes; ++i) tile.packet[i] = simd::load(src + (c + i) * src_stride + r);
      simd::transpose(tile);
      for (int64_t i = 0; i < kLanes; ++i) simd::store(dst + (r + i) * dst_stride + c, tile.packet[i]);
    }
    if (whole_cols < cols) {  // the last columns as one partial tile: zero rows in, partial rows out
      const int64_t rest = cols - whole_cols;
      simd::Tile tile;
      for (int64_t i = 0; i < kLanes; ++i) {
        tile.packet[i] = i < rest ? simd::load(src + (whole_cols + i) * src_stride + r) : simd::zero();
      }
      simd::transpose(tile);
      for (int64_t i = 0; i < kLanes; ++i) store_first(dst + (r + i) * dst_stride + whole_cols, tile.packet[i], rest);
    }
  }
  for (int64_t i = whole_rows; i < rows; ++i) {
    for (int64_t c = 0; c < cols; ++c) dst[i * dst_stride + c] = src[c * src_stride + i];
  }
}

void upsample2x_f32(const float* src, float* dst, int64_t rows, int64_t width) {
  constexpr int64_t kLanes = simd::kLanes;
  const int64_t out_width = 2 * width;
  for (int64_t r = 0; r < rows; ++r) {
    const float* from = src + r * width;
    float* top = dst + 2 * r * out_width;
    float* bottom = top + out_width;
    // Four-lane levels (SSE, NEON) duplicate in the plain loop: SSE's ploaddup loads its two
    // floats as one double, which need not be aligned as one.
    if (kLanes < 8 || out_width < kLanes) {
      for (int64_t x = 0; x < out_width; ++x) top[x] = bottom[x] = from[x / 2];
      continue;
    }
    // Each vector duplicates half a vector of input; the last one overlaps the one before it.
    for (int64_t x = 0;; x += kLanes) {
      const int64_t at = std::min(x, out_width - kLanes);
      const simd::Vec doubled = Eigen::internal::ploaddup<simd::Vec>(from + at / 2);
      simd::store(top + at, doubled);
      simd::store(bottom + at, doubled);
      if (at + kLanes >= out_width) break;
    }
  }
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
