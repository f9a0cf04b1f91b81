// fold_split_into_concat: a Concat that takes every piece of a Split, in order and side by side,
// on the Split's axis takes the Split's input instead. YOLOv8's C2f block splits a 1x1 Conv's
// output into halves, runs bottlenecks on the second and concatenates both halves with the
// bottlenecks' outputs: the Concat now takes the Conv's output whole, which the memory planner
// lets the Conv write straight into the Concat's output, instead of the Split copying both halves
// there. Pieces with other readers keep their Split (the planner makes them views of its input
// where the layout allows); a Split left with no reader is removed.
//
// Legality: the Split's outputs appear among the Concat's inputs consecutively and in order, each
// once; the Split's axis and the Concat's are the same axis of the same rank (static shapes are not
// needed: the pieces' concatenation is the Split's input by definition).
#include <cstddef>
#include <optional>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/axes.h"

namespace edgefuse::fusion {

namespace {

// The axis of a Split or Concat node, normalised against `rank`; nothing when invalid.
std::optional<int> node_axis(const Node& node, size_t rank) {
  const Result<int> axis = normalize_axis(node.attrs.get_int("axis", 0), static_cast<int>(rank), "axis");
  if (!axis.is_ok()) return std::nullopt;
  return *axis;
}

// Where the Split's outputs start among the Concat's inputs, when they appear there consecutively
// in order, each once.
std::optional<size_t> pieces_at(const Node& concat, const Node& split) {
  const std::vector<ValueId>& in = concat.inputs;
  const std::vector<ValueId>& pieces = split.outputs;
  for (size_t start = 0; start + pieces.size() <= in.size(); ++start) {
    bool match = true;
    for (size_t i = 0; i < pieces.size() && match; ++i) match = in[start + i] == pieces[i];
    if (!match) continue;
    size_t uses = 0;
    for (ValueId v : in) {
      for (ValueId piece : pieces) uses += v == piece ? 1 : 0;
    }
    return uses == pieces.size() ? std::optional<size_t>(start) : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

Status fold_split_into_concat(Graph& graph, PassReport& report) {
  const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
  const std::vector<std::optional<TensorDesc>> descs = static_value_descs(graph);
  std::vector<int> readers_left(graph.values().size(), 0);
  for (size_t v = 0; v < consumers.size(); ++v) {
    readers_left[v] = static_cast<int>(consumers[v].size()) + (is_graph_output(graph, static_cast<ValueId>(v)) ? 1 : 0);
  }
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    Node& concat = graph.nodes()[n];
    if (concat.op != OpKind::kConcat || concat.outputs.size() != 1) continue;
    for (ValueId input : std::vector<ValueId>(concat.inputs)) {
      const NodeId producer = input == kNoValue ? -1 : graph.value(input).producer;
      if (producer < 0 || dead[static_cast<size_t>(producer)]) continue;
      const Node& split = graph.node(producer);
      if (split.op != OpKind::kSplit || split.outputs.size() < 2 || split.outputs.front() != input) continue;
      const std::optional<TensorDesc>& whole = descs[static_cast<size_t>(split.inputs[0])];
      const std::optional<TensorDesc>& joined = descs[static_cast<size_t>(concat.outputs[0])];
      const size_t rank = whole ? whole->shape.size() : graph.value(split.inputs[0]).desc.shape.size();
      if (rank == 0 || (joined && joined->shape.size() != rank)) continue;
      const std::optional<int> split_axis = node_axis(split, rank);
      const std::optional<int> concat_axis = node_axis(concat, rank);
      const std::optional<size_t> start = pieces_at(concat, split);
      if (!split_axis || !concat_axis || *split_axis != *concat_axis || !start) continue;

      std::vector<ValueId> inputs(concat.inputs.begin(), concat.inputs.begin() + static_cast<std::ptrdiff_t>(*start));
      inputs.push_back(split.inputs[0]);
      inputs.insert(inputs.end(), concat.inputs.begin() + static_cast<std::ptrdiff_t>(*start + split.outputs.size()),
                    concat.inputs.end());
      concat.inputs = std::move(inputs);
      ++readers_left[static_cast<size_t>(split.inputs[0])];
      bool split_read = false;
      for (ValueId piece : split.outputs) {
        split_read = --readers_left[static_cast<size_t>(piece)] > 0 || split_read;
      }
      dead[static_cast<size_t>(producer)] = !split_read;
      ++report.changes;
      report.details.push_back(make_message(graph.describe_node(static_cast<NodeId>(n)), " takes the input of ",
                                            graph.describe_node(producer), " for its ", split.outputs.size(), " pieces",
                                            split_read ? "" : " (the Split removed)"));
    }
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
