// The per-geometry tables of fused YUV preprocessing: which source rows and columns each output
// pixel of the letterboxed image reads, and with what weights. Built once per (format, source
// size, input geometry) and reused for every frame of a stream.
#pragma once

#include <cstdint>
#include <vector>

#include "models/detect/input_spec.h"
#include "models/detect/letterbox.h"
#include "pipeline/preprocess/yuv_image.h"

namespace edgefuse {

struct YuvResizePlan {
  PixelFormat format = PixelFormat::kI420;
  int src_width = 0, src_height = 0;
  int dst_width = 0, dst_height = 0;
  bool centre = false;
  Letterbox letterbox;

  // Per resized column (letterbox.resized_w): luma columns x and x + 1 blended by column_weights;
  // the chroma column under x (an element index of the blended chroma row: NV12 interleaved, I420
  // one plane) and the weight of its right neighbour: 0 when x and x + 1 share a chroma column.
  std::vector<int32_t> luma_columns;
  std::vector<float> column_weights;
  std::vector<int32_t> chroma_columns;
  std::vector<float> chroma_weights;
  // Per resized row (letterbox.resized_h): luma rows r and r + 1, weight of r + 1 in 1/256 units.
  std::vector<int32_t> rows;
  std::vector<uint16_t> row_weights256;

  bool fits(PixelFormat image_format, int width, int height, const ModelInputSpec& spec) const;
};

// Source sizes at least 2 and spec sizes positive (callers validate first).
YuvResizePlan make_yuv_resize_plan(PixelFormat format, int src_width, int src_height, const ModelInputSpec& spec);

}  // namespace edgefuse
