#include "models/detector/model_loading.h"

#include "models/onnx/onnx_importer.h"

namespace edgefuse {

Result<std::shared_ptr<Graph>> import_detector_model(const std::string& path, ImageSize size) {
  EF_ASSIGN_OR_RETURN(std::shared_ptr<Graph> graph, import_onnx_file(path));
  if (size.width <= 0 && size.height <= 0) return graph;
  if (size.width <= 0 || size.height <= 0) {
    return invalid_argument("image size ", size.width, "x", size.height, ": give both width and height");
  }
  if (graph->inputs().size() != 1) {
    return invalid_model("an image size is given, but the model takes ", graph->inputs().size(),
                         " inputs, not one image");
  }
  const Value& input = graph->value(graph->inputs()[0]);
  const Shape& dims = input.desc.shape;
  // Where H and W are: NCHW when dim 1 is the 3 channels, NHWC when dim 3 is.
  const bool nchw = dims.size() == 4 && dims[1] == 3;
  const bool nhwc = dims.size() == 4 && dims[3] == 3 && !nchw;
  if (!nchw && !nhwc) {
    return invalid_model("input '", input.name, "' is ", input.desc.to_string(),
                         ": not an image of 3 channels (NCHW or NHWC) whose size could be set");
  }
  const size_t h = nchw ? 2 : 1, w = nchw ? 3 : 2;
  if (dims[h] >= 0 && dims[w] >= 0) {
    if (dims[h] == size.height && dims[w] == size.width) return graph;
    return invalid_model("input '", input.name, "' is fixed at ", dims[w], "x", dims[h], ", not ", size.width, "x",
                         size.height, " (leave the size out, or export the model at that size)");
  }
  std::vector<int64_t> fixed(4, -1);
  fixed[h] = size.height;
  fixed[w] = size.width;
  OnnxImportOptions options;
  options.input_dims[input.name] = fixed;
  Result<std::shared_ptr<Graph>> sized = import_onnx_file(path, options);
  if (!sized.is_ok()) {
    return sized.status().with_context(make_message("at ", size.width, "x", size.height));
  }
  return sized;
}

}  // namespace edgefuse
