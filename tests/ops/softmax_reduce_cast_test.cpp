// Softmax (opset 13 and legacy_flatten), ReduceMean and Cast against naive float64 references
// and hand-computed values.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using edgefuse::test::make_node;
using edgefuse::test::run_op;

namespace {

Tensor run_one(const Node& node, const Tensor& input) {
  auto result = run_op(node, {&input}, /*reference=*/true);
  REQUIRE_MESSAGE(result.is_ok(), result.status().to_string());
  return std::move(result.value()[0]);
}

Status run_error(const Node& node, const Tensor& input) {
  auto result = run_op(node, {&input}, /*reference=*/true);
  REQUIRE_FALSE(result.is_ok());
  return result.status();
}

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  return {t.values<T>().begin(), t.values<T>().end()};
}

// Softmax over groups of `length` elements spaced `stride` apart, in float64.
std::vector<double> naive_softmax(const Tensor& x, int64_t outer, int64_t length, int64_t stride) {
  std::vector<double> out(static_cast<size_t>(x.numel()));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t s = 0; s < stride; ++s) {
      const auto at = [&](int64_t k) { return o * length * stride + k * stride + s; };
      double sum = 0;
      for (int64_t k = 0; k < length; ++k) sum += std::exp(x.double_at(at(k)));
      for (int64_t k = 0; k < length; ++k) out[static_cast<size_t>(at(k))] = std::exp(x.double_at(at(k))) / sum;
    }
  }
  return out;
}

void check_close(const Tensor& actual, const std::vector<double>& expected, double tolerance) {
  REQUIRE(actual.numel() == static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < actual.numel(); ++i) {
    INFO("element ", i);
    CHECK(actual.double_at(i) == doctest::Approx(expected[static_cast<size_t>(i)]).epsilon(tolerance));
  }
}

}  // namespace

TEST_CASE("Softmax along one axis matches float64 and sums to 1") {
  std::mt19937 rng(5);
  const Tensor x = test::random_tensor(DType::kF32, {2, 3, 5}, rng, -4, 4);
  struct AxisCase {
    int64_t axis;
    int64_t outer, length, stride;
  };
  for (const AxisCase& c : {AxisCase{-1, 6, 5, 1}, AxisCase{2, 6, 5, 1}, AxisCase{1, 2, 3, 5}, AxisCase{0, 1, 2, 15},
                            AxisCase{-3, 1, 2, 15}}) {
    INFO("axis ", c.axis);
    Node node = make_node(OpKind::kSoftmax, 1);
    if (c.axis != -1) node.attrs.set("axis", c.axis);
    const Tensor y = run_one(node, x);
    CHECK(y.desc() == x.desc());
    check_close(y, naive_softmax(x, c.outer, c.length, c.stride), 1e-6);
    for (int64_t o = 0; o < c.outer; ++o) {
      for (int64_t s = 0; s < c.stride; ++s) {
        double sum = 0;
        for (int64_t k = 0; k < c.length; ++k) sum += y.double_at(o * c.length * c.stride + k * c.stride + s);
        CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("Softmax is stable for large inputs and supports f64 and f16") {
  const Tensor big = Tensor::from_vector<float>({1, 3}, {1000.0f, 1001.0f, -1000.0f});
  const Tensor y = run_one(make_node(OpKind::kSoftmax, 1), big);
  const double e = std::exp(-1.0);
  check_close(y, {e / (1 + e), 1 / (1 + e), 0.0}, 1e-6);

  const Tensor d = Tensor::from_vector<double>({4}, {0.5, -1.0, 2.0, 0.0});
  check_close(run_one(make_node(OpKind::kSoftmax, 1), d), naive_softmax(d, 1, 4, 1), 1e-14);
  const Tensor h = Tensor::from_vector<Half>({2}, {float_to_half(0.0f), float_to_half(0.0f)});
  check_close(run_one(make_node(OpKind::kSoftmax, 1), h), {0.5, 0.5}, 1e-12);
}

TEST_CASE("Softmax with legacy_flatten normalises over all dims from axis on") {
  std::mt19937 rng(11);
  const Tensor x = test::random_tensor(DType::kF32, {2, 3, 4}, rng, -3, 3);
  Node node = make_node(OpKind::kSoftmax, 1);
  node.attrs.set("legacy_flatten", int64_t{1});
  node.attrs.set("axis", int64_t{1});
  check_close(run_one(node, x), naive_softmax(x, 2, 12, 1), 1e-6);
  node.attrs.set("axis", int64_t{0});
  check_close(run_one(node, x), naive_softmax(x, 1, 24, 1), 1e-6);
  node.attrs.erase("axis");  // opset < 13 default axis is 1
  check_close(run_one(node, x), naive_softmax(x, 2, 12, 1), 1e-6);
}

TEST_CASE("Softmax errors: axis out of range, integer input") {
  const Tensor x = Tensor::meta(DType::kF32, {2, 3});
  Node node = make_node(OpKind::kSoftmax, 1);
  node.attrs.set("axis", int64_t{2});
  std::vector<TensorDesc> outputs;
  const Status range = infer_node(node, std::vector<const Tensor*>{&x}, outputs);
  CHECK(range.code() == StatusCode::kInvalidArgument);
  CHECK(range.message().find("axis 2 is out of range for rank 2") != std::string::npos);
  const Tensor ints = Tensor::meta(DType::kI32, {3});
  CHECK(infer_node(make_node(OpKind::kSoftmax, 1), std::vector<const Tensor*>{&ints}, outputs).code() ==
        StatusCode::kUnsupported);
}

TEST_CASE("SoftmaxExpectation is the weighted sum of the softmax along its axis, plus the bias") {
  std::mt19937 rng(12);
  const Tensor x = test::random_tensor(DType::kF32, {2, 4, 3, 5}, rng, -4, 4);
  const Tensor bins = Tensor::from_vector<float>({3}, {0.0f, 1.0f, 2.0f});
  const Tensor bias = Tensor::from_vector<float>({1}, {-0.25f});
  Node node = make_node(OpKind::kSoftmaxExpectation, 3);
  node.attrs.set("axis", int64_t{2});
  auto result = run_op(node, {&x, &bins, &bias}, /*reference=*/true);
  REQUIRE_MESSAGE(result.is_ok(), result.status().to_string());
  const Tensor& y = result->at(0);
  CHECK(y.shape() == Shape{2, 4, 1, 5});
  const std::vector<double> p = naive_softmax(x, 8, 3, 5);
  for (int64_t o = 0; o < 8; ++o) {
    for (int64_t s = 0; s < 5; ++s) {
      double expected = -0.25;
      for (int64_t k = 0; k < 3; ++k) expected += p[static_cast<size_t>(o * 15 + k * 5 + s)] * static_cast<double>(k);
      CHECK(y.double_at(o * 5 + s) == doctest::Approx(expected).epsilon(1e-6));
    }
  }
  // Without the bias, along the last axis (contiguous groups), a negative axis.
  Node last = make_node(OpKind::kSoftmaxExpectation, 2);
  last.attrs.set("axis", int64_t{-1});
  const Tensor five = Tensor::from_vector<float>({5}, {1.0f, -2.0f, 0.5f, 3.0f, 0.0f});
  auto unbiased = run_op(last, {&x, &five}, /*reference=*/true);
  REQUIRE(unbiased.is_ok());
  CHECK(unbiased->at(0).shape() == Shape{2, 4, 3, 1});
  const std::vector<double> q = naive_softmax(x, 24, 5, 1);
  double expected = 0;
  for (int64_t k = 0; k < 5; ++k) expected += q[static_cast<size_t>(k)] * five.double_at(k);
  CHECK(unbiased->at(0).double_at(0) == doctest::Approx(expected).epsilon(1e-6));
}

TEST_CASE("SoftmaxExpectation errors: no axis, weights of the wrong length, a bias of several values") {
  const Tensor x = Tensor::meta(DType::kF32, {1, 4, 16, 10});
  const Tensor sixteen = Tensor::meta(DType::kF32, {16});
  const Tensor four = Tensor::meta(DType::kF32, {4});
  const Tensor two = Tensor::meta(DType::kF32, {2});
  Node node = make_node(OpKind::kSoftmaxExpectation, 3);
  std::vector<TensorDesc> outputs;
  CHECK(infer_node(node, std::vector<const Tensor*>{&x, &sixteen}, outputs).message().find("axis attribute") !=
        std::string::npos);
  node.attrs.set("axis", int64_t{2});
  const Status wrong = infer_node(node, std::vector<const Tensor*>{&x, &four}, outputs);
  CHECK(wrong.message().find("weights are f32[4], expected f32[16]") != std::string::npos);
  CHECK(infer_node(node, std::vector<const Tensor*>{&x, &sixteen, &two}, outputs).message().find("one f32 value") !=
        std::string::npos);
  REQUIRE(infer_node(node, std::vector<const Tensor*>{&x, &sixteen}, outputs).is_ok());
  CHECK(outputs[0].shape == Shape{1, 4, 1, 10});
}

TEST_CASE("ReduceMean with and without axes and keepdims") {
  std::vector<float> values(24);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i * i % 17) - 3.5f;
  const Tensor x = Tensor::from_vector<float>({2, 3, 4}, values);
  const auto at = [&](int64_t i, int64_t j, int64_t k) { return static_cast<double>(values[(i * 3 + j) * 4 + k]); };

  Node node = make_node(OpKind::kReduceMean, 1);
  node.attrs.set("axes", std::vector<int64_t>{1});
  std::vector<double> expected;
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t k = 0; k < 4; ++k) expected.push_back((at(i, 0, k) + at(i, 1, k) + at(i, 2, k)) / 3);
  }
  Tensor y = run_one(node, x);
  CHECK(y.shape() == Shape{2, 1, 4});
  check_close(y, expected, 1e-6);
  node.attrs.set("keepdims", int64_t{0});
  y = run_one(node, x);
  CHECK(y.shape() == Shape{2, 4});
  check_close(y, expected, 1e-6);

  node.attrs.set("axes", std::vector<int64_t>{-1, 0});
  expected.clear();
  for (int64_t j = 0; j < 3; ++j) {
    double sum = 0;
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t k = 0; k < 4; ++k) sum += at(i, j, k);
    }
    expected.push_back(sum / 8);
  }
  y = run_one(node, x);
  CHECK(y.shape() == Shape{3});
  check_close(y, expected, 1e-6);

  double total = 0;
  for (float v : values) total += v;
  Node all = make_node(OpKind::kReduceMean, 1);
  y = run_one(all, x);
  CHECK(y.shape() == Shape{1, 1, 1});
  check_close(y, {total / 24}, 1e-6);
  all.attrs.set("keepdims", int64_t{0});
  y = run_one(all, x);
  CHECK(y.shape() == Shape{});
  check_close(y, {total / 24}, 1e-6);
}

TEST_CASE("ReduceMean on integers truncates; bad axes are errors") {
  const Tensor x = Tensor::from_vector<int32_t>({2, 2}, {1, 2, -1, -2});
  Node node = make_node(OpKind::kReduceMean, 1);
  node.attrs.set("axes", std::vector<int64_t>{1});
  CHECK(values_of<int32_t>(run_one(node, x)) == std::vector<int32_t>{1, -1});

  node.attrs.set("axes", std::vector<int64_t>{1, -1});
  CHECK(run_error(node, x).message().find("listed twice") != std::string::npos);
  node.attrs.set("axes", std::vector<int64_t>{2});
  CHECK(run_error(node, x).message().find("axis 2 is out of range for rank 2") != std::string::npos);
}

TEST_CASE("Cast converts between dtypes with truncation, saturation and round trips") {
  const auto cast_node = [](int64_t to) {
    Node node = make_node(OpKind::kCast, 1);
    node.attrs.set("to", to);
    return node;
  };
  constexpr int64_t kFloat = 1, kUint8 = 2, kInt8 = 3, kInt32 = 6, kInt64 = 7, kBool = 9, kFloat16 = 10, kDouble = 11;
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();

  const Tensor f = Tensor::from_vector<float>({8}, {2.7f, -2.7f, 0.0f, -0.0f, NAN, 1e10f, -INFINITY, 0.5f});
  CHECK(values_of<int32_t>(run_one(cast_node(kInt32), f)) == std::vector<int32_t>{2, -2, 0, 0, 0, kMax, kMin, 0});
  CHECK(values_of<uint8_t>(run_one(cast_node(kUint8), f)) == std::vector<uint8_t>{2, 0, 0, 0, 0, 255, 0, 0});
  CHECK(values_of<bool>(run_one(cast_node(kBool), f)) ==
        std::vector<bool>{true, true, false, false, true, true, true, true});

  // f32 -> f16 -> f32 keeps values representable in f16; f32 -> f64 -> f32 keeps everything.
  const Tensor exact = Tensor::from_vector<float>({5}, {1.5f, -0.25f, 65504.0f, 0.0f, 6.1035156e-05f});
  CHECK(values_of<float>(run_one(cast_node(kFloat), run_one(cast_node(kFloat16), exact))) == values_of<float>(exact));
  std::mt19937 rng(3);
  const Tensor random = test::random_tensor(DType::kF32, {100}, rng, -1e6, 1e6);
  CHECK(values_of<float>(run_one(cast_node(kFloat), run_one(cast_node(kDouble), random))) == values_of<float>(random));
  const Tensor h = run_one(cast_node(kFloat16), Tensor::from_vector<float>({1}, {1e5f}));
  CHECK(std::isinf(h.double_at(0)));  // beyond f16's range

  const Tensor i64 = Tensor::from_vector<int64_t>({4}, {300, -129, 127, int64_t{1} << 40});
  CHECK(values_of<int8_t>(run_one(cast_node(kInt8), i64)) == std::vector<int8_t>{44, 127, 127, 0});
  CHECK(values_of<double>(run_one(cast_node(kDouble), i64)) == std::vector<double>{300, -129, 127, 1099511627776.0});
  const Tensor flags = Tensor::from_vector<bool>({2}, {true, false});
  CHECK(values_of<float>(run_one(cast_node(kFloat), flags)) == std::vector<float>{1, 0});
  CHECK(values_of<int64_t>(run_one(cast_node(kInt64), flags)) == std::vector<int64_t>{1, 0});
  const Tensor h16 = run_one(cast_node(kFloat16), Tensor::from_vector<int32_t>({2}, {-3, 2049}));
  CHECK(h16.double_at(0) == -3.0);
  CHECK(h16.double_at(1) == 2048.0);  // f16 spacing is 2 above 2048; ties round to even
  const Tensor u8 = Tensor::from_vector<uint8_t>({2}, {0, 255});
  CHECK(values_of<int8_t>(run_one(cast_node(kInt8), u8)) == std::vector<int8_t>{0, -1});
  const Tensor d = Tensor::from_vector<double>({2}, {-1e300, 3e9});
  CHECK(values_of<int64_t>(run_one(cast_node(kInt64), d)) ==
        std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 3000000000});
}

TEST_CASE("Cast rejects unsupported target types and a missing 'to'") {
  const Tensor x = Tensor::meta(DType::kF32, {2});
  std::vector<TensorDesc> outputs;
  Node node = make_node(OpKind::kCast, 1);
  const Status missing = infer_node(node, std::vector<const Tensor*>{&x}, outputs);
  CHECK(missing.code() == StatusCode::kInvalidModel);
  for (const auto& [to, message] :
       std::vector<std::pair<int64_t, std::string>>{{16, "Cast to ONNX type 16 (BFLOAT16)"},
                                                    {8, "Cast to ONNX type 8 (STRING)"},
                                                    {12, "Cast to ONNX type 12 (UINT32)"},
                                                    {99, "Cast to ONNX type 99 (unknown)"}}) {
    node.attrs.set("to", to);
    const Status status = infer_node(node, std::vector<const Tensor*>{&x}, outputs);
    CHECK(status.code() == StatusCode::kUnsupported);
    CHECK(status.message().find(message) != std::string::npos);
  }
  node.attrs.set("to", int64_t{7});
  REQUIRE(infer_node(node, std::vector<const Tensor*>{&x}, outputs).is_ok());
  CHECK(outputs[0] == TensorDesc{DType::kI64, {2}});
}
