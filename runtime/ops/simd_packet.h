// The f32 SIMD vector of the ISA level being compiled, for kernels that need explicit register
// tiles (GEMM micro-kernel, direct depthwise): Eigen's packet layer, which maps to SSE, AVX2,
// AVX-512 or NEON from the compiler flags, so one source serves every level (cpu_kernel_table.h).
// From per-ISA sources only; it brings Eigen in through isa_eigen.h, so include order is free.
#pragma once

#include <cstdint>

#include "runtime/ops/isa_eigen.h"
#include "runtime/ops/isa_namespace.h"

// Vec is a vector type such as __m512, whose alignment attributes GCC warns it drops when the type
// is a template argument (ploadu<Vec>); they do not matter to these function templates.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"

namespace edgefuse::EF_ISA_NAMESPACE::simd {

using Vec = Eigen::internal::packet_traits<float>::type;
inline constexpr int kLanes = static_cast<int>(sizeof(Vec) / sizeof(float));
// Vector registers of the level: 32 with AVX-512 and on aarch64, 16 otherwise (x86-64 SSE, AVX2).
#if defined(__AVX512F__) || defined(__aarch64__)
inline constexpr int kRegisters = 32;
#else
inline constexpr int kRegisters = 16;
#endif

inline Vec load(const float* p) {
  return Eigen::internal::ploadu<Vec>(p);
}
inline void store(float* p, Vec v) {
  Eigen::internal::pstoreu(p, v);
}
inline Vec broadcast(float x) {
  return Eigen::internal::pset1<Vec>(x);
}
inline Vec zero() {
  return Eigen::internal::pzero(Vec{});
}
inline Vec add(Vec a, Vec b) {
  return Eigen::internal::padd(a, b);
}
// a * b + c, fused where the level has FMA.
inline Vec fma(Vec a, Vec b, Vec c) {
  return Eigen::internal::pmadd(a, b, c);
}

// kLanes vectors: a kLanes x kLanes tile, transposed in registers by transpose().
using Tile = Eigen::internal::PacketBlock<Vec, kLanes>;
inline void transpose(Tile& tile) {
  Eigen::internal::ptranspose(tile);
}

// dst[0, n) = src[0, n) for short runs (image rows) without a library call per row: whole vectors,
// then one last vector overlapping the previous one. dst and src must not overlap.
inline void copy(float* dst, const float* src, int64_t n) {
  if (n < kLanes) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
    return;
  }
  for (int64_t i = 0; i + kLanes <= n; i += kLanes) store(dst + i, load(src + i));
  store(dst + n - kLanes, load(src + n - kLanes));
}

// dst[0, n) = 0, as copy().
inline void fill_zero(float* dst, int64_t n) {
  if (n < kLanes) {
    for (int64_t i = 0; i < n; ++i) dst[i] = 0.0f;
    return;
  }
  for (int64_t i = 0; i + kLanes <= n; i += kLanes) store(dst + i, zero());
  store(dst + n - kLanes, zero());
}

}  // namespace edgefuse::EF_ISA_NAMESPACE::simd

#pragma GCC diagnostic pop
