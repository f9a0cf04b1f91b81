// fuse_conv_add: Add(Conv(...), r) becomes one Conv that adds r as it stores its output (Conv
// input 3, the fused residual; see runtime/ops/conv_problem.h). An activation after the Add is
// fused next by fuse_conv_activation, since the Conv epilogue applies it after the residual.
//
// Legality: the Conv has no residual or activation epilogue yet; its output y is read by this
// Add only (once) and is not a graph output; y, r and the Add output are f32 with the same fully
// static shape (no broadcasting). The fused Conv takes the Add's place in the node order, where
// r and all of the Conv's inputs are already computed, and writes the Add's output value.
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"

namespace edgefuse::fusion {

namespace {

bool same_static_f32(const TensorDesc& a, const TensorDesc& b) {
  if (a.dtype != DType::kF32 || b.dtype != DType::kF32 || a.shape != b.shape || a.shape.empty()) return false;
  for (int64_t dim : a.shape) {
    if (dim < 0) return false;
  }
  return true;
}

}  // namespace

Status fuse_conv_add(Graph& graph, PassReport& report) {
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& add = graph.nodes()[n];
    if (add.op != OpKind::kAdd || add.input_count() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const ValueId y = add.inputs[static_cast<size_t>(side)];
      const ValueId r = add.inputs[static_cast<size_t>(1 - side)];
      const NodeId producer = graph.value(y).producer;
      if (producer < 0 || dead[static_cast<size_t>(producer)] || y == r) continue;
      const Node& conv = graph.nodes()[static_cast<size_t>(producer)];
      if (conv.op != OpKind::kConv || conv.input_count() > 3 || conv.attrs.has("fused_activation")) continue;
      if (consumers[static_cast<size_t>(y)].size() != 1 || is_graph_output(graph, y)) continue;
      const TensorDesc& out_desc = graph.value(add.outputs[0]).desc;
      if (!same_static_f32(graph.value(y).desc, graph.value(r).desc) ||
          !same_static_f32(graph.value(y).desc, out_desc)) {
        continue;
      }

      Node fused = conv;
      fused.inputs.resize(3, kNoValue);
      fused.inputs.push_back(r);
      fused.outputs = add.outputs;
      report.details.push_back(make_message("fused ", graph.describe_node(static_cast<NodeId>(n)), " into ",
                                            graph.describe_node(producer), " as its residual"));
      graph.nodes()[n] = std::move(fused);  // the Add's slot: its output's producer id is unchanged
      graph.value(y).producer = -1;
      dead[static_cast<size_t>(producer)] = true;
      ++report.changes;
      break;
    }
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
