// fuse_pointwise_chains: a run of pointwise ops, each reading the previous one's output, becomes
// one PointwiseChain node (runtime/ops/pointwise_chain.h) that reads each input once and writes
// only the last output: Sigmoid -> Mul(2) -> Sub(0.5) -> Add(grid) -> Mul(stride), a decoder
// head's typical tail, is one pass over the tensor instead of five. Runs after the Conv epilogue
// passes, so it takes what they leave: pointwise ops after non-Conv producers, and chains longer
// than one activation.
//
// A chain starts at a pointwise node (Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish,
// Clip, Sqrt, Exp, Add, Sub, Mul, Div, Pow, PRelu) and grows through the single reader of its
// current value. Legality, per node: every input and the output are f32 with a fully static
// shape; Clip's bounds are one-element f32 initializers (they become step parameters). To extend
// the chain by a reader: the current value is not a graph output, it is read by that node alone
// and only once, and the node's output has the current value's shape (the chain value is never
// broadcast, only the other operand is). A one-element f32 initializer operand becomes a constant
// of its step, where it cannot widen the output. A chain holds at most kMaxChainSteps steps and
// kMaxChainInputs distinct inputs (a value read twice, as x in x * sigmoid(x), counts once); a
// chain of a single node is left alone. The fused node takes the last node's place (all its
// inputs exist by then; the intermediate values it drops had no other reader) and its name.
#include <algorithm>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/pointwise_chain.h"

namespace edgefuse::fusion {

namespace {

class ChainFinder {
 public:
  explicit ChainFinder(const Graph& graph)
      : graph_(graph), consumers_(value_consumers(graph)), descs_(static_value_descs(graph)) {}

  // The chain starting at node `first` through nodes not `taken` by another chain, or nothing
  // when it holds fewer than two nodes.
  struct Chain {
    std::vector<NodeId> members;
    std::vector<ValueId> inputs;
    PointwiseChain program;
    ValueId output = kNoValue;
  };

  std::optional<Chain> chain_from(NodeId first, const std::vector<uint8_t>& taken) const {
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
    if (chain.members.size() < 2) return std::nullopt;
    return chain;
  }

 private:
  bool static_f32(ValueId v) const {
    const std::optional<TensorDesc>& desc = descs_[static_cast<size_t>(v)];
    return desc.has_value() && desc->dtype == DType::kF32;
  }

  bool chainable(const Node& node) const {
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
  std::optional<float> clip_bound(const Node& node, int index, float absent) const {
    if (!node.has_input(index)) return absent;
    const Tensor* t = constant_data(graph_, node.inputs[static_cast<size_t>(index)]);
    if (t == nullptr || t->dtype() != DType::kF32 || t->numel() != 1) return std::nullopt;
    return t->data<float>()[0];
  }

  PointwiseChainStep unary_step(const Node& node) const {
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

  // The index of `v` among the chain's inputs, appended when new; nothing when the chain is full.
  static std::optional<int> input_index(std::vector<ValueId>& inputs, ValueId v) {
    const auto it = std::find(inputs.begin(), inputs.end(), v);
    if (it != inputs.end()) return static_cast<int>(it - inputs.begin());
    if (inputs.size() == static_cast<size_t>(kMaxChainInputs)) return std::nullopt;
    inputs.push_back(v);
    return static_cast<int>(inputs.size() - 1);
  }

  const TensorDesc& desc(ValueId v) const { return *descs_[static_cast<size_t>(v)]; }

  // The other operand of a binary step: a one-element f32 initializer becomes the step's constant
  // when `may_fold` (the node's output has the chain value's shape, so the scalar cannot widen
  // it), else the operand takes an input slot. False when the chain has no slot left.
  static bool set_operand(const Graph& graph, PointwiseChainStep& step, ValueId v, bool may_fold,
                          std::vector<ValueId>& inputs) {
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

  // The head's chain value is its input of the output's shape (input 0 when both or neither are);
  // it becomes the chain's input 0.
  std::optional<PointwiseChainStep> head_step(const Node& head, std::vector<ValueId>& inputs) const {
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
  std::optional<PointwiseChainStep> next_step(const Node& node, ValueId value, std::vector<ValueId>& inputs) const {
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

  const Graph& graph_;
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<std::optional<TensorDesc>> descs_;
};

}  // namespace

Status fuse_pointwise_chains(Graph& graph, PassReport& report) {
  std::vector<ChainFinder::Chain> chains;
  {
    const ChainFinder finder(graph);
    std::vector<uint8_t> taken(graph.nodes().size(), 0);
    for (size_t n = 0; n < graph.nodes().size(); ++n) {
      if (taken[n] != 0) continue;
      std::optional<ChainFinder::Chain> chain = finder.chain_from(static_cast<NodeId>(n), taken);
      if (!chain) continue;
      for (NodeId member : chain->members) taken[static_cast<size_t>(member)] = 1;
      chains.push_back(std::move(*chain));
    }
  }
  std::vector<bool> dead(graph.nodes().size(), false);
  for (const ChainFinder::Chain& chain : chains) {
    std::ostringstream names;
    for (NodeId member : chain.members) names << " " << graph.describe_node(member);
    const NodeId last = chain.members.back();
    Node fused;
    fused.op = OpKind::kPointwiseChain;
    fused.name = graph.node(last).name;
    fused.inputs = chain.inputs;
    fused.outputs = {chain.output};
    set_pointwise_chain(fused.attrs, chain.program);
    for (NodeId member : chain.members) {
      dead[static_cast<size_t>(member)] = member != last;
      if (member != last) graph.value(graph.node(member).outputs[0]).producer = -1;
    }
    graph.nodes()[static_cast<size_t>(last)] = std::move(fused);
    ++report.changes;
    report.details.push_back(make_message("fused", names.str(), " into one PointwiseChain of ",
                                          chain.program.steps.size(), " steps and ", chain.inputs.size(), " input",
                                          chain.inputs.size() == 1 ? "" : "s"));
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
