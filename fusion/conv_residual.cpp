#include "fusion/conv_residual.h"

#include <vector>

#include "fusion/graph_edit.h"

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

Status fuse_adds_into_conv_residual(Graph& graph, PassReport& report, ResidualPlacement placement) {
  const bool after_activation = placement == ResidualPlacement::kAfterActivation;
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
      if (conv.op != OpKind::kConv || conv.input_count() > 3) continue;
      if (conv.attrs.has("fused_activation") != after_activation) continue;
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
      if (after_activation) fused.attrs.set("fused_residual_after_activation", int64_t{1});
      report.details.push_back(make_message("fused ", graph.describe_node(static_cast<NodeId>(n)), " into ",
                                            graph.describe_node(producer), " as its residual",
                                            after_activation ? " after the activation" : ""));
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
