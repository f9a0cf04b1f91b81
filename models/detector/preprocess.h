// Image -> model input tensor as a ModelInputSpec describes it: letterbox (cv::resize,
// INTER_LINEAR, aspect ratio kept), then the spec's channel order, value range and layout.
#pragma once

#include <opencv2/core/mat.hpp>

#include "models/detect/input_spec.h"
#include "models/detect/letterbox.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

namespace edgefuse {

struct PreprocessedImage {
  Tensor input;         // batch of one, ready for Executor::run
  Letterbox letterbox;  // where the image lies in the input, for unletterbox()
};

// Any family's input: an 8-bit, 3-channel BGR image (OpenCV's layout) of any size.
Result<PreprocessedImage> preprocess_image(const cv::Mat& bgr_image, const ModelInputSpec& spec);

// YOLOX: f32 NCHW [1, 3, H, W], BGR, values 0..255 (no normalisation), image at the top-left,
// padding 114 — exactly the preprocessing of the YOLOX reference demo.
inline Result<PreprocessedImage> preprocess_yolox(const cv::Mat& bgr_image, int input_width, int input_height) {
  return preprocess_image(bgr_image, yolox_input_spec(input_width, input_height));
}

// BlazeFace: f32 NHWC [1, S, S, 3], RGB, values v / 127.5 - 1 in [-1, 1], image centred (as
// MediaPipe's letterbox does), padding black (-1). Centring keeps faces near the border of a
// wide frame away from the input's edge anchors on both sides alike.
inline Result<PreprocessedImage> preprocess_blazeface(const cv::Mat& bgr_image, int input_size) {
  return preprocess_image(bgr_image, blazeface_input_spec(input_size));
}

}  // namespace edgefuse
