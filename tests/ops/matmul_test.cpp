// MatMul and Gemm: optimised kernels against the references on awkward shapes, the references
// against hand-computed values and an independent float64 loop, and shape errors.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "runtime/ops/ops.h"
#include "tests/ops/op_test_util.h"
#include "tests/support/numerics.h"

using namespace edgefuse;
using namespace edgefuse::test;

TEST_CASE("matmul: cpu kernel matches the reference with 1-D promotion and batch broadcasting") {
  struct Case {
    Shape a, b, expected;
  };
  const std::vector<Case> cases = {
      {{3, 5}, {5, 7}, {3, 7}},
      {{1, 1}, {1, 1}, {1, 1}},
      {{127, 17}, {17, 13}, {127, 13}},
      {{5}, {5, 7}, {7}},
      {{3, 5}, {5}, {3}},
      {{5}, {5}, {}},
      {{2, 1, 3, 4}, {3, 4, 5}, {2, 3, 3, 5}},
      {{7, 13}, {2, 13, 3}, {2, 7, 3}},
      {{2, 3, 17, 5}, {5}, {2, 3, 17}},
      {{1, 40, 9}, {1, 9, 33}, {1, 40, 33}},
  };
  ThreadPool pool1(1), pool2(2);
  uint32_t seed = 1;
  for (const Case& c : cases) {
    CAPTURE(shape_to_string(c.a));
    CAPTURE(shape_to_string(c.b));
    std::mt19937 rng(seed++);
    const Tensor a = random_tensor(DType::kF32, c.a, rng);
    const Tensor b = random_tensor(DType::kF32, c.b, rng);
    const Node node = make_node(OpKind::kMatMul, 2);
    auto expected = run_op(node, {&a, &b}, true);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
    CHECK(expected->at(0).shape() == c.expected);
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool1, &pool2}) {
      auto actual = run_op(node, {&a, &b}, false, pool);
      REQUIRE_MESSAGE(actual.is_ok(), actual.status().to_string());
      REQUIRE(actual->at(0).shape() == c.expected);
      const ErrorStats error = compare_tensors(actual->at(0), expected->at(0));
      CHECK_MESSAGE(error.relative_l2 <= 1e-5, error.to_string());
    }
  }
}

TEST_CASE("matmul: reference against hand-computed values, broadcasting and integer types") {
  const Tensor a = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  const Tensor b = Tensor::from_vector<float>({2, 2}, {5, 6, 7, 8});
  auto out = run_op(make_node(OpKind::kMatMul, 2), {&a, &b}, true);
  REQUIRE(out.is_ok());
  CHECK(compare_tensors(out->at(0), Tensor::from_vector<float>({2, 2}, {19, 22, 43, 50})).max_abs == 0);

  // A [2, 1, 1, 2] against B [3, 2, 1]: batch dims [2, 1] and [3] broadcast to [2, 3].
  const Tensor ab = Tensor::from_vector<int64_t>({2, 1, 1, 2}, {1, 2, 3, 4});
  const Tensor bb = Tensor::from_vector<int64_t>({3, 2, 1}, {1, 1, 2, 0, 0, 3});
  auto batched = run_op(make_node(OpKind::kMatMul, 2), {&ab, &bb}, true);
  REQUIRE_MESSAGE(batched.is_ok(), batched.status().to_string());
  CHECK(batched->at(0).shape() == Shape{2, 3, 1, 1});
  // [a][b]: (1,2).(1,1)=3, (1,2).(2,0)=2, (1,2).(0,3)=6, (3,4).(1,1)=7, (3,4).(2,0)=6, (3,4).(0,3)=12
  CHECK(batched->at(0).to_int64_vector() == std::vector<int64_t>{3, 2, 6, 7, 6, 12});

  const Tensor ai = Tensor::from_vector<int32_t>({3}, {1, -2, 3});
  const Tensor bi = Tensor::from_vector<int32_t>({3, 2}, {1, 0, 0, 1, 2, 2});
  auto ints = run_op(make_node(OpKind::kMatMul, 2), {&ai, &bi}, false);
  REQUIRE(ints.is_ok());
  CHECK(ints->at(0).shape() == Shape{2});
  CHECK(ints->at(0).to_int64_vector() == std::vector<int64_t>{7, 4});
}

TEST_CASE("matmul: shape rule errors") {
  std::vector<TensorDesc> out;
  const Node node = make_node(OpKind::kMatMul, 2);
  const Tensor a = Tensor::meta(DType::kF32, {2, 3, 4});
  const Tensor b = Tensor::meta(DType::kF32, {2, 5, 6});
  CHECK(infer_matmul(node, std::vector<const Tensor*>{&a, &b}, out).message().find("inner dims differ") !=
        std::string::npos);
  const Tensor c = Tensor::meta(DType::kF32, {3, 4, 6});
  CHECK_FALSE(infer_matmul(node, std::vector<const Tensor*>{&a, &c}, out).is_ok());
  const Tensor d = Tensor::meta(DType::kF64, {4, 6});
  CHECK(infer_matmul(node, std::vector<const Tensor*>{&a, &d}, out).message() == "A is f32 but B is f64");
  const Tensor s = Tensor::meta(DType::kF32, {});
  CHECK_FALSE(infer_matmul(node, std::vector<const Tensor*>{&s, &d}, out).is_ok());
}

namespace {

// Gemm in float64 straight from the definition, with C given as a [M, N] expansion.
std::vector<double> direct_gemm(const Tensor& a, const Tensor& b, const std::vector<double>& c, bool trans_a,
                                bool trans_b, double alpha, double beta, int64_t m, int64_t k, int64_t n) {
  std::vector<double> y(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t l = 0; l < k; ++l) {
        const double av = trans_a ? a.data<float>()[l * m + i] : a.data<float>()[i * k + l];
        const double bv = trans_b ? b.data<float>()[j * k + l] : b.data<float>()[l * n + j];
        acc += av * bv;
      }
      y[static_cast<size_t>(i * n + j)] = alpha * acc + (c.empty() ? 0.0 : beta * c[static_cast<size_t>(i * n + j)]);
    }
  }
  return y;
}

}  // namespace

TEST_CASE("gemm: transposes, alpha, beta and every C broadcast, cpu and reference") {
  const int64_t m = 13, k = 7, n = 17;
  const std::vector<Shape> c_shapes = {{}, {1}, {n}, {1, n}, {m, 1}, {m, n}};
  ThreadPool pool2(2);
  uint32_t seed = 10;
  for (int trans = 0; trans < 4; ++trans) {
    const bool trans_a = (trans & 1) != 0, trans_b = (trans & 2) != 0;
    for (size_t ci = 0; ci <= c_shapes.size(); ++ci) {
      const bool has_c = ci < c_shapes.size();
      CAPTURE(trans_a);
      CAPTURE(trans_b);
      CAPTURE((has_c ? shape_to_string(c_shapes[ci]) : std::string("none")));
      std::mt19937 rng(seed++);
      const Tensor a = random_tensor(DType::kF32, trans_a ? Shape{k, m} : Shape{m, k}, rng);
      const Tensor b = random_tensor(DType::kF32, trans_b ? Shape{n, k} : Shape{k, n}, rng);
      const Tensor c = random_tensor(DType::kF32, has_c ? c_shapes[ci] : Shape{0}, rng);
      Node node = make_node(OpKind::kGemm, has_c ? 3 : 2);
      node.attrs.set("transA", int64_t{trans_a});
      node.attrs.set("transB", int64_t{trans_b});
      node.attrs.set("alpha", 0.5f);
      node.attrs.set("beta", -2.0f);
      std::vector<const Tensor*> inputs = {&a, &b};
      std::vector<double> c_full;
      if (has_c) {
        inputs.push_back(&c);
        const Shape& cs = c_shapes[ci];
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            const int64_t row = cs.size() == 2 && cs[0] == m ? i : 0;
            const int64_t col = !cs.empty() && cs.back() == n ? j : 0;
            c_full.push_back(c.data<float>()[row * (cs.size() == 2 ? cs[1] : 1) + col]);
          }
        }
      }
      auto reference = run_op(node, inputs, true);
      REQUIRE_MESSAGE(reference.is_ok(), reference.status().to_string());
      REQUIRE(reference->at(0).shape() == Shape{m, n});
      const Tensor expected =
          Tensor::from_vector<double>({m, n}, direct_gemm(a, b, c_full, trans_a, trans_b, 0.5, -2.0, m, k, n));
      CHECK(compare_tensors(reference->at(0), expected).relative_l2 <= 1e-6);
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
        auto actual = run_op(node, inputs, false, pool);
        REQUIRE(actual.is_ok());
        CHECK(compare_tensors(actual->at(0), reference->at(0)).relative_l2 <= 1e-5);
      }
    }
  }
}

TEST_CASE("gemm: shape rule errors") {
  std::vector<TensorDesc> out;
  Node node = make_node(OpKind::kGemm, 3);
  const Tensor a = Tensor::meta(DType::kF32, {3, 4});
  const Tensor b = Tensor::meta(DType::kF32, {5, 6});
  const Tensor c = Tensor::meta(DType::kF32, {6});
  CHECK(infer_gemm(node, std::vector<const Tensor*>{&a, &b, &c}, out).message().find("inner dims differ") !=
        std::string::npos);
  node.attrs.set("transB", int64_t{1});
  const Tensor bt = Tensor::meta(DType::kF32, {6, 4});
  REQUIRE(infer_gemm(node, std::vector<const Tensor*>{&a, &bt, &c}, out).is_ok());
  CHECK(out[0].shape == Shape{3, 6});
  const Tensor bad_c = Tensor::meta(DType::kF32, {2, 6});
  CHECK(infer_gemm(node, std::vector<const Tensor*>{&a, &bt, &bad_c}, out).message().find("Gemm C") !=
        std::string::npos);
  const Tensor rank3 = Tensor::meta(DType::kF32, {1, 3, 4});
  CHECK(infer_gemm(node, std::vector<const Tensor*>{&rank3, &bt, &c}, out).message().find("rank-2") !=
        std::string::npos);
}
