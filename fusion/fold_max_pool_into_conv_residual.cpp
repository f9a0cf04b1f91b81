// fold_max_pool_into_conv_residual: a 1x1 Conv whose fused residual is a 2 x 2, stride 2
// MaxPool's output reads the MaxPool's input instead and pools it as it adds it
// (kConvResidualMaxPool, conv_problem.h); the MaxPool goes. BlazeFace's downsampling blocks add
// their max-pooled input to the block's 1x1 Conv: the pooled tensor is then never written nor
// read back, and where the block's depthwise Conv and 1x1 run as one kernel (conv_pair.h) the
// block's input is read once, for the depthwise taps and the pooled residual together.
//
// Legality: the Conv has group 1, a 1x1 kernel, stride 1, no padding and no dilation, reads its
// input channels-first and has a residual (input 3) that it reads in no other slot; the residual
// is the only output of a MaxPool with kernel_shape [2, 2], strides [2, 2], no padding (auto_pad
// NOTSET or VALID) and no dilation, read by that slot only and not a graph output; the MaxPool's
// input is a static f32 [N, C, 2 H, 2 W] tensor and its output [N, C, H, W]. Only for backends
// whose Conv kernels take a pooled residual (FusionOptions::pooled_residuals).
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/conv_problem.h"

namespace edgefuse::fusion {

namespace {

// A MaxPool over 2 x 2 windows with stride 2 and no padding whose input is exactly twice its
// output's height and width.
bool is_halving_max_pool(const Graph& graph, const Node& pool) {
  if (pool.op != OpKind::kMaxPool || pool.inputs.size() != 1 || pool.inputs[0] == kNoValue) return false;
  if (pool.outputs.empty() || (pool.outputs.size() > 1 && pool.outputs[1] != kNoValue)) return false;  // no Indices
  const std::string auto_pad = pool.attrs.get_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  if (!pool.attrs.has("kernel_shape") || pool.attrs.get_ints("kernel_shape") != std::vector<int64_t>{2, 2}) {
    return false;
  }
  if (!attribute_absent_or_all(pool, "strides", 2, 2) || !pool.attrs.has("strides") ||
      !attribute_absent_or_all(pool, "pads", 0, 4) || !attribute_absent_or_all(pool, "dilations", 1, 2)) {
    return false;
  }
  const TensorDesc& in = graph.value(pool.inputs[0]).desc;
  const TensorDesc& out = graph.value(pool.outputs[0]).desc;
  return static_rank4_f32(in) && static_rank4_f32(out) && in.shape[0] == out.shape[0] && in.shape[1] == out.shape[1] &&
         in.shape[2] == 2 * out.shape[2] && in.shape[3] == 2 * out.shape[3];
}

// A 1x1 GEMM Conv (is_pointwise_conv) with a residual and no pooled one yet.
bool is_pointwise_conv_with_residual(const Graph& graph, const Node& conv) {
  return is_pointwise_conv(graph, conv) && conv.inputs.size() >= 4 && conv.inputs[3] != kNoValue &&
         !conv.attrs.has(kConvResidualMaxPool) && !conv.attrs.has(kConvOutputChannelsLast);
}

}  // namespace

Status fold_max_pool_into_conv_residual(Graph& graph, PassReport& report) {
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    Node& conv = graph.nodes()[n];
    if (!is_pointwise_conv_with_residual(graph, conv)) continue;
    const ValueId pooled = conv.inputs[3];
    if (is_graph_output(graph, pooled) || consumers[static_cast<size_t>(pooled)].size() != 1) continue;
    if (conv.inputs[0] == pooled || conv.inputs[1] == pooled || conv.inputs[2] == pooled) continue;
    const NodeId producer = graph.value(pooled).producer;
    if (producer < 0 || dead[static_cast<size_t>(producer)]) continue;
    const Node& pool = graph.nodes()[static_cast<size_t>(producer)];
    if (!is_halving_max_pool(graph, pool)) continue;
    // The Conv's output is the residual's height and width (the shape rule made them equal).
    const ValueId source = pool.inputs[0];
    report.details.push_back(make_message("residual of ", graph.describe_node(static_cast<NodeId>(n)), " reads ",
                                          graph.value(source).name, " through a 2 x 2 max pool instead of ",
                                          graph.describe_node(producer)));
    conv.inputs[3] = source;
    conv.attrs.set(kConvResidualMaxPool, int64_t{2});
    dead[static_cast<size_t>(producer)] = true;
    ++report.changes;
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
