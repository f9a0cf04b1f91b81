// push_slices_into_concat_inputs: pieces cut from a Concat's output are cut from its inputs
// instead, and pieces that are whole inputs are those inputs. YOLOv8's head concatenates each
// level's box bins and class logits on the channels, views each level as rows of cells,
// concatenates the levels on the cells (`predictions`, [1, 144, 8400]) and cuts that into bins
// and logits again. After the rewrites, bins is the Concat on the cells of the levels' bin Convs'
// outputs and logits likewise: the 144-row copy and the per-level Concats are gone, and the Sigmoid
// on the logits can move into the class Convs (push_activations_into_concat_inputs).
//
// A cut is a Slice of one axis (step 1, constant bounds) or a Split (fusion/axis_cut.h) of a value
// V of static shape; no piece of it, and not V, is a graph output. Rewrites, one at a time until
// none applies:
// - V = Concat on another axis, every reader of V is such a cut on an axis other than the
//   Concat's, and every input has only dims of 1 before the cut's axis (so its pieces are views of
//   it, not copies): each piece becomes the Concat of that piece of every input. The Concat dies
//   with its last reader.
// - V = Concat on the cut's axis and every piece spans whole inputs: a piece of one input is that
//   input (its readers read the input instead), one of several their Concat.
// - V = Reshape that keeps every dim up to the cut's axis, of a value made by a Concat or Reshape
//   (where the rules above can go on): each piece is the Reshape of that piece of the input.
// New nodes take the cut's place in the node order: the Concat's or Reshape's inputs come before.
// Slices, Splits, Concats and Reshapes left with no reader are removed.
#include <optional>
#include <string>
#include <vector>

#include "fusion/axis_cut.h"
#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "runtime/ops/axes.h"

namespace edgefuse::fusion {

namespace {

constexpr int kMaxRewrites = 256;  // a bound on the loop; each rewrite moves cuts towards the inputs

class SliceMover {
 public:
  explicit SliceMover(Graph& graph)
      : graph_(graph), consumers_(value_consumers(graph)), descs_(static_value_descs(graph)) {}

  // Rewrites one cut, if any can be; returns its description.
  std::optional<std::string> rewrite_one() {
    for (size_t n = 0; n < graph_.nodes().size(); ++n) {
      const std::optional<AxisCut> cut = movable_cut(static_cast<NodeId>(n));
      if (!cut) continue;
      const Node& joined = graph_.node(graph_.value(cut->source).producer);
      std::optional<std::string> done;
      if (joined.op == OpKind::kReshape) {
        done = through_reshape(*cut);
      } else if (concat_axis(joined) == cut->axis) {
        done = into_whole_inputs(*cut);
      } else {
        done = into_each_input(*cut);
      }
      if (done) return done;
    }
    return std::nullopt;
  }

 private:
  // The cut node n makes of a Concat's or Reshape's output, when the rules allow one at all.
  std::optional<AxisCut> movable_cut(NodeId n) const {
    std::optional<AxisCut> cut = axis_cut(graph_, n, descs_);
    if (!cut || is_graph_output(graph_, cut->source)) return std::nullopt;
    for (const AxisPiece& piece : cut->pieces) {
      if (is_graph_output(graph_, piece.value)) return std::nullopt;
    }
    const NodeId producer = graph_.value(cut->source).producer;
    if (producer < 0) return std::nullopt;
    const OpKind op = graph_.node(producer).op;
    if (op != OpKind::kConcat && op != OpKind::kReshape) return std::nullopt;
    return cut;
  }

  std::optional<int> concat_axis(const Node& concat) const {
    const std::optional<TensorDesc>& joined = descs_[static_cast<size_t>(concat.outputs[0])];
    if (concat.op != OpKind::kConcat || !joined) return std::nullopt;
    const Result<int> axis =
        normalize_axis(concat.attrs.get_int("axis", 0), static_cast<int>(joined->shape.size()), "axis");
    return axis.is_ok() ? std::optional<int>(*axis) : std::nullopt;
  }

  const TensorDesc& desc(ValueId v) const { return *descs_[static_cast<size_t>(v)]; }

  // Rule 1: a Concat on another axis, read only through cuts on axes other than its own.
  std::optional<std::string> into_each_input(const AxisCut& cut) {
    const NodeId concat_id = graph_.value(cut.source).producer;
    const Node concat = graph_.node(concat_id);
    const std::optional<int> axis = concat_axis(concat);
    if (!axis) return std::nullopt;
    for (NodeId reader : consumers_[static_cast<size_t>(cut.source)]) {
      const std::optional<AxisCut> other = axis_cut(graph_, reader, descs_);
      if (!other || other->axis == *axis || other->source != cut.source) return std::nullopt;
    }
    for (ValueId input : concat.inputs) {
      if (input == kNoValue || !descs_[static_cast<size_t>(input)]) return std::nullopt;
      const Shape& shape = desc(input).shape;
      for (int d = 0; d < cut.axis; ++d) {
        if (shape[static_cast<size_t>(d)] != 1) return std::nullopt;
      }
    }
    std::vector<Node> added;
    for (const AxisPiece& piece : cut.pieces) {
      Node joined = concat;
      joined.name = graph_.value(piece.value).name + "_joined";
      joined.inputs.clear();
      for (ValueId input : concat.inputs) {
        joined.inputs.push_back(add_slice(input, cut.axis, piece.start, piece.end, added));
      }
      joined.outputs = {piece.value};
      added.push_back(std::move(joined));
    }
    std::string done = make_message("cut ", graph_.describe_node(concat_id), "'s inputs for its ", cut.pieces.size(),
                                    " piece", cut.pieces.size() == 1 ? "" : "s", " on axis ", cut.axis);
    replace_cut(cut, std::move(added));
    return done;
  }

  // Rule 2: a Concat on the cut's axis, each piece whole inputs.
  std::optional<std::string> into_whole_inputs(const AxisCut& cut) {
    const NodeId concat_id = graph_.value(cut.source).producer;
    const Node concat = graph_.node(concat_id);
    std::vector<int64_t> offsets = {0};
    for (ValueId input : concat.inputs) {
      if (input == kNoValue || !descs_[static_cast<size_t>(input)]) return std::nullopt;
      offsets.push_back(offsets.back() + desc(input).shape[static_cast<size_t>(cut.axis)]);
    }
    const auto input_at = [&](int64_t offset) -> std::optional<size_t> {
      for (size_t i = 0; i < offsets.size(); ++i) {
        if (offsets[i] == offset) return i;
      }
      return std::nullopt;
    };
    std::vector<std::pair<size_t, size_t>> spans;
    for (const AxisPiece& piece : cut.pieces) {
      const std::optional<size_t> first = input_at(piece.start), last = input_at(piece.end);
      if (!first || !last || *last <= *first) return std::nullopt;
      spans.emplace_back(*first, *last);
    }
    std::vector<Node> added;
    for (size_t p = 0; p < cut.pieces.size(); ++p) {
      const auto [first, last] = spans[p];
      if (last - first == 1) {
        replace_uses(graph_, cut.pieces[p].value, concat.inputs[first]);
        continue;
      }
      Node joined = concat;
      joined.name = graph_.value(cut.pieces[p].value).name + "_joined";
      joined.inputs.assign(concat.inputs.begin() + static_cast<std::ptrdiff_t>(first),
                           concat.inputs.begin() + static_cast<std::ptrdiff_t>(last));
      joined.outputs = {cut.pieces[p].value};
      added.push_back(std::move(joined));
    }
    std::string done = make_message("took ", cut.pieces.size(), " piece", cut.pieces.size() == 1 ? "" : "s", " of ",
                                    graph_.describe_node(concat_id), " as its inputs");
    replace_cut(cut, std::move(added));
    return done;
  }

  // Rule 3: a Reshape keeping the dims up to the cut's axis, of a Concat's or Reshape's output.
  std::optional<std::string> through_reshape(const AxisCut& cut) {
    const NodeId reshape_id = graph_.value(cut.source).producer;
    const Node& reshape = graph_.node(reshape_id);
    const ValueId input = reshape.inputs[0];
    if (input == kNoValue || !descs_[static_cast<size_t>(input)]) return std::nullopt;
    const NodeId producer = graph_.value(input).producer;
    if (producer < 0 || (graph_.node(producer).op != OpKind::kConcat && graph_.node(producer).op != OpKind::kReshape)) {
      return std::nullopt;
    }
    const Shape& before = desc(input).shape;
    const Shape& after = desc(cut.source).shape;
    if (static_cast<int>(before.size()) <= cut.axis) return std::nullopt;
    for (int d = 0; d <= cut.axis; ++d) {
      if (before[static_cast<size_t>(d)] != after[static_cast<size_t>(d)]) return std::nullopt;
    }
    std::vector<Node> added;
    for (const AxisPiece& piece : cut.pieces) {
      Node viewed;
      viewed.op = OpKind::kReshape;
      viewed.name = graph_.value(piece.value).name + "_reshaped";
      const Shape& shape = desc(piece.value).shape;
      const ValueId target = graph_.add_initializer(
          unique_value_name(graph_, viewed.name + "_shape"),
          Tensor::from_vector<int64_t>({static_cast<int64_t>(shape.size())}, std::vector<int64_t>(shape)));
      viewed.inputs = {add_slice(input, cut.axis, piece.start, piece.end, added), target};
      viewed.outputs = {piece.value};
      added.push_back(std::move(viewed));
    }
    std::string done =
        make_message("cut the input of ", graph_.describe_node(reshape_id), " for its ", cut.pieces.size(), " piece",
                     cut.pieces.size() == 1 ? "" : "s", " on axis ", cut.axis);
    replace_cut(cut, std::move(added));
    return done;
  }

  // A Slice of `value` on `axis`, [start, end), appended to `added`; returns its output.
  ValueId add_slice(ValueId value, int axis, int64_t start, int64_t end, std::vector<Node>& added) {
    Node slice;
    slice.op = OpKind::kSlice;
    slice.name = unique_value_name(graph_, graph_.value(value).name + "_cut");
    const auto operand = [&](const char* what, int64_t x) {
      return graph_.add_initializer(unique_value_name(graph_, slice.name + "_" + what),
                                    Tensor::from_vector<int64_t>({1}, {x}));
    };
    slice.inputs = {value, operand("starts", start), operand("ends", end), operand("axes", axis)};
    TensorDesc piece = desc(value);
    piece.shape[static_cast<size_t>(axis)] = end - start;
    const ValueId output = graph_.add_value(slice.name, piece);
    slice.outputs = {output};
    added.push_back(std::move(slice));
    return output;
  }

  // The cut's node replaced by `added`, in its place in the node order.
  void replace_cut(const AxisCut& cut, std::vector<Node> added) {
    std::vector<Node> nodes;
    nodes.reserve(graph_.nodes().size() + added.size());
    for (size_t n = 0; n < graph_.nodes().size(); ++n) {
      if (static_cast<NodeId>(n) != cut.cutter) {
        nodes.push_back(std::move(graph_.nodes()[n]));
        continue;
      }
      for (Node& node : added) nodes.push_back(std::move(node));
    }
    graph_.nodes() = std::move(nodes);
    compact(graph_, std::vector<bool>(graph_.nodes().size(), false));
  }

  Graph& graph_;
  const std::vector<std::vector<NodeId>> consumers_;
  const std::vector<std::optional<TensorDesc>> descs_;
};

// Removes Slices, Splits, Concats and Reshapes none of whose outputs is read or a graph output.
void remove_unread_cuts_and_joins(Graph& graph) {
  for (bool removed = true; removed;) {
    removed = false;
    const std::vector<std::vector<NodeId>> consumers = value_consumers(graph);
    std::vector<bool> dead(graph.nodes().size(), false);
    for (size_t n = 0; n < graph.nodes().size(); ++n) {
      const Node& node = graph.nodes()[n];
      if (node.op != OpKind::kSlice && node.op != OpKind::kSplit && node.op != OpKind::kConcat &&
          node.op != OpKind::kReshape) {
        continue;
      }
      bool read = false;
      for (ValueId v : node.outputs) {
        read = read || !consumers[static_cast<size_t>(v)].empty() || is_graph_output(graph, v);
      }
      dead[n] = !read;
      removed = removed || !read;
    }
    if (removed) compact(graph, dead);
  }
}

}  // namespace

Status push_slices_into_concat_inputs(Graph& graph, PassReport& report) {
  for (int i = 0; i < kMaxRewrites; ++i) {
    std::optional<std::string> done = SliceMover(graph).rewrite_one();
    if (!done) break;
    remove_unread_cuts_and_joins(graph);
    ++report.changes;
    report.details.push_back(std::move(*done));
  }
  return Status::ok();
}

}  // namespace edgefuse::fusion
