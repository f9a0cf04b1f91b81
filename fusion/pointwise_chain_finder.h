// The pointwise runs one PointwiseChain node can compute (runtime/ops/pointwise_chain.h), found
// for the passes that make chains: fuse_pointwise_chains, and fold_slices_into_windowed_chains for
// the pieces of a sliced tensor.
//
// A chain starts at a pointwise node (Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish,
// Clip, Sqrt, Exp, Add, Sub, Mul, Div, Pow, PRelu) and grows through the single reader of its
// current value. Legality, per node: every input and the output are f32 with a fully static
// shape; Clip's bounds are one-element f32 initializers (they become step parameters). To extend
// the chain by a reader: the current value is not a graph output, it is read by that node alone
// and only once, and the node's output has the current value's shape (the chain value is never
// broadcast, only the other operand is). A one-element f32 initializer operand becomes a constant
// of its step, where it cannot widen the output. A chain holds at most kMaxChainSteps steps and
// kMaxChainInputs distinct inputs (a value read twice, as x in x * sigmoid(x), counts once). The
// head's chain value (its input of the output's shape; input 0 when both or neither are) is the
// chain's input 0.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/graph.h"
#include "runtime/ops/pointwise_chain.h"

namespace edgefuse::fusion {

class PointwiseChainFinder {
 public:
  explicit PointwiseChainFinder(const Graph& graph);

  struct Chain {
    std::vector<NodeId> members;  // in order, the head first
    std::vector<ValueId> inputs;  // the fused node's inputs, the head's chain value first
    PointwiseChain program;
    ValueId output = kNoValue;  // the last member's output
  };

  // The chain starting at node `first` through nodes not `taken` by another chain (per node,
  // nonzero: taken), or nothing when it holds fewer than `min_members` nodes.
  std::optional<Chain> chain_from(NodeId first, const std::vector<uint8_t>& taken, size_t min_members) const;

  // Per value: the nodes reading it (fusion/graph_edit.h's value_consumers), and its static description.
  const std::vector<std::vector<NodeId>>& consumers() const { return consumers_; }
  const std::optional<TensorDesc>& static_desc(ValueId v) const { return descs_[static_cast<size_t>(v)]; }
  const std::vector<std::optional<TensorDesc>>& static_descs() const { return descs_; }

 private:
  bool static_f32(ValueId v) const;
  bool chainable(const Node& node) const;
  std::optional<float> clip_bound(const Node& node, int index, float absent) const;
  PointwiseChainStep unary_step(const Node& node) const;
  const TensorDesc& desc(ValueId v) const { return *descs_[static_cast<size_t>(v)]; }
  std::optional<PointwiseChainStep> head_step(const Node& head, std::vector<ValueId>& inputs) const;
  std::optional<PointwiseChainStep> next_step(const Node& node, ValueId value, std::vector<ValueId>& inputs) const;

  const Graph& graph_;
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<std::optional<TensorDesc>> descs_;
};

}  // namespace edgefuse::fusion
