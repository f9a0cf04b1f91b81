#include "models/detector/preprocess.h"

#include <opencv2/imgproc.hpp>

namespace edgefuse {
namespace {

inline constexpr float kYoloxPadValue = 114.0f;
inline constexpr float kBlazeFacePadValue = -1.0f;  // black after scaling to [-1, 1]

Status check_image(const cv::Mat& image) {
  if (image.empty()) return invalid_argument("image is empty");
  if (image.type() != CV_8UC3) {
    return invalid_argument("image must be 8-bit, 3-channel BGR (CV_8UC3), got type ", image.type(), " with ",
                            image.channels(), " channels");
  }
  return Status::ok();
}

// The image resized to the letterbox's inner size; 8-bit like the source, so values round as
// cv2.resize does in the reference implementations.
cv::Mat resize_for(const cv::Mat& image, const Letterbox& letterbox) {
  if (image.cols == letterbox.resized_w && image.rows == letterbox.resized_h) return image;
  cv::Mat resized;
  cv::resize(image, resized, cv::Size(letterbox.resized_w, letterbox.resized_h), 0, 0, cv::INTER_LINEAR);
  return resized;
}

}  // namespace

Result<PreprocessedImage> preprocess_yolox(const cv::Mat& bgr_image, int input_width, int input_height) {
  EF_RETURN_IF_ERROR(check_image(bgr_image).with_context("YOLOX preprocessing"));
  EF_ASSERT(input_width > 0 && input_height > 0);
  PreprocessedImage out;
  out.letterbox = compute_letterbox(bgr_image.cols, bgr_image.rows, input_width, input_height, /*centre=*/false);
  const cv::Mat resized = resize_for(bgr_image, out.letterbox);

  out.input = Tensor::empty(DType::kF32, {1, 3, input_height, input_width});
  float* planes = out.input.data<float>();
  const int64_t plane_size = static_cast<int64_t>(input_width) * input_height;
  std::fill(planes, planes + 3 * plane_size, kYoloxPadValue);
  for (int y = 0; y < resized.rows; ++y) {
    const uint8_t* src = resized.ptr<uint8_t>(y);
    const int64_t row_offset = static_cast<int64_t>(y + out.letterbox.pad_y) * input_width + out.letterbox.pad_x;
    for (int x = 0; x < resized.cols; ++x) {
      for (int c = 0; c < 3; ++c) planes[c * plane_size + row_offset + x] = src[3 * x + c];
    }
  }
  return out;
}

Result<PreprocessedImage> preprocess_blazeface(const cv::Mat& bgr_image, int input_size) {
  EF_RETURN_IF_ERROR(check_image(bgr_image).with_context("BlazeFace preprocessing"));
  EF_ASSERT(input_size > 0);
  PreprocessedImage out;
  out.letterbox = compute_letterbox(bgr_image.cols, bgr_image.rows, input_size, input_size, /*centre=*/true);
  const cv::Mat resized = resize_for(bgr_image, out.letterbox);

  out.input = Tensor::empty(DType::kF32, {1, input_size, input_size, 3});
  float* pixels = out.input.data<float>();
  std::fill(pixels, pixels + out.input.numel(), kBlazeFacePadValue);
  for (int y = 0; y < resized.rows; ++y) {
    const uint8_t* src = resized.ptr<uint8_t>(y);
    float* dst = pixels + (static_cast<int64_t>(y + out.letterbox.pad_y) * input_size + out.letterbox.pad_x) * 3;
    for (int x = 0; x < resized.cols; ++x) {
      for (int c = 0; c < 3; ++c) dst[3 * x + c] = static_cast<float>(src[3 * x + (2 - c)]) / 127.5f - 1.0f;
    }
  }
  return out;
}

}  // namespace edgefuse
