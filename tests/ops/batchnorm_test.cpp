// BatchNormalization (inference): the reference against a float64 evaluation of the formula on
// ranks 2 to 5, and its rejections (training mode, parameter shapes).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "runtime/ops/ops.h"
#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

TEST_CASE("batch_normalization: matches (x - mean) / sqrt(var + eps) * scale + B per channel") {
  const std::vector<Shape> shapes = {{2, 3}, {1, 5, 7}, {2, 3, 4, 5}, {1, 2, 3, 1, 4}};
  uint32_t seed = 1;
  for (const Shape& shape : shapes) {
    CAPTURE(shape_to_string(shape));
    std::mt19937 rng(seed++);
    const int64_t channels = shape[1];
    const Tensor x = random_tensor(DType::kF32, shape, rng, -3, 3);
    const Tensor scale = random_tensor(DType::kF32, {channels}, rng);
    const Tensor bias = random_tensor(DType::kF32, {channels}, rng);
    const Tensor mean = random_tensor(DType::kF32, {channels}, rng);
    const Tensor var = random_tensor(DType::kF32, {channels}, rng, 0.1, 2.0);
    Node node = make_node(OpKind::kBatchNormalization, 5);
    node.attrs.set("epsilon", 1e-2f);
    auto out = run_op(node, {&x, &scale, &bias, &mean, &var}, true);
    REQUIRE_MESSAGE(out.is_ok(), out.status().to_string());
    REQUIRE(out->at(0).shape() == shape);
    const int64_t inner = x.numel() / (shape[0] * channels);
    std::vector<double> expected;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t c = (i / inner) % channels;
      const double eps = static_cast<double>(1e-2f);
      expected.push_back((x.data<float>()[i] - mean.data<float>()[c]) /
                             std::sqrt(static_cast<double>(var.data<float>()[c]) + eps) * scale.data<float>()[c] +
                         bias.data<float>()[c]);
    }
    CHECK(compare_tensors(out->at(0), Tensor::from_vector<double>(shape, expected)).relative_l2 <= 1e-6);
  }
}

TEST_CASE("batch_normalization: ONNX example values") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 1, 3}, {-1, 0, 1, 2, 3, 4});
  const Tensor s = Tensor::from_vector<float>({2}, {1.0f, 1.5f});
  const Tensor b = Tensor::from_vector<float>({2}, {0, 1});
  const Tensor mean = Tensor::from_vector<float>({2}, {0, 3});
  const Tensor var = Tensor::from_vector<float>({2}, {1, 1.5f});
  auto out = run_op(make_node(OpKind::kBatchNormalization, 5), {&x, &s, &b, &mean, &var}, true);
  REQUIRE(out.is_ok());
  const Tensor expected =
      Tensor::from_vector<float>({1, 2, 1, 3}, {-0.999995f, 0.0f, 0.999995f, -0.22474074f, 1.0f, 2.2247407f});
  CHECK(compare_tensors(out->at(0), expected).max_abs <= 1e-6);
}

TEST_CASE("batch_normalization: training mode and bad parameters are rejected") {
  std::vector<TensorDesc> out;
  const Tensor x = Tensor::meta(DType::kF32, {1, 3, 4, 4});
  const Tensor p3 = Tensor::meta(DType::kF32, {3});
  const Tensor p4 = Tensor::meta(DType::kF32, {4});
  Node node = make_node(OpKind::kBatchNormalization, 5);
  CHECK(infer_batch_normalization(node, std::vector<const Tensor*>{&x, &p3, &p3, &p3, &p3}, out).is_ok());
  CHECK(infer_batch_normalization(node, std::vector<const Tensor*>{&x, &p3, &p4, &p3, &p3}, out).message() ==
        "B is f32[4], expected [3] (one per channel of input f32[1, 3, 4, 4])");
  const Tensor rank1 = Tensor::meta(DType::kF32, {3});
  CHECK(infer_batch_normalization(node, std::vector<const Tensor*>{&rank1, &p3, &p3, &p3, &p3}, out)
            .message()
            .find("rank 1") != std::string::npos);
  node.attrs.set("training_mode", int64_t{1});
  CHECK(infer_batch_normalization(node, std::vector<const Tensor*>{&x, &p3, &p3, &p3, &p3}, out).code() ==
        StatusCode::kUnsupported);
}
