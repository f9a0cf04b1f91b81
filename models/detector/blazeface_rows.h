// BlazeFace's four outputs (two heads, each a [1, anchors, 1] logit tensor and a [1, anchors, 16]
// regressor tensor) merged into one matrix of anchor rows, [1, 896, 17]: per row the score logit,
// then the regressors; head 0's anchors first. One matrix is what the GPU's row filter and NMS
// work on (runtime/cuda/row_nms_steps.h), so only the kept faces' rows leave the device, and the
// CPU decodes the same rows with one loop. The merge is two Concats at the end of the graph, about
// 60 KB of copies per frame.
#pragma once

#include <memory>
#include <optional>

#include "runtime/cuda/lowering.h"
#include "runtime/graph.h"
#include "runtime/status.h"

namespace edgefuse {

// A copy of `graph` (a BlazeFace model: check_blazeface_signature) whose only output is the
// merged rows, named "blazeface_rows".
Result<std::shared_ptr<Graph>> merge_blazeface_heads(const Graph& graph);

// The GPU row filter for the merged rows of an input_size x input_size model: rows whose logit
// can give a score of score_threshold come back, and NMS (class-agnostic, as the CPU's) runs on
// the device first, so only the kept faces' rows do. None when (nearly) every row passes the
// threshold, as with 0: then every row comes back.
std::optional<gpu::RowFilter> blazeface_row_filter(int input_size, float score_threshold, float iou_threshold,
                                                   int max_detections);

}  // namespace edgefuse
