#include "fusion/graph_edit.h"

#include <algorithm>
#include <unordered_set>

#include "runtime/op_table.h"
#include "runtime/ops/axes.h"
#include "runtime/ops/conv_problem.h"

namespace edgefuse::fusion {

std::vector<std::vector<NodeId>> value_consumers(const Graph& graph) {
  std::vector<std::vector<NodeId>> consumers(graph.values().size());
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    for (ValueId input : graph.nodes()[n].inputs) {
      if (input != kNoValue) consumers[static_cast<size_t>(input)].push_back(static_cast<NodeId>(n));
    }
  }
  return consumers;
}

bool is_graph_output(const Graph& graph, ValueId value) {
  return std::find(graph.outputs().begin(), graph.outputs().end(), value) != graph.outputs().end();
}

bool is_graph_input(const Graph& graph, ValueId value) {
  return std::find(graph.inputs().begin(), graph.inputs().end(), value) != graph.inputs().end();
}

bool is_initializer(const Graph& graph, ValueId value) {
  return value != kNoValue && graph.value(value).initializer.has_value();
}

const Tensor* constant_data(const Graph& graph, ValueId value) {
  if (!is_initializer(graph, value)) return nullptr;
  return &*graph.value(value).initializer;
}

namespace {

bool fully_static(const TensorDesc& desc) {
  return std::all_of(desc.shape.begin(), desc.shape.end(), [](int64_t dim) { return dim >= 0; });
}

}  // namespace

std::vector<std::optional<Tensor>> initially_known_values(const Graph& graph) {
  std::vector<std::optional<Tensor>> known(graph.values().size());
  for (size_t v = 0; v < graph.values().size(); ++v) {
    if (graph.values()[v].initializer) known[v] = *graph.values()[v].initializer;
  }
  for (ValueId input : graph.inputs()) {
    const TensorDesc& desc = graph.value(input).desc;
    if (fully_static(desc)) known[static_cast<size_t>(input)] = Tensor::meta(desc.dtype, desc.shape);
  }
  return known;
}

std::vector<std::optional<TensorDesc>> static_value_descs(const Graph& graph) {
  // Meta tensors for the shape rules; initializers keep their data (Reshape's shape, Slice's starts).
  std::vector<std::optional<Tensor>> known = initially_known_values(graph);
  std::vector<const Tensor*> inputs;
  std::vector<TensorDesc> descs;
  for (const Node& node : graph.nodes()) {
    inputs.clear();
    bool all_known = true;
    for (ValueId input : node.inputs) {
      const std::optional<Tensor>* value = input == kNoValue ? nullptr : &known[static_cast<size_t>(input)];
      all_known = all_known && (value == nullptr || value->has_value());
      inputs.push_back(value != nullptr && value->has_value() ? &**value : nullptr);
    }
    if (!all_known || !infer_node(node, inputs, descs).is_ok() || descs.size() != node.outputs.size()) continue;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o] != kNoValue && fully_static(descs[o])) {
        known[static_cast<size_t>(node.outputs[o])] = Tensor::meta(descs[o].dtype, descs[o].shape);
      }
    }
  }
  std::vector<std::optional<TensorDesc>> result(known.size());
  for (size_t v = 0; v < known.size(); ++v) {
    if (known[v]) result[v] = known[v]->desc();
  }
  return result;
}

void replace_uses(Graph& graph, ValueId from, ValueId to) {
  for (Node& node : graph.nodes()) {
    std::replace(node.inputs.begin(), node.inputs.end(), from, to);
  }
}

std::optional<std::vector<int64_t>> constant_ints(const Graph& graph, const Node& node, int index) {
  if (!node.has_input(index)) return std::nullopt;
  const Tensor* t = constant_data(graph, node.inputs[static_cast<size_t>(index)]);
  if (t == nullptr) return std::nullopt;
  Result<std::vector<int64_t>> values = read_constant_ints(*t, "constant operand");
  if (!values.is_ok()) return std::nullopt;
  return *values;
}

std::optional<ConstantSlice> constant_slice(const Graph& graph, const Node& slice) {
  ConstantSlice bounds;
  std::optional<std::vector<int64_t>> starts = constant_ints(graph, slice, 1);
  std::optional<std::vector<int64_t>> ends = constant_ints(graph, slice, 2);
  if (!starts || !ends || starts->size() != ends->size() || starts->empty()) return std::nullopt;
  bounds.starts = std::move(*starts);
  bounds.ends = std::move(*ends);
  for (size_t i = 0; i < bounds.starts.size(); ++i) bounds.axes.push_back(static_cast<int64_t>(i));
  bounds.steps.assign(bounds.starts.size(), 1);
  if (slice.has_input(3)) {
    std::optional<std::vector<int64_t>> axes = constant_ints(graph, slice, 3);
    if (!axes) return std::nullopt;
    bounds.axes = std::move(*axes);
  }
  if (slice.has_input(4)) {
    std::optional<std::vector<int64_t>> steps = constant_ints(graph, slice, 4);
    if (!steps) return std::nullopt;
    bounds.steps = std::move(*steps);
  }
  if (bounds.axes.size() != bounds.starts.size() || bounds.steps.size() != bounds.starts.size()) return std::nullopt;
  return bounds;
}

void compact(Graph& graph, const std::vector<bool>& dead) {
  const size_t value_count = graph.values().size();
  std::vector<bool> referenced(value_count, false);
  for (ValueId v : graph.inputs()) referenced[static_cast<size_t>(v)] = true;
  for (ValueId v : graph.outputs()) referenced[static_cast<size_t>(v)] = true;
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    if (dead[n]) continue;
    for (ValueId v : graph.nodes()[n].inputs) {
      if (v != kNoValue) referenced[static_cast<size_t>(v)] = true;
    }
    for (ValueId v : graph.nodes()[n].outputs) referenced[static_cast<size_t>(v)] = true;
  }

  Graph rebuilt;
  std::vector<ValueId> new_id(value_count, kNoValue);
  for (size_t v = 0; v < value_count; ++v) {
    if (!referenced[v]) continue;
    Value& old = graph.values()[v];
    new_id[v] =
        old.initializer ? rebuilt.add_initializer(old.name, *old.initializer) : rebuilt.add_value(old.name, old.desc);
  }
  const auto remap = [&](ValueId v) { return v == kNoValue ? kNoValue : new_id[static_cast<size_t>(v)]; };
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    if (dead[n]) continue;
    Node node = std::move(graph.nodes()[n]);
    std::transform(node.inputs.begin(), node.inputs.end(), node.inputs.begin(), remap);
    std::transform(node.outputs.begin(), node.outputs.end(), node.outputs.begin(), remap);
    rebuilt.add_node(std::move(node));
  }
  for (ValueId v : graph.inputs()) rebuilt.inputs().push_back(remap(v));
  for (ValueId v : graph.outputs()) rebuilt.outputs().push_back(remap(v));
  graph = std::move(rebuilt);
}

void insert_nodes_and_compact(Graph& graph, std::vector<std::vector<Node>> inserted, const std::vector<bool>& dead) {
  const size_t count = graph.nodes().size();
  inserted.resize(count + 1);
  std::vector<Node> nodes;
  std::vector<bool> now_dead;
  for (size_t n = 0; n <= count; ++n) {
    for (Node& node : inserted[n]) {
      nodes.push_back(std::move(node));
      now_dead.push_back(false);
    }
    if (n == count) break;
    nodes.push_back(std::move(graph.nodes()[n]));
    now_dead.push_back(dead[n]);
  }
  graph.nodes() = std::move(nodes);
  compact(graph, now_dead);
}

bool attribute_absent_or_all(const Node& node, const char* attribute, int64_t value, size_t count) {
  if (!node.attrs.has(attribute)) return true;
  const std::vector<int64_t> values = node.attrs.get_ints(attribute);
  return values.size() == count && std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == value; });
}

bool static_rank4_f32(const TensorDesc& desc) {
  return desc.dtype == DType::kF32 && desc.shape.size() == 4 &&
         std::all_of(desc.shape.begin(), desc.shape.end(), [](int64_t dim) { return dim > 0; });
}

bool is_pointwise_conv(const Graph& graph, const Node& conv) {
  return has_pointwise_conv_window(graph, conv) && static_rank4_f32(graph.value(conv.outputs[0]).desc);
}

bool has_pointwise_conv_window(const Graph& graph, const Node& conv) {
  if (conv.op != OpKind::kConv || conv.inputs.size() < 2 || conv.outputs.size() != 1) return false;
  if (conv.attrs.get_int("group", 1) != 1 || conv.attrs.get_int(kConvInputChannelsLast, 0) != 0) return false;
  if (conv.attrs.get_string("auto_pad", "NOTSET") != "NOTSET" || !attribute_absent_or_all(conv, "strides", 1, 2) ||
      !attribute_absent_or_all(conv, "pads", 0, 4) || !attribute_absent_or_all(conv, "dilations", 1, 2)) {
    return false;
  }
  const TensorDesc& weight = graph.value(conv.inputs[1]).desc;
  return weight.shape.size() == 4 && weight.shape[2] == 1 && weight.shape[3] == 1;
}

std::string unique_value_name(const Graph& graph, const std::string& base) {
  std::unordered_set<std::string> names;
  for (const Value& value : graph.values()) names.insert(value.name);
  std::string name = base;
  for (int suffix = 1; names.contains(name); ++suffix) name = base + "_" + std::to_string(suffix);
  return name;
}

}  // namespace edgefuse::fusion
