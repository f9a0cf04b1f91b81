// YOLOX-nano re-dressed as a YOLOv5 or a YOLOv8 export, for the decoders of those families: no
// trained YOLOv5/YOLOv8 model ships with the shared assets, so the real YOLOX network is wrapped in
// ONNX nodes that give it their interface. In front: the Ultralytics input (RGB, v / 255) turned
// back into YOLOX's (BGR, 0..255). Behind: YOLOX's raw output decoded into input pixels, then laid
// out as the family's output:
//   YOLOv5  [1, 3 x cells, 5 + 80]: cx, cy, w, h, objectness, class scores; each level's rows three
//           times over (three anchors a cell; YOLOv5's anchors differ, these are copies, which NMS
//           merges);
//   YOLOv8  [1, 4 + 80, cells]: cx, cy, w, h, then objectness x class score (no objectness channel).
#pragma once

#include <filesystem>
#include <string>

namespace edgefuse::test {

enum class RedressAs { kYolov5, kYolov8 };

// The serialized YOLOX-nano model (416 x 416, one input, output [1, 3549, 85]) re-dressed; an empty
// string when `yolox_bytes` is not such a model.
std::string redress_yolox(const std::string& yolox_bytes, RedressAs as);
// The same from the model's file; an empty string when it cannot be read.
std::string redress_yolox_file(const std::filesystem::path& yolox_model, RedressAs as);

}  // namespace edgefuse::test
