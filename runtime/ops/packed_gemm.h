// The f32 GEMM micro-kernel behind Conv on the CPU (1x1 convs directly on the NCHW input, other
// dense convs on phase-plane runs), with Conv's epilogue applied to each register tile before it
// leaves cache.
//
//   Y[m, n] = A[m, k] * B[k, n] + bias[m], then residual and activation (conv_epilogue.h)
//
// A (the weights) is packed once per node (KernelCache) into tiles of kGemmTileRows rows stored
// k-major, so the micro-kernel reads it as one contiguous stream of broadcasts; B and Y are read
// and written in place with a row stride (NCHW planes are already B's rows) or through row
// pointers. Each tile is kGemmTileRows x (kGemmTileVectors vectors) of accumulators held in
// registers for the whole k loop: 8 x 48 with AVX-512 (24 of 32 zmm), 4 x 24 with AVX2, 4 x 12
// with SSE, 8 x 12 with NEON.
// Per-ISA (isa_namespace.h): include from per-ISA sources only.
#pragma once

#include <cstdint>

#include "runtime/ops/conv_epilogue.h"
#include "runtime/ops/simd_packet.h"

namespace edgefuse::EF_ISA_NAMESPACE {

inline constexpr int kGemmTileRows = simd::kRegisters >= 32 ? 8 : 4;
inline constexpr int kGemmTileVectors = 3;
inline constexpr int kGemmTileColumns = kGemmTileVectors * simd::kLanes;

// Floats pack_gemm_a writes for an m x k matrix: m rounded up to whole tiles.
inline int64_t packed_gemm_a_floats(int64_t m, int64_t k) {
  return (m + kGemmTileRows - 1) / kGemmTileRows * kGemmTileRows * k;
}

// A [m, k] with row stride lda -> tiles: packed[(t * k + kk) * kGemmTileRows + r] = A[t * R + r, kk],
// zero for rows past m.
void pack_gemm_a(const float* a, int64_t m, int64_t k, int64_t lda, float* packed);

// What happens to each output row after the product.
struct GemmRowEpilogue {
  const float* bias = nullptr;      // [m], or nullptr
  const float* residual = nullptr;  // like Y with row stride ldr, or nullptr
  int64_t ldr = 0;
  int64_t residual_rows = INT64_MAX;  // rows [0, residual_rows) take the residual, the rest none
  ConvEpilogue activation;            // kind and where the residual goes
};

// Y [m, n] (row stride ldy) = packed A [m, k] * B [k, n] (row stride ldb), then the epilogue.
// `panel` is scratch of k * kGemmTileColumns floats, for the last columns when n is not a whole
// number of tiles.
void packed_gemm(const float* packed_a, int64_t m, int64_t k, const float* b, int64_t ldb, float* y, int64_t ldy,
                 int64_t n, const GemmRowEpilogue& epilogue, float* panel);
// The same with B's rows anywhere: row kk is b_rows[kk] + b_offset, n floats.
void packed_gemm_indirect(const float* packed_a, int64_t m, int64_t k, const float* const* b_rows, int64_t b_offset,
                          float* y, int64_t ldy, int64_t n, const GemmRowEpilogue& epilogue, float* panel);

}  // namespace edgefuse::EF_ISA_NAMESPACE
