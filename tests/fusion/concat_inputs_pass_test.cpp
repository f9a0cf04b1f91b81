// push_slices_into_concat_inputs and push_activations_into_concat_inputs on hand-built graphs:
// YOLOv8's head (levels of box bins and class logits joined on channels, viewed as rows, joined on
// the cells, cut into bins and logits again, Sigmoid on the logits) loses its joins and cuts, and
// its Sigmoid becomes the class Convs' epilogue; what the legality rules leave alone. Each rewrite
// is checked against the unfused graph on random inputs with both kernel sets.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "fusion/passes.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {
namespace {

Attributes pointwise_conv() {
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{1, 1});
  return a;
}

constexpr int64_t kBins = 8, kClasses = 3, kRows = kBins + kClasses;

// YOLOv8's head over three levels of 4 x 4, 2 x 2 and 1 x 1 cells from 5 channels each: box bins
// and class logits from a 1x1 Conv each, joined on channels, viewed as [1, 11, cells], joined on the
// cells; then the bins (ReLU standing in for their decoding) and the Sigmoid of the logits.
struct Yolov8Head {
  GraphMaker m;
  ValueId predictions = kNoValue;
  ValueId logits = kNoValue;
};

void build_yolov8_head(Yolov8Head& h, std::mt19937& rng, bool use_split) {
  GraphMaker& m = h.m;
  std::vector<ValueId> levels;
  for (int64_t side : {4, 2, 1}) {
    const ValueId x = m.input({1, 5, side, side});
    const ValueId box = m.node(OpKind::kConv, {x, m.random_constant({kBins, 5, 1, 1}, rng)}, pointwise_conv());
    const ValueId cls =
        m.node(OpKind::kConv, {x, m.random_constant({kClasses, 5, 1, 1}, rng), m.random_constant({kClasses}, rng)},
               pointwise_conv());
    const ValueId joined = m.node(OpKind::kConcat, {box, cls}, axis_attr(1));
    levels.push_back(m.node(OpKind::kReshape, {joined, m.ints({1, kRows, side * side})}));
  }
  h.predictions = m.node(OpKind::kConcat, levels, axis_attr(2));
  ValueId bins = kNoValue;
  if (use_split) {
    const std::vector<ValueId> pieces =
        m.node_with_outputs(OpKind::kSplit, {h.predictions, m.ints({kBins, kClasses})}, 2, axis_attr(1));
    bins = pieces[0];
    h.logits = pieces[1];
  } else {
    bins = m.slice(h.predictions, 0, kBins, 1);
    h.logits = m.slice(h.predictions, kBins, kRows, 1);
  }
  m.output(m.node(OpKind::kRelu, {bins}));
  m.output(m.node(OpKind::kSigmoid, {h.logits}));
}

TEST_CASE("push_slices_into_concat_inputs: YOLOv8's bins and logits are joined from the Convs' outputs") {
  for (bool use_split : {false, true}) {
    CAPTURE(use_split);
    std::mt19937 rng(21);
    Yolov8Head h;
    build_yolov8_head(h, rng, use_split);
    // The cut of `predictions` (Split: one rewrite, Slices: two), then per level the bins' and the
    // logits' Slice through its Reshape and into its Concat.
    const int expected = (use_split ? 1 : 2) + 4 * 3;
    const Graph pushed = apply_and_compare(h.m.graph(), fusion::push_slices_into_concat_inputs, expected);
    CHECK(count_nodes(pushed, OpKind::kSlice) == 0);
    CHECK(count_nodes(pushed, OpKind::kSplit) == 0);
    CHECK(count_nodes(pushed, OpKind::kConcat) == 2);  // the bins and the logits, on the cells
    CHECK(count_nodes(pushed, OpKind::kReshape) == 6);
    for (const Node& node : pushed.nodes()) {
      if (node.op != OpKind::kConcat) continue;
      CHECK(node.attrs.get_int("axis", 0) == 2);
      for (ValueId input : node.inputs) {
        const Node& reshape = pushed.node(pushed.value(input).producer);
        REQUIRE(reshape.op == OpKind::kReshape);
        CHECK(pushed.node(pushed.value(reshape.inputs[0]).producer).op == OpKind::kConv);
      }
    }

    // The Sigmoid then moves onto the three class Convs (and the Relu onto the box Convs), and
    // the whole pass list leaves neither: each is a Conv's epilogue.
    const Graph moved = apply_and_compare(pushed, fusion::push_activations_into_concat_inputs, 2);
    CHECK(count_nodes(moved, OpKind::kSigmoid) == 3);
    CHECK(count_nodes(moved, OpKind::kRelu) == 3);
    for (const Node& node : moved.nodes()) {
      if (node.op == OpKind::kSigmoid || node.op == OpKind::kRelu) {
        CHECK(moved.node(moved.value(node.inputs[0]).producer).op == OpKind::kConv);
      }
    }
    Graph fused = h.m.graph();
    const std::vector<PassReport> reports = optimize_checked(fused);
    CHECK(pass_changes(reports, "push_slices_into_concat_inputs") == expected);
    CHECK(pass_changes(reports, "push_activations_into_concat_inputs") == 2);
    CHECK(count_nodes(fused, OpKind::kSigmoid) == 0);
    CHECK(count_nodes(fused, OpKind::kRelu) == 0);
    CHECK(count_nodes(fused, OpKind::kConcat) == 2);
    CHECK(fused_error(fused, h.m.graph(), 22) <= kFusionTolerance);
  }
}

TEST_CASE("push_slices_into_concat_inputs: other readers, graph outputs and pieces across inputs are left alone") {
  std::mt19937 rng(23);
  {
    Yolov8Head h;  // the joined predictions are also a graph output
    build_yolov8_head(h, rng, false);
    h.m.output(h.predictions);
    const Graph pushed = apply_and_compare(h.m.graph(), fusion::push_slices_into_concat_inputs, 0);
    // The Sigmoid's input is a Slice, not assembled from Convs by Concats and Reshapes.
    apply_and_compare(pushed, fusion::push_activations_into_concat_inputs, 0);
  }
  {
    Yolov8Head h;  // a reader that is no cut: the cells' Concat stays, and so do its cuts
    build_yolov8_head(h, rng, false);
    h.m.output(h.m.node(OpKind::kExp, {h.predictions}));
    apply_and_compare(h.m.graph(), fusion::push_slices_into_concat_inputs, 0);
  }
  {
    GraphMaker m;  // a cut on the Concat's own axis across two inputs' boundary
    const ValueId a = m.node(OpKind::kRelu, {m.input({1, 3, 2})});
    const ValueId b = m.node(OpKind::kRelu, {m.input({1, 3, 2})});
    const ValueId joined = m.node(OpKind::kConcat, {a, b}, axis_attr(1));
    m.output(m.node(OpKind::kExp, {m.slice(joined, 1, 4, 1)}));
    apply_and_compare(m.graph(), fusion::push_slices_into_concat_inputs, 0);
  }
  {
    GraphMaker m;  // cut on the Concat's axis at whole inputs: the first piece is `a` itself
    const ValueId a = m.node(OpKind::kRelu, {m.input({1, 3, 2})});
    const ValueId b = m.node(OpKind::kRelu, {m.input({1, 2, 2})});
    const ValueId c = m.node(OpKind::kRelu, {m.input({1, 1, 2})});
    const ValueId joined = m.node(OpKind::kConcat, {a, b, c}, axis_attr(1));
    const std::vector<ValueId> pieces = m.node_with_outputs(OpKind::kSplit, {joined, m.ints({3, 3})}, 2, axis_attr(1));
    m.output(m.node(OpKind::kExp, {pieces[0]}));
    m.output(m.node(OpKind::kExp, {pieces[1]}));
    const Graph pushed = apply_and_compare(m.graph(), fusion::push_slices_into_concat_inputs, 1);
    CHECK(count_nodes(pushed, OpKind::kSplit) == 0);
    REQUIRE(count_nodes(pushed, OpKind::kConcat) == 1);  // b and c's; the first Exp reads a
    REQUIRE(pushed.nodes()[4].op == OpKind::kExp);
    CHECK(pushed.nodes()[4].inputs[0] == pushed.nodes()[0].outputs[0]);
  }
  {
    GraphMaker m;  // a cut on the Concat's other axis of inputs with an image axis before it:
    // their pieces would be copies, not views
    const ValueId a = m.node(OpKind::kRelu, {m.input({2, 4, 3})});
    const ValueId b = m.node(OpKind::kRelu, {m.input({2, 4, 1})});
    const ValueId joined = m.node(OpKind::kConcat, {a, b}, axis_attr(2));
    m.output(m.node(OpKind::kExp, {m.slice(joined, 0, 2, 1)}));
    apply_and_compare(m.graph(), fusion::push_slices_into_concat_inputs, 0);
  }
}

TEST_CASE("push_activations_into_concat_inputs: only onto Convs that nothing else reads") {
  std::mt19937 rng(24);
  const auto conv = [&](GraphMaker& m, ValueId x) {
    return m.node(OpKind::kConv, {x, m.random_constant({2, 3, 1, 1}, rng)}, pointwise_conv());
  };
  {
    GraphMaker m;  // Clip of a Reshape of a Concat of two Convs: moved, bounds and all
    const ValueId x = m.input({1, 3, 2, 2});
    const ValueId joined = m.node(OpKind::kConcat, {conv(m, x), conv(m, x)}, axis_attr(1));
    const ValueId rows = m.node(OpKind::kReshape, {joined, m.ints({1, 4, 4})});
    m.output(m.node(OpKind::kClip,
                    {rows, m.constant(Tensor::scalar<float>(-0.25f)), m.constant(Tensor::scalar<float>(0.5f))}));
    const Graph moved = apply_and_compare(m.graph(), fusion::push_activations_into_concat_inputs, 1);
    CHECK(count_nodes(moved, OpKind::kClip) == 2);
    Graph fused = m.graph();
    optimize_checked(fused);
    CHECK(count_nodes(fused, OpKind::kClip) == 0);
    CHECK(fused_error(fused, m.graph(), 25) <= kFusionTolerance);
  }
  {
    GraphMaker m;  // one input is no Conv's output
    const ValueId x = m.input({1, 3, 2, 2});
    const ValueId joined = m.node(OpKind::kConcat, {conv(m, x), m.node(OpKind::kExp, {x})}, axis_attr(1));
    m.output(m.node(OpKind::kSigmoid, {joined}));
    apply_and_compare(m.graph(), fusion::push_activations_into_concat_inputs, 0);
  }
  {
    GraphMaker m;  // a Conv's output with a second reader
    const ValueId x = m.input({1, 3, 2, 2});
    const ValueId first = conv(m, x);
    m.output(m.node(OpKind::kSigmoid, {m.node(OpKind::kConcat, {first, conv(m, x)}, axis_attr(1))}));
    m.output(first);
    apply_and_compare(m.graph(), fusion::push_activations_into_concat_inputs, 0);
  }
  {
    GraphMaker m;  // a Conv read twice by the Concat
    const ValueId x = m.input({1, 3, 2, 2});
    const ValueId y = conv(m, x);
    m.output(m.node(OpKind::kRelu, {m.node(OpKind::kConcat, {y, y}, axis_attr(1))}));
    apply_and_compare(m.graph(), fusion::push_activations_into_concat_inputs, 0);
  }
  {
    GraphMaker m;  // the activation straight on a Conv: fuse_conv_activation's, not this pass's
    m.output(m.node(OpKind::kSigmoid, {conv(m, m.input({1, 3, 2, 2}))}));
    apply_and_compare(m.graph(), fusion::push_activations_into_concat_inputs, 0);
  }
}

}  // namespace
}  // namespace edgefuse::test
