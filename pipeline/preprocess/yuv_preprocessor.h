// Decoded 4:2:0 frame -> model input tensor in one pass: letterbox resize (bilinear, OpenCV
// INTER_LINEAR's pixel-centre mapping), YUV -> RGB, value scaling and layout, with no
// intermediate full-resolution image. Resizing before converting colour differs from OpenCV's
// convert-then-resize chain only in rounding and in where out-of-gamut values are clamped.
#pragma once

#include <optional>

#include "models/detect/input_spec.h"
#include "models/detect/letterbox.h"
#include "pipeline/preprocess/yuv_image.h"
#include "pipeline/preprocess/yuv_resize_plan.h"
#include "pipeline/preprocess/yuv_row_kernels.h"
#include "pipeline/preprocess/yuv_tensor_step.h"
#include "runtime/status.h"
#include "runtime/thread_pool.h"

namespace edgefuse {

// Keeps the resize plan of the last geometry it saw, so one instance per stream (and model)
// builds its tables once. Not thread-safe: one caller at a time (the pool splits rows inside).
class YuvPreprocessor {
 public:
  // Writes every element of dst (spec.width * spec.height * 3 floats: one batch element in
  // spec.layout), padding included, and returns the letterbox used (for unletterbox). Rows are
  // split across `pool` when given. Errors name the bad image or spec; dst is untouched then.
  Result<Letterbox> run(const YuvImage& image, const ModelInputSpec& spec, YuvMatrix matrix, float* dst,
                        ThreadPool* pool = nullptr);

 private:
  std::optional<YuvResizePlan> plan_;
};

// The colour matrix, the 16 / 128 offsets, the fixed-point unit and the spec's scale and offset
// folded into one affine map per channel.
PixelTransform make_pixel_transform(YuvMatrix matrix, const ModelInputSpec& spec);

// The per-pixel form of the same preprocessing (the GPU's): reads `image`'s planes and `plan`'s
// tables where they are now (host memory; the GPU preprocessor swaps in device copies) and writes
// dst. `plan` must fit the image and spec.
YuvTensorStep make_yuv_tensor_step(const YuvImage& image, const YuvResizePlan& plan, const ModelInputSpec& spec,
                                   YuvMatrix matrix, float* dst);

// One-off form of YuvPreprocessor::run (a per-thread instance caches the plan between calls).
Result<Letterbox> preprocess_yuv(const YuvImage& image, const ModelInputSpec& spec, YuvMatrix matrix, float* dst,
                                 ThreadPool* pool = nullptr);

}  // namespace edgefuse
