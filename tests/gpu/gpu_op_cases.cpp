#include "tests/gpu/gpu_op_cases.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>

#include "runtime/memory_plan.h"
#include "runtime/ops/conv_problem.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_chain.h"
#include "tests/fusion/fusion_test_graphs.h"
#include "tests/support/numerics.h"

namespace edgefuse::test {
namespace {

ValueId ints(GraphMaker& m, std::vector<int64_t> values) {
  const auto count = static_cast<int64_t>(values.size());
  return m.constant(Tensor::from_vector<int64_t>({count}, values));
}

ValueId floats(GraphMaker& m, std::vector<float> values) {
  const auto count = static_cast<int64_t>(values.size());
  return m.constant(Tensor::from_vector<float>({count}, values));
}

Attributes conv_attrs(std::vector<int64_t> pads, std::vector<int64_t> strides, std::vector<int64_t> dilations,
                      int64_t group) {
  Attributes a;
  a.set("pads", std::move(pads));
  a.set("strides", std::move(strides));
  a.set("dilations", std::move(dilations));
  a.set("group", group);
  return a;
}

class CaseBuilder {
 public:
  explicit CaseBuilder(std::vector<GpuOpCase>& cases) : cases_(cases) {}

  // Builds one case: `build` adds the nodes and outputs to the maker; inputs are random in
  // [lo, hi) (positive for Sqrt and Pow bases).
  template <typename Build>
  void add(std::string name, Build build, bool exact = false, int fallbacks = 0, double lo = -2.0, double hi = 2.0) {
    GraphMaker m;
    std::mt19937 rng(static_cast<unsigned>(cases_.size() + 7));
    build(m, rng);
    GpuOpCase c;
    c.name = std::move(name);
    c.exact = exact;
    c.fallbacks = fallbacks;
    for (ValueId input : m.graph().inputs()) {
      c.inputs.push_back(random_tensor(DType::kF32, m.graph().value(input).desc.shape, rng, lo, hi));
    }
    c.graph = std::make_shared<const Graph>(std::move(m.graph()));
    cases_.push_back(std::move(c));
  }

 private:
  std::vector<GpuOpCase>& cases_;
};

void add_conv_cases(CaseBuilder& b) {
  b.add("conv 3x3, bias, SiLU epilogue, odd size", [](GraphMaker& m, std::mt19937& rng) {
    Attributes a = conv_attrs({1, 1, 1, 1}, {1, 1}, {1, 1}, 1);
    a.set("fused_activation", std::string("silu"));
    m.output(m.node(OpKind::kConv,
                    {m.input({1, 3, 7, 9}), m.random_constant({5, 3, 3, 3}, rng), m.random_constant({5}, rng)}, a));
  });
  b.add("depthwise conv, stride 2, asymmetric pads, relu", [](GraphMaker& m, std::mt19937& rng) {
    Attributes a = conv_attrs({0, 1, 2, 1}, {2, 2}, {1, 1}, 4);
    a.set("fused_activation", std::string("relu"));
    m.output(m.node(OpKind::kConv, {m.input({2, 4, 9, 11}), m.random_constant({4, 1, 3, 3}, rng)}, a));
  });
  b.add("1x1 conv, residual after a sigmoid epilogue", [](GraphMaker& m, std::mt19937& rng) {
    Attributes a = conv_attrs({0, 0, 0, 0}, {1, 1}, {1, 1}, 1);
    a.set("fused_activation", std::string("sigmoid"));
    a.set("fused_residual_after_activation", int64_t{1});
    const ValueId x = m.input({1, 6, 5, 4});
    const ValueId residual = m.input({1, 3, 5, 4});
    m.output(
        m.node(OpKind::kConv, {x, m.random_constant({3, 6, 1, 1}, rng), m.random_constant({3}, rng), residual}, a));
  });
  b.add("conv with residual before a clip epilogue, dilation 2, group 2", [](GraphMaker& m, std::mt19937& rng) {
    Attributes a = conv_attrs({2, 1, 2, 3}, {1, 2}, {2, 1}, 2);
    a.set("fused_activation", std::string("clip"));
    a.set("fused_min", -0.25f);
    a.set("fused_max", 0.5f);
    const ValueId x = m.input({1, 4, 8, 7});
    const ValueId y =
        m.node(OpKind::kConv, {x, m.random_constant({6, 2, 3, 2}, rng)}, conv_attrs({2, 1, 2, 3}, {1, 2}, {2, 1}, 2));
    m.output(m.node(OpKind::kConv, {x, m.random_constant({6, 2, 3, 2}, rng), kNoValue, y}, a));
  });
  b.add("conv with 8 outputs in 2 groups (4 channels per work item), stride 2, bias, residual",
        [](GraphMaker& m, std::mt19937& rng) {
          Attributes a = conv_attrs({1, 1, 1, 1}, {2, 2}, {1, 1}, 2);
          a.set("fused_activation", std::string("silu"));
          const ValueId x = m.input({2, 6, 9, 7});
          const ValueId residual = m.input({2, 8, 5, 4});
          m.output(m.node(OpKind::kConv,
                          {x, m.random_constant({8, 3, 3, 3}, rng), m.random_constant({8}, rng), residual}, a));
        });
  b.add("conv with 8 outputs (4 per work item), a residual of 5 channels (trimmed zero padding), batch 2",
        [](GraphMaker& m, std::mt19937& rng) {
          Attributes a = conv_attrs({1, 1, 1, 1}, {1, 1}, {1, 1}, 1);
          a.set("fused_activation", std::string("relu"));
          const ValueId x = m.input({2, 3, 6, 5});
          const ValueId residual = m.input({2, 5, 6, 5});
          m.output(m.node(OpKind::kConv,
                          {x, m.random_constant({8, 3, 3, 3}, rng), m.random_constant({8}, rng), residual}, a));
        });
  b.add("conv reading its input channels-last (a folded NHWC Transpose), 2 groups, stride 2, residual",
        [](GraphMaker& m, std::mt19937& rng) {
          Attributes a = conv_attrs({1, 1, 1, 1}, {2, 2}, {1, 1}, 2);
          a.set("fused_activation", std::string("silu"));
          a.set(kConvInputChannelsLast, int64_t{1});
          const ValueId x = m.input({2, 7, 9, 4});  // [N, H, W, C]
          const ValueId residual = m.input({2, 6, 4, 5});
          m.output(m.node(OpKind::kConv,
                          {x, m.random_constant({6, 2, 3, 3}, rng), m.random_constant({6}, rng), residual}, a));
        });
  b.add("conv with 6 outputs (3 channels per work item), 1x1", [](GraphMaker& m, std::mt19937& rng) {
    m.output(m.node(OpKind::kConv, {m.input({1, 5, 4, 6}), m.random_constant({6, 5, 1, 1}, rng)},
                    conv_attrs({0, 0, 0, 0}, {1, 1}, {1, 1}, 1)));
  });
  // The pointwise kernel's edge tiles: 13 output channels (a tile of 1 left), 5 x 7 positions (3
  // left), a residual of 9 channels after the activation, batch 2; and a 1-D one.
  b.add("1x1 conv, 13 outputs over 5 x 7, residual of 9 channels after SiLU, batch 2", [](GraphMaker& m,
                                                                                          std::mt19937& rng) {
    Attributes a = conv_attrs({0, 0, 0, 0}, {1, 1}, {1, 1}, 1);
    a.set("fused_activation", std::string("silu"));
    a.set("fused_residual_after_activation", int64_t{1});
    const ValueId residual = m.input({2, 9, 5, 7});
    m.output(m.node(
        OpKind::kConv,
        {m.input({2, 6, 5, 7}), m.random_constant({13, 6, 1, 1}, rng), m.random_constant({13}, rng), residual}, a));
  });
  b.add("1-D 1x1 conv, 5 outputs over 9 positions, residual before a relu", [](GraphMaker& m, std::mt19937& rng) {
    Attributes a = conv_attrs({0, 0}, {1}, {1}, 1);
    a.set("fused_activation", std::string("relu"));
    m.output(m.node(OpKind::kConv,
                    {m.input({1, 3, 9}), m.random_constant({5, 3, 1}, rng), kNoValue, m.input({1, 5, 9})}, a));
  });
  // The device's tiled GEMM (conv_gemm.h), which the device tests run in every tiling: several
  // stages of input channels (none a multiple of 8) and partial tiles at both edges.
  b.add("1x1 conv GEMM, 64x64 tiles: 65 outputs, 17 channels, 53 x 55, bias, batch 2", [](GraphMaker& m,
                                                                                          std::mt19937& rng) {
    m.output(m.node(OpKind::kConv,
                    {m.input({2, 17, 53, 55}), m.random_constant({65, 17, 1, 1}, rng), m.random_constant({65}, rng)},
                    conv_attrs({0, 0, 0, 0}, {1, 1}, {1, 1}, 1)));
  });
  b.add("1x1 conv GEMM, 32x64 tiles, 2 splits: 35 outputs, 33 channels, 65 x 67, residual after SiLU, batch 2",
        [](GraphMaker& m, std::mt19937& rng) {
          Attributes a = conv_attrs({0, 0, 0, 0}, {1, 1}, {1, 1}, 1);
          a.set("fused_activation", std::string("silu"));
          a.set("fused_residual_after_activation", int64_t{1});
          m.output(m.node(OpKind::kConv,
                          {m.input({2, 33, 65, 67}), m.random_constant({35, 33, 1, 1}, rng),
                           m.random_constant({35}, rng), m.input({2, 35, 65, 67})},
                          a));
        });
  b.add(
      "1x1 conv GEMM, 32x32 tiles, 4 splits: 35 outputs, 65 channels, 53 x 55, residual before relu, batch 2",
      [](GraphMaker& m, std::mt19937& rng) {
        Attributes a = conv_attrs({0, 0, 0, 0}, {1, 1}, {1, 1}, 1);
        a.set("fused_activation", std::string("relu"));
        m.output(m.node(
            OpKind::kConv,
            {m.input({2, 65, 53, 55}), m.random_constant({35, 65, 1, 1}, rng), kNoValue, m.input({2, 35, 53, 55})}, a));
      });
  b.add("1x1 conv GEMM, 16x32 tiles, 8 splits: 17 outputs, 129 channels, 5 x 7, bias", [](GraphMaker& m,
                                                                                          std::mt19937& rng) {
    m.output(m.node(OpKind::kConv,
                    {m.input({1, 129, 5, 7}), m.random_constant({17, 129, 1, 1}, rng), m.random_constant({17}, rng)},
                    conv_attrs({0, 0, 0, 0}, {1, 1}, {1, 1}, 1)));
  });
  // The implicit GEMM (conv_gemm_step.h): windows gathered over 20 channels x 9 taps (180 rows of
  // depth, stages past the end), dilation 2 with padding; and a channels-last input.
  b.add("conv GEMM: 3x3 dilation 2, 20 channels to 37, 23 x 19, pad 2, bias, SiLU",
        [](GraphMaker& m, std::mt19937& rng) {
          Attributes a = conv_attrs({2, 2, 2, 2}, {1, 1}, {2, 2}, 1);
          a.set("fused_activation", std::string("silu"));
          m.output(m.node(
              OpKind::kConv,
              {m.input({1, 20, 23, 19}), m.random_constant({37, 20, 3, 3}, rng), m.random_constant({37}, rng)}, a));
        });
  b.add("conv GEMM reading its input channels-last, 3x3 stride 2, 5 channels to 24, residual, batch 2", [](GraphMaker&
                                                                                                               m,
                                                                                                           std::mt19937&
                                                                                                               rng) {
    Attributes a = conv_attrs({1, 1, 1, 1}, {2, 2}, {1, 1}, 1);
    a.set(kConvInputChannelsLast, int64_t{1});
    const ValueId x = m.input({2, 17, 15, 5});  // [N, H, W, C]
    m.output(m.node(OpKind::kConv, {x, m.random_constant({24, 5, 3, 3}, rng), kNoValue, m.input({2, 24, 9, 8})}, a));
  });
  // The depthwise kernel: 5x5, stride 2 down and 1 across, over 13 columns (a tile of 1 left),
  // residual after SiLU, batch 2; and a 7x7 one with dilation 2, which the general kernel takes.
  b.add("depthwise 5x5 stride (2, 1) over 6 x 13, residual after SiLU, batch 2", [](GraphMaker& m, std::mt19937& rng) {
    Attributes a = conv_attrs({2, 2, 2, 2}, {2, 1}, {1, 1}, 3);
    a.set("fused_activation", std::string("silu"));
    a.set("fused_residual_after_activation", int64_t{1});
    m.output(m.node(OpKind::kConv,
                    {m.input({2, 3, 6, 13}), m.random_constant({3, 1, 5, 5}, rng), m.random_constant({3}, rng),
                     m.input({2, 3, 3, 13})},
                    a));
  });
  // The device's tile kernel (depthwise_conv.h): 3x3 stride 1 and 5x5 stride 2 over planes of
  // several 8 x 32 output tiles each way, partial at the bottom and right edges.
  b.add("depthwise 3x3 stride 1 over 21 x 70, pad 1, residual before SiLU, batch 2",
        [](GraphMaker& m, std::mt19937& rng) {
          Attributes a = conv_attrs({1, 1, 1, 1}, {1, 1}, {1, 1}, 3);
          a.set("fused_activation", std::string("silu"));
          m.output(m.node(OpKind::kConv,
                          {m.input({2, 3, 21, 70}), m.random_constant({3, 1, 3, 3}, rng), m.random_constant({3}, rng),
                           m.input({2, 3, 21, 70})},
                          a));
        });
  b.add("depthwise 5x5 stride 2 over 37 x 75, pads 2 and 1, relu", [](GraphMaker& m, std::mt19937& rng) {
    Attributes a = conv_attrs({2, 1, 2, 1}, {2, 2}, {1, 1}, 5);
    a.set("fused_activation", std::string("relu"));
    m.output(m.node(OpKind::kConv, {m.input({1, 5, 37, 75}), m.random_constant({5, 1, 5, 5}, rng)}, a));
  });
  b.add("depthwise 7x7 with dilation 2 (general kernel)", [](GraphMaker& m, std::mt19937& rng) {
    m.output(m.node(OpKind::kConv, {m.input({1, 2, 15, 16}), m.random_constant({2, 1, 7, 7}, rng)},
                    conv_attrs({6, 6, 6, 6}, {1, 1}, {2, 2}, 2)));
  });
  b.add("1-D conv, stride 3, hard-swish epilogue", [](GraphMaker& m, std::mt19937& rng) {
    Attributes a = conv_attrs({1, 2}, {3}, {1}, 1);
    a.set("fused_activation", std::string("hard_swish"));
    m.output(m.node(OpKind::kConv, {m.input({2, 3, 17}), m.random_constant({4, 3, 4}, rng)}, a));
  });
  b.add("3-D conv, leaky relu epilogue", [](GraphMaker& m, std::mt19937& rng) {
    Attributes a = conv_attrs({1, 0, 1, 0, 1, 1}, {1, 2, 1}, {1, 1, 1}, 1);
    a.set("fused_activation", std::string("leaky_relu"));
    a.set("fused_alpha", 0.2f);
    m.output(m.node(OpKind::kConv, {m.input({1, 2, 4, 5, 3}), m.random_constant({3, 2, 2, 3, 2}, rng)}, a));
  });
}

void add_pointwise_cases(CaseBuilder& b) {
  b.add("unary chain: relu, leaky relu, sigmoid, tanh, hard sigmoid, hard swish, clip, exp",
        [](GraphMaker& m, std::mt19937&) {
          const ValueId x = m.input({3, 5, 7});
          Attributes leaky;
          leaky.set("alpha", 0.3f);
          Attributes hard;
          hard.set("alpha", 0.4f);
          hard.set("beta", 0.3f);
          m.output(m.node(OpKind::kRelu, {x}));
          m.output(m.node(OpKind::kLeakyRelu, {x}, leaky));
          m.output(m.node(OpKind::kSigmoid, {x}));
          m.output(m.node(OpKind::kTanh, {x}));
          m.output(m.node(OpKind::kHardSigmoid, {x}, hard));
          m.output(m.node(OpKind::kHardSwish, {x}));
          m.output(m.node(OpKind::kClip, {x, m.constant(Tensor::scalar<float>(-0.5f)), kNoValue}));
          m.output(m.node(OpKind::kExp, {m.node(OpKind::kSigmoid, {x})}));  // Exp in place of a dying value
        });
  b.add(
      "sqrt and pow with broadcast exponents",
      [](GraphMaker& m, std::mt19937&) {
        const ValueId x = m.input({2, 3, 4});
        m.output(m.node(OpKind::kSqrt, {x}));
        m.output(m.node(OpKind::kPow, {x, floats(m, {0.5f, 2.0f, -1.0f, 3.0f})}));
      },
      false, 0, 0.1, 3.0);
  b.add("broadcasting add, sub, mul, div, prelu", [](GraphMaker& m, std::mt19937& rng) {
    const ValueId x = m.input({2, 3, 4, 5});
    const ValueId per_channel = m.random_constant({3, 1, 1}, rng, 0.5, 1.5);
    const ValueId row = m.input({5});
    m.output(m.node(OpKind::kAdd, {x, per_channel}));
    m.output(m.node(OpKind::kSub, {row, x}));
    m.output(m.node(OpKind::kMul, {m.input({2, 1, 4, 1}), x}));
    m.output(m.node(OpKind::kDiv, {x, per_channel}));
    m.output(m.node(OpKind::kPRelu, {x, per_channel}));
  });
  b.add(
      "pointwise chains: every step kind, broadcast heads and operands, constants on either side",
      [](GraphMaker& m, std::mt19937& rng) {
        using S = PointwiseChainStep;
        const auto chain_node = [&](std::vector<ValueId> inputs, std::vector<S> steps) {
          Attributes attrs;
          set_pointwise_chain(attrs, PointwiseChain{std::move(steps)});
          return m.node(OpKind::kPointwiseChain, std::move(inputs), attrs);
        };
        const ValueId x = m.input({2, 3, 4, 5});
        const ValueId per_channel = m.random_constant({3, 1, 1}, rng, 0.5, 1.5);
        const ValueId slope = m.random_constant({5}, rng, 0.0, 0.5);
        // SiLU, + bias, 0.5 - v, PRelu, / scale, clip, HardSwish, LeakyRelu.
        m.output(chain_node({x, per_channel, slope},
                            {S{OpKind::kSigmoid}, S{OpKind::kMul, 0}, S{OpKind::kAdd, 1},
                             S{OpKind::kSub, -1, true, 0.5f}, S{OpKind::kPRelu, 2}, S{OpKind::kDiv, 1},
                             S{OpKind::kClip, -1, false, 0, 0, -1.5f, 1.5f}, S{OpKind::kLeakyRelu, -1, false, 0.2f}}));
        // A [3, 1, 1] head widened by its operand: tanh, * x, hard sigmoid, sqrt, ^1.5, exp, relu, x - v.
        m.output(chain_node({per_channel, x},
                            {S{OpKind::kTanh}, S{OpKind::kMul, 1, true}, S{OpKind::kHardSigmoid, -1, false, 0.3f, 0.4f},
                             S{OpKind::kSqrt}, S{OpKind::kPow, -1, false, 1.5f}, S{OpKind::kExp}, S{OpKind::kHardSwish},
                             S{OpKind::kSub, 1, true}}));
      });
  b.add("windowed chains: in place over a dying input, and over one read again or into a graph output",
        [](GraphMaker& m, std::mt19937& rng) {
          using S = PointwiseChainStep;
          const auto windowed = [&](std::vector<ValueId> inputs, std::vector<S> steps, ChainWindow window) {
            Attributes attrs;
            set_pointwise_chain(attrs, PointwiseChain{std::move(steps), window});
            return m.node(OpKind::kPointwiseChain, std::move(inputs), attrs);
          };
          const ValueId a = m.node(OpKind::kRelu, {m.input({2, 3, 4, 7})});
          // Columns [0, 2) times a [4, 2] grid plus 0.5 (a is read again below: copied first).
          const ValueId w1 = windowed({a, m.random_constant({4, 2}, rng)},
                                      {S{OpKind::kMul, 1}, S{OpKind::kAdd, -1, false, 0.5f}}, {3, 0, 2});
          // Channels [1, 3) through a sigmoid, in w1's bytes.
          m.output(m.node(OpKind::kTanh, {windowed({w1}, {S{OpKind::kSigmoid}}, {1, 1, 3})}));
          // Rows [1, 3) of a through exp, straight into a graph output.
          m.output(windowed({a}, {S{OpKind::kExp}}, {2, 1, 3}));
        });
  b.add("batch normalization", [](GraphMaker& m, std::mt19937& rng) {
    m.output(m.node(OpKind::kBatchNormalization,
                    {m.input({2, 3, 4, 5}), m.random_constant({3}, rng), m.random_constant({3}, rng),
                     m.random_constant({3}, rng), m.random_constant({3}, rng, 0.5, 2.0)}));
  });
  b.add("softmax along a middle axis and a legacy flatten", [](GraphMaker& m, std::mt19937&) {
    const ValueId x = m.input({2, 5, 3});
    Attributes middle;
    middle.set("axis", int64_t{1});
    Attributes legacy;
    legacy.set("axis", int64_t{1});
    legacy.set("legacy_flatten", int64_t{1});
    m.output(m.node(OpKind::kSoftmax, {x}, middle));
    m.output(m.node(OpKind::kSoftmax, {x}, legacy));
  });
  b.add("softmax expectations: a distribution head's bins, with and without a bias",
        [](GraphMaker& m, std::mt19937& rng) {
          const ValueId bins = m.input({1, 4, 16, 37});
          Attributes on_bins;
          on_bins.set("axis", int64_t{2});
          m.output(m.node(OpKind::kSoftmaxExpectation, {bins, m.random_constant({16}, rng, 0, 15)}, on_bins));
          Attributes last;
          last.set("axis", int64_t{-1});
          m.output(m.node(OpKind::kSoftmaxExpectation,
                          {bins, m.random_constant({37}, rng), m.random_constant({1}, rng)}, last));
        });
}

void add_pool_cases(CaseBuilder& b) {
  b.add("max pool 3x3 stride 2 ceil mode, average pools with and without the padding",
        [](GraphMaker& m, std::mt19937&) {
          const ValueId x = m.input({1, 3, 9, 8});
          Attributes max;
          max.set("kernel_shape", std::vector<int64_t>{3, 3});
          max.set("strides", std::vector<int64_t>{2, 2});
          max.set("pads", std::vector<int64_t>{1, 1, 1, 1});
          max.set("ceil_mode", int64_t{1});
          m.output(m.node(OpKind::kMaxPool, {x}, max));
          for (int64_t include : {0, 1}) {
            Attributes avg;
            avg.set("kernel_shape", std::vector<int64_t>{2, 3});
            avg.set("strides", std::vector<int64_t>{1, 2});
            avg.set("pads", std::vector<int64_t>{1, 0, 0, 2});
            avg.set("count_include_pad", include);
            m.output(m.node(OpKind::kAveragePool, {x}, avg));
          }
          m.output(m.node(OpKind::kGlobalAveragePool, {x}));
        });
  b.add("SPP: parallel 5/9/13 max pools concatenated", [](GraphMaker& m, std::mt19937& rng) {
    const ValueId x = m.input({1, 2, 16, 16});  // 4 x 16 x 16 floats: aligned blocks, so aliased
    const ValueId y =
        m.node(OpKind::kConv, {x, m.random_constant({4, 2, 1, 1}, rng)}, conv_attrs({0, 0, 0, 0}, {1, 1}, {1, 1}, 1));
    std::vector<ValueId> parts = {y};
    for (int64_t k : {5, 9, 13}) {
      Attributes a;
      a.set("kernel_shape", std::vector<int64_t>{k, k});
      a.set("pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
      parts.push_back(m.node(OpKind::kMaxPool, {y}, a));
    }
    Attributes axis;
    axis.set("axis", int64_t{1});
    m.output(m.node(OpKind::kRelu, {m.node(OpKind::kConcat, parts, axis)}));
  });
}

void add_movement_cases(CaseBuilder& b) {
  b.add(
      "concat on a later axis (copied), split, reshape",
      [](GraphMaker& m, std::mt19937&) {
        const ValueId a = m.node(OpKind::kRelu, {m.input({2, 3, 4})});
        const ValueId c = m.node(OpKind::kRelu, {m.input({2, 3, 1})});
        Attributes axis2;
        axis2.set("axis", int64_t{-1});
        const ValueId cat = m.node(OpKind::kConcat, {a, c, a}, axis2);
        m.output(cat);
        Attributes axis1;
        axis1.set("axis", int64_t{1});
        const ValueId first = m.node(OpKind::kSplit, {cat, ints(m, {1, 2})}, axis1);
        Graph& g = m.graph();
        const ValueId second = g.add_value("split_second", TensorDesc{DType::kF32, {}});
        g.nodes().back().outputs.push_back(second);
        g.value(second).producer = static_cast<NodeId>(g.nodes().size() - 1);
        m.output(first);
        m.output(second);
        m.output(m.node(OpKind::kReshape, {cat, ints(m, {6, -1})}));
      },
      true);
  b.add(
      "transpose, slice with a negative step, pads (constant, reflect, edge), nearest resize, gather",
      [](GraphMaker& m, std::mt19937&) {
        const ValueId x = m.node(OpKind::kRelu, {m.input({1, 3, 5, 6})});
        Attributes perm;
        perm.set("perm", std::vector<int64_t>{0, 2, 3, 1});
        m.output(m.node(OpKind::kTranspose, {x}, perm));
        m.output(m.node(OpKind::kSlice, {x, ints(m, {-1, 1}), ints(m, {0, 6}), ints(m, {2, 3}), ints(m, {-2, 2})}));
        const ValueId pads = ints(m, {0, 1, 2, 0, 0, 2, 1, 3});
        m.output(m.node(OpKind::kPad, {x, pads, m.constant(Tensor::scalar<float>(0.5f))}));
        for (const char* mode : {"reflect", "edge"}) {
          Attributes a;
          a.set("mode", std::string(mode));
          m.output(m.node(OpKind::kPad, {x, ints(m, {0, 0, 1, 2, 0, 0, 2, 1})}, a));
        }
        Attributes nearest;
        nearest.set("mode", std::string("nearest"));
        m.output(m.node(OpKind::kResize, {x, kNoValue, floats(m, {1.0f, 1.0f, 2.0f, 1.5f})}, nearest));
        Attributes axis;
        axis.set("axis", int64_t{3});
        m.output(m.node(OpKind::kGather, {x, ints(m, {5, 0, 0, 2})}, axis));
      },
      true);
  b.add(
      "transposes of fused Concats (a detector head's levels): into a graph output, and into the arena",
      [](GraphMaker& m, std::mt19937&) {
        Attributes head;
        head.set("perm", std::vector<int64_t>{0, 2, 1});
        head.set(kTransposeConcatAxis, int64_t{2});
        std::vector<ValueId> levels;
        for (int64_t cells : {12, 5, 3}) levels.push_back(m.node(OpKind::kRelu, {m.input({1, 7, cells})}));
        m.output(m.node(OpKind::kTranspose, levels, head));  // [1, 20, 7]
        // No perm (the reversal) of [2, 3] and [2, 4] joined on axis 1: [7, 2], then read in the arena.
        Attributes reversal;
        reversal.set(kTransposeConcatAxis, int64_t{1});
        const ValueId joined = m.node(OpKind::kTranspose, {m.input({2, 3}), m.input({2, 4})}, reversal);
        m.output(m.node(OpKind::kRelu, {joined}));
      },
      true);
  b.add(
      "transposes of fused Concats with outer dims (a head's batch made dynamic): one block per input and image",
      [](GraphMaker& m, std::mt19937&) {
        Attributes head;
        head.set("perm", std::vector<int64_t>{0, 2, 1});
        head.set(kTransposeConcatAxis, int64_t{2});
        std::vector<ValueId> levels;
        for (int64_t cells : {12, 5, 3}) levels.push_back(m.node(OpKind::kRelu, {m.input({3, 7, cells})}));
        m.output(m.node(OpKind::kTranspose, levels, head));  // [3, 20, 7]
        // Two outer dims, the first two swapped: [2, 3, 2, 4] and [2, 3, 2, 1] on axis 3 -> [3, 2, 5, 2].
        Attributes swapped;
        swapped.set("perm", std::vector<int64_t>{1, 0, 3, 2});
        swapped.set(kTransposeConcatAxis, int64_t{3});
        const ValueId joined = m.node(OpKind::kTranspose, {m.input({2, 3, 2, 4}), m.input({2, 3, 2, 1})}, swapped);
        m.output(m.node(OpKind::kRelu, {joined}));
      },
      true);
}

void add_fallback_case(CaseBuilder& b) {
  b.add(
      "MatMul has no GPU kernel: it runs on the CPU between GPU steps",
      [](GraphMaker& m, std::mt19937& rng) {
        const ValueId x = m.node(OpKind::kSigmoid, {m.input({2, 3, 4})});
        m.output(m.node(OpKind::kRelu, {m.node(OpKind::kMatMul, {x, m.random_constant({4, 5}, rng)})}));
      },
      false, 1);
}

// Conv GEMMs reading a Relu's output, which fp16 storage keeps in binary16 (graph inputs stay
// f32), so that tensor cores may run them: the tiled GEMM cases of add_conv_cases, a deep one
// and the implicit GEMM ones.
void add_tensor_core_cases(CaseBuilder& b) {
  struct Shape4 {
    int64_t batch, channels, height, width;
  };
  const auto relu_input = [](GraphMaker& m, Shape4 s) {
    return m.node(OpKind::kRelu, {m.input({s.batch, s.channels, s.height, s.width})});
  };
  const auto pointwise = conv_attrs({0, 0, 0, 0}, {1, 1}, {1, 1}, 1);
  b.add("tensor cores: 1x1, 65 outputs, 17 channels, 53 x 55, bias, batch 2", [&](GraphMaker& m, std::mt19937& rng) {
    m.output(
        m.node(OpKind::kConv,
               {relu_input(m, {2, 17, 53, 55}), m.random_constant({65, 17, 1, 1}, rng), m.random_constant({65}, rng)},
               pointwise));
  });
  b.add("tensor cores: 1x1, 35 outputs, 33 channels, 65 x 67, residual after SiLU, batch 2",
        [&](GraphMaker& m, std::mt19937& rng) {
          Attributes a = pointwise;
          a.set("fused_activation", std::string("silu"));
          a.set("fused_residual_after_activation", int64_t{1});
          m.output(m.node(OpKind::kConv,
                          {relu_input(m, {2, 33, 65, 67}), m.random_constant({35, 33, 1, 1}, rng),
                           m.random_constant({35}, rng), m.input({2, 35, 65, 67})},
                          a));
        });
  b.add("tensor cores: 1x1, 35 outputs, 65 channels, 53 x 55, residual before relu, batch 2",
        [&](GraphMaker& m, std::mt19937& rng) {
          Attributes a = pointwise;
          a.set("fused_activation", std::string("relu"));
          m.output(m.node(OpKind::kConv,
                          {relu_input(m, {2, 65, 53, 55}), m.random_constant({35, 65, 1, 1}, rng), kNoValue,
                           m.input({2, 35, 53, 55})},
                          a));
        });
  b.add("tensor cores: 1x1, 17 outputs, 129 channels, 5 x 7, bias", [&](GraphMaker& m, std::mt19937& rng) {
    m.output(
        m.node(OpKind::kConv,
               {relu_input(m, {1, 129, 5, 7}), m.random_constant({17, 129, 1, 1}, rng), m.random_constant({17}, rng)},
               pointwise));
  });
  b.add("tensor cores: 1x1, 256 channels to 64 over 13 x 13 (a detector's deepest layer)",
        [&](GraphMaker& m, std::mt19937& rng) {
          m.output(m.node(OpKind::kConv, {relu_input(m, {1, 256, 13, 13}), m.random_constant({64, 256, 1, 1}, rng)},
                          pointwise));
        });
  b.add("tensor cores: 1x1, 300 channels to 40 (three stages of 128), residual of 24 channels, batch 2",
        [&](GraphMaker& m, std::mt19937& rng) {
          m.output(m.node(OpKind::kConv,
                          {relu_input(m, {2, 300, 7, 10}), m.random_constant({40, 300, 1, 1}, rng),
                           m.random_constant({40}, rng), m.input({2, 24, 7, 10})},
                          pointwise));
        });
  // Weights of 1e-3: the low part of a split weight this small is below binary16's normal range
  // unless it is scaled (conv_gemm_tensor_cores.cuh).
  b.add("tensor cores: 1x1, 256 channels to 64 over 13 x 13, weights within 1e-3",
        [&](GraphMaker& m, std::mt19937& rng) {
          m.output(m.node(OpKind::kConv,
                          {relu_input(m, {1, 256, 13, 13}), m.random_constant({64, 256, 1, 1}, rng, -1e-3, 1e-3)},
                          pointwise));
        });
  // The Conv's output is an activation, stored as binary16, not the graph's f32 output.
  b.add("tensor cores: 1x1, 48 channels to 33, 19 x 21, bias, output stored as binary16 before a Relu",
        [&](GraphMaker& m, std::mt19937& rng) {
          const ValueId y = m.node(
              OpKind::kConv,
              {relu_input(m, {1, 48, 19, 21}), m.random_constant({33, 48, 1, 1}, rng), m.random_constant({33}, rng)},
              pointwise);
          m.output(m.node(OpKind::kRelu, {y}));
        });
  b.add(
      "tensor cores: conv GEMM 3x3 dilation 2, 20 channels to 37, 23 x 19, pad 2, bias, SiLU",
      [&](GraphMaker& m, std::mt19937& rng) {
        Attributes a = conv_attrs({2, 2, 2, 2}, {1, 1}, {2, 2}, 1);
        a.set("fused_activation", std::string("silu"));
        m.output(m.node(
            OpKind::kConv,
            {relu_input(m, {1, 20, 23, 19}), m.random_constant({37, 20, 3, 3}, rng), m.random_constant({37}, rng)}, a));
      });
  b.add("tensor cores: conv GEMM reading channels-last, 3x3 stride 2, 5 channels to 24, residual, batch 2",
        [&](GraphMaker& m, std::mt19937& rng) {
          Attributes a = conv_attrs({1, 1, 1, 1}, {2, 2}, {1, 1}, 1);
          a.set(kConvInputChannelsLast, int64_t{1});
          const ValueId x = relu_input(m, {2, 17, 15, 5});  // [N, H, W, C]
          m.output(
              m.node(OpKind::kConv, {x, m.random_constant({24, 5, 3, 3}, rng), kNoValue, m.input({2, 24, 9, 8})}, a));
        });
}

}  // namespace

std::vector<GpuOpCase> tensor_core_cases() {
  std::vector<GpuOpCase> cases;
  CaseBuilder b(cases);
  add_tensor_core_cases(b);
  return cases;
}

std::vector<GpuOpCase> gpu_op_cases() {
  std::vector<GpuOpCase> cases;
  CaseBuilder b(cases);
  add_conv_cases(b);
  add_pointwise_cases(b);
  add_pool_cases(b);
  add_movement_cases(b);
  add_fallback_case(b);
  return cases;
}

gpu::LoweredPlan lower_for_inputs(const Graph& graph, const std::vector<Tensor>& inputs,
                                  const gpu::LoweringOptions& options) {
  std::vector<TensorDesc> descs;
  for (const Tensor& input : inputs) descs.push_back(input.desc());
  Result<MemoryPlan> plan = plan_memory(graph, descs, gpu::gpu_plan_options());
  REQUIRE_MESSAGE(plan.is_ok(), plan.status().to_string());
  Result<gpu::LoweredPlan> lowered = gpu::lower_plan(graph, std::move(*plan), options);
  REQUIRE_MESSAGE(lowered.is_ok(), lowered.status().to_string());
  return std::move(*lowered);
}

HostBoundPlan::HostBoundPlan(const gpu::LoweredPlan& lowered, const std::vector<Tensor>& inputs)
    : arena(lowered.plan.arena_bytes), scratch(lowered.scratch_bytes) {
  for (const TensorDesc& desc : lowered.output_descs) outputs.emplace_back(desc.nbytes());
  bindings = gpu::Bindings{arena.data(), lowered.constants.data(), scratch.data(), {}, {}};
  for (const Tensor& input : inputs) bindings.inputs.push_back(input.raw_data());
  for (std::vector<std::byte>& output : outputs) bindings.outputs.push_back(output.data());
}

void check_gpu_outputs(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected, bool exact,
                       double tolerance) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("output ", i, ": ", actual[i].desc().to_string());
    REQUIRE(actual[i].desc() == expected[i].desc());
    const ErrorStats error = compare_tensors(actual[i], expected[i]);
    INFO(error.to_string());
    CHECK(error.mismatched_nan == 0);
    if (exact) {
      CHECK(std::memcmp(actual[i].raw_data(), expected[i].raw_data(), actual[i].nbytes()) == 0);
    } else {
      CHECK(error.relative_l2 <= tolerance);
    }
  }
}

}  // namespace edgefuse::test
