#include "pipeline/preprocess/yuv_resize_plan.h"

#include <cmath>

#include "pipeline/preprocess/linear_taps.h"

namespace edgefuse {

bool YuvResizePlan::fits(PixelFormat image_format, int width, int height, const ModelInputSpec& spec) const {
  return format == image_format && src_width == width && src_height == height && dst_width == spec.width &&
         dst_height == spec.height && centre == spec.centre;
}

YuvResizePlan make_yuv_resize_plan(PixelFormat format, int src_width, int src_height, const ModelInputSpec& spec) {
  YuvResizePlan plan;
  plan.format = format;
  plan.src_width = src_width;
  plan.src_height = src_height;
  plan.dst_width = spec.width;
  plan.dst_height = spec.height;
  plan.centre = spec.centre;
  plan.letterbox = compute_letterbox(src_width, src_height, spec.width, spec.height, spec.centre);

  LinearTaps columns = linear_taps(src_width, plan.letterbox.resized_w);
  // NV12 keeps U and V interleaved, so a chroma column is two elements apart.
  const int32_t chroma_step = format == PixelFormat::kNV12 ? 2 : 1;
  plan.chroma_columns.reserve(columns.index.size());
  plan.chroma_weights.reserve(columns.index.size());
  for (size_t j = 0; j < columns.index.size(); ++j) {
    const int32_t x = columns.index[j];
    const bool straddles = (x >> 1) != ((x + 1) >> 1);  // x odd: x and x + 1 lie over two chroma columns
    plan.chroma_columns.push_back((x >> 1) * chroma_step);
    plan.chroma_weights.push_back(straddles ? columns.weight[j] : 0.0f);
  }
  plan.luma_columns = std::move(columns.index);
  plan.column_weights = std::move(columns.weight);

  LinearTaps rows = linear_taps(src_height, plan.letterbox.resized_h);
  plan.row_weights256.reserve(rows.weight.size());
  for (const float weight : rows.weight)
    plan.row_weights256.push_back(static_cast<uint16_t>(std::lround(weight * 256)));
  plan.rows = std::move(rows.index);
  return plan;
}

}  // namespace edgefuse
