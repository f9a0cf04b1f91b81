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

TEST_CASE("random_batch_inputs stacks each image as random_inputs makes it alone, and needs a batch of one") {
  Graph graph;
  graph.inputs().push_back(graph.add_value("image", {DType::kF32, {1, 2, 3}}));
  Result<std::vector<Tensor>> batch = random_batch_inputs(graph, 3);
  REQUIRE(batch.is_ok());
  REQUIRE(batch->size() == 1);
  REQUIRE((*batch)[0].desc() == TensorDesc{DType::kF32, {3, 2, 3}});
  for (uint32_t image = 0; image < 3; ++image) {
    Result<std::vector<Tensor>> alone = random_inputs(graph, image + 1);
    REQUIRE(alone.is_ok());
    for (int64_t i = 0; i < 6; ++i) CHECK((*batch)[0].values<float>()[image * 6 + i] == (*alone)[0].values<float>()[i]);
  }
  CHECK((*batch)[0].values<float>()[0] != (*batch)[0].values<float>()[6]);  // distinct images

  Graph wide;
  wide.inputs().push_back(wide.add_value("rows", {DType::kF32, {4, 2}}));
  Result<std::vector<Tensor>> refused = random_batch_inputs(wide, 2);
  REQUIRE_FALSE(refused.is_ok());
  CHECK(refused.status().message() == "input 'rows' has shape [4, 2]: a batch needs a first dimension of 1");
}

}  // namespace
}  // namespace edgefuse::cli
