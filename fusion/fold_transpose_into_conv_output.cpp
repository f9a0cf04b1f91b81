// fold_transpose_into_conv_output: a 1x1 Conv whose output only a Transpose to channels-last
// (perm [0, 2, 3, 1]) reads writes that Transpose's output itself (kConvOutputChannelsLast,
// conv_problem.h); the Transpose goes. Detection heads end this way: BlazeFace's four
// regressor and classifier Convs each feed a Transpose and a Reshape to [1, anchors, values].
// The CPU's 1x1 kernel transposes each block while it is still in cache, so the NCHW tensor is
// never written nor read back (and the Reshape after it becomes a view of the graph output,
// memory_plan.h).
//
// Legality: the Conv has group 1, a 1x1 kernel, stride 1, no padding and no dilation, reads its
// input channels-first, has no residual (input 3) and writes one static f32 rank-4 output that is
// not a graph output and is read only by the Transpose, whose permutation is exactly
// [0, 2, 3, 1]. Only for backends whose 1x1 Convs write channels-last outputs
// (FusionOptions::output_transposes).
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/conv_problem.h"

namespace edgefuse::fusion {

namespace {

// A 1x1 GEMM Conv (is_pointwise_conv) without residual, writing channels-first.
bool is_plain_pointwise_conv(const Graph& graph, const Node& conv) {
  return is_pointwise_conv(graph, conv) && (conv.inputs.size() < 4 || conv.inputs[3] == kNoValue) &&
         !conv.attrs.has(kConvOutputChannelsLast) && !conv.attrs.has(kConvResidualMaxPool);
}

bool moves_channels_last(const Node& transpose) {
  return transpose.op == OpKind::kTranspose && transpose.inputs.size() == 1 && transpose.outputs.size() == 1 &&
         transpose.attrs.has("perm") && transpose.attrs.get_ints("perm") == std::vector<int64_t>{0, 2, 3, 1};
}

}  // namespace

Status fold_transpose_into_conv_output(Graph& graph, PassReport& report) {
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    if (!is_plain_pointwise_conv(graph, graph.nodes()[n])) continue;
    const ValueId y = graph.nodes()[n].outputs[0];
    const std::vector<NodeId>& readers = consumers[static_cast<size_t>(y)];
    if (is_graph_output(graph, y) || readers.size() != 1) continue;
    const NodeId reader = readers[0];
    const Node& transpose = graph.nodes()[static_cast<size_t>(reader)];
    if (!moves_channels_last(transpose) || transpose.inputs[0] != y) continue;
    const ValueId moved = transpose.outputs[0];
    report.details.push_back(make_message(graph.describe_node(static_cast<NodeId>(n)), " writes ",
                                          graph.value(moved).name, " channels-last instead of ",
                                          graph.describe_node(reader)));
    Node& conv = graph.nodes()[n];
    conv.outputs[0] = moved;
    conv.attrs.set(kConvOutputChannelsLast, int64_t{1});
    graph.value(moved).producer = static_cast<NodeId>(n);
    graph.value(y).producer = -1;
    dead[static_cast<size_t>(reader)] = true;
    ++report.changes;
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
