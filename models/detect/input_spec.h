// What one detector family's input tensor wants from an image: size, layout, channel order, value
// range and letterbox placement. Lets preprocessing other than the OpenCV path in
// models/detector/preprocess.cpp (e.g. straight from decoded YUV frames) produce the same tensor.
#pragma once

namespace edgefuse {

enum class TensorLayout { kNCHW, kNHWC };
enum class ChannelOrder { kBGR, kRGB };

struct ModelInputSpec {
  int width = 0, height = 0;
  TensorLayout layout = TensorLayout::kNCHW;
  ChannelOrder channels = ChannelOrder::kBGR;
  float scale = 1, offset = 0;  // tensor value = pixel (0..255) * scale + offset
  float pad_pixel = 114;        // padding colour in pixel units (0..255), same for all channels
  bool centre = false;          // letterbox centred (true) or at the top-left (false)
};

// YOLOX: f32 NCHW [1, 3, H, W], BGR, values 0..255, image at the top-left, padding 114.
inline ModelInputSpec yolox_input_spec(int width, int height) {
  ModelInputSpec spec;
  spec.width = width;
  spec.height = height;
  spec.layout = TensorLayout::kNCHW;
  spec.channels = ChannelOrder::kBGR;
  spec.scale = 1.0f;
  spec.offset = 0.0f;
  spec.pad_pixel = 114.0f;
  spec.centre = false;
  return spec;
}

// YOLOv5 and YOLOv8 as Ultralytics exports them: f32 NCHW [1, 3, H, W], RGB, values v / 255,
// image centred, padding 114 (Ultralytics' LetterBox defaults).
inline ModelInputSpec ultralytics_input_spec(int width, int height) {
  ModelInputSpec spec;
  spec.width = width;
  spec.height = height;
  spec.layout = TensorLayout::kNCHW;
  spec.channels = ChannelOrder::kRGB;
  spec.scale = 1.0f / 255.0f;
  spec.offset = 0.0f;
  spec.pad_pixel = 114.0f;
  spec.centre = true;
  return spec;
}

// BlazeFace: f32 NHWC [1, S, S, 3], RGB, values v / 127.5 - 1, image centred, padding black (-1).
inline ModelInputSpec blazeface_input_spec(int size) {
  ModelInputSpec spec;
  spec.width = size;
  spec.height = size;
  spec.layout = TensorLayout::kNHWC;
  spec.channels = ChannelOrder::kRGB;
  spec.scale = 1.0f / 127.5f;
  spec.offset = -1.0f;
  spec.pad_pixel = 0.0f;
  spec.centre = true;
  return spec;
}

}  // namespace edgefuse
