// An owned, writable I420 image (the overlay's canvas), laid out exactly as GStreamer's default
// I420 caps expect (strides rounded up to 4), so a buffer can wrap it without a copy or a video meta.
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/video/decoded_frame.h"

namespace edgefuse {

class I420Image {
 public:
  I420Image() = default;
  I420Image(int width, int height);

  int width() const { return width_; }
  int height() const { return height_; }
  int chroma_width() const { return (width_ + 1) / 2; }
  int chroma_height() const { return (height_ + 1) / 2; }
  // plane 0: Y, 1: U, 2: V.
  uint8_t* plane(int index) { return bytes_.data() + offset_[index]; }
  const uint8_t* plane(int index) const { return bytes_.data() + offset_[index]; }
  int stride(int index) const { return stride_[index]; }
  uint8_t* data() { return bytes_.data(); }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

  bool bt709 = false;  // colour matrix of the pixels (carried over from the decoded frame)

 private:
  int width_ = 0, height_ = 0;
  int stride_[3] = {0, 0, 0};
  size_t offset_[3] = {0, 0, 0};
  std::vector<uint8_t> bytes_;
};

// Copies a decoded NV12 or I420 frame into `out` (resized to the frame's size), de-interleaving NV12 chroma.
void copy_to_i420(const DecodedFrame& frame, I420Image& out);

// A smaller copy `width` pixels wide (rounded down to a multiple of 8, height kept in proportion and even),
// area-averaged; a copy when the image is no wider than that.
I420Image downscale_i420(const I420Image& image, int width);

// Baseline JPEG of the image (BT.601 conversion to BGR first), quality 1..100.
std::vector<uint8_t> encode_jpeg(const I420Image& image, int quality);

}  // namespace edgefuse
