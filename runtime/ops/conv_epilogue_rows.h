// The fused Conv epilogue (conv_epilogue.h) on contiguous f32 runs, for the per-ISA Conv kernels:
// one branch-free loop per activation so each vectorises (sigmoid through vector_math's f32 exp,
// as the standalone Sigmoid kernel does); the same formulas as ConvEpilogue::apply, the reference.
// Include from per-ISA sources only (isa_namespace.h).
#pragma once

#include <cstdint>

#include "runtime/ops/conv_epilogue.h"
#include "runtime/ops/isa_namespace.h"
#include "runtime/ops/unary_math.h"
#include "runtime/ops/vector_math.h"

namespace edgefuse::EF_ISA_NAMESPACE {

inline void add_row(float* row, const float* addend, int64_t count) {
  for (int64_t i = 0; i < count; ++i) row[i] += addend[i];
}

// The activation alone, in place on `count` values.
inline void apply_activation(const ConvEpilogue& e, float* data, int64_t count) {
  using Kind = ConvEpilogue::Kind;
  switch (e.kind) {
    case Kind::kNone:
      return;
    case Kind::kRelu:
      for (int64_t i = 0; i < count; ++i) data[i] = unary_math::relu(data[i]);
      return;
    case Kind::kLeakyRelu: {
      const float a = e.alpha;
      for (int64_t i = 0; i < count; ++i) data[i] = unary_math::leaky_relu(data[i], a);
      return;
    }
    case Kind::kClip: {
      const float lo = e.min, hi = e.max;
      for (int64_t i = 0; i < count; ++i) data[i] = unary_math::clip(data[i], lo, hi);
      return;
    }
    case Kind::kSigmoid:
      for (int64_t i = 0; i < count; ++i) data[i] = vector_math::sigmoid_f32(data[i]);
      return;
    case Kind::kHardSwish:
      for (int64_t i = 0; i < count; ++i) data[i] = unary_math::hard_swish(data[i]);
      return;
    case Kind::kHardSigmoid: {
      const float a = e.alpha, b = e.beta;
      for (int64_t i = 0; i < count; ++i) data[i] = unary_math::hard_sigmoid(data[i], a, b);
      return;
    }
    case Kind::kSilu:
      for (int64_t i = 0; i < count; ++i) data[i] = data[i] * vector_math::sigmoid_f32(data[i]);
      return;
  }
}

// Everything after bias: the residual (nullptr when absent) before or after the activation.
inline void finish_row(const ConvEpilogue& e, float* row, const float* residual, int64_t count) {
  if (residual != nullptr && !e.residual_after_activation) add_row(row, residual, count);
  apply_activation(e, row, count);
  if (residual != nullptr && e.residual_after_activation) add_row(row, residual, count);
}

}  // namespace edgefuse::EF_ISA_NAMESPACE
