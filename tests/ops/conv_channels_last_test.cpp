// A Conv reading its input channels-last (fused_input_channels_last, conv_problem.h; the fuser
// folds an NHWC -> NCHW Transpose into it) against the same Conv on the transposed input: the
// reference kernel bit-exact (the same sums in the same order), every CPU level within 1e-5
// relative L2 and 1e-4 absolute (f32 GEMM against the float64 reference). Dense Convs fill their
// phase planes from the channels-last rows (rows of whole vectors or not, strided, grouped, 1-D,
// with an epilogue and a residual); depthwise and 1x1 ones, which the fuser never folds, take
// the reference kernel.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/ops/conv_problem.h"
#include "runtime/thread_pool.h"
#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

namespace edgefuse::test {
namespace {

struct LayoutCase {
  const char* name;
  int64_t channels, height, width, out_channels, kernel, stride, group;
  bool one_d;  // [N, C, W] (height 1)
};

const LayoutCase kCases[] = {
    {"3x3 s1, 3 channels (an RGB image)", 3, 13, 40, 8, 3, 1, 1, false},
    {"5x5 s2 stem, output rows of whole vectors", 3, 9, 64, 10, 5, 2, 1, false},
    {"3x3 s2, 4 channels", 4, 11, 17, 6, 3, 2, 1, false},
    {"3x3, 2 groups", 6, 7, 19, 4, 3, 1, 2, false},
    {"1-D, kernel 5", 5, 1, 33, 7, 5, 1, 1, true},
    {"depthwise 3x3 (reference kernel)", 4, 6, 9, 4, 3, 1, 4, false},
    {"1x1 (reference kernel)", 5, 6, 9, 3, 1, 1, 1, false},
};

Shape spatial_shape(const LayoutCase& c, int64_t h, int64_t w) {
  return c.one_d ? Shape{w} : Shape{h, w};
}

// SiLU with the residual added before it: the epilogue's every step on the dense path.
Node conv_node(const LayoutCase& c, bool channels_last) {
  Node node = make_node(OpKind::kConv, 4);
  const int64_t pad = c.kernel / 2;
  const size_t axes = c.one_d ? 1 : 2;
  node.attrs.set("strides", std::vector<int64_t>(axes, c.stride));
  node.attrs.set("pads", std::vector<int64_t>(2 * axes, pad));
  node.attrs.set("group", c.group);
  node.attrs.set("fused_activation", std::string("silu"));
  node.attrs.set("fused_residual_after_activation", int64_t{0});
  if (channels_last) node.attrs.set(kConvInputChannelsLast, int64_t{1});
  return node;
}

// [N, C, positions] -> [N, positions, C].
Tensor to_channels_last(const Tensor& x, int64_t channels, const Shape& spatial) {
  Shape shape = {x.dim(0)};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  shape.push_back(channels);
  Tensor out = Tensor::empty(DType::kF32, shape);
  const int64_t positions = x.numel() / (x.dim(0) * channels);
  for (int64_t n = 0; n < x.dim(0); ++n) {
    for (int64_t ch = 0; ch < channels; ++ch) {
      for (int64_t p = 0; p < positions; ++p) {
        out.data<float>()[(n * positions + p) * channels + ch] = x.data<float>()[(n * channels + ch) * positions + p];
      }
    }
  }
  return out;
}

TEST_CASE("conv: an input read channels-last equals the Conv on the transposed input, on every level") {
  ActiveIsaGuard guard;
  ThreadPool pool(2);
  uint32_t seed = 41;
  for (const LayoutCase& c : kCases) {
    INFO("case: ", c.name);
    std::mt19937 rng(seed++);
    Shape x_shape = {2, c.channels};
    const Shape spatial = spatial_shape(c, c.height, c.width);
    x_shape.insert(x_shape.end(), spatial.begin(), spatial.end());
    Shape w_shape = {c.out_channels, c.channels / c.group};
    for (size_t a = 0; a < spatial.size(); ++a) w_shape.push_back(c.kernel);
    const int64_t pad = c.kernel / 2;
    Shape y_shape = {2, c.out_channels};
    for (int64_t d : spatial) y_shape.push_back((d + 2 * pad - c.kernel) / c.stride + 1);
    const Tensor x = random_tensor(DType::kF32, x_shape, rng);
    const Tensor w = random_tensor(DType::kF32, w_shape, rng);
    const Tensor b = random_tensor(DType::kF32, {c.out_channels}, rng);
    const Tensor r = random_tensor(DType::kF32, y_shape, rng);
    const Tensor x_last = to_channels_last(x, c.channels, spatial);

    auto expected = run_op(conv_node(c, false), {&x, &w, &b, &r}, true);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
    const Node node = conv_node(c, true);
    auto reference = run_op(node, {&x_last, &w, &b, &r}, true);
    REQUIRE_MESSAGE(reference.is_ok(), reference.status().to_string());
    REQUIRE(reference->at(0).shape() == y_shape);
    CHECK(compare_tensors(reference->at(0), expected->at(0)).max_abs == 0.0);
    for (CpuIsa isa : supported_isas()) {
      REQUIRE(set_cpu_isa_for_testing(isa).is_ok());
      for (ThreadPool* threads : {static_cast<ThreadPool*>(nullptr), &pool}) {
        CAPTURE(cpu_isa_name(isa));
        CAPTURE(threads != nullptr);
        auto actual = run_op(node, {&x_last, &w, &b, &r}, false, threads);
        REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
        const ErrorStats error = compare_tensors(actual->at(0), expected->at(0));
        CHECK_MESSAGE(error.relative_l2 <= 1e-5, error.to_string());
        CHECK_MESSAGE(error.max_abs <= 1e-4, error.to_string());
      }
    }
  }
}

TEST_CASE("conv: fused_input_channels_last other than 0 or 1 is an invalid model") {
  std::mt19937 rng(5);
  const Tensor x = random_tensor(DType::kF32, {1, 6, 6, 3}, rng);
  const Tensor w = random_tensor(DType::kF32, {4, 3, 3, 3}, rng);
  Node node = make_node(OpKind::kConv, 2);
  node.attrs.set(kConvInputChannelsLast, int64_t{2});
  auto result = run_op(node, {&x, &w}, true);
  REQUIRE_FALSE(result.is_ok());
  CHECK(result.status().code() == StatusCode::kInvalidModel);
  CHECK(result.status().message().find(kConvInputChannelsLast) != std::string::npos);
}

}  // namespace
}  // namespace edgefuse::test
