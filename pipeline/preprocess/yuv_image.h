// A decoded 4:2:0 video frame as GStreamer hands it over: a view of planes it does not own.
#pragma once

#include <cstdint>

#include "runtime/status.h"

namespace edgefuse {

enum class PixelFormat { kI420, kNV12 };

// Limited ("TV") range: Y in 16..235, U and V in 16..240. BT.601 is what OpenCV's
// COLOR_YUV2BGR_I420 / COLOR_YUV2BGR_NV12 use; BT.709 is what HD streams usually carry.
enum class YuvMatrix { kBt601, kBt709 };

struct YuvImage {
  PixelFormat format = PixelFormat::kI420;
  int width = 0, height = 0;  // luma size; both even
  const uint8_t* y = nullptr;
  int y_stride = 0;            // bytes between rows
  const uint8_t* u = nullptr;  // NV12: the interleaved UV plane (U first); v unused
  int u_stride = 0;
  const uint8_t* v = nullptr;
  int v_stride = 0;
};

const char* pixel_format_name(PixelFormat format);

// Checks sizes (positive, even), planes (non-null) and strides (at least the plane's row bytes).
Status validate_yuv_image(const YuvImage& image);

}  // namespace edgefuse
