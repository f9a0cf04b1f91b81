#include "fusion/pointwise_chain_finder.h"

#include <algorithm>
#include <limits>

#include "fusion/graph_edit.h"

namespace edgefuse::fusion {

namespace {

// The index of `v` among the chain's inputs, appended when new; nothing when the chain is full.
std::optional<int> input_index(std::vector<ValueId>& inputs, ValueId v) {
  const auto it = std::find(inputs.begin(), inputs.end(), v);
  if (it != inputs.end()) return static_cast<int>(it - inputs.begin());
  if (inputs.size() == static_cast<size_t>(kMaxChainInputs)) return std::nullopt;
  inputs.push_back(v);
  return static_cast<int>(inputs.size() - 1);
}

// The other operand of a binary step: a one-element f32 initializer becomes the step's constant
// when `may_fold` (the node's output has the chain value's shape, so the scalar cannot widen
// it), else the operand takes an input slot. False when the chain has no slot left.
bool set_operand(const Graph& graph, PointwiseChainStep& step, ValueId v, bool may_fold, std::vector<ValueId>& inputs) {
  const Tensor* t = constant_data(graph, v);
  if (may_fold && t != nullptr && t->dtype() == DType::kF32 && t->numel() == 1) {
    step.operand = -1;
    step.alpha = t->data<float>()[0];
    return true;
  }
  const std::optional<int> index = input_index(inputs, v);
  if (index) step.operand = *index;
  return index.has_value();
}

}  // namespace

PointwiseChainFinder::PointwiseChainFinder(const Graph& graph)
    : graph_(graph), consumers_(value_consumers(graph)), descs_(static_value_descs(graph)) {}

std::optional<PointwiseChainFinder::Chain> PointwiseChainFinder::chain_from(NodeId first,
                                                                            const std::vector<uint8_t>& taken,
                                                                            size_t min_members) const {
  const Node& head = graph_.node(first);
  if (!chainable(head)) return std::nullopt;
  Chain chain;
  std::optional<PointwiseChainStep> step = head_step(head, chain.inputs);
  if (!step) return std::nullopt;
  chain.program.steps.push_back(*step);
  chain.members.push_back(first);
  chain.output = head.outputs[0];
  while (chain.program.steps.size() < static_cast<size_t>(kMaxChainSteps)) {
    const std::vector<NodeId>& readers = consumers_[static_cast<size_t>(chain.output)];
    if (readers.size() != 1 || is_graph_output(graph_, chain.output)) break;
    const Node& next = graph_.node(readers[0]);
    if (taken[static_cast<size_t>(readers[0])] != 0 || !chainable(next) ||
        !(*descs_[static_cast<size_t>(next.outputs[0])] == *descs_[static_cast<size_t>(chain.output)])) {
      break;
    }
    step = next_step(next, chain.output, chain.inputs);
    if (!step) break;
    chain.program.steps.push_back(*step);
    chain.members.push_back(readers[0]);
    chain.output = next.outputs[0];
  }
  if (chain.members.size() < min_members) return std::nullopt;
  return chain;
}

bool PointwiseChainFinder::static_f32(ValueId v) const {
  const std::optional<TensorDesc>& desc = descs_[static_cast<size_t>(v)];
  return desc.has_value() && desc->dtype == DType::kF32;
}

bool PointwiseChainFinder::chainable(const Node& node) const {
  if (!is_pointwise_unary(node.op) && !is_pointwise_binary(node.op)) return false;
  if (node.outputs.size() != 1 || !static_f32(node.outputs[0])) return false;
  const int data_inputs = is_pointwise_binary(node.op) ? 2 : 1;
  if (node.input_count() < data_inputs) return false;
  for (int i = 0; i < node.input_count(); ++i) {
    if (!node.has_input(i) || !static_f32(node.inputs[static_cast<size_t>(i)])) return false;
  }
  return node.op != OpKind::kClip || (clip_bound(node, 1, 0.0f) && clip_bound(node, 2, 0.0f));
}

// Clip's bound `index`: the absent default, or a one-element f32 initializer's value.
std::optional<float> PointwiseChainFinder::clip_bound(const Node& node, int index, float absent) const {
  if (!node.has_input(index)) return absent;
  const Tensor* t = constant_data(graph_, node.inputs[static_cast<size_t>(index)]);
  if (t == nullptr || t->dtype() != DType::kF32 || t->numel() != 1) return std::nullopt;
  return t->data<float>()[0];
}

PointwiseChainStep PointwiseChainFinder::unary_step(const Node& node) const {
  PointwiseChainStep step;
  step.op = node.op;
  switch (node.op) {
    case OpKind::kLeakyRelu:
      step.alpha = node.attrs.get_float("alpha", 0.01f);
      break;
    case OpKind::kHardSigmoid:
      step.alpha = node.attrs.get_float("alpha", 0.2f);
      step.beta = node.attrs.get_float("beta", 0.5f);
      break;
    case OpKind::kClip:
      step.lo = *clip_bound(node, 1, std::numeric_limits<float>::lowest());
      step.hi = *clip_bound(node, 2, std::numeric_limits<float>::max());
      break;
    default:
      break;
  }
  return step;
}

std::optional<PointwiseChainStep> PointwiseChainFinder::head_step(const Node& head,
                                                                  std::vector<ValueId>& inputs) const {
  if (is_pointwise_unary(head.op)) {
    inputs.push_back(head.inputs[0]);
    return unary_step(head);
  }
  const TensorDesc& out = desc(head.outputs[0]);
  const int side = !(desc(head.inputs[0]) == out) && desc(head.inputs[1]) == out ? 1 : 0;
  PointwiseChainStep step;
  step.op = head.op;
  step.chain_on_right = side == 1;
  inputs.push_back(head.inputs[static_cast<size_t>(side)]);
  const bool keeps_shape = desc(inputs[0]) == out;
  if (!set_operand(graph_, step, head.inputs[static_cast<size_t>(1 - side)], keeps_shape, inputs)) {
    return std::nullopt;
  }
  return step;
}

// `node` reads the chain value `value` exactly once, and its output has the value's shape.
std::optional<PointwiseChainStep> PointwiseChainFinder::next_step(const Node& node, ValueId value,
                                                                  std::vector<ValueId>& inputs) const {
  if (is_pointwise_unary(node.op)) {
    if (node.inputs[0] != value) return std::nullopt;  // Clip reading the chain as a bound
    return unary_step(node);
  }
  PointwiseChainStep step;
  step.op = node.op;
  step.chain_on_right = node.inputs[1] == value;
  if (!set_operand(graph_, step, node.inputs[step.chain_on_right ? 0 : 1], true, inputs)) return std::nullopt;
  return step;
}

}  // namespace edgefuse::fusion
