// Colours of the overlay: one per class, chosen to stay apart from each other and from skin,
// road and sky, converted to the frame's YUV (studio range, BT.601 or BT.709).
#pragma once

#include <cstdint>

namespace edgefuse {

struct BgrColor {
  uint8_t b = 0, g = 0, r = 0;
};

struct YuvColor {
  uint8_t y = 16, u = 128, v = 128;
};

// The palette entry for a class (classes beyond the palette reuse it cyclically).
BgrColor class_color(int class_id);

// Zones, counting lines and masks: colours no class has, so they never read as a detection.
inline constexpr BgrColor kZoneColor{0, 215, 255};    // gold
inline constexpr BgrColor kLineColor{255, 255, 255};  // white
inline constexpr BgrColor kMaskColor{96, 96, 96};     // dark grey: where nothing is reported

// Studio-range YUV of an sRGB colour under the BT.709 (HD) or BT.601 matrix.
YuvColor to_yuv(BgrColor color, bool bt709);

}  // namespace edgefuse
