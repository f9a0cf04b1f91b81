// The graph IR: values (typed tensors flowing between nodes), nodes (an op with typed
// attributes), initializers (constant values), and the graph's inputs and outputs.
//
// Operators follow ONNX semantics at opset 13 form: where older opsets had an attribute that
// opset 13 turned into an input (Squeeze/Unsqueeze/Split axes, Clip min/max, Pad pads,
// Upsample -> Resize), the importer converts to the input form, so kernels see one form only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/attributes.h"
#include "runtime/op_kind.h"
#include "runtime/tensor.h"

namespace edgefuse {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr ValueId kNoValue = -1;  // an omitted optional input

struct Value {
  std::string name;
  // Known description. Dims may be -1 where unknown before the input shape is fixed; the
  // executor infers concrete shapes when it runs.
  TensorDesc desc;
  NodeId producer = -1;               // -1 for graph inputs and initializers
  std::optional<Tensor> initializer;  // constant data, when this value is an initializer
};

struct Node {
  OpKind op = OpKind::kIdentity;
  std::string name;
  std::vector<ValueId> inputs;  // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;
  Attributes attrs;

  // Number of inputs, ignoring trailing omitted ones.
  int input_count() const;
  bool has_input(int index) const { return index < static_cast<int>(inputs.size()) && inputs[index] != kNoValue; }
};

class Graph {
 public:
  ValueId add_value(std::string name, TensorDesc desc);
  ValueId add_initializer(std::string name, Tensor data);
  NodeId add_node(Node node);  // sets each output value's producer

  std::vector<Value>& values() { return values_; }
  const std::vector<Value>& values() const { return values_; }
  Value& value(ValueId id) { return values_.at(static_cast<size_t>(id)); }
  const Value& value(ValueId id) const { return values_.at(static_cast<size_t>(id)); }
  std::vector<Node>& nodes() { return nodes_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId id) const { return nodes_.at(static_cast<size_t>(id)); }

  std::vector<ValueId>& inputs() { return inputs_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  std::vector<ValueId>& outputs() { return outputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }

  std::optional<ValueId> find_value(std::string_view name) const;
  // "Conv 'stem.conv' (node 3)": how errors name a node.
  std::string describe_node(NodeId id) const;

  // Structural checks: value ids in range, each value produced once, nodes in topological
  // order, arities within the op table's limits, outputs produced. Run after import and passes.
  Status verify() const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
};

}  // namespace edgefuse
