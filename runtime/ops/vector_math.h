// f32 transcendental functions in plain arithmetic, so that loops calling them vectorise (the
// std:: versions are library calls that stop GCC's vectoriser). Accuracy: within 2 ulp of the
// correctly rounded result over the normal range; tested against float64 in tests/ops/unary_test.cpp.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "runtime/ops/isa_namespace.h"

namespace edgefuse::vector_math {
// Per ISA level, so each level's out-of-line copies get their own symbols (isa_namespace.h).
inline namespace EF_ISA_NAMESPACE {

// exp(x): x = n*ln2 + r with |r| <= ln2/2, exp(r) by its degree-7 Taylor polynomial (truncation
// error < 5e-9 relative), 2^n assembled in the exponent bits. Results below the smallest normal
// float flush to 0; above FLT_MAX they are inf; NaN passes through.
inline float exp_f32(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;  // ln2 split so n * kLn2Hi is exact for |n| < 2^9
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kMin = -87.33654f;  // exp(kMin) = FLT_MIN
  constexpr float kMax = 88.72283f;   // exp(kMax) = FLT_MAX
  // Adding 1.5 * 2^23 rounds to the nearest integer in the low mantissa bits: SSE2 has no floor
  // instruction, and a library floor call would stop vectorisation.
  constexpr float kRoundMagic = 12582912.0f;
  float clamped = x != x ? 0.0f : x;  // NaN is restored at the end; keeps the int conversion defined
  clamped = clamped < kMin ? kMin : clamped;
  clamped = clamped > kMax ? kMax : clamped;
  const float shifted = clamped * kLog2e + kRoundMagic;
  const float n = shifted - kRoundMagic;
  const float r = (clamped - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // n in [-126, 128]: 2^n as two factors keeps each exponent field in range (2^128 is not a float).
  const int32_t n_int = static_cast<int32_t>(n);
  const int32_t half = n_int / 2;
  const float scale_a = std::bit_cast<float>((half + 127) << 23);
  const float scale_b = std::bit_cast<float>((n_int - half + 127) << 23);
  float result = p * scale_a * scale_b;
  result = x < kMin ? 0.0f : result;
  result = x > kMax ? INFINITY : result;
  return x != x ? x : result;
}

// 1 / (1 + exp(-x)), stable for every x (exp only sees -|x|).
inline float sigmoid_f32(float x) {
  const float e = exp_f32(-std::fabs(x));
  const float r = 1.0f / (1.0f + e);
  return x >= 0.0f ? r : e * r;
}

}  // namespace EF_ISA_NAMESPACE
}  // namespace edgefuse::vector_math
