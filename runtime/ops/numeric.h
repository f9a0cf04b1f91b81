// Element conversions shared by the pointwise, reduction and cast kernels. Reference kernels
// compute float types (f16, f32, f64) in double and integer types in their own type.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "runtime/dtype.h"

namespace edgefuse {

template <typename T>
inline constexpr bool kIsFloatLike = std::is_floating_point_v<T> || std::is_same_v<T, Half>;

template <typename T>
inline constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
double as_double(T value) {
  if constexpr (std::is_same_v<T, Half>) {
    return half_to_float(value);
  } else {
    return static_cast<double>(value);
  }
}

// Converts a double to T. Floats round to nearest (f16 through f32). Integers truncate toward
// zero and saturate: NaN becomes 0, values beyond the range (and +-inf) become its min or max,
// where C++ leaves the conversion undefined. bool is value != 0 (NaN is true).
template <typename T>
T from_double(double value) {
  if constexpr (std::is_same_v<T, Half>) {
    return float_to_half(static_cast<float>(value));
  } else if constexpr (std::is_same_v<T, bool>) {
    return value != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(value);
  } else {
    if (std::isnan(value)) return 0;
    // Truncation is exact strictly between these bounds. For 64-bit types they round to -2^63
    // and 2^63 (2^64 unsigned), which still separate the representable values from the rest.
    constexpr double kBelowMin = static_cast<double>(std::numeric_limits<T>::min()) - 1.0;
    constexpr double kAboveMax = static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
    if (value <= kBelowMin) return std::numeric_limits<T>::min();
    if (value >= kAboveMax) return std::numeric_limits<T>::max();
    return static_cast<T>(value);
  }
}

// Two's-complement wrapping arithmetic: signed overflow is undefined in C++, so integer kernels
// go through the unsigned type (narrower types are promoted to int and wrap on the way back).
template <typename T>
T wrapping_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
T wrapping_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <typename T>
T wrapping_mul(T a, T b) {
  // Promote to at least unsigned int so u16 * u16 cannot overflow a signed int.
  using U = std::common_type_t<std::make_unsigned_t<T>, unsigned int>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}

// Integer division truncating toward zero, as ONNX Div does. Defined everywhere instead of
// trapping: x / 0 == 0, and min / -1 wraps to min.
template <typename T>
T integer_divide(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrapping_sub(T{0}, a);
  }
  return static_cast<T>(a / b);
}

}  // namespace edgefuse
