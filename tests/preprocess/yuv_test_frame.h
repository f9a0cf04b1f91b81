// Test frames: a BGR image converted to 4:2:0 YUV by OpenCV (COLOR_BGR2YUV_I420, BT.601), held
// as separately allocated planes with chosen row padding, in I420 or NV12.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "pipeline/preprocess/yuv_image.h"

namespace edgefuse::test {

class YuvTestFrame {
 public:
  // bgr: 8-bit 3-channel, even size. Each plane row gets `row_padding` extra bytes (filled with
  // a value no correct reader would use).
  YuvTestFrame(const cv::Mat& bgr, PixelFormat format, int row_padding = 0);

  YuvImage view() const { return view_; }
  // OpenCV's full-resolution BGR conversion of this frame (COLOR_YUV2BGR_I420 / _NV12).
  cv::Mat to_bgr() const;

 private:
  YuvImage view_;
  std::vector<uint8_t> y_, u_, v_;
  cv::Mat packed_;  // the contiguous I420 or NV12 buffer OpenCV's cvtColor reads
};

// Uniform random 8-bit BGR noise: the worst case for chroma subsampling (many out-of-gamut colours).
cv::Mat random_bgr(int width, int height, std::mt19937& rng);
// Random smooth content: a few random colour gradients plus mild noise, in gamut like camera frames.
cv::Mat random_smooth_bgr(int width, int height, std::mt19937& rng);

}  // namespace edgefuse::test
