// fold_space_to_depth_into_conv (the Focus stem) and cascade_spp_maxpools on hand-built graphs:
// what is rewritten, what the legality rules keep, and fused == unfused numerics.
#include <doctest/doctest.h>

#include <array>
#include <random>

#include "fusion/passes.h"
#include "tests/fusion/fusion_test_graphs.h"
#include "tests/support/numerics.h"

namespace edgefuse::test {
namespace {

struct ConvSpec {
  int64_t out_channels = 5, kernel = 3, stride = 1;
  std::array<int64_t, 4> pads = {1, 1, 1, 1};
  int64_t group = 1;
};

ValueId add_conv(GraphMaker& m, ValueId x, int64_t in_channels, const ConvSpec& spec, std::mt19937& rng) {
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{spec.kernel, spec.kernel});
  a.set("strides", std::vector<int64_t>{spec.stride, spec.stride});
  a.set("pads", std::vector<int64_t>(spec.pads.begin(), spec.pads.end()));
  a.set("group", spec.group);
  const ValueId w = m.random_constant({spec.out_channels, in_channels / spec.group, spec.kernel, spec.kernel}, rng);
  return m.node(OpKind::kConv, {x, w, m.random_constant({spec.out_channels}, rng)}, a);
}

const Node& only_conv(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if (node.op == OpKind::kConv) return node;
  }
  FAIL("no Conv left");
  return graph.nodes().front();
}

TEST_CASE("fold_space_to_depth_into_conv: the Focus stem becomes one strided Conv on the input") {
  struct Case {
    const char* what;
    StridePhase order[4];
    StemSlices layout;
    ConvSpec conv;
    Shape input;
  };
  const Case cases[] = {
      {"YOLOX order, two Slices per phase, 3x3 pad 1",
       {{0, 0}, {1, 0}, {0, 1}, {1, 1}},
       StemSlices::kTwoPerPhase,
       {},
       {1, 3, 8, 10}},
      {"other order, one Slice per phase",
       {{1, 1}, {0, 0}, {1, 0}, {0, 1}},
       StemSlices::kOnePerPhase,
       {},
       {2, 2, 6, 4}},
      {"stride 2, uneven pads",
       {{0, 1}, {1, 1}, {0, 0}, {1, 0}},
       StemSlices::kTwoPerPhase,
       {4, 3, 2, {0, 1, 2, 1}},
       {1, 3, 12, 8}},
      {"1x1, no pads",
       {{0, 0}, {1, 0}, {0, 1}, {1, 1}},
       StemSlices::kOnePerPhase,
       {6, 1, 1, {0, 0, 0, 0}},
       {1, 1, 4, 4}},
      {"shared row Slices, 5x5 pad 2",
       {{1, 0}, {0, 1}, {1, 1}, {0, 0}},
       StemSlices::kSharedRows,
       {3, 5, 1, {2, 2, 2, 2}},
       {1, 2, 10, 6}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    std::mt19937 rng(3);
    GraphMaker m;
    const ValueId x = m.input(c.input);
    const ValueId stacked = space_to_depth(m, x, c.order, c.layout);
    const ValueId y = add_conv(m, stacked, 4 * c.input[1], c.conv, rng);
    m.output(m.node(OpKind::kRelu, {y}));
    const Graph fused = apply_and_compare(m.graph(), fusion::fold_space_to_depth_into_conv, 1);
    CHECK(count_nodes(fused, OpKind::kSlice) == 0);
    CHECK(count_nodes(fused, OpKind::kConcat) == 0);
    CHECK(fused.nodes().size() == 2);  // Conv, Relu
    const Node& conv = only_conv(fused);
    CHECK(conv.inputs[0] == fused.inputs()[0]);
    CHECK(conv.attrs.get_ints("kernel_shape") == std::vector<int64_t>{2 * c.conv.kernel, 2 * c.conv.kernel});
    CHECK(conv.attrs.get_ints("strides") == std::vector<int64_t>{2 * c.conv.stride, 2 * c.conv.stride});
    CHECK(fused.value(conv.inputs[1]).initializer->dim(1) == c.input[1]);
  }
}

TEST_CASE("fold_space_to_depth_into_conv: a dynamic batch (as Detector batching leaves it) still folds") {
  std::mt19937 rng(4);
  GraphMaker m;
  const ValueId x = m.input({-1, 2, 6, 4});
  m.output(add_conv(m, space_to_depth(m, x, kFocusOrder), 8, {}, rng));
  Graph fused = m.graph();
  PassReport report;
  REQUIRE(fusion::fold_space_to_depth_into_conv(fused, report).is_ok());
  CHECK(report.changes == 1);
  CHECK(count_nodes(fused, OpKind::kSlice) == 0);
  const std::vector<Tensor> inputs = {random_tensor(DType::kF32, {3, 2, 6, 4}, rng)};
  CHECK(max_relative_l2(run_graph(fused, inputs, false), run_graph(m.graph(), inputs, false)) <= kFusionTolerance);
}

TEST_CASE("fold_space_to_depth_into_conv: the legality rules keep what it cannot fold") {
  std::mt19937 rng(5);
  const auto build = [&](Shape input, const StridePhase(&order)[4], ConvSpec conv, bool slice_is_output,
                         bool concat_read_twice) {
    GraphMaker m;
    const ValueId x = m.input(input);
    const ValueId stacked = space_to_depth(m, x, order, StemSlices::kOnePerPhase);
    const ValueId y = add_conv(m, stacked, 4 * input[1], conv, rng);
    m.output(y);
    if (slice_is_output) m.output(m.graph().nodes()[0].outputs[0]);
    if (concat_read_twice) m.output(m.node(OpKind::kRelu, {stacked}));
    return m.graph();
  };
  const StridePhase repeated[4] = {{0, 0}, {1, 0}, {1, 0}, {1, 1}};  // (0, 1) missing
  SUBCASE("a phase repeated, another missing") {
    apply_and_compare(build({1, 2, 6, 6}, repeated, {}, false, false), fusion::fold_space_to_depth_into_conv, 0);
  }
  SUBCASE("a phase Slice is also a graph output") {
    apply_and_compare(build({1, 2, 6, 6}, kFocusOrder, {}, true, false), fusion::fold_space_to_depth_into_conv, 0);
  }
  SUBCASE("the stacked input is read by another node") {
    apply_and_compare(build({1, 2, 6, 6}, kFocusOrder, {}, false, true), fusion::fold_space_to_depth_into_conv, 0);
  }
  SUBCASE("a shared row Slice is also read outside the stem") {
    GraphMaker m;
    const ValueId x = m.input({1, 2, 6, 6});
    const ValueId stacked = space_to_depth(m, x, kFocusOrder, StemSlices::kSharedRows);
    m.output(add_conv(m, stacked, 8, {}, rng));
    m.output(m.node(OpKind::kRelu, {m.graph().nodes()[0].outputs[0]}));  // x[..., 0::2, :]
    apply_and_compare(m.graph(), fusion::fold_space_to_depth_into_conv, 0);
  }
  SUBCASE("grouped Conv") {
    ConvSpec grouped;
    grouped.out_channels = 8;
    grouped.group = 2;
    apply_and_compare(build({1, 2, 6, 6}, kFocusOrder, grouped, false, false), fusion::fold_space_to_depth_into_conv,
                      0);
  }
  SUBCASE("step 1 on W is not a space-to-depth") {
    GraphMaker m;
    const ValueId x = m.input({1, 1, 4, 4});
    std::vector<ValueId> parts;
    for (const StridePhase& phase : kFocusOrder) {
      const auto ints = [&](std::vector<int64_t> v) {
        return m.constant(Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v));
      };
      // Rows dy::2 and columns dx..dx+2 (step 1): same shape as a phase, different data.
      parts.push_back(m.node(OpKind::kSlice, {x, ints({phase.dy, phase.dx}), ints({INT64_MAX, phase.dx + 2}),
                                              ints({2, 3}), ints({2, 1})}));
    }
    Attributes axis;
    axis.set("axis", int64_t{1});
    m.output(add_conv(m, m.node(OpKind::kConcat, parts, axis), 4, {}, rng));
    apply_and_compare(m.graph(), fusion::fold_space_to_depth_into_conv, 0);
  }
}

Attributes same_pool(int64_t k, int64_t stride = 1) {
  Attributes a;
  a.set("kernel_shape", std::vector<int64_t>{k, k});
  a.set("strides", std::vector<int64_t>{stride, stride});
  a.set("pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
  return a;
}

TEST_CASE("cascade_spp_maxpools: SPP pools 5, 9, 13 become a chain of 5x5 pools") {
  for (bool shuffled : {false, true}) {
    CAPTURE(shuffled);
    GraphMaker m;
    const ValueId x = m.input({1, 3, 11, 9});
    // Node order 13, 5, 9 when shuffled: 13 cannot read 9 (it comes first), the rest chains.
    const int64_t kernels[3] = {shuffled ? 13 : 5, shuffled ? 5 : 9, shuffled ? 9 : 13};
    std::vector<ValueId> parts = {x};
    for (int64_t k : kernels) parts.push_back(m.node(OpKind::kMaxPool, {x}, same_pool(k)));
    Attributes axis;
    axis.set("axis", int64_t{1});
    m.output(m.node(OpKind::kConcat, parts, axis));
    const Graph fused = apply_and_compare(m.graph(), fusion::cascade_spp_maxpools, shuffled ? 1 : 2);
    CHECK(fused.nodes().size() == 4);
    int fives = 0;
    int reading_x = 0;
    for (const Node& node : fused.nodes()) {
      if (node.op != OpKind::kMaxPool) continue;
      fives += node.attrs.get_ints("kernel_shape") == std::vector<int64_t>{5, 5} ? 1 : 0;
      reading_x += node.inputs[0] == fused.inputs()[0] ? 1 : 0;
    }
    CHECK(fives == (shuffled ? 2 : 3));
    CHECK(reading_x == (shuffled ? 2 : 1));
  }
}

TEST_CASE("cascade_spp_maxpools: strided, unpadded or even pools stay parallel") {
  GraphMaker m;
  const ValueId x = m.input({1, 2, 12, 12});
  Attributes valid = same_pool(5);
  valid.set("pads", std::vector<int64_t>{0, 0, 0, 0});
  Attributes even;
  even.set("kernel_shape", std::vector<int64_t>{4, 4});
  even.set("pads", std::vector<int64_t>{2, 2, 1, 1});
  const ValueId a = m.node(OpKind::kMaxPool, {x}, same_pool(3, 2));
  const ValueId b = m.node(OpKind::kMaxPool, {x}, same_pool(7, 2));
  const ValueId c = m.node(OpKind::kMaxPool, {x}, valid);
  const ValueId d = m.node(OpKind::kMaxPool, {x}, same_pool(3));  // the only legal one: nothing to chain onto
  const ValueId e = m.node(OpKind::kMaxPool, {x}, even);
  for (ValueId v : {a, b, c, d, e}) m.output(v);
  apply_and_compare(m.graph(), fusion::cascade_spp_maxpools, 0);
}

}  // namespace
}  // namespace edgefuse::test
