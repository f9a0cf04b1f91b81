// push_activations_into_concat_inputs: an activation of a tensor that Concats and Reshapes assemble
// from Conv outputs alone is applied to each Conv's output instead, where fuse_conv_activation
// (next in the order) makes it that Conv's epilogue: the activation costs no pass over the tensor.
// YOLOv8's class scores are the Sigmoid of the class logits, which (after
// push_slices_into_concat_inputs) are the three levels' class Convs' outputs, viewed as rows and
// concatenated on the cells.
//
// Legality: the activation is one fuse_conv_activation takes alone (Relu, LeakyRelu, Clip,
// Sigmoid, HardSigmoid, HardSwish; Clip's bounds constants), and its input is made by a Concat or
// Reshape. Every value from there back to the Convs, through Concats (all inputs) and Reshapes (the
// data input), the Convs' outputs included, is read by one node only, once, and is not a graph
// output; those values end at Convs with one output each and no activation yet. An elementwise
// function applied before or after moving elements gives the same elements. Where the activation's
// output is a graph output, the assembled value takes its place and name. Each new activation node
// follows its Conv in the node order.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"

namespace edgefuse::fusion {

namespace {

bool fusable_alone(const Graph& graph, const Node& node) {
  switch (node.op) {
    case OpKind::kRelu:
    case OpKind::kLeakyRelu:
    case OpKind::kSigmoid:
    case OpKind::kHardSigmoid:
    case OpKind::kHardSwish:
      return node.input_count() == 1;
    case OpKind::kClip:
      for (size_t i = 1; i < node.inputs.size(); ++i) {
        if (node.inputs[i] != kNoValue && !is_initializer(graph, node.inputs[i])) return false;
      }
      return true;
    default:
      return false;
  }
}

class ConvLeaves {
 public:
  explicit ConvLeaves(const Graph& graph) : graph_(graph), consumers_(value_consumers(graph)) {}

  // The Conv outputs `value` is assembled from and, per leaf, the node that reads it; nothing
  // when the rules above do not hold.
  struct Leaf {
    ValueId value = kNoValue;
    NodeId reader = -1;
  };
  std::optional<std::vector<Leaf>> of(ValueId value, NodeId reader) const {
    std::vector<Leaf> leaves;
    if (!collect(value, reader, leaves)) return std::nullopt;
    return leaves;
  }

 private:
  bool read_once_by(ValueId v, NodeId reader) const {
    const std::vector<NodeId>& readers = consumers_[static_cast<size_t>(v)];
    return readers.size() == 1 && readers[0] == reader && !is_graph_output(graph_, v);
  }

  bool collect(ValueId value, NodeId reader, std::vector<Leaf>& leaves) const {
    if (value == kNoValue || !read_once_by(value, reader)) return false;
    const NodeId producer = graph_.value(value).producer;
    if (producer < 0) return false;
    const Node& node = graph_.node(producer);
    if (node.op == OpKind::kConv) {
      if (node.outputs.size() != 1 || node.attrs.has("fused_activation")) return false;
      leaves.push_back(Leaf{value, reader});
      return true;
    }
    if (node.op == OpKind::kReshape) return collect(node.inputs[0], producer, leaves);
    if (node.op != OpKind::kConcat) return false;
    for (ValueId input : node.inputs) {
      if (!collect(input, producer, leaves)) return false;
    }
    return true;
  }

  const Graph& graph_;
  const std::vector<std::vector<NodeId>> consumers_;
};

}  // namespace

Status push_activations_into_concat_inputs(Graph& graph, PassReport& report) {
  std::vector<bool> dead(graph.nodes().size(), false);
  std::vector<std::vector<Node>> after(graph.nodes().size());  // new nodes to follow each node
  {
    const ConvLeaves leaves_of(graph);
    for (size_t n = 0; n < graph.nodes().size(); ++n) {
      const Node& activation = graph.nodes()[n];
      if (!fusable_alone(graph, activation) || !activation.has_input(0) || activation.outputs.size() != 1) continue;
      const ValueId assembled = activation.inputs[0];
      const NodeId producer = graph.value(assembled).producer;
      if (producer < 0 || (graph.node(producer).op != OpKind::kConcat && graph.node(producer).op != OpKind::kReshape)) {
        continue;
      }
      const std::optional<std::vector<ConvLeaves::Leaf>> leaves = leaves_of.of(assembled, static_cast<NodeId>(n));
      if (!leaves) continue;
      for (const ConvLeaves::Leaf& leaf : *leaves) {
        Node moved = activation;
        moved.name = graph.value(leaf.value).name + "_" + activation.name;
        const ValueId activated = graph.add_value(unique_value_name(graph, moved.name), graph.value(leaf.value).desc);
        moved.inputs[0] = leaf.value;
        moved.outputs = {activated};
        for (ValueId& input : graph.nodes()[static_cast<size_t>(leaf.reader)].inputs) {
          if (input == leaf.value) input = activated;
        }
        after[static_cast<size_t>(graph.value(leaf.value).producer)].push_back(std::move(moved));
      }
      ++report.changes;
      report.details.push_back(make_message("moved ", graph.describe_node(static_cast<NodeId>(n)), " onto the ",
                                            leaves->size(), " Conv output", leaves->size() == 1 ? "" : "s",
                                            " its input is assembled from"));
      dead[n] = true;
      const ValueId output = activation.outputs[0];
      replace_uses(graph, output, assembled);
      if (is_graph_output(graph, output)) {
        // The assembled value takes the output's place and name (callers fetch outputs by name).
        for (ValueId& graph_output : graph.outputs()) graph_output = graph_output == output ? assembled : graph_output;
        std::swap(graph.value(output).name, graph.value(assembled).name);
      }
    }
  }
  if (report.changes == 0) return Status::ok();
  // Each new node right after its Conv: before the node that follows it.
  std::vector<std::vector<Node>> inserted(graph.nodes().size() + 1);
  for (size_t n = 0; n < after.size(); ++n) inserted[n + 1] = std::move(after[n]);
  insert_nodes_and_compact(graph, std::move(inserted), dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
