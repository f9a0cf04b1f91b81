#include "models/detector/preprocess.h"

#include <algorithm>

#include <opencv2/imgproc.hpp>

namespace edgefuse {
namespace {

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

Result<PreprocessedImage> preprocess_image(const cv::Mat& bgr_image, const ModelInputSpec& spec) {
  EF_RETURN_IF_ERROR(check_image(bgr_image).with_context("preprocessing"));
  EF_ASSERT(spec.width > 0 && spec.height > 0);
  PreprocessedImage out;
  out.letterbox = compute_letterbox(bgr_image.cols, bgr_image.rows, spec.width, spec.height, spec.centre);
  const cv::Mat resized = resize_for(bgr_image, out.letterbox);

  const bool planar = spec.layout == TensorLayout::kNCHW;
  out.input =
      Tensor::empty(DType::kF32, planar ? Shape{1, 3, spec.height, spec.width} : Shape{1, spec.height, spec.width, 3});
  float* dst = out.input.data<float>();
  std::fill(dst, dst + out.input.numel(), spec.pad_pixel * spec.scale + spec.offset);
  // Where channel c of the tensor comes from in a BGR pixel, and the strides of a pixel and of a
  // channel in the tensor.
  const bool rgb = spec.channels == ChannelOrder::kRGB;
  const int source_channel[3] = {rgb ? 2 : 0, 1, rgb ? 0 : 2};
  const int64_t plane = static_cast<int64_t>(spec.width) * spec.height;
  const int64_t pixel_stride = planar ? 1 : 3;
  const int64_t channel_stride = planar ? plane : 1;
  for (int y = 0; y < resized.rows; ++y) {
    const uint8_t* src = resized.ptr<uint8_t>(y);
    float* row =
        dst + (static_cast<int64_t>(y + out.letterbox.pad_y) * spec.width + out.letterbox.pad_x) * pixel_stride;
    for (int c = 0; c < 3; ++c) {
      float* channel = row + c * channel_stride;
      for (int x = 0; x < resized.cols; ++x) {
        channel[x * pixel_stride] = static_cast<float>(src[3 * x + source_channel[c]]) * spec.scale + spec.offset;
      }
    }
  }
  return out;
}

}  // namespace edgefuse
