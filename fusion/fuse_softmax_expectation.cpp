// fuse_softmax_expectation: a Softmax over channels whose only reader is a 1x1 Conv to one channel
// becomes one SoftmaxExpectation (runtime/ops/ops.h): the expectation of the Conv's weights under
// the softmax, plus its bias. Detectors with a distribution head (YOLOv8's DFL: box side
// distances as 16 bins, [1, 4, 16, cells] transposed to [1, 16, 4, cells], Softmax over the bins,
// a Conv with weights 0..15 summing bin * index) compute it this way; one kernel now reads the
// bins once and writes the distances, where the Transpose, the Softmax and the Conv each passed
// over the bins. A Transpose before the Softmax is folded in: the kernel reads the bins in place
// along the axis the Transpose moved to the channels.
//
// Legality: the Conv has a constant f32 weight [1, L, 1, 1] and at most a one-element constant f32
// bias, group 1, unit strides and dilations, no padding, no fused attributes or residual; its
// input is an opset-13 Softmax on axis 1 of a rank-4 f32 tensor of static shape, read by the Conv
// alone and not a graph output. A Transpose making the Softmax's input likewise (read by it
// alone, not a graph output) is folded when the other axes keep their order (so the expectation
// over the input's axis perm[1] lies in memory as the Conv's output does, and a Reshape views it
// so); otherwise the Softmax's input is read on axis 1. The new node takes the Conv's place.
#include <optional>
#include <string>
#include <vector>

#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/ops.h"

namespace edgefuse::fusion {

namespace {

struct Match {
  NodeId conv = -1, softmax = -1, transpose = -1;  // transpose: -1 when none is folded
  ValueId source = kNoValue;                       // what the expectation reads
  int64_t axis = 1;                                // its axis there
  TensorDesc source_desc, output_desc;             // static: the source's and the Conv output's
};

class ExpectationFinder {
 public:
  explicit ExpectationFinder(const Graph& graph)
      : graph_(graph), consumers_(value_consumers(graph)), descs_(static_value_descs(graph)) {}

  std::optional<Match> find(NodeId conv_id) const {
    const Node& conv = graph_.node(conv_id);
    if (!sums_channels_to_one(conv)) return std::nullopt;
    const ValueId normalised = conv.inputs[0];
    const NodeId softmax_id = graph_.value(normalised).producer;
    if (softmax_id < 0 || !read_only_by(normalised, conv_id)) return std::nullopt;
    const Node& softmax = graph_.node(softmax_id);
    const std::optional<TensorDesc>& in = descs_[static_cast<size_t>(softmax.inputs[0])];
    if (softmax.op != OpKind::kSoftmax || softmax.attrs.get_int("legacy_flatten", 0) != 0 || !in ||
        in->dtype != DType::kF32 || in->shape.size() != 4) {
      return std::nullopt;
    }
    const int64_t axis = softmax.attrs.get_int("axis", -1);
    if (axis != 1 && axis != -3) return std::nullopt;
    const TensorDesc& weight = graph_.value(conv.inputs[1]).desc;
    const std::optional<TensorDesc>& out = descs_[static_cast<size_t>(conv.outputs[0])];
    if (weight.shape[1] != in->shape[1] || !out) return std::nullopt;
    Match match{conv_id, softmax_id, -1, softmax.inputs[0], 1, *in, *out};
    const NodeId transpose_id = graph_.value(softmax.inputs[0]).producer;
    if (transpose_id >= 0 && read_only_by(softmax.inputs[0], softmax_id)) {
      const Node& transpose = graph_.node(transpose_id);
      const std::optional<TensorDesc>& source = descs_[static_cast<size_t>(transpose.inputs[0])];
      const Result<std::vector<int64_t>> perm = transpose_permutation(transpose.attrs, 4);
      if (transpose.op == OpKind::kTranspose && source && perm.is_ok() && others_in_order(*perm)) {
        match.transpose = transpose_id;
        match.source = transpose.inputs[0];
        match.axis = (*perm)[1];
        match.source_desc = *source;
      }
    }
    return match;
  }

 private:
  bool read_only_by(ValueId v, NodeId reader) const {
    const std::vector<NodeId>& readers = consumers_[static_cast<size_t>(v)];
    return readers.size() == 1 && readers[0] == reader && !is_graph_output(graph_, v);
  }

  // A 1x1 Conv to one channel with a constant weight and bias and nothing fused.
  bool sums_channels_to_one(const Node& conv) const {
    if (!has_pointwise_conv_window(graph_, conv) || conv.inputs.size() > 3) return false;
    for (const auto& [name, value] : conv.attrs.entries()) {
      if (name.rfind("fused_", 0) == 0) return false;
    }
    const Tensor* weight = constant_data(graph_, conv.inputs[1]);
    if (weight == nullptr || weight->dtype() != DType::kF32 || weight->shape()[0] != 1) return false;
    if (conv.has_input(2)) {
      const Tensor* bias = constant_data(graph_, conv.inputs[2]);
      if (bias == nullptr || bias->dtype() != DType::kF32 || bias->numel() != 1) return false;
    }
    return true;
  }

  // Whether the permutation lists the axes other than the one it moves to position 1 in order.
  static bool others_in_order(const std::vector<int64_t>& perm) {
    int64_t last = -1;
    for (size_t i = 0; i < perm.size(); ++i) {
      if (i == 1) continue;
      if (perm[i] < last) return false;
      last = perm[i];
    }
    return true;
  }

  const Graph& graph_;
  const std::vector<std::vector<NodeId>> consumers_;
  const std::vector<std::optional<TensorDesc>> descs_;
};

}  // namespace

Status fuse_softmax_expectation(Graph& graph, PassReport& report) {
  std::vector<Match> matches;
  {
    const ExpectationFinder finder(graph);
    for (size_t n = 0; n < graph.nodes().size(); ++n) {
      if (std::optional<Match> match = finder.find(static_cast<NodeId>(n))) matches.push_back(std::move(*match));
    }
  }
  if (matches.empty()) return Status::ok();
  std::vector<std::vector<Node>> replacement(graph.nodes().size());
  std::vector<bool> dead(graph.nodes().size(), false);
  for (const Match& match : matches) {
    const Node& conv = graph.node(match.conv);
    const ValueId output = conv.outputs[0];
    const Tensor& weight = *constant_data(graph, conv.inputs[1]);
    const int64_t length = weight.numel();
    Node expectation;
    expectation.op = OpKind::kSoftmaxExpectation;
    expectation.name = conv.name;
    expectation.attrs.set("axis", match.axis);
    const ValueId weights = graph.add_initializer(
        unique_value_name(graph, conv.name + "_weights"),
        Tensor::from_vector<float>({length}, std::vector<float>(weight.data<float>(), weight.data<float>() + length)));
    expectation.inputs = {match.source, weights};
    if (conv.has_input(2)) expectation.inputs.push_back(conv.inputs[2]);
    TensorDesc expected = match.source_desc;
    expected.shape[static_cast<size_t>(match.axis)] = 1;
    const bool same_shape = expected.shape == match.output_desc.shape;
    const ValueId written =
        same_shape ? output : graph.add_value(unique_value_name(graph, conv.name + "_expectation"), expected);
    expectation.outputs = {written};
    std::vector<Node>& nodes = replacement[static_cast<size_t>(match.conv)];
    nodes.push_back(std::move(expectation));
    if (!same_shape) {
      Node view;
      view.op = OpKind::kReshape;
      view.name = conv.name + "_view";
      const Shape& shape = match.output_desc.shape;
      view.inputs = {written, graph.add_initializer(unique_value_name(graph, view.name + "_shape"),
                                                    Tensor::from_vector<int64_t>({static_cast<int64_t>(shape.size())},
                                                                                 std::vector<int64_t>(shape)))};
      view.outputs = {output};
      nodes.push_back(std::move(view));
    }
    dead[static_cast<size_t>(match.conv)] = true;
    dead[static_cast<size_t>(match.softmax)] = true;
    if (match.transpose >= 0) dead[static_cast<size_t>(match.transpose)] = true;
    ++report.changes;
    report.details.push_back(make_message(
        graph.describe_node(match.softmax), match.transpose >= 0 ? " (and the Transpose before it)" : "", " and ",
        graph.describe_node(match.conv), " into a SoftmaxExpectation over axis ", match.axis, " of ", length));
  }
  insert_nodes_and_compact(graph, std::move(replacement), dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
