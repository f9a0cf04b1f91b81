// fold_slices_into_windowed_chains: a tensor X cut along one axis into pieces (Slices, or one
// Split), pointwise ops on some pieces and the pieces joined again in their order by a Concat on
// that axis becomes one windowed PointwiseChain per changed piece, each computing its piece's
// window of X and passing the rest through (runtime/ops/pointwise_chain.h). YOLOv5's head is
// this: Sigmoid, split into (xy, wh, rest) on the last axis, xy and wh decoded, concatenated
// again. After the rewrite the memory planner runs the chains in place on X, so the 81 of 85
// columns that no op changes are neither sliced out nor concatenated back.
//
// Legality: the Concat's inputs, in order, are the pieces of one f32 X of static shape, covering
// [0, X.dim(axis)) on the Concat's axis without gap or overlap. A piece is the output of a Slice
// of X on that axis alone with step 1 and constant bounds, or of a Split of X on that axis whose
// outputs are all pieces of this Concat. Each piece is read by one node only and is not a graph
// output: by the Concat (an unchanged piece), or by the head of a pointwise chain
// (fusion/pointwise_chain_finder.h) whose chain value the piece is, whose output is the Concat's
// input, read by the Concat alone, not a graph output, and shaped as the piece (so the chain's
// other inputs broadcast to the window without widening it). At least one piece changes. X may
// have other readers (then the first chain writes a copy of X). The chains take the Concat's
// place in the node order, where all their inputs exist.
#include <optional>
#include <string>
#include <vector>

#include "fusion/axis_cut.h"
#include "fusion/graph_edit.h"
#include "fusion/passes.h"
#include "fusion/pointwise_chain_finder.h"
#include "runtime/ops/axes.h"

namespace edgefuse::fusion {

namespace {

// One piece of X: [start, end) on the axis, the node that cut it, and the chain that changes it.
struct Piece {
  ValueId value = kNoValue;
  NodeId cutter = -1;
  int64_t start = 0;
  int64_t end = 0;
  std::optional<PointwiseChainFinder::Chain> chain;
};

// A rewrite: the Concat, the source X, its pieces in order.
struct SlicedJoin {
  NodeId concat = -1;
  ValueId source = kNoValue;
  TensorDesc source_desc;  // static
  int axis = 0;
  std::vector<Piece> pieces;
};

class SlicedJoinFinder {
 public:
  explicit SlicedJoinFinder(const Graph& graph) : graph_(graph), chains_(graph) {}

  std::optional<SlicedJoin> find(NodeId concat_id) const {
    const Node& concat = graph_.node(concat_id);
    if (concat.op != OpKind::kConcat || concat.outputs.size() != 1 || concat.inputs.size() < 2) return std::nullopt;
    const std::optional<TensorDesc>& joined = chains_.static_desc(concat.outputs[0]);
    if (!joined || joined->dtype != DType::kF32) return std::nullopt;
    const Result<int> axis =
        normalize_axis(concat.attrs.get_int("axis", 0), static_cast<int>(joined->shape.size()), "axis");
    if (!axis.is_ok()) return std::nullopt;
    SlicedJoin join;
    join.concat = concat_id;
    join.axis = *axis;
    for (ValueId input : concat.inputs) {
      std::optional<Piece> piece = piece_joined_as(input, concat_id, join.axis);
      if (!piece) return std::nullopt;
      const ValueId source = graph_.node(piece->cutter).inputs[0];
      if (join.source != kNoValue && source != join.source) return std::nullopt;
      join.source = source;
      const int64_t expected_start = join.pieces.empty() ? 0 : join.pieces.back().end;
      if (piece->start != expected_start) return std::nullopt;
      join.pieces.push_back(std::move(*piece));
    }
    const std::optional<TensorDesc>& source = chains_.static_desc(join.source);
    if (!source || !(*source == *joined) || join.pieces.back().end != source->shape[static_cast<size_t>(join.axis)]) {
      return std::nullopt;
    }
    join.source_desc = *source;
    bool changed = false;
    for (const Piece& piece : join.pieces) {
      changed = changed || piece.chain.has_value();
      const Node& cutter = graph_.node(piece.cutter);
      if (cutter.op != OpKind::kSplit) continue;
      for (ValueId output : cutter.outputs) {  // every output of a Split is a piece here
        bool joined_here = false;
        for (const Piece& other : join.pieces) joined_here = joined_here || other.value == output;
        if (!joined_here) return std::nullopt;
      }
    }
    if (!changed) return std::nullopt;
    return join;
  }

 private:
  // The piece that reaches the Concat as `input`: the piece itself, or a chain's output.
  std::optional<Piece> piece_joined_as(ValueId input, NodeId concat, int axis) const {
    if (!read_once_by(input, concat)) return std::nullopt;
    if (std::optional<Piece> piece = piece_of(input, axis)) return piece;
    // A chain ends at `input`: look for its piece among the values up to kMaxChainSteps nodes back.
    std::vector<ValueId> frontier = {input};
    for (int depth = 0; depth < kMaxChainSteps && !frontier.empty(); ++depth) {
      std::vector<ValueId> next;
      for (ValueId v : frontier) {
        const NodeId producer = graph_.value(v).producer;
        if (producer < 0) continue;
        const Node& node = graph_.node(producer);
        if (!is_pointwise_unary(node.op) && !is_pointwise_binary(node.op)) continue;
        for (ValueId operand : node.inputs) {
          if (operand == kNoValue || is_initializer(graph_, operand)) continue;
          std::optional<Piece> piece = piece_of(operand, axis);
          if (piece && chain_changes(*piece, input)) return piece;
          next.push_back(operand);
        }
      }
      frontier = std::move(next);
    }
    return std::nullopt;
  }

  // Whether the one reader of `piece` heads a chain that ends at `output`; records the chain.
  bool chain_changes(Piece& piece, ValueId output) const {
    const std::vector<NodeId>& readers = chains_.consumers()[static_cast<size_t>(piece.value)];
    if (readers.size() != 1) return false;
    const std::vector<uint8_t> none_taken(graph_.nodes().size(), 0);
    std::optional<PointwiseChainFinder::Chain> chain = chains_.chain_from(readers[0], none_taken, 1);
    if (!chain || chain->output != output || chain->inputs[0] != piece.value ||
        !(*chains_.static_desc(output) == *chains_.static_desc(piece.value))) {
      return false;
    }
    piece.chain = std::move(chain);
    return true;
  }

  bool read_once_by(ValueId v, NodeId reader) const {
    const std::vector<NodeId>& readers = chains_.consumers()[static_cast<size_t>(v)];
    return readers.size() == 1 && readers[0] == reader && !is_graph_output(graph_, v);
  }

  // `v` as a piece of its cutter's input on `axis`, or nothing when no Slice or Split made it so.
  std::optional<Piece> piece_of(ValueId v, int axis) const {
    const NodeId cutter = graph_.value(v).producer;
    if (cutter < 0 || is_graph_output(graph_, v)) return std::nullopt;
    const std::optional<AxisCut> cut = axis_cut(graph_, cutter, chains_.static_descs(), axis);
    if (!cut || chains_.static_desc(cut->source)->dtype != DType::kF32) return std::nullopt;
    for (const AxisPiece& piece : cut->pieces) {
      if (piece.value == v) return Piece{v, cutter, piece.start, piece.end, std::nullopt};
    }
    return std::nullopt;
  }

  const Graph& graph_;
  PointwiseChainFinder chains_;
};

}  // namespace

Status fold_slices_into_windowed_chains(Graph& graph, PassReport& report) {
  std::vector<SlicedJoin> joins;
  {
    const SlicedJoinFinder finder(graph);
    for (size_t n = 0; n < graph.nodes().size(); ++n) {
      if (std::optional<SlicedJoin> join = finder.find(static_cast<NodeId>(n))) joins.push_back(std::move(*join));
    }
  }
  if (joins.empty()) return Status::ok();
  // The chains go where each Concat was; the Concats, the cutters and the chain members die.
  std::vector<std::vector<Node>> replacement(graph.nodes().size());
  std::vector<bool> dead(graph.nodes().size(), false);
  for (const SlicedJoin& join : joins) {
    const Node& concat = graph.node(join.concat);
    const TensorDesc& whole = join.source_desc;
    ValueId current = join.source;
    size_t chains_left = 0;
    for (const Piece& piece : join.pieces) chains_left += piece.chain ? 1 : 0;
    std::string windows;
    for (const Piece& piece : join.pieces) {
      dead[static_cast<size_t>(piece.cutter)] = true;
      if (!piece.chain) continue;
      const PointwiseChainFinder::Chain& chain = *piece.chain;
      Node windowed;
      windowed.op = OpKind::kPointwiseChain;
      windowed.name = graph.node(chain.members.back()).name;
      windowed.inputs = chain.inputs;
      windowed.inputs[0] = current;
      current = --chains_left == 0 ? concat.outputs[0]
                                   : graph.add_value(unique_value_name(graph, windowed.name + "_window"), whole);
      windowed.outputs = {current};
      PointwiseChain program = chain.program;
      program.window = ChainWindow{join.axis, piece.start, piece.end};
      set_pointwise_chain(windowed.attrs, program);
      for (NodeId member : chain.members) dead[static_cast<size_t>(member)] = true;
      replacement[static_cast<size_t>(join.concat)].push_back(std::move(windowed));
      windows += make_message(windows.empty() ? "" : ", ", "[", piece.start, ", ", piece.end, ") in ",
                              chain.members.size(), " step", chain.members.size() == 1 ? "" : "s");
    }
    dead[static_cast<size_t>(join.concat)] = true;
    ++report.changes;
    report.details.push_back(make_message("folded ", graph.describe_node(join.concat), " of ", join.pieces.size(),
                                          " pieces of '", graph.value(join.source).name, "' on axis ", join.axis,
                                          " into windowed chains: ", windows));
  }
  insert_nodes_and_compact(graph, std::move(replacement), dead);
  return Status::ok();
}

}  // namespace edgefuse::fusion
