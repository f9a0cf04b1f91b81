// Conv's fused activations (conv_epilogue.h) on one SIMD vector, so the GEMM and depthwise
// kernels apply them to accumulators before the store instead of re-reading the output. The
// selects mirror unary_math.h's formulas, NaN cases included. Sigmoid (and SiLU, which runs on
// every output of YOLOX-style models, often costing more than the convolution's own arithmetic)
// is Eigen's vectorised exp of -|x|, then 1 / (1 + e); with AVX-512 the reciprocal of 1 + e in
// [1, 2] is rcp14 refined by one Newton step (relative error about 2^-27) instead of a divide,
// which costs several times more.
// Per-ISA (isa_namespace.h): include from per-ISA sources only.
#pragma once

#if defined(__AVX512F__)
#include <immintrin.h>
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

// 1 / (1 + exp(-x)) in 12 instructions for x already clamped to [-88, 88] (NaN passes): as it
// runs on every output of YOLOX-style models and AVX-512 has two vector ports, no select is
// spent on the sign of x. exp(-x) = 2^n exp(r) with n = round(-x log2 e), by adding 1.5 * 2^23
// in the same FMA as the product (cheaper than roundscale), and -r = x + n ln2 in one more FMA
// (ln2's f32 rounding adds at most 2.4e-7 relative at |x| = 88), so that -x itself is never
// formed; exp(r) is a degree-5 polynomial fitted for relative error on |r| <= ln2 / 2 (1.6e-7 in
// f32), evaluated in -r with the odd coefficients negated, and 2^n comes from scalef. exp stays
// within [6e-39, 1.7e38], so 1 + e is finite and its reciprocal, rcp14 refined by one Newton step
// (about 2^-27 relative), is accurate relative to the result at both ends.
inline __m512 logistic_of_clamped(__m512 x) {
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(-1.44269504088896341f), magic), magic);
  const __m512 s = _mm512_fmadd_ps(n, _mm512_set1_ps(0.693147182f), x);  // s = -r
  // Minimax (relative error) on [-ln2 / 2, ln2 / 2] with the constant and linear terms fixed at 1,
  // at r = -s: 1 - s + c2 s^2 - c3 s^3 + c4 s^4 - c5 s^5.
  __m512 p = _mm512_set1_ps(-8.312525228e-03f);
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(4.189011455e-02f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(-1.666711420e-01f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(4.999923110e-01f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(-1.0f));
  p = _mm512_fmadd_ps(p, s, _mm512_set1_ps(1.0f));
  const __m512 d = _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_scalef_ps(p, n));
  const __m512 y = _mm512_rcp14_ps(d);
  return _mm512_fmadd_ps(y, _mm512_fnmadd_ps(d, y, _mm512_set1_ps(1.0f)), y);
}

// max(x, -88), NaN kept (max returns its second operand when either is NaN).
inline __m512 clamp_below(__m512 x) {
  return _mm512_max_ps(_mm512_set1_ps(-88.0f), x);
}

// Beyond +-88 sigmoid is 1 or below 1e-38 in f32; the clamp keeps exp finite.
inline Vec sigmoid(Vec x) {
  return logistic_of_clamped(_mm512_min_ps(_mm512_set1_ps(88.0f), clamp_below(x)));
}

// x * sigmoid(x) with x clamped below at -88 in the product too, so that a huge negative x times
// its tiny sigmoid stays tiny.
inline Vec silu(Vec x) {
  const __m512 low = clamp_below(x);
  return _mm512_mul_ps(low, logistic_of_clamped(_mm512_min_ps(_mm512_set1_ps(88.0f), low)));
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

// The activation of kind `K` with e's parameters.
template <ConvEpilogue::Kind K>
inline Vec activate(Vec x, const ConvEpilogue& e) {
  using Kind = ConvEpilogue::Kind;
  if constexpr (K == Kind::kNone) {
    return x;
  } else if constexpr (K == Kind::kRelu) {
    return detail::select_less(x, zero(), zero(), x);
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
