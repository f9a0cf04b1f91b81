// push_expectations_into_concat_inputs: a SoftmaxExpectation of a tensor joined on its last axis
// (viewed through a Reshape or not) is computed on each joined piece instead, and the small
// results are joined. Each output position's expectation reads that position's own group only, so
// the order of the two does not matter; the big joined tensor is then never written. YOLOv8's DFL
// reads its 64 bin rows of every cell from the Concat on the cells of the three levels' box Convs
// ([1, 64, 8400], 2.15 MB); now each level's expectation reads its Conv's output in place and
// only the [1, 4, 1, 8400] distances are joined.
//
// Legality: the expectation's input X is a Concat's output, or a Reshape's of one, read by nothing
// else and not a graph output (the Concat's output likewise when a Reshape reads it); shapes are
// static; the Concat joins on its last axis; the Reshape keeps that last dim, and the expectation's
// axis is not X's last. Each piece is then viewed as X with the piece's last dim (a Reshape, when
// X was one), its expectation taken on the same axis, and the results joined on the last axis in
// the Concat's order, in the expectation's place in the node order.
#include <optional>
#include <string>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/axes.h"

namespace edgefuse::fusion {

namespace {

struct Match {
  NodeId expectation = -1;
  NodeId reshape = -1;  // -1: the expectation reads the Concat directly
  NodeId concat = -1;
  TensorDesc viewed;  // X
};

class JoinedExpectations {
 public:
  explicit JoinedExpectations(const Graph& graph)
      : graph_(graph), consumers_(value_consumers(graph)), descs_(static_value_descs(graph)) {}

  std::optional<Match> find(NodeId n) const {
    const Node& expectation = graph_.node(n);
    if (expectation.op != OpKind::kSoftmaxExpectation || !expectation.has_input(0)) return std::nullopt;
    const ValueId x = expectation.inputs[0];
    const std::optional<TensorDesc>& viewed = descs_[static_cast<size_t>(x)];
    if (!viewed || !read_only_by(x, n)) return std::nullopt;
    const auto rank = static_cast<int>(viewed->shape.size());
    const Result<int> axis = normalize_axis(expectation.attrs.get_int("axis", 0), rank, "axis");
    if (!axis.is_ok() || *axis == rank - 1) return std::nullopt;
    Match match{n, -1, graph_.value(x).producer, *viewed};
    if (match.concat < 0) return std::nullopt;
    if (graph_.node(match.concat).op == OpKind::kReshape) {
      match.reshape = match.concat;
      const ValueId joined = graph_.node(match.reshape).inputs[0];
      const std::optional<TensorDesc>& before = descs_[static_cast<size_t>(joined)];
      if (!before || before->shape.empty() || before->shape.back() != viewed->shape.back() ||
          !read_only_by(joined, match.reshape)) {
        return std::nullopt;
      }
      match.concat = graph_.value(joined).producer;
      if (match.concat < 0) return std::nullopt;
    }
    const Node& concat = graph_.node(match.concat);
    if (concat.op != OpKind::kConcat || concat.inputs.size() < 2) return std::nullopt;
    const std::optional<TensorDesc>& joined = descs_[static_cast<size_t>(concat.outputs[0])];
    if (!joined) return std::nullopt;
    const auto joined_rank = static_cast<int>(joined->shape.size());
    const Result<int> concat_axis = normalize_axis(concat.attrs.get_int("axis", 0), joined_rank, "axis");
    if (!concat_axis.is_ok() || *concat_axis != joined_rank - 1) return std::nullopt;
    for (ValueId input : concat.inputs) {
      if (input == kNoValue || !descs_[static_cast<size_t>(input)]) return std::nullopt;
    }
    return match;
  }

  const TensorDesc& desc(ValueId v) const { return *descs_[static_cast<size_t>(v)]; }

 private:
  bool read_only_by(ValueId v, NodeId reader) const {
    const std::vector<NodeId>& readers = consumers_[static_cast<size_t>(v)];
    return readers.size() == 1 && readers[0] == reader && !is_graph_output(graph_, v);
  }

  const Graph& graph_;
  const std::vector<std::vector<NodeId>> consumers_;
  const std::vector<std::optional<TensorDesc>> descs_;
};

ValueId shape_constant(Graph& graph, const std::string& name, const Shape& shape) {
  return graph.add_initializer(unique_value_name(graph, name),
                               Tensor::from_vector<int64_t>({static_cast<int64_t>(shape.size())}, shape));
}

}  // namespace

Status push_expectations_into_concat_inputs(Graph& graph, PassReport& report) {
  std::vector<Match> matches;
  std::vector<std::vector<Shape>> piece_shapes;  // per match, each Concat input's shape
  {
    const JoinedExpectations finder(graph);
    for (size_t n = 0; n < graph.nodes().size(); ++n) {
      if (std::optional<Match> match = finder.find(static_cast<NodeId>(n))) {
        std::vector<Shape> shapes;
        for (ValueId input : graph.node(match->concat).inputs) shapes.push_back(finder.desc(input).shape);
        matches.push_back(std::move(*match));
        piece_shapes.push_back(std::move(shapes));
      }
    }
  }
  if (matches.empty()) return Status::ok();
  std::vector<std::vector<Node>> replacement(graph.nodes().size());
  std::vector<bool> dead(graph.nodes().size(), false);
  for (size_t m = 0; m < matches.size(); ++m) {
    const Match& match = matches[m];
    const Node expectation = graph.node(match.expectation);
    const Node concat = graph.node(match.concat);
    const int64_t axis = expectation.attrs.get_int("axis", 0);
    std::vector<Node>& nodes = replacement[static_cast<size_t>(match.expectation)];
    Node joined;
    joined.op = OpKind::kConcat;
    joined.name = expectation.name + "_joined";
    joined.attrs.set("axis", int64_t{-1});
    for (size_t i = 0; i < concat.inputs.size(); ++i) {
      const std::string piece_name = expectation.name + "_" + std::to_string(i);
      ValueId piece = concat.inputs[i];
      TensorDesc viewed = match.viewed;
      viewed.shape.back() = piece_shapes[m][i].back();
      if (match.reshape >= 0) {
        Node view;
        view.op = OpKind::kReshape;
        view.name = piece_name + "_view";
        view.inputs = {piece, shape_constant(graph, view.name + "_shape", viewed.shape)};
        piece = graph.add_value(unique_value_name(graph, view.name), viewed);
        view.outputs = {piece};
        nodes.push_back(std::move(view));
      }
      Node part = expectation;
      part.name = piece_name;
      part.inputs[0] = piece;
      TensorDesc expected = viewed;
      const auto rank = static_cast<int64_t>(expected.shape.size());
      expected.shape[static_cast<size_t>(axis < 0 ? axis + rank : axis)] = 1;
      part.outputs = {graph.add_value(unique_value_name(graph, piece_name), expected)};
      joined.inputs.push_back(part.outputs[0]);
      nodes.push_back(std::move(part));
    }
    joined.outputs = expectation.outputs;
    nodes.push_back(std::move(joined));
    dead[static_cast<size_t>(match.expectation)] = true;
    dead[static_cast<size_t>(match.concat)] = true;
    if (match.reshape >= 0) dead[static_cast<size_t>(match.reshape)] = true;
    ++report.changes;
    report.details.push_back(make_message(graph.describe_node(match.expectation), " computed on each of the ",
                                          concat.inputs.size(), " inputs of ", graph.describe_node(match.concat),
                                          ", the results joined"));
  }
  insert_nodes_and_compact(graph, std::move(replacement), dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
