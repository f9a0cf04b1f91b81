#include "tests/preprocess/yuv_test_frame.h"

#include <opencv2/imgproc.hpp>

namespace edgefuse::test {
namespace {

constexpr uint8_t kRowPaddingByte = 0xA5;

// Copies rows of `row_bytes` from src into a buffer with `stride` bytes per row.
std::vector<uint8_t> padded_plane(const uint8_t* src, int row_bytes, int rows, int stride) {
  std::vector<uint8_t> plane(static_cast<size_t>(stride) * rows, kRowPaddingByte);
  for (int r = 0; r < rows; ++r) std::copy_n(src + static_cast<size_t>(r) * row_bytes, row_bytes, &plane[r * stride]);
  return plane;
}

}  // namespace

YuvTestFrame::YuvTestFrame(const cv::Mat& bgr, PixelFormat format, int row_padding) {
  const int width = bgr.cols;
  const int height = bgr.rows;
  cv::Mat i420;
  cv::cvtColor(bgr, i420, cv::COLOR_BGR2YUV_I420);  // (height * 3 / 2) x width: Y, U, V
  const uint8_t* y = i420.ptr<uint8_t>(0);
  const uint8_t* u = y + static_cast<size_t>(width) * height;
  const uint8_t* v = u + static_cast<size_t>(width / 2) * (height / 2);
  view_.format = format;
  view_.width = width;
  view_.height = height;
  view_.y_stride = width + row_padding;
  y_ = padded_plane(y, width, height, view_.y_stride);
  view_.y = y_.data();
  if (format == PixelFormat::kI420) {
    packed_ = i420;
    view_.u_stride = view_.v_stride = width / 2 + row_padding;
    u_ = padded_plane(u, width / 2, height / 2, view_.u_stride);
    v_ = padded_plane(v, width / 2, height / 2, view_.v_stride);
    view_.u = u_.data();
    view_.v = v_.data();
    return;
  }
  packed_ = i420.clone();
  uint8_t* uv = packed_.ptr<uint8_t>(0) + static_cast<size_t>(width) * height;
  const size_t quarter = static_cast<size_t>(width / 2) * (height / 2);
  for (size_t i = 0; i < quarter; ++i) {
    uv[2 * i] = u[i];
    uv[2 * i + 1] = v[i];
  }
  view_.u_stride = width + row_padding;
  u_ = padded_plane(uv, width, height / 2, view_.u_stride);
  view_.u = u_.data();
}

cv::Mat YuvTestFrame::to_bgr() const {
  cv::Mat bgr;
  cv::cvtColor(packed_, bgr, view_.format == PixelFormat::kI420 ? cv::COLOR_YUV2BGR_I420 : cv::COLOR_YUV2BGR_NV12);
  return bgr;
}

cv::Mat random_bgr(int width, int height, std::mt19937& rng) {
  cv::Mat bgr(height, width, CV_8UC3);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int y = 0; y < height; ++y) {
    auto* row = bgr.ptr<uint8_t>(y);
    for (int i = 0; i < 3 * width; ++i) row[i] = static_cast<uint8_t>(byte(rng));
  }
  return bgr;
}

cv::Mat random_smooth_bgr(int width, int height, std::mt19937& rng) {
  std::uniform_real_distribution<double> coefficient(-1.0, 1.0);
  std::uniform_int_distribution<int> noise(-6, 6);
  double base[3], gx[3], gy[3];
  for (int c = 0; c < 3; ++c) {
    base[c] = 128 + 60 * coefficient(rng);
    gx[c] = 60 * coefficient(rng);
    gy[c] = 60 * coefficient(rng);
  }
  cv::Mat bgr(height, width, CV_8UC3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const double fx = static_cast<double>(x) / width - 0.5;
      const double fy = static_cast<double>(y) / height - 0.5;
      for (int c = 0; c < 3; ++c) {
        bgr.at<cv::Vec3b>(y, x)[c] = cv::saturate_cast<uint8_t>(base[c] + gx[c] * fx + gy[c] * fy + noise(rng));
      }
    }
  }
  return bgr;
}

}  // namespace edgefuse::test
