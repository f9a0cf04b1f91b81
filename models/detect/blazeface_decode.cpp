// BlazeFace outputs, two heads, each a scores tensor and a regressors tensor (batch dim 1):
//
//   head 0: scores [1, 512, 1]   regressors [1, 512, 16]   16x16 grid, 2 anchors per cell
//   head 1: scores [1, 384, 1]   regressors [1, 384, 16]    8x8 grid, 6 anchors per cell
//
//   anchor index within a head = (row * cells + col) * anchors_per_cell + k
//
//   regressors row (input pixels, relative to the anchor centre):
//   +----+----+---+---+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+
//   | dx | dy | w | h | k0x | k0y | k1x | k1y | k2x | k2y | k3x | k3y | k4x | k4y | k5x | k5y |
//   +----+----+---+---+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+-----+
//   keypoints: right eye, left eye, nose tip, mouth, right ear tragion, left ear tragion
//
//   centre = anchor + (dx, dy)    size = (w, h)    keypoint i = anchor + (kix, kiy)
//   score = sigmoid(logit)
#include "models/detect/blazeface_decode.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace edgefuse {
namespace {

// Logits beyond +-100 saturate anyway; clamping keeps exp() finite (MediaPipe clips the same way).
float sigmoid(float logit) {
  const float clamped = std::clamp(logit, -100.0f, 100.0f);
  return 1.0f / (1.0f + std::exp(-clamped));
}

// Anchor a's logit at scores[a * score_stride], its 16 regressors from regressors[a * regressor_stride].
void decode_anchors(const float* scores, int64_t score_stride, const float* regressors, int64_t regressor_stride,
                    std::span<const Anchor> anchors, float score_threshold, DecodeResult& result) {
  for (size_t a = 0; a < anchors.size(); ++a) {
    const auto row = static_cast<int64_t>(a);
    const float score = sigmoid(scores[row * score_stride]);
    if (score < score_threshold) continue;
    const float* reg = regressors + row * regressor_stride;
    const Anchor& anchor = anchors[a];
    const float cx = anchor.cx + reg[0];
    const float cy = anchor.cy + reg[1];
    const float half_w = 0.5f * std::max(reg[2], 0.0f);  // keeps x2 >= x1 for a degenerate prediction
    const float half_h = 0.5f * std::max(reg[3], 0.0f);
    Detection detection;
    detection.box = {cx - half_w, cy - half_h, cx + half_w, cy + half_h};
    detection.score = score;
    detection.class_id = 0;
    detection.keypoints.reserve(kBlazeFaceKeypoints);
    for (int k = 0; k < kBlazeFaceKeypoints; ++k) {
      detection.keypoints.push_back({anchor.cx + reg[4 + 2 * k], anchor.cy + reg[5 + 2 * k]});
    }
    result.detections.push_back(std::move(detection));
  }
}

}  // namespace

std::vector<Anchor> blazeface_anchors(int input_size) {
  std::vector<Anchor> anchors;
  if (input_size <= 0) return anchors;
  anchors.reserve(kBlazeFaceAnchorCount);
  const auto size = static_cast<float>(input_size);
  for (const BlazeFaceGrid& grid : kBlazeFaceGrids) {
    const auto cells = static_cast<float>(grid.cells);
    for (int row = 0; row < grid.cells; ++row) {
      for (int col = 0; col < grid.cells; ++col) {
        const Anchor centre{(static_cast<float>(col) + 0.5f) / cells * size,
                            (static_cast<float>(row) + 0.5f) / cells * size};
        for (int k = 0; k < grid.anchors_per_cell; ++k) anchors.push_back(centre);
      }
    }
  }
  return anchors;
}

DecodeResult decode_blazeface(const float* scores, int64_t scores_count, const float* regressors,
                              int64_t regressor_channels, std::span<const Anchor> anchors, float score_threshold) {
  DecodeResult result;
  if (scores_count != static_cast<int64_t>(anchors.size())) {
    result.error = "BlazeFace head has " + std::to_string(scores_count) + " scores for " +
                   std::to_string(anchors.size()) + " anchors";
    return result;
  }
  if (regressor_channels != kBlazeFaceRegressorChannels) {
    result.error = "BlazeFace regressors have " + std::to_string(regressor_channels) + " channels, expected " +
                   std::to_string(kBlazeFaceRegressorChannels);
    return result;
  }
  decode_anchors(scores, 1, regressors, kBlazeFaceRegressorChannels, anchors, score_threshold, result);
  return result;
}

DecodeResult decode_blazeface_rows(const float* rows, int64_t row_count, int64_t channels,
                                   std::span<const Anchor> anchors, float score_threshold) {
  DecodeResult result;
  if (row_count != static_cast<int64_t>(anchors.size())) {
    result.error =
        "BlazeFace rows: " + std::to_string(row_count) + " rows for " + std::to_string(anchors.size()) + " anchors";
    return result;
  }
  if (channels != kBlazeFaceRowChannels) {
    result.error = "BlazeFace rows have " + std::to_string(channels) + " channels, expected " +
                   std::to_string(kBlazeFaceRowChannels);
    return result;
  }
  decode_anchors(rows, channels, rows + 1, channels, anchors, score_threshold, result);
  return result;
}

}  // namespace edgefuse
