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
inline Vec sub(Vec a, Vec b) {
  return Eigen::internal::psub(a, b);
}
inline Vec mul(Vec a, Vec b) {
  return Eigen::internal::pmul(a, b);
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

// even = the even lanes of a then b, odd = the odd ones: a and b, 2 kLanes consecutive floats,
// split by parity.
inline void deinterleave(Vec a, Vec b, Vec& even, Vec& odd) {
#if defined(__AVX512F__)
  even = _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
  odd = _mm512_permutex2var_ps(a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b);
#elif defined(__AVX2__)
  // Per 128-bit lane a0 a2 b0 b2 | a4 a6 b4 b6, then the 64-bit pairs in order.
  even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
  odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
#elif defined(__aarch64__)
  even = vuzp1q_f32(a, b);
  odd = vuzp2q_f32(a, b);
#else
  alignas(64) float in[2 * kLanes], e[kLanes], o[kLanes];
  store(in, a);
  store(in + kLanes, b);
  for (int i = 0; i < kLanes; ++i) {
    e[i] = in[2 * i];
    o[i] = in[2 * i + 1];
  }
  even = load(e);
  odd = load(o);
#endif
}

// even = p[0], p[2], ..., odd = p[1], p[3], ...: the 2 kLanes floats from p split by parity.
inline void deinterleave(const float* p, Vec& even, Vec& odd) {
  deinterleave(load(p), load(p + kLanes), even, odd);
}

// The inverse: lo, hi = even[0], odd[0], even[1], odd[1], ... (2 kLanes floats).
inline void interleave(Vec even, Vec odd, Vec& lo, Vec& hi) {
#if defined(__AVX512F__)
  lo = _mm512_permutex2var_ps(even, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), odd);
  hi = _mm512_permutex2var_ps(even, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31),
                              odd);
#elif defined(__AVX2__)
  const __m256 low_pairs = _mm256_unpacklo_ps(even, odd), high_pairs = _mm256_unpackhi_ps(even, odd);
  lo = _mm256_permute2f128_ps(low_pairs, high_pairs, 0x20);
  hi = _mm256_permute2f128_ps(low_pairs, high_pairs, 0x31);
#elif defined(__aarch64__)
  lo = vzip1q_f32(even, odd);
  hi = vzip2q_f32(even, odd);
#else
  alignas(64) float e[kLanes], o[kLanes], out[2 * kLanes];
  store(e, even);
  store(o, odd);
  for (int i = 0; i < kLanes; ++i) {
    out[2 * i] = e[i];
    out[2 * i + 1] = o[i];
  }
  lo = load(out);
  hi = load(out + kLanes);
#endif
}

// p[2 i] = even[i], p[2 i + 1] = odd[i] for i < kLanes.
inline void interleave_store(float* p, Vec even, Vec odd) {
  Vec lo, hi;
  interleave(even, odd, lo, hi);
  store(p, lo);
  store(p + kLanes, hi);
}

// c_j[i] = p[4 i + j] for i < kLanes: the 4 kLanes floats from p split by position mod 4 (the
// even positions' even and odd ones, then the odd positions').
inline void deinterleave4(const float* p, Vec& c0, Vec& c1, Vec& c2, Vec& c3) {
#if defined(__aarch64__)
  const float32x4x4_t v = vld4q_f32(p);
  c0 = v.val[0], c1 = v.val[1], c2 = v.val[2], c3 = v.val[3];
#else
  Vec even_a, odd_a, even_b, odd_b;
  deinterleave(p, even_a, odd_a);
  deinterleave(p + 2 * kLanes, even_b, odd_b);
  deinterleave(even_a, even_b, c0, c2);
  deinterleave(odd_a, odd_b, c1, c3);
#endif
}

// The inverse: p[4 i + j] = c_j[i] for i < kLanes.
inline void interleave4_store(float* p, Vec c0, Vec c1, Vec c2, Vec c3) {
#if defined(__aarch64__)
  vst4q_f32(p, float32x4x4_t{{c0, c1, c2, c3}});
#else
  Vec even_lo, even_hi, odd_lo, odd_hi;
  interleave(c0, c2, even_lo, even_hi);  // p[0], p[2], p[4], ...
  interleave(c1, c3, odd_lo, odd_hi);    // p[1], p[3], p[5], ...
  interleave_store(p, even_lo, odd_lo);
  interleave_store(p + 2 * kLanes, even_hi, odd_hi);
#endif
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
