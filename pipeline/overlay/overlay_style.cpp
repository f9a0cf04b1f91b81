// The class palette and its YUV conversion.
#include "pipeline/overlay/overlay_style.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace edgefuse {

BgrColor class_color(int class_id) {
  // Saturated, mutually distinct hues; class 0 (COCO "person") gets the most visible one.
  static constexpr std::array<BgrColor, 12> kPalette = {{
      {0, 255, 0},      // green
      {255, 128, 0},    // azure
      {0, 128, 255},    // orange
      {255, 0, 255},    // magenta
      {0, 255, 255},    // yellow
      {255, 255, 0},    // cyan
      {0, 0, 255},      // red
      {255, 0, 128},    // violet
      {128, 255, 0},    // spring green
      {0, 64, 160},     // brown
      {203, 192, 255},  // pink
      {255, 0, 0},      // blue
  }};
  const int index = ((class_id % 12) + 12) % 12;
  return kPalette[static_cast<size_t>(index)];
}

YuvColor to_yuv(BgrColor color, bool bt709) {
  const double kr = bt709 ? 0.2126 : 0.299, kb = bt709 ? 0.0722 : 0.114;
  const double r = color.r / 255.0, g = color.g / 255.0, b = color.b / 255.0;
  const double luma = kr * r + (1 - kr - kb) * g + kb * b;
  const double pb = (b - luma) / (2 * (1 - kb)), pr = (r - luma) / (2 * (1 - kr));
  auto to_byte = [](double value) { return static_cast<uint8_t>(std::clamp(std::lround(value), 0L, 255L)); };
  return {to_byte(16 + 219 * luma), to_byte(128 + 224 * pb), to_byte(128 + 224 * pr)};
}

}  // namespace edgefuse
