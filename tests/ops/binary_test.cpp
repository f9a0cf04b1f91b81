// Pointwise binary ops: the broadcasting shape rule, reference and f32 kernels against a naive
// float64 index computation on random shapes, integer semantics and Pow's mixed dtypes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "runtime/ops/broadcast.h"
#include "runtime/thread_pool.h"
#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using edgefuse::test::make_node;
using edgefuse::test::run_op;

namespace {

Tensor run_one(const Node& node, const std::vector<const Tensor*>& inputs, bool reference, ThreadPool* pool = nullptr) {
  auto result = run_op(node, inputs, reference, pool);
  REQUIRE_MESSAGE(result.is_ok(), result.status().to_string());
  return std::move(result.value()[0]);
}

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  return {t.values<T>().begin(), t.values<T>().end()};
}

// Expected output computed the slow way: every output multi-index mapped to each input by
// right-aligning dims and using 0 along dims of size 1.
Tensor naive_broadcast(const Tensor& a, const Tensor& b, const Shape& out_shape,
                       const std::function<double(double, double)>& op) {
  Tensor out = Tensor::empty(DType::kF64, out_shape);
  const int rank = static_cast<int>(out_shape.size());
  const auto input_offset = [&](const Tensor& t, const std::vector<int64_t>& index) {
    int64_t offset = 0;
    for (int d = 0; d < t.rank(); ++d) {
      const int64_t coordinate = t.dim(d) == 1 ? 0 : index[static_cast<size_t>(rank - t.rank() + d)];
      offset = offset * t.dim(d) + coordinate;
    }
    return offset;
  };
  std::vector<int64_t> index(static_cast<size_t>(rank));
  for (int64_t i = 0; i < out.numel(); ++i) {
    for (int64_t rest = i, d = rank - 1; d >= 0; --d) {
      index[static_cast<size_t>(d)] = rest % out_shape[static_cast<size_t>(d)];
      rest /= out_shape[static_cast<size_t>(d)];
    }
    out.data<double>()[i] = op(a.double_at(input_offset(a, index)), b.double_at(input_offset(b, index)));
  }
  return out;
}

// A random output shape and two input shapes that broadcast to it: dims dropped from the front
// or set to 1 independently in each.
struct ShapePair {
  Shape a;
  Shape b;
  Shape out;
};

ShapePair random_shape_pair(std::mt19937& rng, bool b_unidirectional) {
  const auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  ShapePair pair;
  const int rank = uniform(0, 5);
  for (int d = 0; d < rank; ++d) pair.out.push_back(uniform(0, 19) == 0 ? 0 : uniform(1, 6));
  const auto derive = [&](bool keep_all) {
    Shape shape(pair.out.begin() + (keep_all ? 0 : uniform(0, rank)), pair.out.end());
    if (!keep_all) {
      for (int64_t& dim : shape) {
        if (uniform(0, 2) == 0) dim = 1;
      }
    }
    return shape;
  };
  pair.a = derive(b_unidirectional);
  pair.b = derive(false);
  if (!b_unidirectional) {
    // The output is what a and b broadcast to (dims where both became 1 shrink).
    pair.out = broadcast_shapes(pair.a, pair.b).value();
  }
  return pair;
}

struct BinaryCase {
  OpKind op;
  std::function<double(double, double)> formula;
  double lo_a, hi_a, lo_b, hi_b;  // input ranges: Div and Pow keep away from 0 and negative bases
};

std::vector<BinaryCase> binary_cases() {
  return {
      {OpKind::kAdd, [](double x, double y) { return x + y; }, -1, 1, -1, 1},
      {OpKind::kSub, [](double x, double y) { return x - y; }, -1, 1, -1, 1},
      {OpKind::kMul, [](double x, double y) { return x * y; }, -1, 1, -1, 1},
      {OpKind::kDiv, [](double x, double y) { return x / y; }, -1, 1, 0.5, 2},
      {OpKind::kPow, [](double x, double y) { return std::pow(x, y); }, 0.5, 2, -2, 2},
      {OpKind::kPRelu, [](double x, double slope) { return x < 0 ? slope * x : x; }, -1, 1, -1, 1},
  };
}

}  // namespace

TEST_CASE("broadcast_shapes follows numpy rules and names both shapes on error") {
  const auto broadcast = [](Shape a, Shape b) { return broadcast_shapes(a, b); };
  CHECK(broadcast({2, 3}, {3}).value() == Shape{2, 3});
  CHECK(broadcast({2, 1, 4}, {3, 1}).value() == Shape{2, 3, 4});
  CHECK(broadcast({}, {5}).value() == Shape{5});
  CHECK(broadcast({}, {}).value() == Shape{});
  CHECK(broadcast({0, 3}, {1, 3}).value() == Shape{0, 3});
  CHECK(broadcast({1, 0}, {5, 1}).value() == Shape{5, 0});
  CHECK(broadcast({1, 3, 1, 1}, {2, 1, 4, 5}).value() == Shape{2, 3, 4, 5});
  const Result<Shape> error = broadcast({2, 3}, {4});
  REQUIRE_FALSE(error.is_ok());
  CHECK(error.status().message() == "shapes [2, 3] and [4] cannot be broadcast (dimension 1: 3 vs 4)");
  CHECK_FALSE(broadcast({0}, {2}).is_ok());
  CHECK_FALSE(broadcast({2, 2}, {3, 1, 3}).is_ok());

  CHECK(check_unidirectional_broadcast(Shape{3, 1, 1}, Shape{2, 3, 4, 4}).is_ok());
  CHECK(check_unidirectional_broadcast(Shape{}, Shape{2}).is_ok());
  CHECK_FALSE(check_unidirectional_broadcast(Shape{2, 3}, Shape{3}).is_ok());
  CHECK_FALSE(check_unidirectional_broadcast(Shape{2}, Shape{3}).is_ok());
}

TEST_CASE("infer_broadcast: dtypes must match except Pow's exponent; PRelu keeps X's shape") {
  std::vector<TensorDesc> outputs;
  const Tensor a = Tensor::meta(DType::kF32, {2, 1, 4});
  const Tensor b = Tensor::meta(DType::kF32, {3, 1});
  REQUIRE(infer_node(make_node(OpKind::kAdd, 2), std::vector<const Tensor*>{&a, &b}, outputs).is_ok());
  CHECK(outputs[0] == TensorDesc{DType::kF32, {2, 3, 4}});

  const Tensor ints = Tensor::meta(DType::kI64, {4});
  const Status mismatch = infer_node(make_node(OpKind::kMul, 2), std::vector<const Tensor*>{&a, &ints}, outputs);
  CHECK(mismatch.code() == StatusCode::kInvalidModel);
  CHECK(mismatch.message().find("f32[2, 1, 4] and i64[4]") != std::string::npos);
  REQUIRE(infer_node(make_node(OpKind::kPow, 2), std::vector<const Tensor*>{&a, &ints}, outputs).is_ok());
  CHECK(outputs[0] == TensorDesc{DType::kF32, {2, 1, 4}});

  const Tensor bad = Tensor::meta(DType::kF32, {2, 3});
  const Tensor other = Tensor::meta(DType::kF32, {4});
  const Status incompatible = infer_node(make_node(OpKind::kSub, 2), std::vector<const Tensor*>{&bad, &other}, outputs);
  CHECK(incompatible.message().find("[2, 3] and [4]") != std::string::npos);
  CHECK(incompatible.message().find("Sub 'Sub_under_test'") != std::string::npos);

  const Tensor x = Tensor::meta(DType::kF32, {1, 3, 4, 4});
  const Tensor slope = Tensor::meta(DType::kF32, {3, 1, 1});
  REQUIRE(infer_node(make_node(OpKind::kPRelu, 2), std::vector<const Tensor*>{&x, &slope}, outputs).is_ok());
  CHECK(outputs[0] == x.desc());
  const Tensor wide_slope = Tensor::meta(DType::kF32, {2, 3, 4, 4});
  const Status prelu_error =
      infer_node(make_node(OpKind::kPRelu, 2), std::vector<const Tensor*>{&x, &wide_slope}, outputs);
  CHECK(prelu_error.message().find("slope") != std::string::npos);
}

TEST_CASE("binary kernels match a naive float64 broadcast on 200 random shape pairs") {
  std::mt19937 rng(2024);
  ThreadPool two(2);
  for (int trial = 0; trial < 200; ++trial) {
    for (const BinaryCase& c : binary_cases()) {
      const ShapePair shapes = random_shape_pair(rng, c.op == OpKind::kPRelu);
      const Tensor a = test::random_tensor(DType::kF32, shapes.a, rng, c.lo_a, c.hi_a);
      const Tensor b = test::random_tensor(DType::kF32, shapes.b, rng, c.lo_b, c.hi_b);
      const Tensor expected = naive_broadcast(a, b, shapes.out, c.formula);
      const Node node = make_node(c.op, 2);
      INFO(op_name(c.op), " ", shape_to_string(shapes.a), " and ", shape_to_string(shapes.b), " -> ",
           shape_to_string(shapes.out));
      for (bool reference : {true, false}) {
        INFO((reference ? "reference" : "cpu"));
        const Tensor actual = run_one(node, {&a, &b}, reference, &two);
        REQUIRE(actual.shape() == shapes.out);
        const test::ErrorStats stats = test::compare_tensors(actual, expected);
        CHECK(stats.relative_l2 <= 1e-6);
        CHECK(stats.max_abs <= 1e-5);
      }
    }
  }
}

TEST_CASE("binary f32 fast paths on larger tensors with 1 and 2 threads") {
  std::mt19937 rng(99);
  ThreadPool one(1);
  ThreadPool two(2);
  const std::vector<std::pair<Shape, Shape>> shape_pairs = {
      {{2, 64, 16, 16}, {2, 64, 16, 16}},  // same shape: one flat run
      {{2, 64, 16, 16}, {}},               // scalar
      {{}, {3, 40, 100}},                  // scalar on the left
      {{2, 64, 16, 16}, {64, 1, 1}},       // per-channel
      {{2, 64, 16, 16}, {1, 64, 1, 1}},
      {{2, 64, 16, 16}, {16}},           // last dim
      {{1, 64, 1, 16}, {3, 1, 128, 1}},  // both sides broadcast
      {{7, 13, 127}, {7, 1, 127}},
  };
  for (const auto& [shape_a, shape_b] : shape_pairs) {
    const Tensor a = test::random_tensor(DType::kF32, shape_a, rng, -1, 1);
    const Tensor b = test::random_tensor(DType::kF32, shape_b, rng, 0.5, 2);
    for (OpKind op : {OpKind::kAdd, OpKind::kMul, OpKind::kDiv}) {
      const Node node = make_node(op, 2);
      const Tensor expected = run_one(node, {&a, &b}, true);
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &one, &two}) {
        INFO(op_name(op), " ", shape_to_string(shape_a), " and ", shape_to_string(shape_b), " threads ",
             pool ? pool->size() : 0);
        const test::ErrorStats stats = test::compare_tensors(run_one(node, {&a, &b}, false, pool), expected);
        CHECK(stats.relative_l2 <= 1e-6);
        CHECK(stats.max_abs <= 1e-6);
      }
    }
  }
}

TEST_CASE("integer Add/Sub/Mul wrap and Div truncates toward zero, with x / 0 == 0") {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  const Tensor a = Tensor::from_vector<int32_t>({7}, {7, -7, 7, -7, 5, kMin, 0});
  const Tensor b = Tensor::from_vector<int32_t>({7}, {2, 2, -2, -2, 0, -1, 3});
  for (bool reference : {true, false}) {
    CHECK(values_of<int32_t>(run_one(make_node(OpKind::kDiv, 2), {&a, &b}, reference)) ==
          std::vector<int32_t>{3, -3, -3, 3, 0, kMin, 0});
    const Tensor big = Tensor::from_vector<int32_t>({2}, {kMax, kMin});
    const Tensor one = Tensor::scalar<int32_t>(1);
    CHECK(values_of<int32_t>(run_one(make_node(OpKind::kAdd, 2), {&big, &one}, reference)) ==
          std::vector<int32_t>{kMin, kMin + 1});
    CHECK(values_of<int32_t>(run_one(make_node(OpKind::kSub, 2), {&big, &one}, reference)) ==
          std::vector<int32_t>{kMax - 1, kMax});
    const Tensor u = Tensor::from_vector<uint8_t>({3}, {200, 10, 255});
    const Tensor v = Tensor::from_vector<uint8_t>({3}, {100, 20, 0});
    CHECK(values_of<uint8_t>(run_one(make_node(OpKind::kAdd, 2), {&u, &v}, reference)) ==
          std::vector<uint8_t>{44, 30, 255});
    CHECK(values_of<uint8_t>(run_one(make_node(OpKind::kSub, 2), {&u, &v}, reference)) ==
          std::vector<uint8_t>{100, 246, 255});
    CHECK(values_of<uint8_t>(run_one(make_node(OpKind::kDiv, 2), {&u, &v}, reference)) ==
          std::vector<uint8_t>{2, 0, 0});
    const Tensor i8 = Tensor::from_vector<int8_t>({3}, {-128, 100, -9});
    const Tensor j8 = Tensor::from_vector<int8_t>({1}, {-1});
    CHECK(values_of<int8_t>(run_one(make_node(OpKind::kDiv, 2), {&i8, &j8}, reference)) ==
          std::vector<int8_t>{-128, -100, 9});
    const Tensor l = Tensor::from_vector<int64_t>({2, 1}, {3, -4});
    const Tensor m = Tensor::from_vector<int64_t>({3}, {1, 10, int64_t{1} << 62});
    CHECK(values_of<int64_t>(run_one(make_node(OpKind::kMul, 2), {&l, &m}, reference)) ==
          std::vector<int64_t>{3, 30, -(int64_t{1} << 62) /* 3 * 2^62 wraps */, -4, -40, 0});
  }
}

TEST_CASE("Pow across base and exponent dtypes") {
  for (bool reference : {true, false}) {
    INFO((reference ? "reference" : "cpu"));
    const Node pow = make_node(OpKind::kPow, 2);
    const Tensor f = Tensor::from_vector<float>({3}, {1, 2, 3});
    const Tensor i32 = Tensor::from_vector<int32_t>({3}, {4, 5, 6});
    const Tensor i64 = Tensor::from_vector<int64_t>({3}, {4, 5, 6});
    const Tensor fe = Tensor::from_vector<float>({3}, {4, 5, 6});
    CHECK(values_of<float>(run_one(pow, {&f, &i32}, reference)) == std::vector<float>{1, 32, 729});
    CHECK(values_of<float>(run_one(pow, {&f, &i64}, reference)) == std::vector<float>{1, 32, 729});
    CHECK(values_of<float>(run_one(pow, {&f, &fe}, reference)) == std::vector<float>{1, 32, 729});
    const Tensor bi32 = Tensor::from_vector<int32_t>({3}, {1, 2, 3});
    const Tensor bi64 = Tensor::from_vector<int64_t>({3}, {1, 2, 3});
    CHECK(values_of<int32_t>(run_one(pow, {&bi32, &fe}, reference)) == std::vector<int32_t>{1, 32, 729});
    CHECK(values_of<int32_t>(run_one(pow, {&bi32, &i32}, reference)) == std::vector<int32_t>{1, 32, 729});
    CHECK(values_of<int64_t>(run_one(pow, {&bi64, &i64}, reference)) == std::vector<int64_t>{1, 32, 729});
    CHECK(values_of<int64_t>(run_one(pow, {&bi64, &fe}, reference)) == std::vector<int64_t>{1, 32, 729});
    const Tensor exact = Tensor::from_vector<int64_t>({1}, {3});
    const Tensor big_exponent = Tensor::from_vector<int64_t>({1}, {39});
    CHECK(values_of<int64_t>(run_one(pow, {&exact, &big_exponent}, reference)) ==
          std::vector<int64_t>{4052555153018976267});  // 3^39, beyond double's exact integers
    const Tensor bases = Tensor::from_vector<int32_t>({4}, {2, 1, -1, 0});
    const Tensor negative = Tensor::scalar<int32_t>(-3);
    CHECK(values_of<int32_t>(run_one(pow, {&bases, &negative}, reference)) == std::vector<int32_t>{0, 1, -1, 0});
    const Tensor half_exponent = Tensor::scalar(0.5);
    const Tensor d = Tensor::from_vector<double>({2}, {4.0, 2.0});
    const Tensor root = run_one(pow, {&d, &half_exponent}, reference);
    CHECK(root.data<double>()[0] == 2.0);
    CHECK(root.data<double>()[1] == doctest::Approx(std::sqrt(2.0)).epsilon(1e-15));
  }
}

TEST_CASE("binary ops on f64, f16 and i64 through the reference; bool is rejected") {
  const Tensor a64 = Tensor::from_vector<double>({2}, {0.1, -2.5});
  const Tensor b64 = Tensor::from_vector<double>({2}, {0.2, 4.0});
  for (bool reference : {true, false}) {
    const Tensor sum = run_one(make_node(OpKind::kAdd, 2), {&a64, &b64}, reference);
    CHECK(sum.data<double>()[0] == 0.1 + 0.2);
    const Tensor slope = Tensor::scalar(0.5);
    const Tensor prelu = run_one(make_node(OpKind::kPRelu, 2), {&a64, &slope}, reference);
    CHECK(values_of<double>(prelu) == std::vector<double>{0.1, -1.25});
    const Tensor h = Tensor::from_vector<Half>({2}, {float_to_half(1.5f), float_to_half(-2.0f)});
    const Tensor hs = run_one(make_node(OpKind::kMul, 2), {&h, &h}, reference);
    CHECK(hs.dtype() == DType::kF16);
    CHECK(hs.double_at(0) == 2.25);
    CHECK(hs.double_at(1) == 4.0);
  }
  const Tensor flag = Tensor::from_vector<bool>({1}, {true});
  std::vector<TensorDesc> outputs;
  CHECK(infer_node(make_node(OpKind::kAdd, 2), std::vector<const Tensor*>{&flag, &flag}, outputs).code() ==
        StatusCode::kUnsupported);
}
