#include "pipeline/preprocess/yuv_image.h"

namespace edgefuse {

const char* pixel_format_name(PixelFormat format) {
  switch (format) {
    case PixelFormat::kI420:
      return "I420";
    case PixelFormat::kNV12:
      return "NV12";
  }
  return "unknown";
}

namespace {

Status check_plane(const YuvImage& image, const char* name, const uint8_t* plane, int stride, int row_bytes) {
  if (plane == nullptr) return invalid_argument(pixel_format_name(image.format), " image: ", name, " plane is null");
  if (stride < row_bytes) {
    return invalid_argument(pixel_format_name(image.format), " image ", image.width, "x", image.height, ": ", name,
                            " stride ", stride, " is less than its row of ", row_bytes, " bytes");
  }
  return Status::ok();
}

}  // namespace

Status validate_yuv_image(const YuvImage& image) {
  const char* format = pixel_format_name(image.format);
  if (image.width <= 0 || image.height <= 0) {
    return invalid_argument(format, " image size ", image.width, "x", image.height, " is not positive");
  }
  if (image.width % 2 != 0 || image.height % 2 != 0) {
    return invalid_argument(format, " image size ", image.width, "x", image.height,
                            " is odd; 4:2:0 chroma needs even sizes");
  }
  EF_RETURN_IF_ERROR(check_plane(image, "Y", image.y, image.y_stride, image.width));
  if (image.format == PixelFormat::kNV12) return check_plane(image, "UV", image.u, image.u_stride, image.width);
  EF_RETURN_IF_ERROR(check_plane(image, "U", image.u, image.u_stride, image.width / 2));
  return check_plane(image, "V", image.v, image.v_stride, image.width / 2);
}

}  // namespace edgefuse
