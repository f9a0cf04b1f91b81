// YOLOv5 output tensor, float32 [1, rows, channels], row-major (the graph's Detect layer decoded
// the boxes already):
//
//   row r (3 anchors x 52 x 52, then 26 x 26, then 13 x 13 at 416)
//   +----+----+---+---+-----+--------+-----+----------+
//   | cx | cy | w | h | obj | cls 0  | ... | cls C-1  |
//   +----+----+---+---+-----+--------+-----+----------+
//     input pixels        sigmoid-ed
//
//   score = obj * max_c(cls c)
#include "models/detect/yolov5_decode.h"

#include <string>

namespace edgefuse {

DecodeResult decode_yolov5(const float* output, int64_t rows, int64_t channels, float score_threshold) {
  DecodeResult result;
  if (rows < 1) {
    result.error = "YOLOv5 output has " + std::to_string(rows) + " rows";
    return result;
  }
  if (channels < kYolov5BoxChannels + 1) {
    result.error = "YOLOv5 output has " + std::to_string(channels) + " channels per row, needs at least " +
                   std::to_string(kYolov5BoxChannels + 1) + " (box, objectness, one class)";
    return result;
  }
  const int64_t classes = channels - kYolov5BoxChannels;
  for (const float* row = output; row != output + rows * channels; row += channels) {
    const float objectness = row[4];
    if (objectness < score_threshold) continue;  // score <= objectness: cheap early out
    const float* class_scores = row + kYolov5BoxChannels;
    int best_class = 0;
    for (int64_t c = 1; c < classes; ++c) {
      if (class_scores[c] > class_scores[best_class]) best_class = static_cast<int>(c);
    }
    const float score = objectness * class_scores[best_class];
    if (score < score_threshold) continue;
    Detection detection;
    detection.box = centred_box(row[0], row[1], row[2], row[3]);
    detection.score = score;
    detection.class_id = best_class;
    result.detections.push_back(std::move(detection));
  }
  return result;
}

}  // namespace edgefuse
