// Formulas of the pointwise unary ops, shared by the reference kernels (in double) and the
// optimised f32 kernels so both follow one definition. Written as selects without branches so
// loops over them vectorise. NaN inputs give NaN outputs: every comparison with NaN is false,
// so each select passes the NaN through.
#pragma once

#include <cmath>

#include "runtime/ops/isa_namespace.h"

namespace edgefuse::unary_math {
// Per ISA level, so each level's out-of-line copies get their own symbols (isa_namespace.h).
inline namespace EF_ISA_NAMESPACE {

template <typename T>
T relu(T x) {
  return x < T{0} ? T{0} : x;
}

template <typename T>
T leaky_relu(T x, T alpha) {
  return x < T{0} ? alpha * x : x;
}

// Stable for every x: exp only sees non-positive arguments, so it cannot overflow, and for
// x < 0 the result is e / (1 + e) rather than 1 - 1 / (1 + e), which keeps tiny results exact.
template <typename T>
T sigmoid(T x) {
  const T e = std::exp(-std::abs(x));
  const T r = T{1} / (T{1} + e);
  return x >= T{0} ? r : e * r;
}

// max(0, min(1, alpha * x + beta)).
template <typename T>
T hard_sigmoid(T x, T alpha, T beta) {
  T v = alpha * x + beta;
  v = v < T{0} ? T{0} : v;
  return v > T{1} ? T{1} : v;
}

// x * max(0, min(1, x / 6 + 1 / 2)), with the inner term as (x + 3) / 6: x + 3 is exact near
// the kink at -3, where x / 6 + 0.5 would cancel and leave a rounding error as the result.
template <typename T>
T hard_swish(T x) {
  return x * hard_sigmoid(x + T{3}, T{1} / T{6}, T{0});
}

// min(max(x, lo), hi): when lo > hi every element becomes hi, as ONNX specifies.
template <typename T>
T clip(T x, T lo, T hi) {
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}

}  // namespace EF_ISA_NAMESPACE
}  // namespace edgefuse::unary_math
