// Conv's fused activations (conv_epilogue.h) on one SIMD vector, so the GEMM and depthwise
// kernels apply them to accumulators before the store instead of re-reading the output. The
// selects mirror unary_math.h's formulas, NaN cases included. Sigmoid (and SiLU, which runs on
// every output of YOLOX-style models, often costing more than the convolution's own arithmetic)
// is Eigen's vectorised exp of -|x|, then 1 / (1 + e). With AVX-512 and AVX2 exp(-x) comes from a
// table of 2^(j / 16) or 2^(j / 8) and a short polynomial (exp_of_negated below); AVX-512 then
// divides, on a unit of its own (eight operations on the FMA ports instead of twelve: YOLOX-nano
// 2-4 % faster on one thread, measured in one process), AVX2 takes rcp and a Newton step (a
// stand-alone SiLU pass 5.6 -> 3.2 ns per 8 floats here; AVX2 machines divide slowly). On aarch64
// (NEON) a degree-5 polynomial and the reciprocal estimate with two Newton steps replace Eigen's
// degree-7 exp, its selects and the vector divide (checked under qemu; not timed on a Jetson).
// Per-ISA (isa_namespace.h): include from per-ISA sources only.
#pragma once

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "runtime/ops/conv_epilogue.h"
#include "runtime/ops/simd_packet.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"  // see simd_packet.h

namespace edgefuse::EF_ISA_NAMESPACE::simd {

namespace detail {

// a < b ? if_less : otherwise (false for NaN). With AVX-512 a compare into a mask register and a
// masked blend: Eigen's pselect goes through a vector mask and back, which measured several times
// slower inside the GEMM epilogue.
inline Vec select_less(Vec a, Vec b, Vec if_less, Vec otherwise) {
#if defined(__AVX512F__)
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), otherwise, if_less);
#else
  return Eigen::internal::pselect(Eigen::internal::pcmp_lt(a, b), if_less, otherwise);
#endif
}

// exp(x) for x <= 0 as vector_math::exp_f32 computes it (x = n ln2 + r, degree-7 Taylor
// polynomial of exp(r), 2^n in the exponent bits, 0 below FLT_MIN). NaN passes through.
inline Vec exp_nonpositive(Vec input) {
  using namespace Eigen::internal;
  const Vec lowest = broadcast(-87.33654f);  // exp(lowest) = FLT_MIN
  const Vec x = select_less(input, lowest, lowest, input);
  // Adding 1.5 * 2^23 rounds n = x log2(e) to an integer held in the low mantissa bits.
  const Vec magic = broadcast(12582912.0f);
  const Vec shifted = fma(x, broadcast(1.44269504088896341f), magic);
  const Vec n = psub(shifted, magic);
  const Vec r = fma(n, broadcast(2.12194440e-4f), fma(n, broadcast(-0.693359375f), x));  // x - n ln2, ln2 split
  Vec p = broadcast(1.0f / 5040.0f);
  p = fma(p, r, broadcast(1.0f / 720.0f));
  p = fma(p, r, broadcast(1.0f / 120.0f));
  p = fma(p, r, broadcast(1.0f / 24.0f));
  p = fma(p, r, broadcast(1.0f / 6.0f));
  p = fma(p, r, broadcast(0.5f));
  p = fma(p, r, broadcast(1.0f));
  p = fma(p, r, broadcast(1.0f));
  // n in [-126, 0]: 2^n has the biased exponent n + 127 in [1, 127].
  using VecInt = typename unpacket_traits<Vec>::integer_packet;
  const VecInt biased = pcast<Vec, VecInt>(padd(n, broadcast(127.0f)));
  return select_less(input, lowest, zero(), pmul(p, preinterpret<Vec>(plogical_shift_left<23>(biased))));
}

#if defined(__AVX512F__)

// exp(-c) for c in [-88, 88.5] (NaN passes): -c = k ln2 / 16 + r with k = round(-c 16 log2 e), by
// adding 1.5 * 2^19, whose ulp is 1/16, in the same FMA as the product: the sum is rounded to
// sixteenths, and its low mantissa bits hold k. Subtracting the constant again gives k / 16 itself,
// which scalef takes as it is (one multiply fewer than k, then k / 16); s = -r = c + (k / 16) ln2
// in one more FMA, so -c itself is never formed. Then exp(-c) = 2^floor(k / 16) * 2^((k mod 16) /
// 16) * exp(r): the middle factor from a 16-entry table indexed by those low bits (vpermps reads
// the low 4 bits of each lane, k mod 16 for negative k too), exp(r) for |r| <= ln2 / 32 a degree-3
// polynomial (truncation 9e-9 relative), and the power of two from scalef. A degree-5 polynomial
// on |r| <= ln2 / 2 takes two FMAs more; the table costs a permute, which runs beside the FMA
// ports the GEMM's products need.
inline __m512 exp_of_negated(__m512 c) {
  const __m512 magic = _mm512_set1_ps(786432.0f);
  const __m512 sum = _mm512_fmadd_ps(c, _mm512_set1_ps(-1.44269504088896341f), magic);
  const __m512 k16 = _mm512_sub_ps(sum, magic);  // k / 16
  const __m512 s = _mm512_fmadd_ps(k16, _mm512_set1_ps(0.693147180559945f), c);
  __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(-1.0f / 6.0f), s, _mm512_set1_ps(0.5f));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(-1.0f));
  q = _mm512_fmadd_ps(q, s, _mm512_set1_ps(1.0f));
  const __m512 powers = _mm512_setr_ps(
      1.000000000e+00f, 1.044273782e+00f, 1.090507733e+00f, 1.138788635e+00f, 1.189207115e+00f, 1.241857812e+00f,
      1.296839555e+00f, 1.354255547e+00f, 1.414213562e+00f, 1.476826146e+00f, 1.542210825e+00f, 1.610490332e+00f,
      1.681792831e+00f, 1.756252160e+00f, 1.834008086e+00f, 1.915206561e+00f);  // 2^(j / 16)
  const __m512 p = _mm512_mul_ps(q, _mm512_permutexvar_ps(_mm512_castps_si512(sum), powers));
  return _mm512_scalef_ps(p, k16);
}

// max(x, -88), NaN kept (max returns its second operand when either is NaN).
inline __m512 clamp_below(__m512 x) {
  return _mm512_max_ps(_mm512_set1_ps(-88.0f), x);
}

// Beyond [-88, 88.5] sigmoid is below 7e-39 or 1 in f32 (clamp_below keeps NaN, and so does min,
// which returns its second operand when either is NaN), and exp of the clamped x stays finite.
// 1 / (1 + e) by division, which has a unit of its own (rcp14 and a Newton step would take three
// more FMA-port operations): with the exp above, seven FMA-port operations where a degree-5
// polynomial and rcp14 took twelve.
inline Vec sigmoid(Vec x) {
  const __m512 c = _mm512_min_ps(_mm512_set1_ps(88.5f), clamp_below(x));
  return _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), exp_of_negated(c)));
}

// x * sigmoid(x) = x / (1 + exp(-x)), x clamped as in sigmoid (in the numerator too, so that a huge
// negative x over its huge 1 + exp(-x) stays tiny).
inline Vec silu(Vec x) {
  const __m512 low = clamp_below(x);
  const __m512 c = _mm512_min_ps(_mm512_set1_ps(88.5f), low);
  return _mm512_div_ps(low, _mm512_add_ps(_mm512_set1_ps(1.0f), exp_of_negated(c)));
}

#elif defined(__AVX2__) && defined(__FMA__)

// exp(-c) for c in [-88, 87] as the AVX-512 version computes it, with what AVX2 has: an 8-entry
// table (vpermps reads the low 3 bits), exp(r) for |r| <= ln2 / 16 a degree-4 polynomial (1.3e-9
// truncation), and 2^floor(k / 8) built in the exponent bits and multiplied in (no scalef; a
// product keeps NaN, which an integer add to p's bits would not). c <= 87 keeps that power normal.
inline __m256 exp_of_negated(__m256 c) {
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256 sum = _mm256_fmadd_ps(c, _mm256_set1_ps(-8.0f * 1.44269504088896341f), magic);
  const __m256 k = _mm256_sub_ps(sum, magic);
  const __m256 s = _mm256_fmadd_ps(k, _mm256_set1_ps(0.693147180559945f / 8.0f), c);
  __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(1.0f / 24.0f), s, _mm256_set1_ps(-1.0f / 6.0f));
  q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(0.5f));
  q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(-1.0f));
  q = _mm256_fmadd_ps(q, s, _mm256_set1_ps(1.0f));
  const __m256 powers =
      _mm256_setr_ps(1.000000000e+00f, 1.090507733e+00f, 1.189207115e+00f, 1.296839555e+00f, 1.414213562e+00f,
                     1.542210825e+00f, 1.681792831e+00f, 1.834008086e+00f);  // 2^(j / 8)
  const __m256 p = _mm256_mul_ps(q, _mm256_permutevar8x32_ps(powers, _mm256_castps_si256(sum)));
  const __m256i k_int = _mm256_sub_epi32(_mm256_castps_si256(sum), _mm256_castps_si256(magic));
  const __m256i biased = _mm256_add_epi32(_mm256_srai_epi32(k_int, 3), _mm256_set1_epi32(127));
  return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(biased, 23)));
}

// 1 / d by rcp and one Newton step (about 2^-23 relative; 0 for d beyond 2^126, where sigmoid is
// below FLT_MIN): a division takes 5 to 8 cycles per vector on AVX2 machines.
inline __m256 reciprocal(__m256 d) {
  const __m256 y = _mm256_rcp_ps(d);
  return _mm256_fmadd_ps(y, _mm256_fnmadd_ps(d, y, _mm256_set1_ps(1.0f)), y);
}

// Clamped to [-88, 87] (max and min return their second operand, x, when it is NaN), where
// sigmoid is below 7e-39 or 1 in f32 beyond.
inline __m256 clamp_exponent(__m256 x) {
  return _mm256_min_ps(_mm256_set1_ps(87.0f), _mm256_max_ps(_mm256_set1_ps(-88.0f), x));
}

inline Vec sigmoid(Vec x) {
  return reciprocal(_mm256_add_ps(_mm256_set1_ps(1.0f), exp_of_negated(clamp_exponent(x))));
}

// x * sigmoid(x), x clamped below at -88 in the product too, so that a huge negative x times its
// tiny sigmoid stays tiny.
inline Vec silu(Vec x) {
  const __m256 low = _mm256_max_ps(_mm256_set1_ps(-88.0f), x);
  const __m256 c = _mm256_min_ps(_mm256_set1_ps(87.0f), low);
  return _mm256_mul_ps(low, reciprocal(_mm256_add_ps(_mm256_set1_ps(1.0f), exp_of_negated(c))));
}

#elif defined(__aarch64__)

// exp(-c) for c in [-88, 87] on NEON (Jetson's cores): k = round(-c log2 e), a degree-5 polynomial of
// exp(r) on |r| <= ln2 / 2 fitted for relative error (1.6e-7), and 2^k built in the exponent bits and
// multiplied in (a product keeps NaN). No table: NEON's lookups index bytes, which costs more than
// the two FMAs a table would save.
inline float32x4_t exp_of_negated(float32x4_t c) {
  const float32x4_t magic = vdupq_n_f32(12582912.0f);
  const float32x4_t sum = vfmaq_f32(magic, c, vdupq_n_f32(-1.44269504088896341f));
  const float32x4_t k = vsubq_f32(sum, magic);
  const float32x4_t s = vfmaq_f32(c, k, vdupq_n_f32(0.693147182f));  // -r
  // 1 - s + c2 s^2 - c3 s^3 + c4 s^4 - c5 s^5 (odd coefficients negated: the polynomial is in -r)
  float32x4_t p = vfmaq_f32(vdupq_n_f32(4.189011455e-02f), vdupq_n_f32(-8.312525228e-03f), s);
  p = vfmaq_f32(vdupq_n_f32(-1.666711420e-01f), p, s);
  p = vfmaq_f32(vdupq_n_f32(4.999923110e-01f), p, s);
  p = vfmaq_f32(vdupq_n_f32(-1.0f), p, s);
  p = vfmaq_f32(vdupq_n_f32(1.0f), p, s);
  const int32x4_t k_int = vsubq_s32(vreinterpretq_s32_f32(sum), vreinterpretq_s32_f32(magic));
  const int32x4_t biased = vshlq_n_s32(vaddq_s32(k_int, vdupq_n_s32(127)), 23);
  return vmulq_f32(p, vreinterpretq_f32_s32(biased));
}

// 1 / d by the reciprocal estimate and two Newton steps (about 2^-22 relative; 0 for d beyond
// 2^126, where sigmoid is below FLT_MIN): a vector divide takes several times longer on these cores.
inline float32x4_t reciprocal(float32x4_t d) {
  float32x4_t y = vrecpeq_f32(d);
  y = vmulq_f32(y, vrecpsq_f32(d, y));
  return vmulq_f32(y, vrecpsq_f32(d, y));
}

// Clamped to [-88, 87] (NaN passes: NEON's max and min return NaN), where sigmoid is below 7e-39
// or 1 in f32 beyond.
inline Vec sigmoid(Vec x) {
  const float32x4_t c = vminq_f32(vdupq_n_f32(87.0f), vmaxq_f32(vdupq_n_f32(-88.0f), x));
  return reciprocal(vaddq_f32(vdupq_n_f32(1.0f), exp_of_negated(c)));
}

// x * sigmoid(x), x clamped below at -88 in the product too, so that a huge negative x times its
// tiny sigmoid stays tiny.
inline Vec silu(Vec x) {
  const float32x4_t low = vmaxq_f32(vdupq_n_f32(-88.0f), x);
  const float32x4_t c = vminq_f32(vdupq_n_f32(87.0f), low);
  return vmulq_f32(low, reciprocal(vaddq_f32(vdupq_n_f32(1.0f), exp_of_negated(c))));
}

#else

inline Vec sigmoid(Vec x) {
  const Vec e = exp_nonpositive(Eigen::internal::pnegate(Eigen::internal::pabs(x)));
  const Vec r = Eigen::internal::pdiv(broadcast(1.0f), add(broadcast(1.0f), e));
  // x >= 0 ? r : e * r; NaN takes e * r, which is NaN.
  return select_less(x, zero(), Eigen::internal::pmul(e, r), r);
}

inline Vec silu(Vec x) {
  return Eigen::internal::pmul(x, sigmoid(x));
}

#endif

inline Vec hard_sigmoid(Vec x, Vec alpha, Vec beta) {
  Vec v = add(Eigen::internal::pmul(alpha, x), beta);  // two roundings, as unary_math.h
  v = select_less(v, zero(), zero(), v);
  const Vec one = broadcast(1.0f);
  return select_less(one, v, one, v);
}

}  // namespace detail

// exp(x - m) for x <= m, a softmax's terms with m their group's max: exp_of_negated(m - x) with
// m - x clamped to 87 (its range; exp(-87) = 1.6e-38 stands in for smaller terms beside the max's
// exp(0) = 1), NaN passing; the portable level's polynomial elsewhere.
inline Vec exp_below(Vec x, Vec m) {
#if defined(__AVX512F__)
  return detail::exp_of_negated(_mm512_min_ps(_mm512_set1_ps(87.0f), _mm512_sub_ps(m, x)));
#elif defined(__AVX2__) && defined(__FMA__)
  return detail::exp_of_negated(_mm256_min_ps(_mm256_set1_ps(87.0f), _mm256_sub_ps(m, x)));
#elif defined(__aarch64__)
  return detail::exp_of_negated(vminq_f32(vdupq_n_f32(87.0f), vsubq_f32(m, x)));
#else
  return detail::exp_nonpositive(Eigen::internal::psub(x, m));
#endif
}

// The activation of kind `K` with e's parameters.
template <ConvEpilogue::Kind K>
inline Vec activate(Vec x, const ConvEpilogue& e) {
  using Kind = ConvEpilogue::Kind;
  if constexpr (K == Kind::kNone) {
    return x;
  } else if constexpr (K == Kind::kRelu) {
#if defined(__AVX512F__)
    // One operation instead of a compare and a blend: max returns its second operand, x, when x is
    // NaN or when both are zeros (so -0 stays -0, as the select gives).
    return _mm512_max_ps(zero(), x);
#elif defined(__AVX2__)
    return _mm256_max_ps(zero(), x);
#else
    return detail::select_less(x, zero(), zero(), x);
#endif
  } else if constexpr (K == Kind::kLeakyRelu) {
    return detail::select_less(x, zero(), Eigen::internal::pmul(broadcast(e.alpha), x), x);
  } else if constexpr (K == Kind::kClip) {
    const Vec lo = broadcast(e.min), hi = broadcast(e.max);
    x = detail::select_less(x, lo, lo, x);
    return detail::select_less(hi, x, hi, x);
  } else if constexpr (K == Kind::kSigmoid) {
    return detail::sigmoid(x);
  } else if constexpr (K == Kind::kHardSwish) {
    const Vec inner = detail::hard_sigmoid(add(x, broadcast(3.0f)), broadcast(1.0f / 6.0f), zero());
    return Eigen::internal::pmul(x, inner);
  } else if constexpr (K == Kind::kHardSigmoid) {
    return detail::hard_sigmoid(x, broadcast(e.alpha), broadcast(e.beta));
  } else {
    static_assert(K == Kind::kSilu);
    return detail::silu(x);
  }
}

// Calls fn(std::integral_constant<Kind, kind>{}) for the run-time kind, so that a kernel is
// instantiated once per activation with the choice hoisted out of its loops.
template <typename Fn>
inline void dispatch_activation(ConvEpilogue::Kind kind, Fn&& fn) {
  using Kind = ConvEpilogue::Kind;
  switch (kind) {
    case Kind::kNone:
      return fn(std::integral_constant<Kind, Kind::kNone>{});
    case Kind::kRelu:
      return fn(std::integral_constant<Kind, Kind::kRelu>{});
    case Kind::kLeakyRelu:
      return fn(std::integral_constant<Kind, Kind::kLeakyRelu>{});
    case Kind::kClip:
      return fn(std::integral_constant<Kind, Kind::kClip>{});
    case Kind::kSigmoid:
      return fn(std::integral_constant<Kind, Kind::kSigmoid>{});
    case Kind::kHardSwish:
      return fn(std::integral_constant<Kind, Kind::kHardSwish>{});
    case Kind::kHardSigmoid:
      return fn(std::integral_constant<Kind, Kind::kHardSigmoid>{});
    case Kind::kSilu:
      return fn(std::integral_constant<Kind, Kind::kSilu>{});
  }
}

}  // namespace edgefuse::EF_ISA_NAMESPACE::simd

#pragma GCC diagnostic pop
