#include "pipeline/preprocess/yuv_row_kernels.h"

#include <bit>
#include <cstring>

namespace edgefuse {

// Sample pairs are packed and unpacked as little-endian words.
static_assert(std::endian::native == std::endian::little);

void blend_rows(const uint8_t* __restrict a, const uint8_t* __restrict b, int weight256, int n,
                uint16_t* __restrict out) {
  const auto wb = static_cast<uint16_t>(weight256);
  const auto wa = static_cast<uint16_t>(256 - weight256);
  for (int k = 0; k < n; ++k) out[k] = static_cast<uint16_t>(a[k] * wa + b[k] * wb);
}

namespace {

template <typename Word>
inline Word load(const uint16_t* p) {
  Word w;
  std::memcpy(&w, p, sizeof(w));
  return w;
}

template <PixelFormat kFormat>
void gather(const uint16_t* __restrict y, const uint16_t* __restrict u, const uint16_t* __restrict v,
            const ColumnTaps& taps, uint32_t* __restrict samples) {
  const int n = taps.count;
  uint32_t* __restrict luma = samples;
  uint32_t* __restrict first = samples + n;
  uint32_t* __restrict second = samples + 2 * n;
  for (int j = 0; j < n; ++j) {
    luma[j] = load<uint32_t>(y + taps.luma[j]);
    const int32_t c = taps.chroma[j];
    if constexpr (kFormat == PixelFormat::kNV12) {
      const auto quad = load<uint64_t>(u + c);  // U0 V0 U1 V1
      first[j] = static_cast<uint32_t>(quad);
      second[j] = static_cast<uint32_t>(quad >> 32);
    } else {
      first[j] = load<uint32_t>(u + c);
      second[j] = load<uint32_t>(v + c);
    }
  }
}

inline float low(uint32_t pair) {
  return static_cast<float>(static_cast<int32_t>(pair & 0xFFFF));
}
inline float high(uint32_t pair) {
  return static_cast<float>(static_cast<int32_t>(pair >> 16));
}
inline float lerp(float a, float b, float w) {
  return a + w * (b - a);
}

// min/max written as comparisons the compiler turns into minps/maxps.
inline float clamp_to(float x, float lo, float hi) {
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}

template <PixelFormat kFormat>
void convert(const uint32_t* __restrict samples, const ColumnTaps& taps, const PixelTransform& t,
             float* __restrict r_out, float* __restrict g_out, float* __restrict b_out) {
  const PixelTransform k = t;  // a local copy the compiler knows no store aliases
  const int n = taps.count;
  const float* __restrict weight = taps.weight;
  const float* __restrict chroma_weight = taps.chroma_weight;
  for (int j = 0; j < n; ++j) {
    const uint32_t luma = samples[j];
    const uint32_t first = samples[n + j];
    const uint32_t second = samples[2 * n + j];
    const float y = k.y_gain * lerp(low(luma), high(luma), weight[j]);
    float u = 0;
    float v = 0;
    if constexpr (kFormat == PixelFormat::kNV12) {
      u = lerp(low(first), low(second), chroma_weight[j]);
      v = lerp(high(first), high(second), chroma_weight[j]);
    } else {
      u = lerp(low(first), high(first), chroma_weight[j]);
      v = lerp(low(second), high(second), chroma_weight[j]);
    }
    r_out[j] = clamp_to(y + k.r_from_v * v + k.r_bias, k.lo, k.hi);
    g_out[j] = clamp_to(y + k.g_from_u * u + k.g_from_v * v + k.g_bias, k.lo, k.hi);
    b_out[j] = clamp_to(y + k.b_from_u * u + k.b_bias, k.lo, k.hi);
  }
}

}  // namespace

void gather_columns(PixelFormat format, const uint16_t* y, const uint16_t* u, const uint16_t* v, const ColumnTaps& taps,
                    uint32_t* samples) {
  if (format == PixelFormat::kNV12) {
    gather<PixelFormat::kNV12>(y, u, v, taps, samples);
  } else {
    gather<PixelFormat::kI420>(y, u, v, taps, samples);
  }
}

void convert_to_planes(PixelFormat format, const uint32_t* samples, const ColumnTaps& taps,
                       const PixelTransform& transform, float* r_out, float* g_out, float* b_out) {
  if (format == PixelFormat::kNV12) {
    convert<PixelFormat::kNV12>(samples, taps, transform, r_out, g_out, b_out);
  } else {
    convert<PixelFormat::kI420>(samples, taps, transform, r_out, g_out, b_out);
  }
}

void interleave(const float* __restrict first, const float* __restrict second, const float* __restrict third, int n,
                float* __restrict out) {
  for (int j = 0; j < n; ++j) {
    out[3 * j] = first[j];
    out[3 * j + 1] = second[j];
    out[3 * j + 2] = third[j];
  }
}

}  // namespace edgefuse
