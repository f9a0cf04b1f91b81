// Imports a detector model for a given image size. An export with dynamic axes leaves its image
// input's height and width symbolic; the size fixes them before the importer's shape inference, so
// the fuser and the memory planner see a static graph, as they do for a fixed-size export.
#pragma once

#include <memory>
#include <string>

#include "runtime/graph.h"
#include "runtime/status.h"

namespace edgefuse {

struct ImageSize {
  int width = 0, height = 0;  // 0 x 0: the model's own
};

// The model at `path`. With a size: a symbolic H and W of the single rank-4 image input (NCHW with 3
// channels, or NHWC with 3) become it; a model whose H and W are fixed must have that size.
Result<std::shared_ptr<Graph>> import_detector_model(const std::string& path, ImageSize size = {});

}  // namespace edgefuse
