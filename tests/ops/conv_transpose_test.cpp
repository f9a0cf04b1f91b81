// ConvTranspose: the reference against an independent float64 scatter-then-crop computation,
// ONNX's output-size rules (pads, output_padding, output_shape, auto_pad), and shape errors.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/ops/ops.h"
#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

namespace {

struct TransposeCase {
  int64_t batch, channels, height, width, out_per_group, kh, kw, group, stride_h, stride_w, dilation_h, dilation_w;
  std::vector<int64_t> pads;            // begin h, begin w, end h, end w
  std::vector<int64_t> output_padding;  // h, w
  Shape expected_spatial;
};

// Scatters every input element through every kernel tap into the full (unpadded) output, then
// crops pads (begin, end) off it.
std::vector<double> scatter_conv_transpose(const TransposeCase& c, const Tensor& x, const Tensor& w, const Tensor& b) {
  const int64_t full_h = c.stride_h * (c.height - 1) + c.output_padding[0] + (c.kh - 1) * c.dilation_h + 1;
  const int64_t full_w = c.stride_w * (c.width - 1) + c.output_padding[1] + (c.kw - 1) * c.dilation_w + 1;
  const int64_t out_channels = c.out_per_group * c.group;
  const int64_t cg = c.channels / c.group;
  std::vector<double> full(static_cast<size_t>(c.batch * out_channels * full_h * full_w), 0.0);
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t ci = 0; ci < c.channels; ++ci) {
      for (int64_t mi = 0; mi < c.out_per_group; ++mi) {
        const int64_t m = (ci / cg) * c.out_per_group + mi;
        for (int64_t y = 0; y < c.height; ++y) {
          for (int64_t xx = 0; xx < c.width; ++xx) {
            const double v = x.data<float>()[((n * c.channels + ci) * c.height + y) * c.width + xx];
            for (int64_t ky = 0; ky < c.kh; ++ky) {
              for (int64_t kx = 0; kx < c.kw; ++kx) {
                const int64_t fy = y * c.stride_h + ky * c.dilation_h, fx = xx * c.stride_w + kx * c.dilation_w;
                full[static_cast<size_t>(((n * out_channels + m) * full_h + fy) * full_w + fx)] +=
                    v * w.data<float>()[((ci * c.out_per_group + mi) * c.kh + ky) * c.kw + kx];
              }
            }
          }
        }
      }
    }
  }
  const int64_t oh = full_h - c.pads[0] - c.pads[2], ow = full_w - c.pads[1] - c.pads[3];
  std::vector<double> out;
  for (int64_t nm = 0; nm < c.batch * out_channels; ++nm) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t xx = 0; xx < ow; ++xx) {
        out.push_back(full[static_cast<size_t>((nm * full_h + y + c.pads[0]) * full_w + xx + c.pads[1])] +
                      b.data<float>()[nm % out_channels]);
      }
    }
  }
  return out;
}

Node transpose_node(const TransposeCase& c) {
  Node node = make_node(OpKind::kConvTranspose, 3);
  node.attrs.set("strides", std::vector<int64_t>{c.stride_h, c.stride_w});
  node.attrs.set("dilations", std::vector<int64_t>{c.dilation_h, c.dilation_w});
  node.attrs.set("group", c.group);
  node.attrs.set("pads", c.pads);
  node.attrs.set("output_padding", c.output_padding);
  return node;
}

}  // namespace

TEST_CASE("conv_transpose: reference matches a float64 scatter-then-crop computation") {
  const std::vector<TransposeCase> cases = {
      {1, 1, 3, 3, 2, 3, 3, 1, 1, 1, 1, 1, {0, 0, 0, 0}, {0, 0}, {5, 5}},
      {2, 3, 5, 7, 2, 3, 3, 1, 2, 2, 1, 1, {1, 1, 1, 1}, {1, 1}, {10, 14}},
      {1, 4, 4, 3, 3, 2, 3, 2, 3, 2, 1, 1, {0, 1, 1, 0}, {1, 0}, {11, 6}},
      {1, 2, 5, 5, 1, 3, 3, 1, 1, 1, 2, 2, {0, 0, 0, 0}, {0, 0}, {9, 9}},
      {1, 6, 3, 7, 1, 4, 4, 6, 2, 2, 1, 1, {1, 1, 1, 1}, {0, 0}, {6, 14}},
  };
  uint32_t seed = 5;
  for (const TransposeCase& c : cases) {
    CAPTURE(seed);
    std::mt19937 rng(seed++);
    const Tensor x = random_tensor(DType::kF32, {c.batch, c.channels, c.height, c.width}, rng);
    const Tensor w = random_tensor(DType::kF32, {c.channels, c.out_per_group, c.kh, c.kw}, rng);
    const Tensor b = random_tensor(DType::kF32, {c.out_per_group * c.group}, rng);
    auto out = run_op(transpose_node(c), {&x, &w, &b}, true);
    REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
    const Shape shape = {c.batch, c.out_per_group * c.group, c.expected_spatial[0], c.expected_spatial[1]};
    REQUIRE(out->at(0).shape() == shape);
    const ErrorStats error =
        compare_tensors(out->at(0), Tensor::from_vector<double>(shape, scatter_conv_transpose(c, x, w, b)));
    CHECK_MESSAGE(error.relative_l2 <= 1e-6, error.to_string());
  }
}

TEST_CASE("conv_transpose: output_shape and auto_pad give the pads ONNX specifies") {
  std::mt19937 rng(3);
  const Tensor x = random_tensor(DType::kF32, {1, 1, 3, 3}, rng);
  const Tensor w = random_tensor(DType::kF32, {1, 2, 3, 3}, rng);
  auto run = [&](const Node& node) {
    auto out = run_op(node, {&x, &w}, true);
    REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
    return out->at(0);
  };
  // strides (3, 2) with output_shape (10, 8) equals output_padding (1, 1): total padding -1 puts one
  // extra output row/column at the end.
  Node with_shape = make_node(OpKind::kConvTranspose, 2);
  with_shape.attrs.set("strides", std::vector<int64_t>{3, 2});
  with_shape.attrs.set("output_shape", std::vector<int64_t>{10, 8});
  Node with_padding = make_node(OpKind::kConvTranspose, 2);
  with_padding.attrs.set("strides", std::vector<int64_t>{3, 2});
  with_padding.attrs.set("output_padding", std::vector<int64_t>{1, 1});
  const Tensor a = run(with_shape);
  CHECK(a.shape() == Shape{1, 2, 10, 8});
  CHECK(compare_tensors(a, run(with_padding)).max_abs == 0.0);
  // SAME_UPPER with stride 2: output 6x6 from a full 7x7, the extra padding row at the end.
  Node same = make_node(OpKind::kConvTranspose, 2);
  same.attrs.set("strides", std::vector<int64_t>{2, 2});
  same.attrs.set("auto_pad", std::string("SAME_UPPER"));
  Node explicit_pads = make_node(OpKind::kConvTranspose, 2);
  explicit_pads.attrs.set("strides", std::vector<int64_t>{2, 2});
  explicit_pads.attrs.set("pads", std::vector<int64_t>{0, 0, 1, 1});
  const Tensor s = run(same);
  CHECK(s.shape() == Shape{1, 2, 6, 6});
  CHECK(compare_tensors(s, run(explicit_pads)).max_abs == 0.0);
}

TEST_CASE("conv_transpose: 1-D and 3-D shapes, and shape errors") {
  std::vector<TensorDesc> out;
  Node node = make_node(OpKind::kConvTranspose, 2);
  node.attrs.set("strides", std::vector<int64_t>{2});
  const Tensor x1 = Tensor::meta(DType::kF32, {1, 3, 5});
  const Tensor w1 = Tensor::meta(DType::kF32, {3, 2, 3});
  REQUIRE(infer_conv_transpose(node, std::vector<const Tensor*>{&x1, &w1}, out).is_ok());
  CHECK(out[0].shape == Shape{1, 2, 11});
  Node node3 = make_node(OpKind::kConvTranspose, 2);
  const Tensor x3 = Tensor::meta(DType::kF32, {1, 1, 3, 4, 5});
  const Tensor w3 = Tensor::meta(DType::kF32, {1, 2, 3, 3, 3});
  REQUIRE(infer_conv_transpose(node3, std::vector<const Tensor*>{&x3, &w3}, out).is_ok());
  CHECK(out[0].shape == Shape{1, 2, 5, 6, 7});
  const Tensor bad_w = Tensor::meta(DType::kF32, {2, 2, 3});
  CHECK(
      infer_conv_transpose(node, std::vector<const Tensor*>{&x1, &bad_w}, out).message().find("input has 3 channels") !=
      std::string::npos);
  const Tensor bad_rank = Tensor::meta(DType::kF32, {3, 2});
  CHECK(infer_conv_transpose(node, std::vector<const Tensor*>{&x1, &bad_rank}, out).message() ==
        "weight has rank 2, expected 3 (same as input)");
}
