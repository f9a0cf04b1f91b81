// fold_transpose_into_conv_output: a 1x1 Conv whose output only a Transpose to channels-last
// reads writes that Transpose's output itself (kConvOutputChannelsLast, conv_problem.h); the
// Transpose goes. Detection heads end this way: BlazeFace's four regressor and classifier Convs
// each feed a Transpose (perm [0, 2, 3, 1]) and a Reshape to [1, anchors, values]; YOLOv5's
// three feed a Reshape splitting the channels into 3 anchors of 5 + classes values, then a
// Transpose (perm [0, 1, 3, 4, 2]) moving the values last: the Conv then writes channels-last by
// groups (kConvOutputChannelGroups) and the Reshape goes too. The CPU's 1x1 kernel transposes
// each block while it is still in cache, so the NCHW tensor is never written nor read back (and a
// Reshape after it becomes a view of the graph output, memory_plan.h).
//
// Legality: the Conv has group 1, a 1x1 kernel, stride 1, no padding and no dilation, reads its
// input channels-first, has no residual (input 3) and writes one static f32 rank-4 output
// [N, M, H, W] that is not a graph output and is read only by the Transpose, whose permutation is
// exactly [0, 2, 3, 1]; or only by a Reshape to static [N, A, M / A, H, W] (not a graph output,
// read only by the Transpose), whose Transpose's permutation is exactly [0, 1, 3, 4, 2]. Only for
// backends whose 1x1 Convs write channels-last outputs (FusionOptions::output_transposes).
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

bool is_transpose(const Node& node, const std::vector<int64_t>& perm) {
  return node.op == OpKind::kTranspose && node.inputs.size() == 1 && node.outputs.size() == 1 &&
         node.attrs.has("perm") && node.attrs.get_ints("perm") == perm;
}

// The single node reading `value` (a value that is not a graph output), or -1.
NodeId only_reader(const Graph& graph, const std::vector<std::vector<NodeId>>& consumers, ValueId value) {
  const std::vector<NodeId>& readers = consumers[static_cast<size_t>(value)];
  return is_graph_output(graph, value) || readers.size() != 1 ? -1 : readers[0];
}

// The number of groups A when `reshape` splits [N, M, H, W] into [N, A, M / A, H, W], else 0.
int64_t channel_groups(const Node& reshape, const std::vector<std::optional<TensorDesc>>& descs, const Shape& y) {
  if (reshape.op != OpKind::kReshape || reshape.outputs.size() != 1) return 0;
  const std::optional<TensorDesc>& out = descs[static_cast<size_t>(reshape.outputs[0])];
  if (!out || out->shape.size() != 5) return 0;
  const Shape& s = out->shape;
  const bool split = s[0] == y[0] && s[1] > 1 && s[1] * s[2] == y[1] && s[3] == y[2] && s[4] == y[3];
  return split ? s[1] : 0;
}

}  // namespace

Status fold_transpose_into_conv_output(Graph& graph, PassReport& report) {
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  const std::vector<std::optional<TensorDesc>> descs = static_value_descs(graph);
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    if (!is_plain_pointwise_conv(graph, graph.nodes()[n])) continue;
    const ValueId y = graph.nodes()[n].outputs[0];
    NodeId reader = only_reader(graph, consumers, y);
    if (reader < 0) continue;
    // Straight to channels-last, or through a Reshape splitting the channels into groups first.
    int64_t groups = 1;
    NodeId reshape = -1;
    if (!is_transpose(graph.node(reader), {0, 2, 3, 1})) {
      groups = channel_groups(graph.node(reader), descs, graph.value(y).desc.shape);
      if (groups == 0) continue;
      reshape = reader;
      reader = only_reader(graph, consumers, graph.node(reshape).outputs[0]);
      if (reader < 0 || !is_transpose(graph.node(reader), {0, 1, 3, 4, 2})) continue;
    }
    const ValueId moved = graph.node(reader).outputs[0];
    report.details.push_back(make_message(graph.describe_node(static_cast<NodeId>(n)), " writes ",
                                          graph.value(moved).name, " channels-last",
                                          groups > 1 ? make_message(" in ", groups, " groups") : std::string(),
                                          " instead of ", graph.describe_node(reader)));
    Node& conv = graph.nodes()[n];
    conv.outputs[0] = moved;
    conv.attrs.set(kConvOutputChannelsLast, int64_t{1});
    if (groups > 1) conv.attrs.set(kConvOutputChannelGroups, groups);
    graph.value(moved).producer = static_cast<NodeId>(n);
    graph.value(y).producer = -1;
    dead[static_cast<size_t>(reader)] = true;
    if (reshape >= 0) dead[static_cast<size_t>(reshape)] = true;
    ++report.changes;
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
