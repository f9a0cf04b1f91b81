// Scalar formulas of the GPU kernels, written once for both sides: nvcc compiles them for the
// device, and the host emulation (host_runner.h) compiles the same bodies with the host compiler,
// so the tests check the kernels' arithmetic and indexing on machines without a GPU. They follow
// the CPU definitions in runtime/ops/unary_math.h (NaN passes through every select) in f32.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#define EF_HOST_DEVICE __host__ __device__
#else
#define EF_HOST_DEVICE
#endif

namespace edgefuse::gpu {

// The pointwise functions a kernel applies to each value: the standalone unary ops, and the
// activation epilogue the fuser attaches to a Conv (runtime/ops/conv_epilogue.h).
enum class Activation : uint8_t {
  kNone,
  kRelu,
  kLeakyRelu,
  kClip,
  kSigmoid,
  kTanh,
  kHardSwish,
  kHardSigmoid,
  kSilu,
  kSqrt,
  kExp,
};

struct ActivationParams {
  Activation kind = Activation::kNone;
  float alpha = 0;  // leaky_relu slope; hard_sigmoid alpha
  float beta = 0;   // hard_sigmoid beta
  float min = 0;    // clip bounds
  float max = 0;
};

// binary16's largest finite value.
inline constexpr float kLargestHalf = 65504.0f;

// IEEE binary16 <-> binary32, rounding to nearest even: the device's own conversions, and on the
// host a bit-exact software equivalent (fp16 storage mode, lowering.h).
EF_HOST_DEVICE inline float half_bits_to_float(uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  uint32_t bits = 0;
  if (exponent == 0 && mantissa == 0) {
    bits = sign;
  } else if (exponent == 0) {  // subnormal: normalise into a float exponent
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13);
  } else if (exponent == 31) {  // inf, NaN
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  float f = 0;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
#endif
}

EF_HOST_DEVICE inline uint16_t float_to_half_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __half_as_ushort(__float2half_rn(f));
#else
  uint32_t x = 0;
  std::memcpy(&x, &f, sizeof(x));
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t magnitude = x & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);   // NaN stays NaN
  if (magnitude >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520 rounds to inf
  if (magnitude < 0x33000000u) return sign;                                    // <= 2^-25 rounds to 0
  uint32_t result = 0;
  uint32_t remainder = 0;
  uint32_t halfway = 0;
  if (magnitude < 0x38800000u) {  // below 2^-14: a half subnormal, in units of 2^-24
    const uint32_t shift = 126 - (magnitude >> 23);
    const uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
    result = mantissa >> shift;
    remainder = mantissa & ((1u << shift) - 1);
    halfway = 1u << (shift - 1);
  } else {  // rebias the exponent, keep the top 10 mantissa bits
    result = (magnitude >> 13) - (112u << 10);
    remainder = magnitude & 0x1FFFu;
    halfway = 0x1000u;
  }
  if (remainder > halfway || (remainder == halfway && (result & 1u) != 0)) ++result;  // a carry bumps the exponent
  return static_cast<uint16_t>(sign | result);
#endif
}

EF_HOST_DEVICE inline float sigmoid(float x) {
  const float e = expf(-fabsf(x));  // exp of a non-positive argument cannot overflow
  const float r = 1.0f / (1.0f + e);
  return x >= 0.0f ? r : e * r;
}

EF_HOST_DEVICE inline float hard_sigmoid(float x, float alpha, float beta) {
  float v = alpha * x + beta;
  v = v < 0.0f ? 0.0f : v;
  return v > 1.0f ? 1.0f : v;
}

EF_HOST_DEVICE inline float apply_activation(const ActivationParams& a, float x) {
  switch (a.kind) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return x < 0.0f ? 0.0f : x;
    case Activation::kLeakyRelu:
      return x < 0.0f ? a.alpha * x : x;
    case Activation::kClip: {
      const float lo = x < a.min ? a.min : x;
      return lo > a.max ? a.max : lo;
    }
    case Activation::kSigmoid:
      return sigmoid(x);
    case Activation::kTanh:
      return tanhf(x);
    case Activation::kHardSwish:
      return x * hard_sigmoid(x + 3.0f, 1.0f / 6.0f, 0.0f);  // (x + 3) / 6 stays exact near -3
    case Activation::kHardSigmoid:
      return hard_sigmoid(x, a.alpha, a.beta);
    case Activation::kSilu:
      return x * sigmoid(x);
    case Activation::kSqrt:
      return sqrtf(x);
    case Activation::kExp:
      return expf(x);
  }
  return x;
}

}  // namespace edgefuse::gpu
