// fold_slices_into_windowed_chains on hand-built graphs: YOLOv5's head (a Split on the last axis,
// two pieces decoded, joined again) becomes windowed chains over the whole tensor; Slices on
// another axis with negative and open-ended bounds; what the legality rules leave alone. Each
// rewrite is checked against the unfused graph on random inputs with both kernel sets.
#include <doctest/doctest.h>

#include <limits>
#include <random>

#include "fusion/passes.h"
#include "runtime/ops/pointwise_chain.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {
namespace {

ValueId scalar(GraphMaker& m, float value) {
  return m.constant(Tensor::scalar<float>(value));
}

// The windows of the graph's PointwiseChains, in node order.
std::vector<ChainWindow> windows_of(const Graph& graph) {
  std::vector<ChainWindow> windows;
  for (const Node& node : graph.nodes()) {
    if (node.op != OpKind::kPointwiseChain) continue;
    const PointwiseChain chain = pointwise_chain(node).value();
    REQUIRE(chain.window.has_value());
    windows.push_back(*chain.window);
  }
  return windows;
}

// YOLOv5's decode of [1, 3, 4, 5, 5 + classes] rows: xy = (2 sig - 0.5 + grid) x stride,
// wh = (2 sig)^2 x anchor, the rest as is; the pieces in `order` (indices into xy, wh, rest).
struct Yolov5Head {
  GraphMaker m;
  ValueId sigmoid = kNoValue;
  ValueId joined = kNoValue;
};

void build_yolov5_head(Yolov5Head& h, std::mt19937& rng, int classes, bool use_split,
                       std::vector<int> order = {0, 1, 2}) {
  GraphMaker& m = h.m;
  const int64_t row = 5 + classes;
  h.sigmoid = m.node(OpKind::kSigmoid, {m.input({1, 3, 4, 5, row})});
  std::vector<ValueId> pieces;
  if (use_split) {
    pieces = m.node_with_outputs(OpKind::kSplit, {h.sigmoid, m.ints({2, 2, row - 4})}, 3, axis_attr(4));
  } else {
    pieces = {m.slice(h.sigmoid, 0, 2, -1), m.slice(h.sigmoid, 2, 4, -1),
              m.slice(h.sigmoid, 4, std::numeric_limits<int64_t>::max(), -1)};
  }
  ValueId xy = m.node(OpKind::kMul, {pieces[0], scalar(m, 2.0f)});
  xy = m.node(OpKind::kSub, {xy, scalar(m, 0.5f)});
  xy = m.node(OpKind::kAdd, {xy, m.random_constant({1, 1, 4, 5, 2}, rng, 0, 5)});
  xy = m.node(OpKind::kMul, {xy, scalar(m, 8.0f)});
  ValueId wh = m.node(OpKind::kMul, {pieces[1], scalar(m, 2.0f)});
  wh = m.node(OpKind::kPow, {wh, scalar(m, 2.0f)});
  wh = m.node(OpKind::kMul, {wh, m.random_constant({1, 3, 1, 1, 2}, rng, 10, 40)});
  const ValueId decoded[3] = {xy, wh, pieces[2]};
  std::vector<ValueId> joined;
  for (int i : order) joined.push_back(decoded[i]);
  h.joined = m.node(OpKind::kConcat, joined, axis_attr(-1));
  m.output(m.node(OpKind::kReshape, {h.joined, m.ints({1, 60, row})}));
}

TEST_CASE("fold_slices_into_windowed_chains: YOLOv5's head becomes two chains over windows of its rows") {
  for (bool use_split : {true, false}) {
    CAPTURE(use_split);
    std::mt19937 rng(11);
    Yolov5Head h;
    build_yolov5_head(h, rng, 4, use_split);
    const Graph fused = apply_and_compare(h.m.graph(), fusion::fold_slices_into_windowed_chains, 1);
    CHECK(count_nodes(fused, OpKind::kSplit) == 0);
    CHECK(count_nodes(fused, OpKind::kSlice) == 0);
    CHECK(count_nodes(fused, OpKind::kConcat) == 0);
    CHECK(count_nodes(fused, OpKind::kMul) == 0);
    CHECK(count_nodes(fused, OpKind::kSigmoid) == 1);
    REQUIRE(count_nodes(fused, OpKind::kPointwiseChain) == 2);
    const std::vector<ChainWindow> windows = windows_of(fused);
    CHECK(windows[0].axis == 4);
    CHECK(windows[0].start == 0);
    CHECK(windows[0].end == 2);
    CHECK(windows[1].start == 2);
    CHECK(windows[1].end == 4);
    // The first chain reads the Sigmoid's output whole; the last writes the Concat's old output.
    const Node& first = fused.nodes()[1];
    const Node& last = fused.nodes()[2];
    REQUIRE(first.op == OpKind::kPointwiseChain);
    CHECK(fused.value(first.inputs[0]).name == h.m.graph().value(h.sigmoid).name);
    CHECK(last.inputs[0] == first.outputs[0]);
    CHECK(fused.value(last.outputs[0]).name == h.m.graph().value(h.joined).name);
    CHECK(pointwise_chain(first).value().steps.size() == 4);
    CHECK(pointwise_chain(last).value().steps.size() == 3);

    // Planned as the executor runs it, both chains take the Sigmoid's bytes: the 4 of 9 columns
    // outside their windows are never copied.
    MemoryPlan plan;
    const std::vector<Tensor> inputs = random_inputs_for(fused, rng);
    const std::vector<Tensor> outputs = run_planned(fused, inputs, 2, &plan);
    CHECK(plan.in_place_of[static_cast<size_t>(first.outputs[0])] == first.inputs[0]);
    CHECK(plan.in_place_of[static_cast<size_t>(last.outputs[0])] == last.inputs[0]);
    CHECK(max_relative_l2(outputs, run_graph(h.m.graph(), inputs, true)) <= kFusionTolerance);
  }
}

TEST_CASE("fold_slices_into_windowed_chains: Slices on a middle axis with negative and open bounds") {
  std::mt19937 rng(12);
  GraphMaker m;
  const ValueId x = m.node(OpKind::kRelu, {m.input({2, 8, 3, 3})});
  const ValueId low = m.slice(x, 0, 3, 1);
  const ValueId mid = m.slice(x, 3, -2, 1);
  const ValueId high = m.slice(x, -2, std::numeric_limits<int64_t>::max(), 1);
  const ValueId mid_changed = m.node(OpKind::kSigmoid, {mid});  // a chain of one step
  const ValueId high_changed = m.node(OpKind::kAdd, {m.random_constant({2, 1, 3}, rng), high});
  m.output(m.node(OpKind::kConcat, {low, mid_changed, high_changed}, axis_attr(1)));
  m.output(m.node(OpKind::kExp, {x}));  // x has a second reader: the first chain copies it

  const Graph fused = apply_and_compare(m.graph(), fusion::fold_slices_into_windowed_chains, 1);
  CHECK(count_nodes(fused, OpKind::kSlice) == 0);
  CHECK(count_nodes(fused, OpKind::kConcat) == 0);
  const std::vector<ChainWindow> windows = windows_of(fused);
  REQUIRE(windows.size() == 2);
  CHECK(windows[0].axis == 1);
  CHECK(windows[0].start == 3);
  CHECK(windows[0].end == 6);
  CHECK(windows[1].start == 6);
  CHECK(windows[1].end == 8);
  const Node& high_chain = fused.nodes()[2];  // Relu, the two chains, Exp
  REQUIRE(high_chain.op == OpKind::kPointwiseChain);
  REQUIRE(high_chain.inputs.size() == 2);
  CHECK(pointwise_chain(high_chain).value().steps[0].chain_on_right);  // the constant stays on the left
}

TEST_CASE("fold_slices_into_windowed_chains: gaps, reordered pieces, other readers and widening ops are left alone") {
  std::mt19937 rng(13);
  {
    Yolov5Head h;  // the pieces joined in another order than cut
    build_yolov5_head(h, rng, 3, true, {1, 0, 2});
    apply_and_compare(h.m.graph(), fusion::fold_slices_into_windowed_chains, 0);
  }
  {
    GraphMaker m;  // a gap: [0, 2) and [3, 6)
    const ValueId x = m.input({2, 6});
    m.output(m.node(OpKind::kConcat, {m.node(OpKind::kExp, {m.slice(x, 0, 2, 1)}), m.slice(x, 3, 6, 1)}, axis_attr(1)));
    apply_and_compare(m.graph(), fusion::fold_slices_into_windowed_chains, 0);
  }
  {
    GraphMaker m;  // a decoded piece is also a graph output
    const ValueId x = m.input({2, 6});
    const ValueId decoded = m.node(OpKind::kExp, {m.slice(x, 0, 2, 1)});
    m.output(decoded);
    m.output(m.node(OpKind::kConcat, {decoded, m.slice(x, 2, 6, 1)}, axis_attr(1)));
    apply_and_compare(m.graph(), fusion::fold_slices_into_windowed_chains, 0);
  }
  {
    GraphMaker m;  // a piece with a second reader
    const ValueId x = m.input({2, 6});
    const ValueId piece = m.slice(x, 0, 2, 1);
    m.output(m.node(OpKind::kRelu, {piece}));
    m.output(m.node(OpKind::kConcat, {m.node(OpKind::kExp, {piece}), m.slice(x, 2, 6, 1)}, axis_attr(1)));
    apply_and_compare(m.graph(), fusion::fold_slices_into_windowed_chains, 0);
  }
  {
    GraphMaker m;  // an op that widens its piece ([2, 2] + [3, 2, 2]), and a Concat on another axis
    const ValueId x = m.input({2, 6});
    const ValueId wide = m.node(OpKind::kAdd, {m.slice(x, 0, 2, 1), m.random_constant({3, 2, 2}, rng)});
    m.output(m.node(OpKind::kConcat, {wide, wide}, axis_attr(0)));
    m.output(m.node(OpKind::kConcat, {m.node(OpKind::kExp, {m.slice(x, 0, 3, 1)}), m.slice(x, 3, 6, 1)}, axis_attr(0)));
    apply_and_compare(m.graph(), fusion::fold_slices_into_windowed_chains, 0);
  }
  {
    GraphMaker m;  // nothing changes between the cut and the join
    const ValueId x = m.input({2, 6});
    const std::vector<ValueId> pieces = m.node_with_outputs(OpKind::kSplit, {x, m.ints({1, 5})}, 2, axis_attr(1));
    m.output(m.node(OpKind::kConcat, pieces, axis_attr(1)));
    apply_and_compare(m.graph(), fusion::fold_slices_into_windowed_chains, 0);
  }
}

}  // namespace
}  // namespace edgefuse::test
