// Conv and ConvTranspose: the optimised kernel against the reference on awkward shapes, the
// reference against independent float64 computations and ONNX's documented examples, and the
// shape rule's errors.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/ops/conv_winograd.h"
#include "runtime/ops/ops.h"
#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

struct ConvCase {
  int64_t batch, channels, height, width, out_channels, kh, kw, group;
  int64_t stride_h, stride_w, dilation_h, dilation_w;
  std::vector<int64_t> pads;  // begin h, begin w, end h, end w
  std::string auto_pad;
  bool bias;
};

std::string describe(const ConvCase& c) {
  return make_message("N", c.batch, " C", c.channels, " ", c.height, "x", c.width, " M", c.out_channels, " k", c.kh,
                      "x", c.kw, " g", c.group, " s", c.stride_h, ",", c.stride_w, " d", c.dilation_h, ",",
                      c.dilation_w, " pads ", shape_to_string(c.pads), " auto_pad ", c.auto_pad, c.bias ? " bias" : "");
}

Node conv_node(const ConvCase& c) {
  Node node = make_node(OpKind::kConv, c.bias ? 3 : 2);
  node.attrs.set("strides", std::vector<int64_t>{c.stride_h, c.stride_w});
  node.attrs.set("dilations", std::vector<int64_t>{c.dilation_h, c.dilation_w});
  node.attrs.set("group", c.group);
  if (!c.auto_pad.empty()) {
    node.attrs.set("auto_pad", c.auto_pad);
  } else {
    node.attrs.set("pads", c.pads);
  }
  return node;
}

// Direct float64 convolution over an explicitly zero-padded copy of the input (2-D, NOTSET pads).
std::vector<double> direct_conv2d(const ConvCase& c, const Tensor& x, const Tensor& w, const Tensor* b,
                                  const Shape& out_shape) {
  const int64_t ph = c.height + c.pads[0] + c.pads[2];
  const int64_t pw = c.width + c.pads[1] + c.pads[3];
  std::vector<double> padded(static_cast<size_t>(c.batch * c.channels * ph * pw), 0.0);
  const float* xs = x.data<float>();
  for (int64_t plane = 0; plane < c.batch * c.channels; ++plane) {
    for (int64_t y = 0; y < c.height; ++y) {
      for (int64_t xx = 0; xx < c.width; ++xx) {
        padded[static_cast<size_t>((plane * ph + y + c.pads[0]) * pw + xx + c.pads[1])] =
            xs[(plane * c.height + y) * c.width + xx];
      }
    }
  }
  const int64_t oh = out_shape[2], ow = out_shape[3];
  const int64_t cg = c.channels / c.group, mg = c.out_channels / c.group;
  std::vector<double> out;
  const float* ws = w.data<float>();
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t m = 0; m < c.out_channels; ++m) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = b != nullptr ? b->data<float>()[m] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t channel = (m / mg) * cg + ci;
            for (int64_t ky = 0; ky < c.kh; ++ky) {
              for (int64_t kx = 0; kx < c.kw; ++kx) {
                const int64_t y = oy * c.stride_h + ky * c.dilation_h;
                const int64_t xx = ox * c.stride_w + kx * c.dilation_w;
                acc += padded[static_cast<size_t>(((n * c.channels + channel) * ph + y) * pw + xx)] *
                       ws[((m * cg + ci) * c.kh + ky) * c.kw + kx];
              }
            }
          }
          out.push_back(acc);
        }
      }
    }
  }
  return out;
}

struct ConvInputs {
  Tensor x, w, b;
  bool has_bias = false;
  std::vector<const Tensor*> list() const {
    std::vector<const Tensor*> inputs = {&x, &w};
    if (has_bias) inputs.push_back(&b);
    return inputs;
  }
};

ConvInputs random_conv_inputs(const ConvCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  ConvInputs in;
  in.x = random_tensor(DType::kF32, {c.batch, c.channels, c.height, c.width}, rng);
  in.w = random_tensor(DType::kF32, {c.out_channels, c.channels / c.group, c.kh, c.kw}, rng);
  in.has_bias = c.bias;
  if (c.bias) in.b = random_tensor(DType::kF32, {c.out_channels}, rng);
  return in;
}

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      // dense 1x1 (direct GEMM), odd channels, batch 2
      {2, 17, 7, 13, 5, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, "", true},
      {1, 3, 1, 127, 5, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, "", false},
      // 1x1 with stride 2 or padding goes through the dense (phase-plane) path
      {1, 5, 13, 7, 3, 1, 1, 1, 2, 2, 1, 1, {0, 0, 0, 0}, "", true},
      {1, 5, 7, 7, 3, 1, 1, 1, 1, 1, 1, 1, {1, 0, 0, 1}, "", true},
      // dense 3x3 stride 1 and 2, wide rows
      {1, 3, 13, 127, 17, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
      {2, 5, 13, 13, 7, 3, 3, 1, 2, 2, 1, 1, {1, 1, 1, 1}, "", true},
      {1, 3, 127, 7, 5, 3, 3, 1, 2, 2, 1, 1, {0, 0, 0, 0}, "", false},
      // stride 2 along x (even/odd phase planes): the folded space-to-depth stem (6x6, pad 2)
      // on an odd width, and odd kernels with asymmetric pads
      {1, 3, 14, 17, 5, 6, 6, 1, 2, 2, 1, 1, {2, 2, 2, 2}, "", true},
      {1, 4, 11, 12, 3, 3, 5, 1, 2, 2, 1, 1, {0, 3, 1, 0}, "", false},
      {1, 2, 9, 33, 4, 2, 4, 1, 1, 2, 2, 1, {1, 1, 0, 2}, "", true},
      // spatial size 1, kernel larger than the input thanks to padding
      {1, 5, 1, 1, 3, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
      // depthwise 3x3 stride 1 and 2, and 5x5
      {2, 17, 13, 13, 17, 3, 3, 17, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
      {1, 5, 7, 127, 5, 3, 3, 5, 2, 2, 1, 1, {1, 1, 1, 1}, "", false},
      {1, 3, 13, 7, 3, 5, 5, 3, 1, 2, 1, 1, {2, 2, 2, 2}, "", true},
      // depthwise 3x3 stride 1 whose rows' first or last vectors have two taps outside the row
      // (a pad of 2 on one side, none on the other), with inside vectors in pairs and alone
      {1, 4, 9, 70, 4, 3, 3, 4, 1, 1, 1, 1, {0, 2, 1, 0}, "", true},
      {1, 3, 8, 50, 3, 3, 3, 3, 1, 1, 1, 1, {1, 0, 0, 2}, "", false},
      // depthwise stride 1 over rows of one to six vectors (the streamed strips: one vector, two,
      // three or four, five as two strips of three sharing one), 3x3 and 5x5
      {1, 3, 6, 16, 3, 3, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
      {1, 2, 9, 33, 2, 3, 3, 2, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
      {1, 3, 11, 80, 3, 3, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, "", false},
      {1, 2, 10, 21, 2, 5, 5, 2, 1, 1, 1, 1, {2, 2, 2, 2}, "", true},
      {1, 2, 7, 40, 2, 5, 5, 2, 1, 1, 1, 1, {2, 2, 2, 2}, "", true},
      {1, 2, 12, 90, 2, 5, 5, 2, 1, 1, 1, 1, {2, 2, 2, 2}, "", false},
      // depthwise 3x3 stride 2 over outputs of one to seven vectors (strips of one to four)
      {1, 2, 9, 52, 2, 3, 3, 2, 2, 2, 1, 1, {1, 1, 1, 1}, "", true},
      {1, 2, 8, 207, 2, 3, 3, 2, 2, 2, 1, 1, {1, 1, 1, 1}, "", false},
      {1, 3, 11, 161, 3, 3, 3, 3, 2, 2, 1, 1, {0, 1, 1, 0}, "", true},
      // depthwise with channel multiplier 2 and grouped conv
      {1, 3, 7, 7, 6, 3, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
      {2, 6, 13, 7, 9, 3, 3, 3, 2, 1, 1, 1, {1, 0, 1, 0}, "", true},
      // dilations, asymmetric pads, non-square kernels
      {1, 5, 13, 13, 3, 3, 3, 1, 1, 1, 2, 2, {2, 2, 2, 2}, "", true},
      {1, 3, 13, 13, 5, 3, 3, 1, 2, 1, 2, 3, {0, 1, 2, 3}, "", false},
      {1, 5, 7, 13, 7, 1, 5, 1, 1, 2, 1, 1, {0, 2, 0, 1}, "", true},
      {1, 5, 13, 7, 5, 7, 3, 5, 1, 1, 1, 1, {3, 0, 2, 1}, "", true},
      // auto_pad modes
      {1, 3, 7, 13, 5, 3, 3, 1, 2, 2, 1, 1, {}, "SAME_UPPER", true},
      {1, 3, 8, 8, 5, 4, 2, 1, 1, 1, 1, 1, {}, "SAME_LOWER", true},
      {1, 5, 13, 13, 5, 3, 3, 5, 2, 2, 1, 1, {}, "SAME_UPPER", false},
      {1, 3, 13, 7, 5, 3, 3, 1, 2, 1, 1, 1, {}, "VALID", true},
  };
  return cases;
}

// The optimised kernel with its work split over 2, 3 and 5 threads against the reference kernel.
void check_split_against_reference(const Node& node, const ConvInputs& in) {
  auto expected = run_op(node, in.list(), true);
  REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
  ThreadPool pool2(2), pool3(3), pool5(5);
  for (ThreadPool* pool : {&pool2, &pool3, &pool5}) {
    CAPTURE(pool->size());
    auto actual = run_op(node, in.list(), false, pool);
    REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
    const ErrorStats error = compare_tensors(actual->at(0), expected->at(0));
    CHECK_MESSAGE(error.relative_l2 <= 1e-5, error.to_string());
  }
}

}  // namespace

TEST_CASE("conv: cpu kernel matches the reference on awkward shapes, 1 and 2 threads") {
  ThreadPool pool1(1), pool2(2);
  uint32_t seed = 1;
  for (const ConvCase& c : conv_cases()) {
    INFO(describe(c));
    const ConvInputs in = random_conv_inputs(c, seed++);
    const Node node = conv_node(c);
    auto expected = run_op(node, in.list(), true);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool1, &pool2}) {
      CAPTURE((pool != nullptr ? pool->size() : 0));
      auto actual = run_op(node, in.list(), false, pool);
      REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
      REQUIRE(actual->at(0).shape() == expected->at(0).shape());
      const ErrorStats error = compare_tensors(actual->at(0), expected->at(0));
      CHECK_MESSAGE(error.relative_l2 <= 1e-5, error.to_string());
    }
  }
}

TEST_CASE("conv: 1x1 work split over output channels and columns matches the reference for 2, 3 and 5 threads") {
  // Row blocks of uneven size (70 channels are 5 units of 16), column blocks ending in a partial
  // tile (26 x 26 = 676 columns), many channels on a small plane, batches with groups, and a
  // large plane cut into one stripe of columns per thread (104 x 104), and a product deep enough
  // to run in depth slices.
  const ConvCase cases[] = {
      {1, 9, 26, 26, 70, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, "", true},
      {1, 40, 13, 13, 256, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, "", true},
      {3, 8, 7, 50, 12, 1, 1, 2, 1, 1, 1, 1, {0, 0, 0, 0}, "", false},
      {1, 16, 104, 104, 32, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, "", true},
      {1, 300, 13, 13, 40, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, "", true},
  };
  uint32_t seed = 300;
  for (const ConvCase& c : cases) {
    INFO(describe(c));
    check_split_against_reference(conv_node(c), random_conv_inputs(c, seed++));
  }
}

TEST_CASE("conv: depthwise Convs on large planes, in one stripe of rows per thread, match the reference") {
  // Planes of 52 x 52 outputs and more (kStripeMinPlane): stride 1 and 2, 3x3 and 5x5, rows of
  // odd length, stripes of unequal height; a batch of two takes the planes path.
  const ConvCase cases[] = {
      {1, 16, 60, 60, 16, 3, 3, 16, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
      {1, 8, 121, 110, 8, 3, 3, 8, 2, 2, 1, 1, {1, 1, 1, 1}, "", false},
      {1, 5, 67, 53, 5, 5, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, "", true},
      {2, 6, 52, 52, 6, 3, 3, 6, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
  };
  uint32_t seed = 400;
  for (const ConvCase& c : cases) {
    INFO(describe(c));
    const ConvInputs in = random_conv_inputs(c, seed++);
    for (const bool silu : {false, true}) {
      CAPTURE(silu);
      Node node = conv_node(c);
      if (silu) node.attrs.set("fused_activation", std::string("silu"));
      check_split_against_reference(node, in);
    }
  }
}

TEST_CASE("conv: reference matches a direct float64 convolution over a zero-padded input") {
  uint32_t seed = 100;
  for (const ConvCase& c : conv_cases()) {
    if (!c.auto_pad.empty()) continue;
    INFO(describe(c));
    const ConvInputs in = random_conv_inputs(c, seed++);
    auto out = run_op(conv_node(c), in.list(), true);
    REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
    const std::vector<double> expected = direct_conv2d(c, in.x, in.w, c.bias ? &in.b : nullptr, out->at(0).shape());
    REQUIRE(static_cast<int64_t>(expected.size()) == out->at(0).numel());
    const ErrorStats error = compare_tensors(out->at(0), Tensor::from_vector<double>(out->at(0).shape(), expected));
    CHECK_MESSAGE(error.relative_l2 <= 1e-6, error.to_string());
  }
}

// 3x3 stride-1 group-1 Convs with enough channels (conv_winograd_tile) run Winograd F(2x2,
// 3x3) (runtime/ops/conv_winograd.h): odd output sizes (tiles that straddle the edge), no,
// asymmetric and wide padding, batch 2, out channels that end mid register tile, bands spanning
// tile rows and a last band with the rest, every ISA level, 1 to 3 threads.
const std::vector<ConvCase>& winograd_cases() {
  static const std::vector<ConvCase> cases = {
      {1, 96, 10, 10, 96, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
      {1, 96, 13, 17, 112, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
      {2, 128, 11, 12, 100, 3, 3, 1, 1, 1, 1, 1, {0, 0, 0, 0}, "", false},
      {1, 64, 31, 33, 48, 3, 3, 1, 1, 1, 1, 1, {2, 0, 1, 2}, "", true},
      {1, 64, 40, 41, 80, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
      {1, 48, 32, 64, 48, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
  };
  return cases;
}

// The bound Conv of a stride-1 3x3 case, as far as conv_winograd_tile reads it.
Conv2d winograd_shape(const ConvCase& c) {
  Conv2d b{};
  b.group = c.group;
  b.cg = c.channels / c.group;
  b.mg = c.out_channels / c.group;
  b.kh = c.kh, b.kw = c.kw, b.sh = c.stride_h, b.sw = c.stride_w, b.dh = c.dilation_h, b.dw = c.dilation_w;
  b.oh = c.height + c.pads[0] + c.pads[2] - (c.kh - 1) * c.dilation_h;
  b.ow = c.width + c.pads[1] + c.pads[3] - (c.kw - 1) * c.dilation_w;
  return b;
}

// Convs that take F(4x4, 3x3) (about 56 x 56 outputs or more): output sizes not a multiple of 4,
// out channels that end mid register tile, batch 2 without padding, asymmetric padding.
const std::vector<ConvCase>& winograd4x4_cases() {
  static const std::vector<ConvCase> cases = {
      {1, 40, 58, 59, 44, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
      {2, 40, 58, 60, 40, 3, 3, 1, 1, 1, 1, 1, {0, 0, 0, 0}, "", false},
      {1, 40, 57, 61, 40, 3, 3, 1, 1, 1, 1, 1, {2, 0, 1, 2}, "", true},
  };
  return cases;
}

TEST_CASE("conv: Winograd takes the cases below and leaves small planes and few channels to the direct Conv") {
  for (const ConvCase& c : winograd_cases()) {
    INFO(describe(c));
    CHECK(conv_winograd_tile(winograd_shape(c)) == 2);
  }
  for (const ConvCase& c : winograd4x4_cases()) {
    INFO(describe(c));
    CHECK(conv_winograd_tile(winograd_shape(c)) == 4);
  }
  const std::vector<ConvCase> direct = {
      {1, 128, 6, 6, 128, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},  // 9 tiles
      {1, 32, 10, 10, 32, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},  // 25 tiles, too few channels for them
      {1, 16, 80, 80, 32, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, "", true},
      {1, 64, 80, 80, 64, 3, 3, 1, 2, 2, 1, 1, {1, 1, 1, 1}, "", true},  // stride 2
  };
  for (const ConvCase& c : direct) {
    INFO(describe(c));
    CHECK(conv_winograd_tile(winograd_shape(c)) == 0);
  }
}

// Each case against a float64 convolution and the reference kernel, on every level, 1 to 3 threads.
void check_winograd(const std::vector<ConvCase>& cases, double tolerance, uint32_t seed) {
  ActiveIsaGuard guard;
  ThreadPool pool2(2), pool3(3);
  for (const ConvCase& c : cases) {
    INFO(describe(c));
    const ConvInputs in = random_conv_inputs(c, seed++);
    const Node node = conv_node(c);
    auto expected = run_op(node, in.list(), true);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
    const std::vector<double> exact = direct_conv2d(c, in.x, in.w, c.bias ? &in.b : nullptr, expected->at(0).shape());
    for (CpuIsa isa : supported_isas()) {
      REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool3}) {
        INFO("isa ", cpu_isa_name(isa), " threads ", pool != nullptr ? pool->size() : 1);
        auto actual = run_op(node, in.list(), false, pool);
        REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
        const ErrorStats error =
            compare_tensors(actual->at(0), Tensor::from_vector<double>(actual->at(0).shape(), exact));
        CHECK_MESSAGE(error.relative_l2 <= tolerance, error.to_string());
        CHECK_MESSAGE(compare_tensors(actual->at(0), expected->at(0)).relative_l2 <= tolerance, error.to_string());
      }
    }
  }
}

// Each case with SiLU and a residual before or after it, of every output channel or fewer (the
// rest take none), against the reference kernel on two threads.
void check_winograd_epilogues(const std::vector<ConvCase>& cases, double tolerance, uint32_t seed) {
  for (const ConvCase& c : cases) {
    const ConvInputs in = random_conv_inputs(c, seed++);
    std::mt19937 rng(seed);
    const Shape out_shape = run_op(conv_node(c), in.list(), true)->at(0).shape();
    for (const int64_t residual_channels : {c.out_channels, c.out_channels - 5}) {
      const Tensor residual =
          random_tensor(DType::kF32, {out_shape[0], residual_channels, out_shape[2], out_shape[3]}, rng);
      for (const int64_t after : {0, 1}) {
        INFO(describe(c), " residual channels ", residual_channels, after != 0 ? " after" : " before");
        Node node = conv_node(c);
        node.attrs.set("fused_activation", std::string("silu"));
        node.attrs.set("fused_residual_after_activation", after);
        std::vector<const Tensor*> inputs = {&in.x, &in.w, c.bias ? &in.b : nullptr, &residual};
        auto expected = run_op(node, inputs, true);
        REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
        ThreadPool pool(2);
        auto actual = run_op(node, inputs, false, &pool);
        REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
        const ErrorStats error = compare_tensors(actual->at(0), expected->at(0));
        CHECK_MESSAGE(error.relative_l2 <= tolerance, error.to_string());
      }
    }
  }
}

// F(2x2)'s transforms add a few roundings to the direct sum's: within 2e-6 of float64 (3.5e-7
// measured).
TEST_CASE("conv: Winograd F(2x2, 3x3) matches a float64 convolution and the reference on every level") {
  check_winograd(winograd_cases(), 2e-6, 700);
}

TEST_CASE("conv: Winograd F(2x2, 3x3) with the fused epilogue: activation, residual before or after it") {
  check_winograd_epilogues(winograd_cases(), 2e-6, 800);
}

// F(4x4)'s, with coefficients up to 8 (conv_winograd.h), lose more: 1.4e-6 measured, 5e-6 allowed.
TEST_CASE("conv: Winograd F(4x4, 3x3) matches a float64 convolution and the reference on every level") {
  check_winograd(winograd4x4_cases(), 5e-6, 900);
}

TEST_CASE("conv: Winograd F(4x4, 3x3) with the fused epilogue: activation, residual before or after it") {
  check_winograd_epilogues({winograd4x4_cases().front()}, 5e-6, 1000);  // the others take as long for little more
}

TEST_CASE("conv: auto_pad SAME_LOWER and SAME_UPPER equal explicit pads with the odd pad first or last") {
  // in 8, kernel 4, stride 1: total padding 3; SAME_UPPER pads 1 before, 2 after; SAME_LOWER 2, 1.
  const ConvCase upper{1, 2, 8, 8, 3, 4, 4, 1, 1, 1, 1, 1, {}, "SAME_UPPER", true};
  const ConvInputs in = random_conv_inputs(upper, 7);
  for (const auto& [mode, pads] :
       {std::pair<std::string, std::vector<int64_t>>{"SAME_UPPER", {1, 1, 2, 2}}, {"SAME_LOWER", {2, 2, 1, 1}}}) {
    CAPTURE(mode);
    ConvCase same = upper;
    same.auto_pad = mode;
    ConvCase explicit_pads = upper;
    explicit_pads.auto_pad = "";
    explicit_pads.pads = pads;
    auto a = run_op(conv_node(same), in.list(), true);
    auto b = run_op(conv_node(explicit_pads), in.list(), true);
    REQUIRE(a.is_ok());
    REQUIRE(b.is_ok());
    CHECK(a->at(0).shape() == Shape{1, 3, 8, 8});
    CHECK(compare_tensors(a->at(0), b->at(0)).max_abs == 0.0);
  }
}

TEST_CASE("conv: ONNX's documented 7x5 examples (strides 2, with and without padding)") {
  std::vector<float> values(35);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  const Tensor x = Tensor::from_vector<float>({1, 1, 7, 5}, values);
  const Tensor w = Tensor::from_vector<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  struct Example {
    std::vector<int64_t> pads;
    Shape shape;
    std::vector<float> expected;
  };
  const std::vector<Example> examples = {
      {{1, 1, 1, 1}, {1, 1, 4, 3}, {12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124}},
      {{0, 0, 0, 0}, {1, 1, 3, 2}, {54, 72, 144, 162, 234, 252}},
      {{1, 0, 1, 0}, {1, 1, 4, 2}, {21, 33, 99, 117, 189, 207, 171, 183}},
  };
  for (const Example& e : examples) {
    CAPTURE(shape_to_string(e.pads));
    Node node = make_node(OpKind::kConv, 2);
    node.attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
    node.attrs.set("strides", std::vector<int64_t>{2, 2});
    node.attrs.set("pads", e.pads);
    for (bool reference : {true, false}) {
      auto out = run_op(node, {&x, &w}, reference);
      REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
      REQUIRE(out->at(0).shape() == e.shape);
      CHECK(compare_tensors(out->at(0), Tensor::from_vector<float>(e.shape, e.expected)).max_abs == 0.0);
    }
  }
}

TEST_CASE("conv: 1-D and 3-D inputs, optimised path against the reference") {
  ThreadPool pool(2);
  std::mt19937 rng(42);
  {
    Node node = make_node(OpKind::kConv, 3);
    node.attrs.set("strides", std::vector<int64_t>{2});
    node.attrs.set("pads", std::vector<int64_t>{2, 1});
    node.attrs.set("dilations", std::vector<int64_t>{2});
    const Tensor x = random_tensor(DType::kF32, {2, 5, 127}, rng);
    const Tensor w = random_tensor(DType::kF32, {3, 5, 3}, rng);
    const Tensor b = random_tensor(DType::kF32, {3}, rng);
    auto expected = run_op(node, {&x, &w, &b}, true);
    auto actual = run_op(node, {&x, &w, &b}, false, &pool);
    REQUIRE(expected.is_ok());
    REQUIRE(actual.is_ok());
    CHECK(expected->at(0).shape() == Shape{2, 3, 63});
    CHECK(compare_tensors(actual->at(0), expected->at(0)).relative_l2 <= 1e-5);
  }
  {
    Node node = make_node(OpKind::kConv, 2);
    node.attrs.set("pads", std::vector<int64_t>{1, 0, 1, 0, 1, 1});
    node.attrs.set("group", int64_t{2});
    const Tensor x = random_tensor(DType::kF32, {1, 4, 5, 7, 3}, rng);
    const Tensor w = random_tensor(DType::kF32, {6, 2, 3, 3, 2}, rng);
    auto out = run_op(node, {&x, &w}, false, &pool);
    REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
    CHECK(out->at(0).shape() == Shape{1, 6, 4, 6, 4});
    // Spot-check one output against a hand-written sum: n 0, m 4 (group 1), position (0, 2, 3).
    double expected = 0;
    for (int64_t c = 0; c < 2; ++c) {
      for (int64_t kz = 0; kz < 3; ++kz) {
        for (int64_t ky = 0; ky < 3; ++ky) {
          for (int64_t kx = 0; kx < 2; ++kx) {
            const int64_t iz = kz - 1, iy = 2 + ky, ix = 3 + kx - 1;
            if (iz < 0 || iz >= 5 || iy >= 7 || ix >= 3) continue;
            expected += static_cast<double>(x.data<float>()[(((2 + c) * 5 + iz) * 7 + iy) * 3 + ix]) *
                        w.data<float>()[(((4 * 2 + c) * 3 + kz) * 3 + ky) * 2 + kx];
          }
        }
      }
    }
    CHECK(out->at(0).data<float>()[((4 * 4 + 0) * 6 + 2) * 4 + 3] == doctest::Approx(expected).epsilon(1e-5));
  }
}

TEST_CASE("conv: shape rule rejects inconsistent inputs with clear messages") {
  std::vector<TensorDesc> out;
  const Tensor x = Tensor::meta(DType::kF32, {1, 4, 8, 8});
  auto infer_error = [&](const Node& node, const Tensor& w, const Tensor* b = nullptr) {
    std::vector<const Tensor*> inputs = {&x, &w};
    if (b != nullptr) inputs.push_back(b);
    return infer_conv(node, inputs, out).message();
  };
  Node node = make_node(OpKind::kConv, 2);
  CHECK(infer_error(node, Tensor::meta(DType::kF32, {3, 4})) == "weight has rank 2, expected 4 (same as input)");
  CHECK(infer_error(node, Tensor::meta(DType::kF32, {3, 5, 3, 3})).find("input has 4 channels") != std::string::npos);
  node.attrs.set("group", int64_t{2});
  CHECK(infer_error(node, Tensor::meta(DType::kF32, {3, 2, 3, 3})).find("not divisible by group 2") !=
        std::string::npos);
  node.attrs.set("group", int64_t{1});
  const Tensor bias = Tensor::meta(DType::kF32, {4});
  CHECK(infer_error(node, Tensor::meta(DType::kF32, {3, 4, 3, 3}), &bias) == "bias is f32[4], expected [3]");
  node.attrs.set("pads", std::vector<int64_t>{1, 1});
  CHECK(infer_error(node, Tensor::meta(DType::kF32, {3, 4, 3, 3})).find("pads has 2 entries, expected 4") !=
        std::string::npos);
  node.attrs.set("pads", std::vector<int64_t>{0, 0, 0, 0});
  CHECK(infer_error(node, Tensor::meta(DType::kF32, {3, 4, 9, 9})).find("exceeds the padded input") !=
        std::string::npos);
  node.attrs.set("auto_pad", std::string("SAME"));
  CHECK(infer_error(node, Tensor::meta(DType::kF32, {3, 4, 3, 3})).find("auto_pad 'SAME'") != std::string::npos);
}
