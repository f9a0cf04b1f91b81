// In-memory decoded frames for the overlay tests.
#include "tests/overlay/synthetic_frame.h"

#include <memory>
#include <vector>

namespace edgefuse::test {
namespace {

struct OwnedPixels : DecodedFrame::Holder {
  std::vector<uint8_t> bytes;
};

uint8_t luma_at(int x, int y) {
  return static_cast<uint8_t>(16 + (x * 7 + y * 13) % 220);
}
uint8_t u_at(int x, int y) {
  return static_cast<uint8_t>(16 + (x * 5 + y * 3) % 224);
}
uint8_t v_at(int x, int y) {
  return static_cast<uint8_t>(16 + (x * 3 + y * 11) % 224);
}

DecodedFrame make_frame(int width, int height, FramePixelFormat format, bool textured) {
  auto pixels = std::make_shared<OwnedPixels>();
  const int cw = (width + 1) / 2, ch = (height + 1) / 2;
  const int y_stride = width + 64;
  const int c_stride = (format == FramePixelFormat::kNV12 ? 2 * cw : cw) + 64;
  const size_t y_size = static_cast<size_t>(y_stride) * height, c_size = static_cast<size_t>(c_stride) * ch;
  pixels->bytes.assign(y_size + c_size * (format == FramePixelFormat::kNV12 ? 1 : 2), 0xEE);  // padding: 0xEE
  FramePlanes planes;
  uint8_t* y_plane = pixels->bytes.data();
  uint8_t* c1 = y_plane + y_size;
  uint8_t* c2 = c1 + c_size;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) y_plane[static_cast<size_t>(y) * y_stride + x] = textured ? luma_at(x, y) : 128;
  }
  for (int y = 0; y < ch; ++y) {
    for (int x = 0; x < cw; ++x) {
      const uint8_t u = textured ? u_at(x, y) : 128, v = textured ? v_at(x, y) : 128;
      if (format == FramePixelFormat::kNV12) {
        c1[static_cast<size_t>(y) * c_stride + 2 * x] = u;
        c1[static_cast<size_t>(y) * c_stride + 2 * x + 1] = v;
      } else {
        c1[static_cast<size_t>(y) * c_stride + x] = u;
        c2[static_cast<size_t>(y) * c_stride + x] = v;
      }
    }
  }
  planes.data[0] = y_plane;
  planes.data[1] = c1;
  planes.data[2] = format == FramePixelFormat::kNV12 ? nullptr : c2;
  planes.stride[0] = y_stride;
  planes.stride[1] = c_stride;
  planes.stride[2] = format == FramePixelFormat::kNV12 ? 0 : c_stride;
  return {std::move(pixels), format, width, height, planes};
}

}  // namespace

DecodedFrame make_textured_frame(int width, int height, FramePixelFormat format) {
  return make_frame(width, height, format, true);
}

DecodedFrame make_grey_frame(int width, int height) {
  return make_frame(width, height, FramePixelFormat::kNV12, false);
}

}  // namespace edgefuse::test
