#include "runtime/dtype.h"

#include <bit>
#include <cstring>

namespace edgefuse {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF16:
      return 2;
    case DType::kF64:
      return 8;
    case DType::kI8:
      return 1;
    case DType::kU8:
      return 1;
    case DType::kI32:
      return 4;
    case DType::kI64:
      return 8;
    case DType::kBool:
      return 1;
  }
  return 0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kF64:
      return "f64";
    case DType::kI8:
      return "i8";
    case DType::kU8:
      return "u8";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kBool:
      return "bool";
  }
  return "?";
}

bool dtype_is_float(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kF64;
}

float half_to_float(Half h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  const uint32_t exponent = (h.bits >> 10) & 0x1fu;
  uint32_t mantissa = h.bits & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf or NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half: normalise into a float.
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3ffu;
    bits = sign | static_cast<uint32_t>(113 - shift) << 23 | (mantissa << 13);
  }
  return std::bit_cast<float>(bits);
}

Half float_to_half(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    const uint16_t nan_bit = abs > 0x7f800000u ? 0x200 : 0;
    return Half{static_cast<uint16_t>(sign | 0x7c00u | nan_bit)};
  }
  if (abs >= 0x477ff000u) return Half{static_cast<uint16_t>(sign | 0x7c00u)};  // rounds to inf
  if (abs < 0x38800000u) {
    // Subnormal or zero: count in units of 2^-24 (the half subnormal ulp); adding 1.5 * 2^23
    // makes the float addition round that count to the nearest even integer.
    const float magnitude = std::bit_cast<float>(abs);
    const uint32_t rounded = std::bit_cast<uint32_t>(magnitude * 16777216.0f + 12582912.0f) - 0x4b400000u;
    return Half{static_cast<uint16_t>(sign | rounded)};
  }
  // Normal: rebias exponent, round mantissa to 10 bits (nearest even).
  const uint32_t mantissa_odd = (abs >> 13) & 1u;
  const uint32_t rounded = abs + 0xfffu + mantissa_odd;
  return Half{static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13))};
}

}  // namespace edgefuse
