// The activation a Conv node applies to each output before storing it (its "epilogue"), set by
// the fuser's fuse_conv_activation pass as node attributes:
//   fused_activation: "relu" | "leaky_relu" | "clip" | "sigmoid" | "hard_swish" | "hard_sigmoid" | "silu"
//   fused_alpha (leaky_relu: 0.01, hard_sigmoid: 0.2), fused_beta (hard_sigmoid: 0.5),
//   fused_min, fused_max (clip: float lowest and max)
//   fused_residual_after_activation: 0 (default) or 1; where the fused residual (Conv input 3,
//     conv_problem.h) is added: 0 before the activation, act(conv + B + R) (fuse_conv_add);
//     1 after it, act(conv + B) + R (fuse_conv_activation_add)
// Each follows the formula of the op it replaces (unary_math.h); silu is x * sigmoid(x). apply()
// is the reference; the optimised f32 loops are in conv_kernels.cpp (compiled per CPU ISA level).
#pragma once

#include <limits>
#include <string>

#include "runtime/attributes.h"
#include "runtime/ops/unary_math.h"
#include "runtime/status.h"

namespace edgefuse {

struct ConvEpilogue {
  enum class Kind { kNone, kRelu, kLeakyRelu, kClip, kSigmoid, kHardSwish, kHardSigmoid, kSilu };
  Kind kind = Kind::kNone;
  float alpha = 0;
  float beta = 0;
  float min = 0;
  float max = 0;
  bool residual_after_activation = false;  // where a present residual is added (see above)

  // The reference formula, in T (double in the reference kernel).
  template <typename T>
  T apply(T x) const {
    switch (kind) {
      case Kind::kNone:
        return x;
      case Kind::kRelu:
        return unary_math::relu(x);
      case Kind::kLeakyRelu:
        return unary_math::leaky_relu(x, T(alpha));
      case Kind::kClip:
        return unary_math::clip(x, T(min), T(max));
      case Kind::kSigmoid:
        return unary_math::sigmoid(x);
      case Kind::kHardSwish:
        return unary_math::hard_swish(x);
      case Kind::kHardSigmoid:
        return unary_math::hard_sigmoid(x, T(alpha), T(beta));
      case Kind::kSilu:
        return x * unary_math::sigmoid(x);
    }
    return x;
  }
};

// Reads the fused_* attributes of a Conv node; an unknown activation name is an invalid model.
inline Result<ConvEpilogue> conv_epilogue(const Attributes& attrs) {
  using Kind = ConvEpilogue::Kind;
  ConvEpilogue e;
  const int64_t residual_after = attrs.get_int("fused_residual_after_activation", 0);
  if (residual_after != 0 && residual_after != 1) {
    return invalid_model("fused_residual_after_activation is ", residual_after, ", expected 0 or 1");
  }
  e.residual_after_activation = residual_after == 1;
  if (!attrs.has("fused_activation")) return e;
  const std::string name = attrs.get_string("fused_activation", "");
  if (name == "relu") {
    e.kind = Kind::kRelu;
  } else if (name == "leaky_relu") {
    e.kind = Kind::kLeakyRelu;
    e.alpha = attrs.get_float("fused_alpha", 0.01f);
  } else if (name == "clip") {
    e.kind = Kind::kClip;
    e.min = attrs.get_float("fused_min", std::numeric_limits<float>::lowest());
    e.max = attrs.get_float("fused_max", std::numeric_limits<float>::max());
  } else if (name == "sigmoid") {
    e.kind = Kind::kSigmoid;
  } else if (name == "hard_swish") {
    e.kind = Kind::kHardSwish;
  } else if (name == "hard_sigmoid") {
    e.kind = Kind::kHardSigmoid;
    e.alpha = attrs.get_float("fused_alpha", 0.2f);
    e.beta = attrs.get_float("fused_beta", 0.5f);
  } else if (name == "silu") {
    e.kind = Kind::kSilu;
  } else {
    return invalid_model("unknown fused_activation '", name, "'");
  }
  return e;
}

}  // namespace edgefuse
