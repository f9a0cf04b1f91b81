#include "pipeline/cli/bench_support.h"

#include <doctest/doctest.h>

namespace edgefuse::cli {
namespace {

TEST_CASE("summarize_latencies: median of odd and even counts, min, max") {
  const LatencyStats odd = summarize_latencies({5.0, 1.0, 3.0});
  CHECK(odd.median_ms == 3.0);
  CHECK(odd.min_ms == 1.0);
  CHECK(odd.max_ms == 5.0);
  const LatencyStats even = summarize_latencies({4.0, 1.0, 2.0, 10.0});
  CHECK(even.median_ms == 3.0);
  CHECK(even.max_ms == 10.0);
  CHECK(summarize_latencies({7.0}).median_ms == 7.0);
}

TEST_CASE("random_inputs fill each graph input in range, deterministically") {
  Graph graph;
  graph.inputs().push_back(graph.add_value("image", {DType::kF32, {2, 3}}));
  graph.inputs().push_back(graph.add_value("ids", {DType::kI64, {4}}));
  Result<std::vector<Tensor>> inputs = random_inputs(graph, 7);
  REQUIRE(inputs.is_ok());
  REQUIRE(inputs->size() == 2);
  CHECK((*inputs)[0].desc() == TensorDesc{DType::kF32, {2, 3}});
  for (float v : (*inputs)[0].values<float>()) CHECK((v >= -1.0f && v <= 1.0f));
  for (int64_t v : (*inputs)[1].values<int64_t>()) CHECK((v >= 0 && v < 10));
  Result<std::vector<Tensor>> again = random_inputs(graph, 7);
  REQUIRE(again.is_ok());
  CHECK((*again)[0].values<float>()[5] == (*inputs)[0].values<float>()[5]);
}

TEST_CASE("random_inputs rejects unknown dims, naming the input") {
  Graph graph;
  graph.inputs().push_back(graph.add_value("images", {DType::kF32, {1, 3, -1, -1}}));
  Result<std::vector<Tensor>> inputs = random_inputs(graph);
  REQUIRE_FALSE(inputs.is_ok());
  CHECK(inputs.status().message().find("input 'images' has unknown dims [1, 3, -1, -1]") == 0);
  CHECK(inputs.status().message().find("fixed input shape") != std::string::npos);
}

}  // namespace
}  // namespace edgefuse::cli
