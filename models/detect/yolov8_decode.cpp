// YOLOv8 output tensor, float32 [1, channels, anchors], channel-major:
//
//   channel     anchor a (52 x 52, then 26 x 26, then 13 x 13 at 416: 3549)
//   cx          | ... input pixels ...
//   cy          |
//   w           |
//   h           |
//   cls 0       | ... sigmoid-ed: the score itself (no objectness) ...
//   ...         |
//   cls C-1     |
//
// The best class of every anchor is found a class row at a time, so the reads stay sequential.
#include "models/detect/yolov8_decode.h"

#include <string>
#include <vector>

namespace edgefuse {

DecodeResult decode_yolov8(const float* output, int64_t channels, int64_t anchors, float score_threshold) {
  DecodeResult result;
  if (anchors < 1) {
    result.error = "YOLOv8 output has " + std::to_string(anchors) + " anchors";
    return result;
  }
  if (channels < kYolov8BoxChannels + 1) {
    result.error = "YOLOv8 output has " + std::to_string(channels) + " channels, needs at least " +
                   std::to_string(kYolov8BoxChannels + 1) + " (box, one class)";
    return result;
  }
  const auto count = static_cast<size_t>(anchors);
  const float* class_rows = output + kYolov8BoxChannels * anchors;
  std::vector<float> best_score(class_rows, class_rows + count);
  std::vector<int> best_class(count, 0);
  for (int64_t c = 1; c < channels - kYolov8BoxChannels; ++c) {
    const float* scores = class_rows + c * anchors;
    for (size_t a = 0; a < count; ++a) {
      if (scores[a] > best_score[a]) {  // the first of equal scores wins, as in the other decoders
        best_score[a] = scores[a];
        best_class[a] = static_cast<int>(c);
      }
    }
  }
  const float* cx = output;
  const float* cy = output + anchors;
  const float* w = output + 2 * anchors;
  const float* h = output + 3 * anchors;
  for (size_t a = 0; a < count; ++a) {
    if (best_score[a] < score_threshold) continue;
    Detection detection;
    detection.box = centred_box(cx[a], cy[a], w[a], h[a]);
    detection.score = best_score[a];
    detection.class_id = best_class[a];
    result.detections.push_back(std::move(detection));
  }
  return result;
}

}  // namespace edgefuse
