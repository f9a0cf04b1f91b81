// YOLO-shaped networks with random weights, written as ONNX: YOLOv5 (v6.0 and later: a 6x6 stem,
// C3 blocks, SPPF, an anchor-based head) and YOLOv8 (C2f blocks, SPPF, the anchor-free DFL head),
// at any widths, depths and input size. No trained model of either family ships with the shared
// assets; these carry their real ops, shapes and FLOPs (yolov5n(), yolov8n() at their published
// scales), for the tests of the families and for benchmarks of the runtime on their architectures.
// The weights are random, so what they detect means nothing.
//
// As the exporters write them, with two spellings changed so that OpenCV DNN 4.6 (the reference)
// can read them: the YOLOv8 head separates box bins from class logits with Slices rather than a
// Split of unequal parts, and multiplies the boxes by strides given for all four box rows.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace edgefuse::test {

enum class YoloHead { kYolov5, kYolov8 };

struct YoloArchitecture {
  YoloHead head = YoloHead::kYolov8;
  int size = 640;  // square input, a multiple of 32
  int classes = 80;
  std::array<int, 5> widths = {16, 32, 64, 128, 256};  // channels at strides 2, 4, 8, 16, 32
  std::array<int, 4> depths = {1, 2, 2, 1};            // blocks of the C3/C2f stages at strides 4 ... 32
  uint32_t seed = 1;
  // The input's height and width symbolic, as an export with dynamic axes declares them (the graph
  // still holds the sizes above: only that size runs).
  bool symbolic_image_size = false;
};

// yolov5n and yolov8n (depth multiple 0.33, width multiple 0.25), 80 classes.
YoloArchitecture yolov5n(int size = 640);
YoloArchitecture yolov8n(int size = 640);
// For tests: 128 x 128, 3 classes, narrow (8 to 32 channels) and one block deep.
YoloArchitecture small_yolo(YoloHead head);

struct YoloModel {
  std::string bytes;  // serialized ONNX, opset 13: input "images" [1, 3, S, S], output "output0"
  // What the head holds beside the SiLUs (Sigmoid, Mul) of its Convs.
  int head_sigmoids = 0, head_muls = 0;
};

YoloModel build_yolo_model(const YoloArchitecture& architecture);

}  // namespace edgefuse::test
