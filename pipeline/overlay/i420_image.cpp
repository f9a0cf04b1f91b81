// The overlay's canvas: copies from decoded frames, area downscaling and JPEG encoding.
#include "pipeline/overlay/i420_image.h"

#include <algorithm>
#include <cstring>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "runtime/status.h"

namespace edgefuse {
namespace {

int round_up_4(int value) {
  return (value + 3) & ~3;
}

cv::Mat plane_mat(I420Image& image, int index) {
  const int rows = index == 0 ? image.height() : image.chroma_height();
  const int cols = index == 0 ? image.width() : image.chroma_width();
  return {rows, cols, CV_8UC1, image.plane(index), static_cast<size_t>(image.stride(index))};
}

cv::Mat plane_mat(const I420Image& image, int index) {
  return plane_mat(const_cast<I420Image&>(image), index);
}

}  // namespace

I420Image::I420Image(int width, int height) : width_(width), height_(height) {
  EF_ASSERT(width > 0 && height > 0, "I420Image of ", width, "x", height);
  stride_[0] = round_up_4(width);
  stride_[1] = stride_[2] = round_up_4(chroma_width());
  offset_[1] = static_cast<size_t>(stride_[0]) * height;
  offset_[2] = offset_[1] + static_cast<size_t>(stride_[1]) * chroma_height();
  bytes_.resize(offset_[2] + static_cast<size_t>(stride_[2]) * chroma_height());
}

void copy_to_i420(const DecodedFrame& frame, I420Image& out) {
  if (out.width() != frame.width() || out.height() != frame.height()) out = I420Image(frame.width(), frame.height());
  out.bt709 = frame.bt709;
  const FramePlanes& in = frame.planes();
  for (int y = 0; y < out.height(); ++y) {
    std::memcpy(out.plane(0) + static_cast<size_t>(y) * out.stride(0),
                in.data[0] + static_cast<size_t>(y) * in.stride[0], static_cast<size_t>(out.width()));
  }
  const int cw = out.chroma_width();
  for (int y = 0; y < out.chroma_height(); ++y) {
    uint8_t* u = out.plane(1) + static_cast<size_t>(y) * out.stride(1);
    uint8_t* v = out.plane(2) + static_cast<size_t>(y) * out.stride(2);
    if (frame.format() == FramePixelFormat::kNV12) {
      const uint8_t* uv = in.data[1] + static_cast<size_t>(y) * in.stride[1];
      for (int x = 0; x < cw; ++x) {
        u[x] = uv[2 * x];
        v[x] = uv[2 * x + 1];
      }
    } else {
      std::memcpy(u, in.data[1] + static_cast<size_t>(y) * in.stride[1], static_cast<size_t>(cw));
      std::memcpy(v, in.data[2] + static_cast<size_t>(y) * in.stride[2], static_cast<size_t>(cw));
    }
  }
}

I420Image downscale_i420(const I420Image& image, int width) {
  const int out_width = std::max(8, std::min(width, image.width()) / 8 * 8);
  int out_height = static_cast<int>(static_cast<int64_t>(image.height()) * out_width / image.width());
  out_height = std::max(2, out_height & ~1);
  I420Image out(out_width, out_height);
  out.bt709 = image.bt709;
  for (int p = 0; p < 3; ++p) {
    cv::Mat dst = plane_mat(out, p);
    cv::resize(plane_mat(image, p), dst, dst.size(), 0, 0, cv::INTER_AREA);
  }
  return out;
}

std::vector<uint8_t> encode_jpeg(const I420Image& image, int quality) {
  // OpenCV wants the three planes back to back without padding; copy when the strides say otherwise.
  const int w = image.width(), h = image.height(), cw = image.chroma_width();
  if (w % 2 != 0 || h % 2 != 0 || image.stride(0) != w || image.stride(1) != cw) {
    return encode_jpeg(downscale_i420(image, image.width()), quality);  // yields a packed, even-sized image
  }
  const cv::Mat packed(h * 3 / 2, w, CV_8UC1, const_cast<uint8_t*>(image.data()));
  cv::Mat bgr;
  cv::cvtColor(packed, bgr, cv::COLOR_YUV2BGR_I420);
  std::vector<uint8_t> jpeg;
  cv::imencode(".jpg", bgr, jpeg, {cv::IMWRITE_JPEG_QUALITY, std::clamp(quality, 1, 100)});
  return jpeg;
}

}  // namespace edgefuse
