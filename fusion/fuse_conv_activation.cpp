// fuse_conv_activation: Conv followed by an activation becomes one Conv whose kernel applies the
// activation to each output as it is stored (the epilogue; see runtime/ops/conv_epilogue.h).
//
// Patterns, with y the Conv output:
//   Relu(y), LeakyRelu(y), Sigmoid(y), HardSigmoid(y), HardSwish(y), Clip(y, min, max);
//   SiLU: Mul(y, Sigmoid(y)) in either operand order;
//   HardSwish as PyTorch exports it before opset 14: Mul(y, HardSigmoid(y)) with alpha 1/6 and beta 1/2;
//   HardSwish spelt out: c = Clip(Add(y, 3), 0, 6), then Mul(y, c / 6) or Mul(y, c) / 6 (x / 6 or x * (1/6)),
//   each intermediate read once and not a graph output.
// Legality: the Conv is f32 and has no epilogue yet; y is not a graph output and is read only by
// the activation (for Mul(y, gate(y)): only by that gate and that Mul, and the gate's output only
// by the Mul and not a graph output); Clip's present bounds are f32 one-element initializers.
// The Conv then writes the activation's output value (same shape and dtype by construction).
//
// fuse_conv_activation_after_transposes does the same for the Convs that write channels-last
// (fold_transpose_into_conv_output), whose activation followed the Transpose that pass folded:
// YOLOv5's heads apply their Sigmoid to the transposed output.
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/conv_problem.h"

namespace edgefuse::fusion {

namespace {

struct Match {
  std::vector<NodeId> removed;  // the activation nodes, last one writes `output`
  ValueId output = kNoValue;
  Attributes epilogue;  // the fused_* attributes to set on the Conv
};

std::optional<float> scalar_constant(const Graph& graph, const Node& node, int index) {
  if (!node.has_input(index)) return std::nullopt;
  const Tensor* t = constant_data(graph, node.inputs[static_cast<size_t>(index)]);
  if (t == nullptr || t->dtype() != DType::kF32 || t->numel() != 1) return std::nullopt;
  return t->data<float>()[0];
}

// The activation x * gate(x) is, for the gate node of Mul(x, gate(x)): SiLU for Sigmoid, HardSwish
// for HardSigmoid with alpha 1/6 and beta 1/2 (x * clamp(x / 6 + 1/2, 0, 1) = x * clamp(x + 3, 0, 6) / 6).
std::optional<std::string> gated_activation(const Node& gate) {
  if (gate.op == OpKind::kSigmoid) return std::string("silu");
  if (gate.op != OpKind::kHardSigmoid) return std::nullopt;
  const float alpha = gate.attrs.get_float("alpha", 0.2f), beta = gate.attrs.get_float("beta", 0.5f);
  if (std::abs(alpha - 1.0f / 6.0f) > 1e-7f || beta != 0.5f) return std::nullopt;
  return std::string("hard_swish");
}

// Whether `node` is `op` of x and a one-element f32 constant equal to `value` (relative 1e-6), in
// either order (Div only as x / constant).
bool is_scalar_op(const Graph& graph, const Node& node, OpKind op, ValueId x, float value) {
  if (node.op != op || node.input_count() != 2 || !node.has_input(0) || !node.has_input(1)) return false;
  const int constant_index = node.inputs[0] == x ? 1 : 0;
  if (node.inputs[static_cast<size_t>(1 - constant_index)] != x || (op == OpKind::kDiv && constant_index == 0)) {
    return false;
  }
  const std::optional<float> c = scalar_constant(graph, node, constant_index);
  return c && std::abs(*c - value) <= 1e-6f * std::abs(value);
}

// The only reader of v when v is not a graph output.
std::optional<NodeId> sole_reader(const Graph& graph, const std::vector<std::vector<NodeId>>& consumers, ValueId v) {
  const std::vector<NodeId>& readers = consumers[static_cast<size_t>(v)];
  if (readers.size() != 1 || is_graph_output(graph, v)) return std::nullopt;
  return readers[0];
}

// Whether `node` is a Mul of a and b in either order.
bool is_product_of(const Node& node, ValueId a, ValueId b) {
  return node.op == OpKind::kMul && node.input_count() == 2 &&
         ((node.inputs[0] == a && node.inputs[1] == b) || (node.inputs[0] == b && node.inputs[1] == a));
}

// Whether `node` divides v by 6, or multiplies it by 1/6.
bool is_sixth_of(const Graph& graph, const Node& node, ValueId v) {
  return is_scalar_op(graph, node, OpKind::kDiv, v, 6.0f) || is_scalar_op(graph, node, OpKind::kMul, v, 1.0f / 6.0f);
}

// HardSwish spelt out, as Keras and hand-written PyTorch modules export it: c = Clip(Add(y, 3), 0, 6),
// then Mul(y, c / 6) or Mul(y, c) / 6 (a division by 6 or a product with 1/6, operands in either order).
std::optional<Match> match_clipped_hard_swish(const Graph& graph, const std::vector<std::vector<NodeId>>& consumers,
                                              ValueId y) {
  const std::vector<NodeId>& readers = consumers[static_cast<size_t>(y)];
  if (readers.size() != 2) return std::nullopt;
  NodeId add = readers[0], mul = readers[1];
  if (graph.node(add).op != OpKind::kAdd) std::swap(add, mul);
  if (!is_scalar_op(graph, graph.node(add), OpKind::kAdd, y, 3.0f)) return std::nullopt;
  const std::optional<NodeId> clip = sole_reader(graph, consumers, graph.node(add).outputs[0]);
  if (!clip || graph.node(*clip).op != OpKind::kClip) return std::nullopt;
  const Node& clip_node = graph.node(*clip);
  if (scalar_constant(graph, clip_node, 1) != 0.0f || scalar_constant(graph, clip_node, 2) != 6.0f) {
    return std::nullopt;
  }
  const ValueId clipped = clip_node.outputs[0];
  const std::optional<NodeId> next = sole_reader(graph, consumers, clipped);
  if (!next) return std::nullopt;
  Match match;
  match.epilogue.set("fused_activation", std::string("hard_swish"));
  if (*next == mul) {  // Mul(y, c) / 6
    if (!is_product_of(graph.node(mul), y, clipped)) return std::nullopt;
    const std::optional<NodeId> scale = sole_reader(graph, consumers, graph.node(mul).outputs[0]);
    if (!scale || !is_sixth_of(graph, graph.node(*scale), graph.node(mul).outputs[0])) return std::nullopt;
    match.removed = {add, *clip, mul, *scale};
    match.output = graph.node(*scale).outputs[0];
    return match;
  }
  // Mul(y, c / 6)
  if (!is_sixth_of(graph, graph.node(*next), clipped)) return std::nullopt;
  const ValueId scaled = graph.node(*next).outputs[0];
  if (sole_reader(graph, consumers, scaled) != mul || !is_product_of(graph.node(mul), y, scaled)) return std::nullopt;
  match.removed = {add, *clip, *next, mul};
  match.output = graph.node(mul).outputs[0];
  return match;
}

// A single-consumer activation of y, or one gated by a second reader of y (SiLU, HardSwish).
std::optional<Match> match_activation(const Graph& graph, const std::vector<std::vector<NodeId>>& consumers,
                                      ValueId y) {
  const std::vector<NodeId>& readers = consumers[static_cast<size_t>(y)];
  Match match;
  if (readers.size() == 2) {  // Mul(y, gate(y)): SiLU, or HardSwish as PyTorch exports it before opset 14
    if (std::optional<Match> spelt_out = match_clipped_hard_swish(graph, consumers, y)) return spelt_out;
    NodeId gate = readers[0], mul = readers[1];
    if (graph.node(gate).op == OpKind::kMul) std::swap(gate, mul);
    const Node& g = graph.node(gate);
    const Node& m = graph.node(mul);
    const std::optional<std::string> kind = gated_activation(g);
    if (!kind || !g.has_input(0) || g.inputs[0] != y) return std::nullopt;
    const ValueId z = g.outputs[0];
    if (!is_product_of(m, y, z) || sole_reader(graph, consumers, z) != mul) return std::nullopt;
    match.removed = {gate, mul};
    match.output = m.outputs[0];
    match.epilogue.set("fused_activation", *kind);
    return match;
  }
  if (readers.size() != 1) return std::nullopt;
  const Node& act = graph.node(readers[0]);
  if (!act.has_input(0) || act.inputs[0] != y) return std::nullopt;
  match.removed = {readers[0]};
  match.output = act.outputs[0];
  switch (act.op) {
    case OpKind::kRelu:
      match.epilogue.set("fused_activation", std::string("relu"));
      return match;
    case OpKind::kSigmoid:
      match.epilogue.set("fused_activation", std::string("sigmoid"));
      return match;
    case OpKind::kHardSwish:
      match.epilogue.set("fused_activation", std::string("hard_swish"));
      return match;
    case OpKind::kLeakyRelu:
      match.epilogue.set("fused_activation", std::string("leaky_relu"));
      match.epilogue.set("fused_alpha", act.attrs.get_float("alpha", 0.01f));
      return match;
    case OpKind::kHardSigmoid:
      match.epilogue.set("fused_activation", std::string("hard_sigmoid"));
      match.epilogue.set("fused_alpha", act.attrs.get_float("alpha", 0.2f));
      match.epilogue.set("fused_beta", act.attrs.get_float("beta", 0.5f));
      return match;
    case OpKind::kClip: {
      const std::optional<float> lo = scalar_constant(graph, act, 1);
      const std::optional<float> hi = scalar_constant(graph, act, 2);
      if ((act.has_input(1) && !lo) || (act.has_input(2) && !hi)) return std::nullopt;
      match.epilogue.set("fused_activation", std::string("clip"));
      match.epilogue.set("fused_min", lo.value_or(std::numeric_limits<float>::lowest()));
      match.epilogue.set("fused_max", hi.value_or(std::numeric_limits<float>::max()));
      return match;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

namespace {

Status fuse_activations(Graph& graph, PassReport& report, bool channels_last_outputs_only) {
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& conv = graph.nodes()[n];
    if (conv.op != OpKind::kConv || conv.attrs.has("fused_activation")) continue;
    if (channels_last_outputs_only && !conv.attrs.has(kConvOutputChannelsLast)) continue;
    const ValueId y = conv.outputs[0];
    if (graph.value(y).desc.dtype != DType::kF32 || is_graph_output(graph, y)) continue;
    std::optional<Match> match = match_activation(graph, consumers, y);
    if (!match) continue;

    std::ostringstream removed_names;
    for (NodeId removed : match->removed) {
      dead[static_cast<size_t>(removed)] = true;
      removed_names << " " << graph.describe_node(removed);
    }
    Node& fused = graph.nodes()[n];
    for (const auto& [name, value] : match->epilogue.entries()) fused.attrs.set(name, value);
    fused.outputs[0] = match->output;
    graph.value(match->output).producer = static_cast<NodeId>(n);
    graph.value(y).producer = -1;
    ++report.changes;
    report.details.push_back(make_message("fused", removed_names.str(), " into ",
                                          graph.describe_node(static_cast<NodeId>(n)), " as ",
                                          fused.attrs.get_string("fused_activation", "")));
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace

Status fuse_conv_activation(Graph& graph, PassReport& report) {
  return fuse_activations(graph, report, false);
}

Status fuse_conv_activation_after_transposes(Graph& graph, PassReport& report) {
  return fuse_activations(graph, report, true);
}

}  // namespace edgefuse::fusion
