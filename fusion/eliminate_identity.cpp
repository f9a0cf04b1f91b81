// eliminate_identity: removes Identity nodes (the importer turns inference-time Dropout into
// Identity) by making their consumers read the Identity's input.
//
// Legality, per Identity x -> y:
//   - y is not a graph output: every reader of y reads x instead; the node goes.
//   - y is a graph output (its name is part of the model's interface and must stay): when x is
//     produced by a node and is neither a graph input nor a graph output, the producer writes y
//     directly and x's other readers read y (same data); the node goes. Otherwise (x is a graph
//     input, an initializer or another graph output) the node is kept.
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"

namespace edgefuse::fusion {

Status eliminate_identity(Graph& graph, PassReport& report) {
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    const Node& node = graph.nodes()[n];
    if (node.op != OpKind::kIdentity || !node.has_input(0)) continue;
    const ValueId x = node.inputs[0];
    const ValueId y = node.outputs[0];
    if (!is_graph_output(graph, y)) {
      replace_uses(graph, y, x);
    } else {
      const NodeId producer = graph.value(x).producer;
      if (producer < 0 || is_graph_input(graph, x) || is_graph_output(graph, x)) continue;
      Node& source = graph.nodes()[static_cast<size_t>(producer)];
      for (ValueId& output : source.outputs) {
        if (output == x) output = y;
      }
      graph.value(y).producer = producer;
      graph.value(y).desc = graph.value(x).desc;
      graph.value(x).producer = -1;
      replace_uses(graph, x, y);
    }
    dead[n] = true;
    ++report.changes;
    report.details.push_back(make_message("removed ", graph.describe_node(static_cast<NodeId>(n))));
  }
  if (report.changes > 0) compact(graph, dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
