#include "runtime/graph.h"

#include "runtime/op_table.h"

namespace edgefuse {

int Node::input_count() const {
  int count = static_cast<int>(inputs.size());
  while (count > 0 && inputs[static_cast<size_t>(count - 1)] == kNoValue) --count;
  return count;
}

ValueId Graph::add_value(std::string name, TensorDesc desc) {
  values_.push_back(Value{std::move(name), std::move(desc), -1, std::nullopt});
  return static_cast<ValueId>(values_.size() - 1);
}

ValueId Graph::add_initializer(std::string name, Tensor data) {
  TensorDesc desc = data.desc();
  values_.push_back(Value{std::move(name), std::move(desc), -1, std::move(data)});
  return static_cast<ValueId>(values_.size() - 1);
}

NodeId Graph::add_node(Node node) {
  const auto id = static_cast<NodeId>(nodes_.size());
  for (ValueId output : node.outputs) {
    if (output >= 0 && output < static_cast<ValueId>(values_.size()))
      values_[static_cast<size_t>(output)].producer = id;
  }
  nodes_.push_back(std::move(node));
  return id;
}

std::optional<ValueId> Graph::find_value(std::string_view name) const {
  for (size_t i = 0; i < values_.size(); ++i) {
    if (values_[i].name == name) return static_cast<ValueId>(i);
  }
  return std::nullopt;
}

std::string Graph::describe_node(NodeId id) const {
  const Node& n = node(id);
  return make_message(op_name(n.op), " '", n.name, "' (node ", id, ")");
}

Status Graph::verify() const {
  const auto value_count = static_cast<ValueId>(values_.size());
  std::vector<bool> available(values_.size(), false);
  for (ValueId input : inputs_) {
    if (input < 0 || input >= value_count) return invalid_model("graph input id ", input, " out of range");
    available[static_cast<size_t>(input)] = true;
  }
  for (size_t i = 0; i < values_.size(); ++i) {
    if (values_[i].initializer.has_value()) available[i] = true;
  }
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const Node& node = nodes_[n];
    const auto id = static_cast<NodeId>(n);
    const OpDef& def = op_def(node.op);
    const int inputs = node.input_count();
    if (inputs < def.min_inputs || inputs > def.max_inputs) {
      return invalid_model(describe_node(id), ": has ", inputs, " inputs, expected ", def.min_inputs, "..",
                           def.max_inputs);
    }
    const auto outputs = static_cast<int>(node.outputs.size());
    if (outputs < def.min_outputs || outputs > def.max_outputs) {
      return invalid_model(describe_node(id), ": has ", outputs, " outputs, expected ", def.min_outputs, "..",
                           def.max_outputs);
    }
    for (ValueId input : node.inputs) {
      if (input == kNoValue) continue;
      if (input < 0 || input >= value_count)
        return invalid_model(describe_node(id), ": input id ", input, " out of range");
      if (!available[static_cast<size_t>(input)]) {
        return invalid_model(describe_node(id), ": input '", values_[static_cast<size_t>(input)].name,
                             "' is not produced before it is used (graph not in topological order, or a missing "
                             "initializer)");
      }
    }
    for (ValueId output : node.outputs) {
      if (output < 0 || output >= value_count)
        return invalid_model(describe_node(id), ": output id ", output, " out of range");
      if (available[static_cast<size_t>(output)]) {
        return invalid_model(describe_node(id), ": output '", values_[static_cast<size_t>(output)].name,
                             "' is already defined");
      }
      if (values_[static_cast<size_t>(output)].producer != id) {
        return invalid_model(describe_node(id), ": output '", values_[static_cast<size_t>(output)].name,
                             "' has the wrong producer");
      }
      available[static_cast<size_t>(output)] = true;
    }
  }
  for (ValueId output : outputs_) {
    if (output < 0 || output >= value_count) return invalid_model("graph output id ", output, " out of range");
    if (!available[static_cast<size_t>(output)]) {
      return invalid_model("graph output '", values_[static_cast<size_t>(output)].name, "' is never produced");
    }
  }
  return Status::ok();
}

}  // namespace edgefuse
