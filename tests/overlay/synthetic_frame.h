// Decoded frames made in memory (no GStreamer): a textured NV12 or I420 picture with padded
// strides, so that tests can tell every pixel the overlay changed from the ones it left alone.
#pragma once

#include <cstdint>

#include "pipeline/video/decoded_frame.h"

namespace edgefuse::test {

// Y, U and V vary with position (no two neighbours alike); rows are padded by 64 bytes.
DecodedFrame make_textured_frame(int width, int height, FramePixelFormat format);

// A flat mid-grey frame (Y 128, neutral chroma).
DecodedFrame make_grey_frame(int width, int height);

}  // namespace edgefuse::test
