// BlazeFace's merged rows (models/detector/blazeface_rows.h): the merged output holds each head's
// logits and regressors as the four outputs did, and the GPU row filter's logit threshold keeps
// every row the CPU's decoding would score at or above the threshold.
#include "models/detector/blazeface_rows.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "models/detect/blazeface_decode.h"
#include "models/detector/family.h"
#include "runtime/executor.h"
#include "tests/models/model_fixtures.h"
#include "tests/support/assets.h"

using namespace edgefuse;

namespace {

// decode_blazeface's score of a logit (models/detect/blazeface_decode.cpp).
float cpu_score(float logit) {
  return 1.0f / (1.0f + std::exp(-std::clamp(logit, -100.0f, 100.0f)));
}

}  // namespace

TEST_CASE("merged BlazeFace rows hold the four outputs' values, head 0 first") {
  for (const char* name : {"models/blazeface_front_128.onnx", "models/blazeface_back_256.onnx"}) {
    ASSET_OR_SKIP(path, name);
    INFO(std::string(name));
    test::LoadedModel& model = test::load_model(path);
    REQUIRE(model.graph != nullptr);
    Result<std::shared_ptr<Graph>> merged = merge_blazeface_heads(*model.graph);
    REQUIRE_MESSAGE(merged.is_ok(), merged.status().to_string());
    REQUIRE((*merged)->outputs().size() == 1);
    CHECK((*merged)->value((*merged)->outputs()[0]).name == "blazeface_rows");

    const Shape input_shape = model.graph->value(model.graph->inputs()[0]).desc.shape;
    Tensor input = Tensor::empty(DType::kF32, input_shape);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> pixel(-1.0f, 1.0f);
    for (int64_t i = 0; i < input.numel(); ++i) input.data<float>()[i] = pixel(rng);
    Result<Executor> original = Executor::create(model.graph, ExecutorOptions{});
    Result<Executor> rows = Executor::create(*merged, ExecutorOptions{});
    REQUIRE(original.is_ok());
    REQUIRE(rows.is_ok());
    Result<std::vector<Tensor>> heads = original->run(std::span<const Tensor>(&input, 1));
    Result<std::vector<Tensor>> together = rows->run(std::span<const Tensor>(&input, 1));
    REQUIRE(heads.is_ok());
    REQUIRE(together.is_ok());
    const Tensor& matrix = (*together)[0];
    REQUIRE(matrix.shape() == Shape{1, 896, 17});

    std::vector<Shape> shapes;
    for (const Tensor& t : *heads) shapes.push_back(t.shape());
    Result<BlazeFaceOutputs> roles = find_blazeface_outputs(shapes);
    REQUIRE(roles.is_ok());
    int64_t row = 0;
    int64_t mismatches = 0;
    for (size_t head = 0; head < 2; ++head) {
      const Tensor& scores = (*heads)[roles->scores[head]];
      const Tensor& regressors = (*heads)[roles->regressors[head]];
      for (int64_t a = 0; a < scores.dim(1); ++a, ++row) {
        const float* got = matrix.data<float>() + row * 17;
        mismatches += got[0] != scores.data<float>()[a] ? 1 : 0;
        for (int k = 0; k < 16; ++k) mismatches += got[1 + k] != regressors.data<float>()[a * 16 + k] ? 1 : 0;
      }
    }
    CHECK(row == 896);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("merge_blazeface_heads refuses a graph without BlazeFace's outputs") {
  Graph graph;
  graph.inputs().push_back(graph.add_value("in", {DType::kF32, {1, 128, 128, 3}}));
  graph.outputs().push_back(graph.add_value("out", {DType::kF32, {1, 896, 17}}));
  Result<std::shared_ptr<Graph>> merged = merge_blazeface_heads(graph);
  REQUIRE_FALSE(merged.is_ok());
  CHECK(merged.status().message().find("BlazeFace models have 4 outputs") != std::string::npos);
}

TEST_CASE("the BlazeFace row filter keeps every row the CPU scores at or above the threshold") {
  for (const float threshold : {1e-30f, 1e-6f, 0.1f, 0.5f, 0.75f, 0.9f, 0.999f, 0.9999f, 0.99995f, 1.0f}) {
    INFO("threshold ", threshold);
    const std::optional<gpu::RowFilter> filter = blazeface_row_filter(128, threshold, 0.3f, 100);
    REQUIRE(filter.has_value());
    CHECK(filter->output == 0);
    CHECK(filter->column == 0);
    CHECK_FALSE(filter->nms.has_value());
    REQUIRE(filter->anchor_nms.has_value());
    const gpu::RowFilter::AnchorNms& nms = *filter->anchor_nms;
    CHECK(nms.score_threshold == threshold);
    CHECK(nms.max_detections == 100);
    REQUIRE(nms.grids.size() == 2);
    CHECK(nms.grids[1].anchors_per_cell == 6);
    // A row not brought back reads as a logit that never passes.
    CHECK(cpu_score(filter->fill) < threshold);
    CHECK(filter->fill < filter->threshold);
    // Every logit from 64 float steps below the selection's threshold up to where the CPU's score
    // reaches the threshold: none of them may be scored at or above it and left out.
    float logit = filter->threshold;
    for (int step = 0; step < 64; ++step) logit = std::nextafter(logit, -INFINITY);
    int64_t checked = 0;
    for (; logit < filter->threshold; logit = std::nextafter(logit, INFINITY), ++checked) {
      CHECK_MESSAGE(cpu_score(logit) < threshold, "logit ", logit, " scores ", cpu_score(logit));
    }
    CHECK(checked == 64);
    // And not far below: the selection is within 0.02 of the exact logit (or at 9, where the
    // threshold is near 1 and f32 rounding of the sigmoid dominates).
    const double exact = std::log(double{threshold}) - std::log1p(-double{threshold});
    CHECK(filter->threshold >= std::min(exact - 0.02, 9.0));
    CHECK(filter->threshold <= exact);
  }
  // Every row passes: no filter.
  CHECK_FALSE(blazeface_row_filter(128, 0.0f, 0.3f, 100).has_value());
  CHECK_FALSE(blazeface_row_filter(128, 1e-31f, 0.3f, 100).has_value());
}
