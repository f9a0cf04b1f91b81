// cascade_spp_maxpools: parallel MaxPools of one input with growing kernels (SPP: 5, 9, 13)
// become a cascade where each pool reads the previous one's output with a smaller kernel:
// pool9(x) = pool5(pool5(x)), pool13(x) = pool5(pool9(x)). Each pool then does less work (the
// kernel is separable, so its cost grows with kh + kw) and the graph keeps its nodes and values.
//
// Exact for max pooling with "same" padding: a stride-1 MaxPool of odd kernel a and pads a/2 is
// max over x[y - a/2 .. y + a/2] clipped to the input (padding never wins: ONNX pads MaxPool with
// -inf). Applying one of kernel b (pads b/2) to that output gives max over the union of those
// windows for rows y - b/2 .. y + b/2 inside the input, which is x[y - (a+b-2)/2 .. y + (a+b-2)/2]
// clipped: every clipped row in that range is within a/2 of some clipped window centre. So a pool
// of kernel k on x equals a pool of kernel k - a + 1 on the kernel-a pool of x, per spatial axis.
//
// Legality, per MaxPool: one output (no Indices), 2-D kernel_shape with odd sizes, strides 1,
// dilations 1, auto_pad NOTSET, pads k/2 on both sides of each axis (ceil_mode is then moot: the
// output size is the input size). Among such pools reading the same value, sorted by kernel, a
// pool is chained onto the previous one when its kernel is larger on every axis and the previous
// one comes earlier in node order (so the node order stays topological).
#include <algorithm>
#include <map>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"

namespace edgefuse::fusion {

namespace {

// The kernel of a stride-1 "same" 2-D MaxPool, or empty when the node is not one.
std::vector<int64_t> same_pool_kernel(const Node& node) {
  if (node.op != OpKind::kMaxPool || !node.has_input(0) || node.outputs.size() != 1) return {};
  const std::vector<int64_t> kernel = node.attrs.get_ints("kernel_shape");
  if (kernel.size() != 2 || node.attrs.get_string("auto_pad", "NOTSET") != "NOTSET") return {};
  const std::vector<int64_t> strides = node.attrs.get_ints("strides", {1, 1});
  const std::vector<int64_t> dilations = node.attrs.get_ints("dilations", {1, 1});
  const std::vector<int64_t> pads = node.attrs.get_ints("pads", {0, 0, 0, 0});
  if (strides != std::vector<int64_t>{1, 1} || dilations != std::vector<int64_t>{1, 1} || pads.size() != 4) return {};
  for (size_t axis = 0; axis < 2; ++axis) {
    const int64_t k = kernel[axis];
    if (k < 1 || k % 2 == 0 || pads[axis] != k / 2 || pads[axis + 2] != k / 2) return {};
  }
  return kernel;
}

}  // namespace

Status cascade_spp_maxpools(Graph& graph, PassReport& report) {
  std::map<ValueId, std::vector<NodeId>> pools_by_input;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    if (!same_pool_kernel(graph.nodes()[n]).empty()) {
      pools_by_input[graph.nodes()[n].inputs[0]].push_back(static_cast<NodeId>(n));
    }
  }
  for (auto& [input, pools] : pools_by_input) {
    if (pools.size() < 2) continue;
    std::vector<std::vector<int64_t>> kernels;
    std::stable_sort(pools.begin(), pools.end(), [&](NodeId a, NodeId b) {
      return same_pool_kernel(graph.node(a)) < same_pool_kernel(graph.node(b));
    });
    for (NodeId pool : pools) kernels.push_back(same_pool_kernel(graph.node(pool)));
    for (size_t i = 1; i < pools.size(); ++i) {
      const std::vector<int64_t>& previous = kernels[i - 1];
      const std::vector<int64_t>& own = kernels[i];
      if (own[0] <= previous[0] || own[1] <= previous[1] || pools[i] < pools[i - 1]) continue;
      const std::vector<int64_t> rest = {own[0] - previous[0] + 1, own[1] - previous[1] + 1};
      Node& node = graph.nodes()[static_cast<size_t>(pools[i])];
      node.inputs[0] = graph.node(pools[i - 1]).outputs[0];
      node.attrs.set("kernel_shape", rest);
      node.attrs.set("pads", std::vector<int64_t>{rest[0] / 2, rest[1] / 2, rest[0] / 2, rest[1] / 2});
      ++report.changes;
      report.details.push_back(make_message("chained ", graph.describe_node(pools[i]), " (kernel ", own[0], "x", own[1],
                                            ") onto ", graph.describe_node(pools[i - 1]), " as kernel ", rest[0], "x",
                                            rest[1]));
    }
  }
  return Status::ok();
}

}  // namespace edgefuse::fusion
