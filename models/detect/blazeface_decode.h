// BlazeFace (MediaPipe short- and full-range face detectors): anchors and decoding into face
// boxes with 6 landmarks, in input pixels.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "models/detect/decode_result.h"

namespace edgefuse {

inline constexpr int64_t kBlazeFaceAnchorCount = 896;
inline constexpr int64_t kBlazeFaceRegressorChannels = 16;  // cx, cy, w, h, then 6 keypoints (x, y)
inline constexpr int kBlazeFaceKeypoints = 6;
// A merged row (models/detector/blazeface_rows.h): the score logit, then the 16 regressors.
inline constexpr int64_t kBlazeFaceRowChannels = 1 + kBlazeFaceRegressorChannels;

// The anchor grids, in output order: square, the anchors of a cell all at its centre.
struct BlazeFaceGrid {
  int cells;  // per side
  int anchors_per_cell;
};
inline constexpr BlazeFaceGrid kBlazeFaceGrids[] = {{16, 2}, {8, 6}};

// One SSD-style anchor. Its size is fixed at 1 (the full input), so only the centre matters.
struct Anchor {
  float cx = 0, cy = 0;  // input pixels
};

// The 896 anchors of a square input of input_size pixels, in output order: a 16x16 grid with 2
// anchors per cell (the first output head, 512 anchors), then an 8x8 grid with 6 anchors per
// cell (the second head, 384). The grids are the same for the 128 front and 256 back models;
// only the pixel scale differs. Empty when input_size <= 0.
std::vector<Anchor> blazeface_anchors(int input_size);

// Decodes one output head: `scores` holds one logit per anchor, `regressors` holds 16 values
// per anchor (offsets in input pixels relative to the anchor centre). Keeps anchors whose
// sigmoid(logit) >= score_threshold, as class 0 with 6 keypoints, boxes in input pixels.
// Errors when the head's anchor count (scores_count, regressor_channels) does not fit `anchors`.
DecodeResult decode_blazeface(const float* scores, int64_t scores_count, const float* regressors,
                              int64_t regressor_channels, std::span<const Anchor> anchors, float score_threshold);

// The same over rows of kBlazeFaceRowChannels (logit, then regressors), one per anchor: both heads
// merged, or one head's part of them. Errors when the rows do not fit `anchors`.
DecodeResult decode_blazeface_rows(const float* rows, int64_t row_count, int64_t channels,
                                   std::span<const Anchor> anchors, float score_threshold);

}  // namespace edgefuse
