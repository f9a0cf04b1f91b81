// trim_zero_padded_residuals: a Conv whose fused residual is its input padded with zero channels,
// Concat(r, zeros) on the channel axis (BlazeFace's way to widen a block's shortcut), reads r
// itself and adds nothing to the channels past it; the Concat goes. Every frame then skips
// copying r and writing the zeros (runtime/ops/conv_problem.h: a residual of fewer channels).
//
// Legality: the Conv has group 1 and a residual (input 3) produced by a Concat on axis 1 whose
// first input r is not constant and whose other inputs are all constant zeros (initializers);
// the Concat output is read by that slot only and is not a graph output; every shape involved is
// static f32 of the same rank (the Concat's shape rule already matched r's other dims to it).
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/axes.h"

namespace edgefuse::fusion {

namespace {

bool all_zeros(const Tensor& t) {
  if (t.dtype() != DType::kF32) return false;
  const float* data = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (data[i] != 0.0f) return false;
  }
  return true;
}

bool static_f32(const TensorDesc& desc) {
  if (desc.dtype != DType::kF32 || desc.shape.size() < 2) return false;
  for (int64_t dim : desc.shape) {
    if (dim < 0) return false;
  }
  return true;
}

// The Concat's non-constant first input when the Concat pads it with zero channels, else kNoValue.
ValueId zero_padded_input(const Graph& graph, const Node& concat) {
  if (concat.op != OpKind::kConcat || concat.inputs.size() < 2 || concat.outputs.size() != 1) return kNoValue;
  const TensorDesc& out = graph.value(concat.outputs[0]).desc;
  if (!static_f32(out)) return kNoValue;
  const Result<int> axis = normalize_axis(concat.attrs.get_int("axis", 0), static_cast<int>(out.shape.size()), "axis");
  if (!axis.is_ok() || *axis != 1) return kNoValue;
  const ValueId r = concat.inputs[0];
  if (r == kNoValue || is_initializer(graph, r) || !static_f32(graph.value(r).desc)) return kNoValue;
  for (size_t i = 1; i < concat.inputs.size(); ++i) {
    const Tensor* padding = concat.inputs[i] != kNoValue ? constant_data(graph, concat.inputs[i]) : nullptr;
    if (padding == nullptr || !all_zeros(*padding)) return kNoValue;
  }
  return r;
}

}  // namespace

Status trim_zero_padded_residuals(Graph& graph, PassReport& report) {
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    Node& conv = graph.nodes()[n];
    if (conv.op != OpKind::kConv || conv.inputs.size() < 4 || conv.attrs.get_int("group", 1) != 1) continue;
    const ValueId padded = conv.inputs[3];
    if (padded == kNoValue || is_graph_output(graph, padded) || consumers[static_cast<size_t>(padded)].size() != 1) {
      continue;
    }
    const NodeId producer = graph.value(padded).producer;
    if (producer < 0 || dead[static_cast<size_t>(producer)]) continue;
    const Node& concat = graph.nodes()[static_cast<size_t>(producer)];
    const ValueId r = zero_padded_input(graph, concat);
    if (r == kNoValue || graph.value(r).desc.shape.size() != graph.value(padded).desc.shape.size()) continue;
    report.details.push_back(make_message("residual of ", graph.describe_node(static_cast<NodeId>(n)), " reads ",
                                          graph.value(r).name, " (", graph.value(r).desc.shape[1], " of ",
                                          graph.value(padded).desc.shape[1], " channels) instead of ",
                                          graph.describe_node(producer)));
    conv.inputs[3] = r;
    dead[static_cast<size_t>(producer)] = true;
    ++report.changes;
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
