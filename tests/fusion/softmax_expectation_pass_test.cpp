// fuse_softmax_expectation on hand-built graphs: YOLOv8's DFL (bins viewed as [1, 4, 16, cells],
// transposed to put the bins on channels, Softmax, a 1x1 Conv with weights 0..15) becomes one
// SoftmaxExpectation over the bins in place; a Softmax already on channels; what the legality
// rules leave alone. Each rewrite is checked against the unfused graph on random inputs with both
// kernel sets.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "fusion/passes.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {
namespace {

ValueId bin_indices(GraphMaker& m, int64_t bins, int64_t out_channels = 1) {
  std::vector<float> w;
  for (int64_t o = 0; o < out_channels; ++o) {
    for (int64_t i = 0; i < bins; ++i) w.push_back(static_cast<float>(i + o));
  }
  return m.constant(Tensor::from_vector<float>({out_channels, bins, 1, 1}, w));
}

// The DFL as exported: Transpose by `perm`, Softmax on axis 1, 1x1 Conv of `out_channels`.
ValueId dfl(GraphMaker& m, ValueId bins4, std::vector<int64_t> perm, int64_t bins, bool bias = false,
            int64_t out_channels = 1) {
  const ValueId moved = m.node(OpKind::kTranspose, {bins4}, ints_attr("perm", std::move(perm)));
  const ValueId p = m.node(OpKind::kSoftmax, {moved}, axis_attr(1));
  std::vector<ValueId> inputs = {p, bin_indices(m, bins, out_channels)};
  if (bias)
    inputs.push_back(m.constant(Tensor::from_vector<float>({out_channels}, std::vector<float>(out_channels, 0.5f))));
  return m.node(OpKind::kConv, inputs, ints_attr("kernel_shape", {1, 1}));
}

TEST_CASE("fuse_softmax_expectation: YOLOv8's DFL becomes one kernel over the bins in place") {
  for (bool bias : {false, true}) {
    CAPTURE(bias);
    GraphMaker m;
    const ValueId bins4 = m.node(OpKind::kRelu, {m.input({1, 4, 16, 21})});
    m.output(m.node(OpKind::kReshape, {dfl(m, bins4, {0, 2, 1, 3}, 16, bias),
                                       m.constant(Tensor::from_vector<int64_t>({3}, {1, 4, 21}))}));
    const Graph fused = apply_and_compare(m.graph(), fusion::fuse_softmax_expectation, 1);
    CHECK(count_nodes(fused, OpKind::kTranspose) == 0);
    CHECK(count_nodes(fused, OpKind::kSoftmax) == 0);
    CHECK(count_nodes(fused, OpKind::kConv) == 0);
    REQUIRE(count_nodes(fused, OpKind::kSoftmaxExpectation) == 1);
    const Node& expectation = fused.nodes()[1];
    REQUIRE(expectation.op == OpKind::kSoftmaxExpectation);
    CHECK(expectation.attrs.get_int("axis", 0) == 2);
    CHECK(expectation.inputs[0] == fused.nodes()[0].outputs[0]);  // the Relu's output, not transposed
    CHECK(expectation.inputs.size() == (bias ? 3u : 2u));
    CHECK(fused.value(expectation.outputs[0]).desc.shape == Shape{1, 4, 1, 21});
    CHECK(fused.nodes()[2].op == OpKind::kReshape);  // the view as the Conv's [1, 1, 4, 21]
  }
}

TEST_CASE("fuse_softmax_expectation: a Softmax on channels, and Transposes it cannot fold") {
  {
    GraphMaker m;  // no Transpose: the expectation has the Conv's shape
    const ValueId p = m.node(OpKind::kSoftmax, {m.input({2, 8, 3, 5})}, axis_attr(-3));
    m.output(m.node(OpKind::kConv, {p, bin_indices(m, 8)}, ints_attr("kernel_shape", {1, 1})));
    const Graph fused = apply_and_compare(m.graph(), fusion::fuse_softmax_expectation, 1);
    REQUIRE(fused.nodes().size() == 1);
    CHECK(fused.nodes()[0].attrs.get_int("axis", 0) == 1);
  }
  {
    GraphMaker m;  // (0, 3, 1, 2) moves the last axis forward and keeps the others in order: folded
    m.output(dfl(m, m.input({1, 3, 5, 6}), {0, 3, 1, 2}, 6));
    const Graph fused = apply_and_compare(m.graph(), fusion::fuse_softmax_expectation, 1);
    CHECK(count_nodes(fused, OpKind::kTranspose) == 0);
  }
  {
    GraphMaker m;  // (0, 2, 3, 1) would leave the expectation's elements in another order: kept
    m.output(dfl(m, m.input({1, 7, 3, 5}), {0, 2, 3, 1}, 3));
    const Graph fused = apply_and_compare(m.graph(), fusion::fuse_softmax_expectation, 1);
    CHECK(count_nodes(fused, OpKind::kTranspose) == 1);
    CHECK(count_nodes(fused, OpKind::kSoftmax) == 0);
  }
}

TEST_CASE("fuse_softmax_expectation: other readers, several output channels and legacy Softmax are left alone") {
  {
    GraphMaker m;  // the Softmax's output is also a graph output
    const ValueId p = m.node(OpKind::kSoftmax, {m.input({1, 4, 2, 2})}, axis_attr(1));
    m.output(m.node(OpKind::kConv, {p, bin_indices(m, 4)}, ints_attr("kernel_shape", {1, 1})));
    m.output(p);
    apply_and_compare(m.graph(), fusion::fuse_softmax_expectation, 0);
  }
  {
    GraphMaker m;  // two output channels: not an expectation
    m.output(dfl(m, m.input({1, 4, 16, 5}), {0, 2, 1, 3}, 16, false, 2));
    apply_and_compare(m.graph(), fusion::fuse_softmax_expectation, 0);
  }
  {
    GraphMaker m;  // an opset-11 Softmax normalises over every dim from the axis on
    Attributes legacy = axis_attr(1);
    legacy.set("legacy_flatten", int64_t{1});
    const ValueId p = m.node(OpKind::kSoftmax, {m.input({1, 4, 2, 2})}, legacy);
    m.output(m.node(OpKind::kConv, {p, bin_indices(m, 4)}, ints_attr("kernel_shape", {1, 1})));
    apply_and_compare(m.graph(), fusion::fuse_softmax_expectation, 0);
  }
  {
    GraphMaker m;  // the Conv has an activation fused already
    const ValueId p = m.node(OpKind::kSoftmax, {m.input({1, 4, 2, 2})}, axis_attr(1));
    Attributes conv = ints_attr("kernel_shape", {1, 1});
    conv.set("fused_activation", std::string("relu"));
    m.output(m.node(OpKind::kConv, {p, bin_indices(m, 4)}, conv));
    apply_and_compare(m.graph(), fusion::fuse_softmax_expectation, 0);
  }
}

ValueId expectation(GraphMaker& m, ValueId x, int64_t axis, int64_t length) {
  std::vector<float> w;
  for (int64_t i = 0; i < length; ++i) w.push_back(static_cast<float>(i));
  return m.node(OpKind::kSoftmaxExpectation, {x, m.constant(Tensor::from_vector<float>({length}, w))}, axis_attr(axis));
}

TEST_CASE("push_expectations_into_concat_inputs: YOLOv8's distances from each level's bins, then joined") {
  for (bool viewed : {true, false}) {
    CAPTURE(viewed);
    GraphMaker m;
    std::vector<ValueId> levels;
    for (int64_t cells : {16, 4, 1}) levels.push_back(m.node(OpKind::kRelu, {m.input({1, 8, cells})}));
    ValueId bins = m.node(OpKind::kConcat, levels, axis_attr(2));
    if (viewed) bins = m.node(OpKind::kReshape, {bins, m.constant(Tensor::from_vector<int64_t>({4}, {1, 2, 4, 21}))});
    m.output(expectation(m, bins, viewed ? 2 : 1, viewed ? 4 : 8));
    const Graph pushed = apply_and_compare(m.graph(), fusion::push_expectations_into_concat_inputs, 1);
    CHECK(count_nodes(pushed, OpKind::kSoftmaxExpectation) == 3);
    CHECK(count_nodes(pushed, OpKind::kReshape) == (viewed ? 3 : 0));
    REQUIRE(count_nodes(pushed, OpKind::kConcat) == 1);
    const Node& joined = pushed.nodes().back();
    REQUIRE(joined.op == OpKind::kConcat);
    for (ValueId input : joined.inputs) {
      CHECK(pushed.node(pushed.value(input).producer).op == OpKind::kSoftmaxExpectation);
    }
  }
}

TEST_CASE("push_expectations_into_concat_inputs: joins on other axes, the joined axis reduced, other readers") {
  {
    GraphMaker m;  // joined on channels, not the last axis
    const ValueId bins = m.node(OpKind::kConcat, {m.input({1, 4, 5}), m.input({1, 4, 5})}, axis_attr(1));
    m.output(expectation(m, bins, 1, 8));
    apply_and_compare(m.graph(), fusion::push_expectations_into_concat_inputs, 0);
  }
  {
    GraphMaker m;  // the expectation over the joined axis itself
    const ValueId bins = m.node(OpKind::kConcat, {m.input({1, 4, 5}), m.input({1, 4, 3})}, axis_attr(-1));
    m.output(expectation(m, bins, 2, 8));
    apply_and_compare(m.graph(), fusion::push_expectations_into_concat_inputs, 0);
  }
  {
    GraphMaker m;  // the joined tensor is read again
    const ValueId bins = m.node(OpKind::kConcat, {m.input({1, 4, 5}), m.input({1, 4, 3})}, axis_attr(2));
    m.output(expectation(m, bins, 1, 4));
    m.output(m.node(OpKind::kExp, {bins}));
    apply_and_compare(m.graph(), fusion::push_expectations_into_concat_inputs, 0);
  }
}

}  // namespace
}  // namespace edgefuse::test
