#include "models/onnx/static_shape_check.h"

#include "runtime/op_table.h"

namespace edgefuse {

Result<std::vector<std::optional<TensorDesc>>> infer_static_shapes(const Graph& graph) {
  std::vector<std::optional<TensorDesc>> descs(graph.values().size());
  for (ValueId input : graph.inputs()) {
    for (int64_t dim : graph.value(input).desc.shape) {
      if (dim < 0) return descs;  // shapes depend on the input given at run time
    }
  }
  std::vector<std::optional<Tensor>> known(graph.values().size());
  for (ValueId input : graph.inputs()) {
    const TensorDesc& desc = graph.value(input).desc;
    known[static_cast<size_t>(input)] = Tensor::meta(desc.dtype, desc.shape);
  }
  for (size_t v = 0; v < graph.values().size(); ++v) {
    if (graph.values()[v].initializer) known[v] = *graph.values()[v].initializer;
  }

  std::vector<const Tensor*> inputs;
  std::vector<TensorDesc> outputs;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    inputs.clear();
    bool all_known = true;
    for (ValueId input : node.inputs) {
      if (input == kNoValue) {
        inputs.push_back(nullptr);
      } else if (known[static_cast<size_t>(input)]) {
        inputs.push_back(&*known[static_cast<size_t>(input)]);
      } else {
        all_known = false;
      }
    }
    if (!all_known) continue;
    outputs.clear();
    const Status inferred = op_def(node.op).infer(node, inputs, outputs);
    if (inferred.code() == StatusCode::kUnsupported) continue;
    const std::string where = graph.describe_node(static_cast<NodeId>(n));
    if (!inferred.is_ok()) return invalid_model(where, ": ", inferred.message());
    if (outputs.size() != node.outputs.size()) continue;  // the rule's bug; the executor reports it
    for (size_t o = 0; o < outputs.size(); ++o) {
      Status valid = validate_shape(outputs[o].shape, dtype_size(outputs[o].dtype));
      if (!valid.is_ok()) {
        return invalid_model(where, ": output '", graph.value(node.outputs[o]).name, "': ", valid.message());
      }
      const auto id = static_cast<size_t>(node.outputs[o]);
      known[id] = Tensor::meta(outputs[o].dtype, outputs[o].shape);
      descs[id] = outputs[o];
    }
  }
  return descs;
}

}  // namespace edgefuse
