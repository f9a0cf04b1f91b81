// YOLOX output tensor, float32 [1, anchors, channels], row-major:
//
//   anchor a (one per grid cell)        channels (85 for COCO)
//   +--------------------------------+  +----+----+------+------+-----+--------+-----+----------+
//   | stride 8:  gy 0..H/8-1 (rows)  |  | dx | dy | logw | logh | obj | cls 0  | ... | cls C-1  |
//   |            gx 0..W/8-1 (inner) |  +----+----+------+------+-----+--------+-----+----------+
//   | stride 16: (H/16) x (W/16)     |    raw offsets and log sizes  sigmoid-ed  sigmoid-ed
//   | stride 32: (H/32) x (W/32)     |
//   +--------------------------------+  416x416: 52*52 + 26*26 + 13*13 = 3549 anchors
//
//   cx = (dx + gx) * s    cy = (dy + gy) * s    w = exp(logw) * s    h = exp(logh) * s
//   score = obj * max_c(cls c)
#include "models/detect/yolox_decode.h"

#include <cmath>
#include <string>

namespace edgefuse {

DecodeResult decode_yolox(const float* output, int64_t anchors, int64_t channels, int input_width, int input_height,
                          float score_threshold) {
  DecodeResult result;
  if (input_width <= 0 || input_height <= 0) {
    result.error =
        "YOLOX input size " + std::to_string(input_width) + "x" + std::to_string(input_height) + " is not positive";
    return result;
  }
  const int64_t expected_anchors = yolo_cell_count(input_width, input_height);
  if (anchors != expected_anchors) {
    result.error = "YOLOX output has " + std::to_string(anchors) + " anchors, a " + std::to_string(input_width) + "x" +
                   std::to_string(input_height) + " input has " + std::to_string(expected_anchors) +
                   " cells at strides 8, 16, 32";
    return result;
  }
  if (channels < kYoloxBoxChannels + 1) {
    result.error = "YOLOX output has " + std::to_string(channels) + " channels per anchor, needs at least " +
                   std::to_string(kYoloxBoxChannels + 1) + " (box, objectness, one class)";
    return result;
  }

  const float* row = output;
  for (int stride : kYoloStrides) {
    const int grid_w = input_width / stride;
    const int grid_h = input_height / stride;
    for (int gy = 0; gy < grid_h; ++gy) {
      for (int gx = 0; gx < grid_w; ++gx, row += channels) {
        const float objectness = row[4];
        if (objectness < score_threshold) continue;  // score <= objectness: cheap early out
        int best_class = 0;
        float best_class_score = row[kYoloxBoxChannels];
        for (int64_t c = 1; c < channels - kYoloxBoxChannels; ++c) {
          if (row[kYoloxBoxChannels + c] > best_class_score) {
            best_class_score = row[kYoloxBoxChannels + c];
            best_class = static_cast<int>(c);
          }
        }
        const float score = objectness * best_class_score;
        if (score < score_threshold) continue;
        const auto s = static_cast<float>(stride);
        const float cx = (row[0] + static_cast<float>(gx)) * s;
        const float cy = (row[1] + static_cast<float>(gy)) * s;
        Detection detection;
        detection.box = centred_box(cx, cy, std::exp(row[2]) * s, std::exp(row[3]) * s);
        detection.score = score;
        detection.class_id = best_class;
        result.detections.push_back(std::move(detection));
      }
    }
  }
  return result;
}

}  // namespace edgefuse
