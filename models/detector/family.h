// The input/output signature each detector family expects, checked against a graph's declared
// values (dims may be -1 where unknown) or against the tensors a run produced. Internal to
// edgefuse_detector: recognise_family and Detector::create share these checks.
#pragma once

#include <array>
#include <span>

#include "models/detector/detector.h"
#include "runtime/graph.h"
#include "runtime/status.h"

namespace edgefuse {

struct InputSize {
  int width = 0;
  int height = 0;
};

// The YOLO families take one f32 input [1, 3, H, W] with H, W known and have one output whose
// known dims fit (cells: those of the grids of strides 8, 16, 32 for that input):
// YOLOX [1, cells, 5 + classes]; YOLOv5 [1, 3 x cells, 5 + classes]; YOLOv8 [1, 4 + classes, cells].
Result<InputSize> check_yolox_signature(const Graph& graph);
Result<InputSize> check_yolov5_signature(const Graph& graph);
Result<InputSize> check_yolov8_signature(const Graph& graph);

// BlazeFace: one f32 input [1, S, S, 3] with S known; four outputs forming two heads (see below).
Result<InputSize> check_blazeface_signature(const Graph& graph);

// Output index of each BlazeFace tensor, found by shape ([1, 512, 1], [1, 384, 1], [1, 512, 16],
// [1, 384, 16]; -1 dims match anything): each role must match exactly one output.
struct BlazeFaceOutputs {
  std::array<size_t, 2> scores;      // head 0 (16x16 grid), head 1 (8x8 grid)
  std::array<size_t, 2> regressors;  // same heads
};
Result<BlazeFaceOutputs> find_blazeface_outputs(std::span<const Shape> output_shapes);

// The check of `family`'s signature: the model's input size, or why the model does not fit.
Result<InputSize> check_family_signature(const Graph& graph, DetectorFamily family);

}  // namespace edgefuse
