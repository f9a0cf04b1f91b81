// Scalar formulas of the GPU kernels, written once for both sides: nvcc compiles them for the
// device, and the host emulation (host_runner.h) compiles the same bodies with the host compiler,
// so the tests check the kernels' arithmetic and indexing on machines without a GPU. They follow
// the CPU definitions in runtime/ops/unary_math.h (NaN passes through every select) in f32.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
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
