// Element types a tensor can hold, their sizes and names, and fp16 conversion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace edgefuse {

enum class DType : uint8_t { kF32, kF16, kF64, kI8, kU8, kI32, kI64, kBool };

inline constexpr int kDTypeCount = 8;

size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);  // "f32", "i64", ...
bool dtype_is_float(DType dtype);

// Maps a C++ type to its DType: dtype_of<float>() == DType::kF32.
template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::kF32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::kF64;
}
template <>
constexpr DType dtype_of<int8_t>() {
  return DType::kI8;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::kU8;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::kI32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::kI64;
}
template <>
constexpr DType dtype_of<bool>() {
  return DType::kBool;
}

// IEEE 754 binary16 stored as its bit pattern; arithmetic goes through float.
struct Half {
  uint16_t bits = 0;
};
template <>
constexpr DType dtype_of<Half>() {
  return DType::kF16;
}

float half_to_float(Half h);
Half float_to_half(float f);  // round to nearest even, saturates to inf, keeps NaN

// Calls fn(T{}) with T the C++ type of `dtype`; returns what fn returns.
template <typename Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kF32:
      return fn(float{});
    case DType::kF16:
      return fn(Half{});
    case DType::kF64:
      return fn(double{});
    case DType::kI8:
      return fn(int8_t{});
    case DType::kU8:
      return fn(uint8_t{});
    case DType::kI32:
      return fn(int32_t{});
    case DType::kI64:
      return fn(int64_t{});
    case DType::kBool:
      return fn(bool{});
  }
  return fn(float{});
}

}  // namespace edgefuse
