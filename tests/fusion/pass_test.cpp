// Each pass on small hand-built graphs: node counts before and after, the legality rules (what
// must not be rewritten), and fused == unfused numerics on random inputs.
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>

#include "fusion/pass_manager.h"
#include "fusion/passes.h"
#include "runtime/memory_plan.h"
#include "runtime/ops/conv_problem.h"
#include "runtime/ops/ops.h"
#include "tests/fusion/fusion_test_graphs.h"

namespace edgefuse::test {
namespace {

Attributes conv_attrs(int64_t pad, int64_t group = 1) {
  Attributes a;
  a.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  a.set("group", group);
  return a;
}

TEST_CASE("eliminate_identity rewires consumers and keeps graph output names") {
  GraphMaker m;
  const ValueId x = m.input({1, 2, 3, 3});
  const ValueId r = m.node(OpKind::kRelu, {x});
  const ValueId i1 = m.node(OpKind::kIdentity, {r});
  const ValueId s = m.node(OpKind::kSigmoid, {i1});
  const ValueId i2 = m.node(OpKind::kIdentity, {s});  // graph output: the Sigmoid writes it directly
  const ValueId i3 = m.node(OpKind::kIdentity, {x});  // input -> output: must stay
  m.output(i2);
  m.output(i3);
  const std::string output_name = m.graph().value(i2).name;
  const Graph fused = apply_and_compare(m.graph(), fusion::eliminate_identity, 2);
  CHECK(count_nodes(fused, OpKind::kIdentity) == 1);
  CHECK(fused.nodes().size() == 3);
  CHECK(fused.value(fused.outputs()[0]).name == output_name);
  CHECK(fused.node(fused.value(fused.outputs()[0]).producer).op == OpKind::kSigmoid);
}

TEST_CASE("fold_constants evaluates constant subgraphs and static Shape chains") {
  std::mt19937 rng(1);
  GraphMaker m;
  const ValueId x = m.input({2, 3, 4, 5});
  const ValueId a = m.random_constant({5}, rng);
  const ValueId b = m.random_constant({5}, rng);
  const ValueId sum = m.node(OpKind::kAdd, {a, b});  // constant: folds
  const ValueId scaled = m.node(OpKind::kMul, {x, sum});
  // Reshape(scaled, Concat(Unsqueeze(Gather(Shape(scaled), 0)), [-1])): the exporters' flatten.
  const ValueId shape = m.node(OpKind::kShape, {scaled});
  Attributes axis0;
  axis0.set("axis", int64_t{0});
  const ValueId batch = m.node(OpKind::kGather, {shape, m.constant(Tensor::scalar<int64_t>(0))}, axis0);
  const ValueId batch1 = m.node(OpKind::kUnsqueeze, {batch, m.constant(Tensor::from_vector<int64_t>({1}, {0}))});
  const ValueId target = m.node(OpKind::kConcat, {batch1, m.constant(Tensor::from_vector<int64_t>({1}, {-1}))}, axis0);
  const ValueId flat = m.node(OpKind::kReshape, {scaled, target});
  m.output(flat);
  CHECK(m.graph().nodes().size() == 7);
  const Graph fused = apply_and_compare(m.graph(), fusion::fold_constants, 5);
  CHECK(fused.nodes().size() == 2);  // Mul and Reshape
  CHECK(count_nodes(fused, OpKind::kShape) == 0);
  const ValueId reshape_target = fused.nodes()[1].inputs[1];
  REQUIRE(fused.value(reshape_target).initializer.has_value());
  CHECK(fused.value(reshape_target).initializer->to_int64_vector() == std::vector<int64_t>{2, -1});
}

TEST_CASE("fold_constants leaves dynamic shapes, graph outputs and oversized results alone") {
  GraphMaker m;
  const ValueId x = m.input({-1, 3});  // unknown batch: Shape cannot fold
  Attributes axis0;
  axis0.set("axis", int64_t{0});
  m.output(m.node(OpKind::kGather, {m.node(OpKind::kShape, {x}), m.constant(Tensor::scalar<int64_t>(1))}, axis0));
  const ValueId c = m.constant(Tensor::from_vector<float>({2}, {1, 2}));
  m.output(m.node(OpKind::kRelu, {c}));  // constant, but a graph output: stays computed
  // ConstantOfShape of 64 Mi floats: over the fold cap.
  const ValueId big = m.node(OpKind::kConstantOfShape, {m.constant(Tensor::from_vector<int64_t>({1}, {1 << 26}))});
  m.output(m.node(OpKind::kShape, {big}));
  Graph graph = m.graph();
  PassReport report;
  REQUIRE(fusion::fold_constants(graph, report).is_ok());
  CHECK(report.changes == 0);
  CHECK(graph.nodes().size() == 5);
}

TEST_CASE("fold_batchnorm_into_conv scales weights and bias, with and without a conv bias") {
  for (bool with_bias : {false, true}) {
    CAPTURE(with_bias);
    std::mt19937 rng(2);
    GraphMaker m;
    const ValueId x = m.input({1, 3, 7, 7});
    std::vector<ValueId> conv_inputs = {x, m.random_constant({4, 3, 3, 3}, rng)};
    if (with_bias) conv_inputs.push_back(m.random_constant({4}, rng));
    const ValueId y = m.node(OpKind::kConv, conv_inputs, conv_attrs(1));
    Attributes eps;
    eps.set("epsilon", 1e-3f);
    const ValueId bn = m.node(OpKind::kBatchNormalization,
                              {y, m.random_constant({4}, rng, 0.5, 2.0), m.random_constant({4}, rng),
                               m.random_constant({4}, rng), m.random_constant({4}, rng, 0.1, 2.0)},
                              eps);
    m.output(bn);
    const Graph fused = apply_and_compare(m.graph(), fusion::fold_batchnorm_into_conv, 1);
    CHECK(fused.nodes().size() == 1);
    CHECK(fused.nodes()[0].op == OpKind::kConv);
    CHECK(fused.nodes()[0].input_count() == 3);
  }
}

TEST_CASE("fold_batchnorm_into_conv needs a single-consumer conv output and constant parameters") {
  std::mt19937 rng(3);
  GraphMaker m;
  const ValueId x = m.input({1, 2, 5, 5});
  const ValueId y = m.node(OpKind::kConv, {x, m.random_constant({2, 2, 1, 1}, rng)});
  const ValueId bn =
      m.node(OpKind::kBatchNormalization, {y, m.random_constant({2}, rng), m.random_constant({2}, rng),
                                           m.random_constant({2}, rng), m.random_constant({2}, rng, 0.1, 1.0)});
  m.output(bn);
  m.output(m.node(OpKind::kRelu, {y}));  // a second reader of the conv output
  const ValueId y2 = m.node(OpKind::kConv, {x, m.random_constant({2, 2, 1, 1}, rng)});
  const ValueId scale = m.input({2});  // not a constant
  m.output(m.node(OpKind::kBatchNormalization, {y2, scale, m.random_constant({2}, rng), m.random_constant({2}, rng),
                                                m.random_constant({2}, rng, 0.1, 1.0)}));
  Graph graph = m.graph();
  PassReport report;
  REQUIRE(fusion::fold_batchnorm_into_conv(graph, report).is_ok());
  CHECK(report.changes == 0);
  CHECK(count_nodes(graph, OpKind::kBatchNormalization) == 2);
}

TEST_CASE("fuse_conv_activation fuses every supported activation") {
  struct Case {
    const char* name;
    OpKind op;
    Attributes attrs;
    bool clip_bounds;
  };
  Attributes leaky;
  leaky.set("alpha", 0.1f);
  Attributes hard_sigmoid;
  hard_sigmoid.set("alpha", 0.25f);
  hard_sigmoid.set("beta", 0.4f);
  const Case cases[] = {{"relu", OpKind::kRelu, {}, false},
                        {"leaky_relu", OpKind::kLeakyRelu, leaky, false},
                        {"sigmoid", OpKind::kSigmoid, {}, false},
                        {"hard_swish", OpKind::kHardSwish, {}, false},
                        {"hard_sigmoid", OpKind::kHardSigmoid, hard_sigmoid, false},
                        {"clip", OpKind::kClip, {}, true},
                        {"clip", OpKind::kClip, {}, false}};
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::mt19937 rng(4);
    GraphMaker m;
    const ValueId x = m.input({1, 4, 6, 6});
    const ValueId y =
        m.node(OpKind::kConv, {x, m.random_constant({4, 4, 3, 3}, rng), m.random_constant({4}, rng)}, conv_attrs(1));
    std::vector<ValueId> act_inputs = {y};
    if (c.clip_bounds) {
      act_inputs.push_back(m.constant(Tensor::scalar<float>(-0.5f)));
      act_inputs.push_back(m.constant(Tensor::scalar<float>(0.7f)));
    }
    m.output(m.node(c.op, act_inputs, c.attrs));
    const Graph fused = apply_and_compare(m.graph(), fusion::fuse_conv_activation, 1);
    REQUIRE(fused.nodes().size() == 1);
    CHECK(fused.nodes()[0].attrs.get_string("fused_activation", "") == c.name);
  }
}

TEST_CASE("fuse_conv_activation fuses SiLU and the Mul(y, HardSigmoid(y)) HardSwish in either operand order") {
  Attributes sixth;  // PyTorch's HardSwish export before opset 14
  sixth.set("alpha", 1.0f / 6.0f);
  for (bool hard : {false, true}) {
    for (bool gate_first : {false, true}) {
      CAPTURE(hard);
      CAPTURE(gate_first);
      std::mt19937 rng(5);
      GraphMaker m;
      const ValueId x = m.input({1, 3, 5, 5});
      // Weights up to 3 put outputs on both sides of HardSwish's kinks at -3 and 3.
      const ValueId y = m.node(OpKind::kConv, {x, m.random_constant({6, 3, 1, 1}, rng, -3.0, 3.0)});
      const ValueId g = hard ? m.node(OpKind::kHardSigmoid, {y}, sixth) : m.node(OpKind::kSigmoid, {y});
      m.output(m.node(OpKind::kMul, gate_first ? std::vector<ValueId>{g, y} : std::vector<ValueId>{y, g}));
      const Graph fused = apply_and_compare(m.graph(), fusion::fuse_conv_activation, 1);
      REQUIRE(fused.nodes().size() == 1);
      CHECK(fused.nodes()[0].attrs.get_string("fused_activation", "") == (hard ? "hard_swish" : "silu"));
    }
  }
}

TEST_CASE("fuse_conv_activation fuses HardSwish spelt out as y * Clip(y + 3, 0, 6) / 6 in its export orders") {
  for (bool three_first : {false, true}) {
    for (bool product_first : {false, true}) {
      for (bool divide : {false, true}) {
        CAPTURE(three_first);
        CAPTURE(product_first);
        CAPTURE(divide);
        std::mt19937 rng(7);
        GraphMaker m;
        const ValueId x = m.input({1, 3, 5, 5});
        const ValueId y = m.node(OpKind::kConv, {x, m.random_constant({6, 3, 1, 1}, rng, -3.0, 3.0)});
        const ValueId three = m.constant(Tensor::scalar<float>(3.0f));
        const ValueId shifted =
            m.node(OpKind::kAdd, three_first ? std::vector<ValueId>{three, y} : std::vector{y, three});
        const ValueId c = m.node(
            OpKind::kClip, {shifted, m.constant(Tensor::scalar<float>(0.0f)), m.constant(Tensor::scalar<float>(6.0f))});
        const auto sixth = [&](ValueId v) {
          return divide ? m.node(OpKind::kDiv, {v, m.constant(Tensor::scalar<float>(6.0f))})
                        : m.node(OpKind::kMul, {m.constant(Tensor::scalar<float>(1.0f / 6.0f)), v});
        };
        m.output(product_first ? sixth(m.node(OpKind::kMul, {c, y})) : m.node(OpKind::kMul, {y, sixth(c)}));
        const Graph fused = apply_and_compare(m.graph(), fusion::fuse_conv_activation, 1);
        REQUIRE(fused.nodes().size() == 1);
        CHECK(fused.nodes()[0].attrs.get_string("fused_activation", "") == "hard_swish");
      }
    }
  }
}

TEST_CASE("fuse_conv_activation leaves near-HardSwish chains alone") {
  std::mt19937 rng(8);
  GraphMaker m;
  const ValueId x = m.input({1, 3, 5, 5});
  const auto scalar = [&](float v) { return m.constant(Tensor::scalar<float>(v)); };
  // y * Clip(y + shift, 0, top) / divisor with one constant off, or an intermediate read twice.
  struct Variant {
    float shift, top, divisor;
    bool clip_read_twice;
  };
  for (const Variant v : {Variant{2.0f, 6.0f, 6.0f, false}, Variant{3.0f, 5.0f, 6.0f, false},
                          Variant{3.0f, 6.0f, 5.0f, false}, Variant{3.0f, 6.0f, 6.0f, true}}) {
    const ValueId y = m.node(OpKind::kConv, {x, m.random_constant({2, 3, 1, 1}, rng)});
    const ValueId c = m.node(OpKind::kClip, {m.node(OpKind::kAdd, {y, scalar(v.shift)}), scalar(0.0f), scalar(v.top)});
    m.output(m.node(OpKind::kDiv, {m.node(OpKind::kMul, {y, c}), scalar(v.divisor)}));
    if (v.clip_read_twice) m.output(c);
  }
  Graph graph = m.graph();
  const size_t nodes = graph.nodes().size();
  PassReport report;
  REQUIRE(fusion::fuse_conv_activation(graph, report).is_ok());
  CHECK(report.changes == 0);
  CHECK(graph.nodes().size() == nodes);
}

TEST_CASE("fuse_conv_activation respects graph outputs and extra readers") {
  std::mt19937 rng(6);
  GraphMaker m;
  const ValueId x = m.input({1, 2, 4, 4});
  // Conv output is a graph output: its activation cannot be folded in.
  const ValueId y1 = m.node(OpKind::kConv, {x, m.random_constant({2, 2, 1, 1}, rng)});
  m.output(y1);
  m.output(m.node(OpKind::kRelu, {y1}));
  // SiLU whose Sigmoid output is also read elsewhere.
  const ValueId y2 = m.node(OpKind::kConv, {x, m.random_constant({2, 2, 1, 1}, rng)});
  const ValueId s2 = m.node(OpKind::kSigmoid, {y2});
  m.output(m.node(OpKind::kMul, {y2, s2}));
  m.output(m.node(OpKind::kRelu, {s2}));
  // Conv read by two activations.
  const ValueId y3 = m.node(OpKind::kConv, {x, m.random_constant({2, 2, 1, 1}, rng)});
  m.output(m.node(OpKind::kRelu, {y3}));
  m.output(m.node(OpKind::kTanh, {y3}));
  // Mul(y, HardSigmoid(y)) with ONNX's default alpha 0.2: no HardSwish.
  const ValueId y4 = m.node(OpKind::kConv, {x, m.random_constant({2, 2, 1, 1}, rng)});
  m.output(m.node(OpKind::kMul, {y4, m.node(OpKind::kHardSigmoid, {y4})}));
  Graph graph = m.graph();
  const size_t nodes = graph.nodes().size();
  PassReport report;
  REQUIRE(fusion::fuse_conv_activation(graph, report).is_ok());
  CHECK(report.changes == 0);
  CHECK(graph.nodes().size() == nodes);
}

// fold_constants first, so the values carry the static shapes fuse_conv_add checks.
Status fold_then_fuse_conv_add(Graph& graph, PassReport& report) {
  PassReport folded;
  EF_RETURN_IF_ERROR(fusion::fold_constants(graph, folded));
  return fusion::fuse_conv_add(graph, report);
}

TEST_CASE("fuse_conv_add fuses a same-shaped residual, also one computed after the conv") {
  for (bool residual_first : {false, true}) {
    CAPTURE(residual_first);
    std::mt19937 rng(10);
    GraphMaker m;
    const ValueId x = m.input({1, 4, 6, 6});
    Attributes pool;
    pool.set("kernel_shape", std::vector<int64_t>{3, 3});
    pool.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    ValueId skip = residual_first ? m.node(OpKind::kMaxPool, {x}, pool) : kNoValue;
    const ValueId y =
        m.node(OpKind::kConv, {x, m.random_constant({4, 4, 3, 3}, rng), m.random_constant({4}, rng)}, conv_attrs(1));
    if (!residual_first) skip = m.node(OpKind::kMaxPool, {x}, pool);  // after the conv in node order
    m.output(m.node(OpKind::kAdd, residual_first ? std::vector<ValueId>{skip, y} : std::vector<ValueId>{y, skip}));
    const Graph fused = apply_and_compare(m.graph(), fold_then_fuse_conv_add, 1);
    REQUIRE(fused.nodes().size() == 2);
    CHECK(fused.nodes()[1].op == OpKind::kConv);
    CHECK(fused.nodes()[1].input_count() == 4);
  }
}

TEST_CASE("fuse_conv_add then fuse_conv_activation: act(conv + residual) in one node") {
  std::mt19937 rng(13);
  GraphMaker m;
  const ValueId x = m.input({1, 3, 5, 5});
  const ValueId y = m.node(OpKind::kConv, {x, m.random_constant({3, 1, 3, 3}, rng)}, conv_attrs(1, 3));  // depthwise
  m.output(m.node(OpKind::kRelu, {m.node(OpKind::kAdd, {y, x})}));
  Graph graph = m.graph();
  Result<std::vector<PassReport>> reports = optimize_graph(graph);
  REQUIRE(reports.is_ok());
  REQUIRE(graph.nodes().size() == 1);
  CHECK(graph.nodes()[0].input_count() == 4);
  CHECK(graph.nodes()[0].attrs.get_string("fused_activation", "") == "relu");
  std::mt19937 input_rng(14);
  const std::vector<Tensor> inputs = random_inputs_for(m.graph(), input_rng);
  for (bool reference : {false, true}) {
    CHECK(max_relative_l2(run_graph(graph, inputs, reference), run_graph(m.graph(), inputs, true)) <= kFusionTolerance);
  }
}

TEST_CASE("fuse_conv_add leaves broadcasts, shared conv outputs and activated convs alone") {
  std::mt19937 rng(15);
  GraphMaker m;
  const ValueId x = m.input({1, 2, 4, 4});
  const auto conv = [&] { return m.node(OpKind::kConv, {x, m.random_constant({2, 2, 1, 1}, rng)}); };
  m.output(m.node(OpKind::kAdd, {conv(), m.random_constant({2, 1, 1}, rng)}));  // broadcast
  const ValueId shared = conv();
  m.output(m.node(OpKind::kAdd, {shared, x}));
  m.output(m.node(OpKind::kRelu, {shared}));  // second reader
  const ValueId twice = conv();
  m.output(m.node(OpKind::kAdd, {twice, twice}));  // y + y: no separate residual
  const ValueId activated = conv();
  m.output(m.node(OpKind::kAdd, {m.node(OpKind::kRelu, {activated}), x}));  // Add after the activation
  Graph graph = m.graph();
  const size_t nodes = graph.nodes().size();
  PassReport report;
  REQUIRE(fold_then_fuse_conv_add(graph, report).is_ok());
  CHECK(report.changes == 0);
  CHECK(graph.nodes().size() == nodes);
}

// fold_constants and fuse_conv_activation first: fuse_conv_activation_add needs static shapes
// and the activation already on the Conv.
Status activate_then_fuse_conv_activation_add(Graph& graph, PassReport& report) {
  PassReport earlier;
  EF_RETURN_IF_ERROR(fusion::fold_constants(graph, earlier));
  EF_RETURN_IF_ERROR(fusion::fuse_conv_activation(graph, earlier));
  return fusion::fuse_conv_activation_add(graph, report);
}

TEST_CASE("fuse_conv_activation_add fuses Add(act(conv), skip) as a residual after the activation") {
  for (bool silu : {false, true}) {
    for (bool skip_first : {false, true}) {
      CAPTURE(silu);
      CAPTURE(skip_first);
      std::mt19937 rng(16);
      GraphMaker m;
      const ValueId x = m.input({1, 4, 6, 6});
      Attributes pool;
      pool.set("kernel_shape", std::vector<int64_t>{3, 3});
      pool.set("pads", std::vector<int64_t>{1, 1, 1, 1});
      ValueId skip = skip_first ? m.node(OpKind::kMaxPool, {x}, pool) : kNoValue;
      const ValueId y =
          m.node(OpKind::kConv, {x, m.random_constant({4, 4, 3, 3}, rng), m.random_constant({4}, rng)}, conv_attrs(1));
      const ValueId a = silu ? m.node(OpKind::kMul, {y, m.node(OpKind::kSigmoid, {y})}) : m.node(OpKind::kRelu, {y});
      if (!skip_first) skip = m.node(OpKind::kMaxPool, {x}, pool);  // after the conv in node order
      m.output(m.node(OpKind::kAdd, skip_first ? std::vector<ValueId>{skip, a} : std::vector<ValueId>{a, skip}));
      CHECK(m.graph().nodes().size() == (silu ? 5u : 4u));
      const Graph fused = apply_and_compare(m.graph(), activate_then_fuse_conv_activation_add, 1);
      REQUIRE(fused.nodes().size() == 2);  // MaxPool and the Conv
      CHECK(count_nodes(fused, OpKind::kAdd) == 0);
      const Node& conv = fused.nodes()[1];
      REQUIRE(conv.op == OpKind::kConv);
      CHECK(conv.input_count() == 4);
      CHECK(conv.attrs.get_string("fused_activation", "") == (silu ? "silu" : "relu"));
      CHECK(conv.attrs.get_int("fused_residual_after_activation", 0) == 1);
    }
  }
}

TEST_CASE("fuse_conv_activation_add leaves shared, output, broadcast, self and residual convs alone") {
  std::mt19937 rng(17);
  GraphMaker m;
  const ValueId x = m.input({1, 2, 4, 4});
  const auto activated_conv = [&] {
    return m.node(OpKind::kRelu, {m.node(OpKind::kConv, {x, m.random_constant({2, 2, 1, 1}, rng)})});
  };
  const ValueId shared = activated_conv();
  m.output(m.node(OpKind::kAdd, {shared, x}));
  m.output(m.node(OpKind::kSigmoid, {shared}));  // second reader of the activated output
  const ValueId output = activated_conv();
  m.output(output);  // a graph output
  m.output(m.node(OpKind::kAdd, {output, x}));
  m.output(m.node(OpKind::kAdd, {activated_conv(), m.random_constant({2, 1, 1}, rng)}));  // broadcast
  const ValueId twice = activated_conv();
  m.output(m.node(OpKind::kAdd, {twice, twice}));  // a + a: no separate residual
  const ValueId plain = m.node(OpKind::kConv, {x, m.random_constant({2, 2, 1, 1}, rng)});
  m.output(m.node(OpKind::kAdd, {plain, x}));  // no activation: fuse_conv_add's pattern
  Graph graph = m.graph();
  PassReport folded, activations;
  REQUIRE(fusion::fold_constants(graph, folded).is_ok());
  REQUIRE(fusion::fuse_conv_activation(graph, activations).is_ok());
  CHECK(activations.changes == 4);
  const size_t nodes = graph.nodes().size();
  PassReport report;
  REQUIRE(fusion::fuse_conv_activation_add(graph, report).is_ok());
  CHECK(report.changes == 0);
  CHECK(graph.nodes().size() == nodes);
}

TEST_CASE("optimize_graph: a conv with a residual before its activation takes no second residual") {
  // Add(Relu(Add(conv, x)), x): fuse_conv_add and fuse_conv_activation make one Conv with input 3;
  // the outer Add stays, since the Conv has only one residual slot.
  std::mt19937 rng(18);
  GraphMaker m;
  const ValueId x = m.input({1, 3, 5, 5});
  const ValueId y = m.node(OpKind::kConv, {x, m.random_constant({3, 3, 3, 3}, rng)}, conv_attrs(1));
  m.output(m.node(OpKind::kAdd, {m.node(OpKind::kRelu, {m.node(OpKind::kAdd, {y, x})}), x}));
  Graph graph = m.graph();
  Result<std::vector<PassReport>> reports = optimize_graph(graph);
  REQUIRE(reports.is_ok());
  REQUIRE(graph.nodes().size() == 2);
  CHECK(graph.nodes()[0].op == OpKind::kConv);
  CHECK(graph.nodes()[0].input_count() == 4);
  CHECK_FALSE(graph.nodes()[0].attrs.has("fused_residual_after_activation"));
  CHECK(graph.nodes()[1].op == OpKind::kAdd);
  std::mt19937 input_rng(19);
  const std::vector<Tensor> inputs = random_inputs_for(m.graph(), input_rng);
  for (bool reference : {false, true}) {
    CHECK(max_relative_l2(run_graph(graph, inputs, reference), run_graph(m.graph(), inputs, true)) <= kFusionTolerance);
  }
}

Attributes perm(std::vector<int64_t> axes) {
  Attributes a;
  a.set("perm", std::move(axes));
  return a;
}

TEST_CASE("fold_transposes merges consecutive Transposes and drops identity ones") {
  GraphMaker m;
  const ValueId x = m.input({2, 3, 4, 5});
  const ValueId a = m.node(OpKind::kTranspose, {x}, perm({0, 2, 3, 1}));  // NCHW -> NHWC
  const ValueId b = m.node(OpKind::kTranspose, {a}, perm({3, 0, 2, 1}));  // one pass: perm {1, 0, 3, 2}
  m.output(m.node(OpKind::kRelu, {b}));
  const ValueId c = m.node(OpKind::kTranspose, {x}, perm({0, 2, 3, 1}));
  const ValueId d = m.node(OpKind::kTranspose, {c}, perm({0, 3, 1, 2}));  // NHWC -> NCHW: the identity
  m.output(m.node(OpKind::kSigmoid, {d}));
  const ValueId e = m.node(OpKind::kTranspose, {x});              // no perm: reverses x's 4 dims
  m.output(m.node(OpKind::kTranspose, {e}, perm({3, 2, 1, 0})));  // back: the identity, but a graph output
  // Three merges (a into b, c into d, e into the output one), then d's identity result goes.
  const Graph fused = apply_and_compare(m.graph(), fusion::fold_transposes, 4);
  CHECK(count_nodes(fused, OpKind::kTranspose) == 2);
  for (const Node& node : fused.nodes()) {
    if (node.op == OpKind::kRelu) {
      const Node& merged = fused.node(fused.value(node.inputs[0]).producer);
      CHECK(merged.attrs.get_ints("perm") == std::vector<int64_t>{1, 0, 3, 2});
    }
    if (node.op == OpKind::kSigmoid) CHECK(fused.value(node.inputs[0]).producer < 0);  // reads x
  }
}

TEST_CASE("fold_transposes folds 2-D Transposes into Gemm, and keeps shared and output ones") {
  std::mt19937 rng(3);
  GraphMaker m;
  const ValueId x = m.input({4, 6});
  const ValueId w = m.input({5, 6});
  const ValueId wt = m.node(OpKind::kTranspose, {w}, perm({1, 0}));  // [6, 5]
  Attributes trans_a;
  trans_a.set("transA", int64_t{1});
  const ValueId xt = m.node(OpKind::kTranspose, {x}, perm({1, 0}));  // [6, 4], Gemm transposes it back
  m.output(m.node(OpKind::kGemm, {xt, wt, m.random_constant({5}, rng)}, trans_a));
  const ValueId shared = m.node(OpKind::kTranspose, {x}, perm({1, 0}));  // read twice: kept
  m.output(m.node(OpKind::kAdd, {shared, shared}));
  m.output(m.node(OpKind::kTranspose, {w}, perm({1, 0})));  // a graph output: kept
  const Graph fused = apply_and_compare(m.graph(), fusion::fold_transposes, 2);
  CHECK(count_nodes(fused, OpKind::kTranspose) == 2);
  for (const Node& node : fused.nodes()) {
    if (node.op != OpKind::kGemm) continue;
    CHECK(node.attrs.get_int("transA", -1) == 0);
    CHECK(node.attrs.get_int("transB", -1) == 1);
    CHECK(fused.value(node.inputs[0]).producer < 0);
    CHECK(fused.value(node.inputs[1]).producer < 0);
  }
}

TEST_CASE("fold_concat_into_transpose lets a Transpose take its Concat's inputs when each is one block") {
  GraphMaker m;
  Attributes on_cells;
  on_cells.set("axis", int64_t{2});
  // The YOLOX head's tail: three levels [1, 5, cells] joined on the cells, then [1, cells, 5].
  const ValueId levels =
      m.node(OpKind::kConcat, {m.input({1, 5, 12}), m.input({1, 5, 6}), m.input({1, 5, 3})}, on_cells);
  m.output(m.node(OpKind::kTranspose, {levels}, perm({0, 2, 1})));
  // No perm (the reversal): axis 1 of [3, 6] lands first, so it folds too.
  Attributes on_columns;
  on_columns.set("axis", int64_t{1});
  const ValueId columns = m.node(OpKind::kConcat, {m.input({3, 2}), m.input({3, 4})}, on_columns);
  m.output(m.node(OpKind::kTranspose, {columns}));
  // Kept: axis 2 lands after a dim of 2, so an input's part is not one block of the output.
  const ValueId batched = m.node(OpKind::kConcat, {m.input({2, 5, 4}), m.input({2, 5, 3})}, on_cells);
  m.output(m.node(OpKind::kTranspose, {batched}, perm({0, 2, 1})));
  // Kept: the Concat has another reader, or is a graph output.
  const ValueId shared = m.node(OpKind::kConcat, {m.input({1, 5, 4}), m.input({1, 5, 2})}, on_cells);
  m.output(m.node(OpKind::kTranspose, {shared}, perm({0, 2, 1})));
  m.output(m.node(OpKind::kRelu, {shared}));
  const ValueId exposed = m.node(OpKind::kConcat, {m.input({1, 5, 4}), m.input({1, 5, 2})}, on_cells);
  m.output(exposed);
  m.output(m.node(OpKind::kTranspose, {exposed}, perm({0, 2, 1})));
  const Graph fused = apply_and_compare(m.graph(), fusion::fold_concat_into_transpose, 2);
  CHECK(count_nodes(fused, OpKind::kConcat) == 3);
  int taking = 0;
  for (const Node& node : fused.nodes()) {
    if (node.op != OpKind::kTranspose || !node.attrs.has(kTransposeConcatAxis)) continue;
    ++taking;
    CHECK((node.inputs.size() == 3 || node.inputs.size() == 2));
    for (ValueId input : node.inputs) CHECK(fused.value(input).producer < 0);  // the graph inputs themselves
  }
  CHECK(taking == 2);
  // Movement only: the outputs are equal bit for bit.
  std::mt19937 rng(12);
  const std::vector<Tensor> inputs = random_inputs_for(m.graph(), rng);
  CHECK(max_relative_l2(run_graph(fused, inputs, false), run_graph(m.graph(), inputs, true)) == 0.0);
}

TEST_CASE("a Transpose with several inputs needs the fused Concat axis and inputs that concatenate") {
  const auto infer = [](Attributes attrs, std::vector<Shape> shapes) {
    GraphMaker m;
    std::vector<ValueId> inputs;
    for (const Shape& shape : shapes) inputs.push_back(m.input(shape));
    m.output(m.node(OpKind::kTranspose, inputs, std::move(attrs)));
    std::vector<TensorDesc> descs;
    for (const Shape& shape : shapes) descs.push_back(TensorDesc{DType::kF32, shape});
    return plan_memory(m.graph(), descs).status();
  };
  CHECK(infer(perm({0, 2, 1}), {{1, 5, 4}, {1, 5, 2}}).message().find("without attribute 'fused_concat_axis'") !=
        std::string::npos);
  Attributes fused = perm({0, 2, 1});
  fused.set(kTransposeConcatAxis, int64_t{2});
  CHECK(infer(fused, {{1, 5, 4}, {1, 5, 2}}).is_ok());
  CHECK(infer(fused, {{2, 5, 4}, {2, 5, 2}}).is_ok());  // a batch: one block per input and image
  CHECK(infer(fused, {{1, 5, 4}, {1, 6, 2}}).message().find("incompatible with input 0") != std::string::npos);
}

TEST_CASE("fold_transposes lets a dense Conv read an NHWC input's Transpose channels-last, and no other") {
  std::mt19937 rng(4);
  GraphMaker m;
  const ValueId image = m.input({1, 9, 14, 3});  // NHWC, as TensorFlow exports feed their models
  const auto to_nchw = [&] { return m.node(OpKind::kTranspose, {image}, perm({0, 3, 1, 2})); };
  // Folded: a 3x3 Conv, and a 1-D one reading [N, L, C] through perm [0, 2, 1].
  m.output(m.node(OpKind::kConv, {to_nchw(), m.random_constant({8, 3, 3, 3}, rng), m.random_constant({8}, rng)},
                  conv_attrs(1)));
  const ValueId sequence = m.input({2, 20, 4});
  Attributes pad_1d;
  pad_1d.set("pads", std::vector<int64_t>{2, 2});
  m.output(m.node(OpKind::kConv,
                  {m.node(OpKind::kTranspose, {sequence}, perm({0, 2, 1})), m.random_constant({5, 4, 5}, rng)},
                  pad_1d));
  // Kept: a 1x1 Conv, a depthwise one, a weight that is no initializer, another permutation, and
  // a Transpose two Convs read.
  m.output(m.node(OpKind::kConv, {to_nchw(), m.random_constant({4, 3, 1, 1}, rng)}));
  m.output(m.node(OpKind::kConv, {to_nchw(), m.random_constant({3, 1, 3, 3}, rng)}, conv_attrs(1, 3)));
  m.output(m.node(OpKind::kConv, {to_nchw(), m.input({6, 3, 3, 3})}, conv_attrs(1)));
  m.output(m.node(OpKind::kConv,
                  {m.node(OpKind::kTranspose, {image}, perm({0, 3, 2, 1})), m.random_constant({2, 3, 3, 3}, rng)},
                  conv_attrs(1)));
  const ValueId shared = to_nchw();
  m.output(m.node(OpKind::kConv, {shared, m.random_constant({2, 3, 3, 3}, rng)}, conv_attrs(1)));
  m.output(m.node(OpKind::kConv, {shared, m.random_constant({2, 3, 3, 3}, rng)}, conv_attrs(1)));
  const Graph fused = apply_and_compare(m.graph(), fusion::fold_transposes, 2);
  CHECK(count_nodes(fused, OpKind::kTranspose) == 5);
  int channels_last = 0;
  for (const Node& node : fused.nodes()) {
    if (node.op != OpKind::kConv || node.attrs.get_int(kConvInputChannelsLast, 0) == 0) continue;
    ++channels_last;
    CHECK(fused.value(node.inputs[0]).producer < 0);  // the graph input itself
  }
  CHECK(channels_last == 2);
}

TEST_CASE("optimize_graph runs the passes in order, verifies, and can be switched off") {
  std::mt19937 rng(8);
  GraphMaker m;
  const ValueId x = m.input({1, 3, 8, 8});
  const ValueId y = m.node(OpKind::kConv, {x, m.random_constant({4, 3, 3, 3}, rng)}, conv_attrs(1));
  const ValueId bn =
      m.node(OpKind::kBatchNormalization, {y, m.random_constant({4}, rng, 0.5, 1.5), m.random_constant({4}, rng),
                                           m.random_constant({4}, rng), m.random_constant({4}, rng, 0.5, 1.5)});
  const ValueId dropout = m.node(OpKind::kIdentity, {bn});
  const ValueId s = m.node(OpKind::kSigmoid, {dropout});
  m.output(m.node(OpKind::kMul, {dropout, s}));

  Graph off = m.graph();
  FusionOptions disabled;
  disabled.enabled = false;
  Result<std::vector<PassReport>> none = optimize_graph(off, disabled);
  REQUIRE(none.is_ok());
  CHECK(none->empty());
  CHECK(off.nodes().size() == 5);

  Graph fused = m.graph();
  Result<std::vector<PassReport>> reports = optimize_graph(fused);
  REQUIRE(reports.is_ok());
  REQUIRE(reports->size() == 22);
  const char* const order[] = {"eliminate_identity",
                               "fold_constants",
                               "fold_transposes",
                               "fold_split_into_concat",
                               "fold_concat_into_transpose",
                               "fold_space_to_depth_into_conv",
                               "fold_batchnorm_into_conv",
                               "fold_scale_shift_into_conv",
                               "fuse_conv_add",
                               "push_slices_into_concat_inputs",
                               "push_activations_into_concat_inputs",
                               "fuse_softmax_expectation",
                               "push_expectations_into_concat_inputs",
                               "fuse_conv_activation",
                               "fuse_conv_activation_add",
                               "trim_zero_padded_residuals",
                               "fold_max_pool_into_conv_residual",
                               "fold_transpose_into_conv_output",
                               "fuse_conv_activation_after_transposes",
                               "fold_slices_into_windowed_chains",
                               "fuse_pointwise_chains",
                               "cascade_spp_maxpools"};
  const int changes[] = {1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < reports->size(); ++i) {
    CHECK((*reports)[i].pass == order[i]);
    CHECK((*reports)[i].changes == changes[i]);
  }
  CHECK(fused.nodes().size() == 1);
  CHECK(format_pass_reports(*reports).find("fuse_conv_activation: 1 change\n") != std::string::npos);
  std::mt19937 input_rng(9);
  const std::vector<Tensor> inputs = random_inputs_for(m.graph(), input_rng);
  CHECK(max_relative_l2(run_graph(fused, inputs, false), run_graph(m.graph(), inputs, true)) <= kFusionTolerance);
}

TEST_CASE("optimize_graph skips passes by name, and refuses a name that is no pass") {
  std::mt19937 rng(10);
  GraphMaker m;
  const ValueId x = m.input({1, 3, 8, 8});
  const ValueId y = m.node(OpKind::kConv, {x, m.random_constant({4, 3, 3, 3}, rng)}, conv_attrs(1));
  m.output(m.node(OpKind::kMul, {y, m.node(OpKind::kSigmoid, {y})}));

  const std::vector<std::string> names = fusion_pass_names();
  REQUIRE(names.size() == 22);
  CHECK(names.front() == "eliminate_identity");
  CHECK(names.back() == "cascade_spp_maxpools");

  Graph skipped = m.graph();
  FusionOptions options;
  options.skipped_passes = {"fuse_conv_activation"};
  Result<std::vector<PassReport>> reports = optimize_graph(skipped, options);
  REQUIRE(reports.is_ok());
  CHECK(reports->size() == names.size());
  for (const PassReport& report : *reports) {
    if (report.pass != "fuse_conv_activation") continue;
    CHECK(report.changes == 0);
    CHECK(report.details == std::vector<std::string>{"skipped on request"});
  }
  // The SiLU is left to the pointwise-chain pass, which still runs.
  CHECK(count_nodes(skipped, OpKind::kConv) == 1);
  CHECK_FALSE(skipped.nodes().front().attrs.has("fused_activation"));
  CHECK(skipped.nodes().size() == 2);

  Graph unknown = m.graph();
  options.skipped_passes = {"fuse_everything"};
  Result<std::vector<PassReport>> refused = optimize_graph(unknown, options);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().code() == StatusCode::kInvalidArgument);
  CHECK(refused.status().message().find("'fuse_everything'") != std::string::npos);
  CHECK(unknown.nodes().size() == 3);  // untouched
}

TEST_CASE("EDGEFUSE_NO_FUSION=1 is the environment switch") {
  ::setenv("EDGEFUSE_NO_FUSION", "1", 1);
  CHECK(fusion_disabled_by_env());
  ::setenv("EDGEFUSE_NO_FUSION", "0", 1);
  CHECK_FALSE(fusion_disabled_by_env());
  ::unsetenv("EDGEFUSE_NO_FUSION");
  CHECK_FALSE(fusion_disabled_by_env());
}

}  // namespace
}  // namespace edgefuse::test
