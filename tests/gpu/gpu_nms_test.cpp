// NMS on the device after the row filter (runtime/cuda/row_nms_steps.h), through the host
// emulation: on synthetic YOLOX-layout outputs and BlazeFace anchor rows full of overlapping boxes,
// equal scores and rows below the threshold, the rows that come back decode to exactly what the
// CPU's decoding and NMS give on the whole output, and they are only the kept detections' rows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "models/detect/blazeface_decode.h"
#include "runtime/cuda/host_runner.h"
#include "runtime/memory_plan.h"
#include "tests/gpu/gpu_op_cases.h"
#include "tests/gpu/grid_rows.h"

namespace edgefuse::test {
namespace {

struct NmsCase {
  const char* name;
  GridRowsSpec rows;
  NmsSettings nms;
};

void check_case(const NmsCase& c) {
  INFO("case: ", std::string(c.name));
  std::mt19937 rng(static_cast<unsigned>(c.rows.width * 31 + c.nms.max_detections));
  const Tensor input = synthetic_grid_rows(c.rows, c.nms.score_threshold, rng);
  const std::shared_ptr<const Graph> graph = pass_through_graph(input.shape());
  const gpu::RowFilter::GridNms grid{c.rows.width,        c.rows.height,        {8, 16, 32},
                                     c.nms.iou_threshold, c.nms.max_detections, c.nms.per_class};
  const std::vector<Tensor> inputs = {input};
  const gpu::LoweredPlan lowered = lower_for_inputs(
      *graph, inputs, gpu::LoweringOptions{.row_filter = gpu::RowFilter{0, 4, c.nms.score_threshold, grid}});
  REQUIRE(lowered.fallback_count() == 0);
  ThreadPool pool(2);
  Result<std::vector<Tensor>> back = gpu::run_lowered_on_host(*graph, lowered, inputs, &pool);
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  const int64_t rows = input.dim(1), channels = input.dim(2);
  for (int64_t b = 0; b < c.rows.batch; ++b) {
    const std::vector<Detection> want = grid_detections(input, b, c.rows.width, c.rows.height, c.nms);
    const std::vector<Detection> got = grid_detections((*back)[0], b, c.rows.width, c.rows.height, c.nms);
    int64_t selected = 0;
    for (int64_t r = 0; r < rows; ++r) {
      selected += input.data<float>()[(b * rows + r) * channels + 4] >= c.nms.score_threshold ? 1 : 0;
    }
    MESSAGE(std::string(c.name), " [", b, "]: ", selected, " rows selected, ", want.size(), " kept, ",
            rows_back((*back)[0], b), " rows back");
    CHECK(want.size() > 1);
    // The same rows, so the CPU makes the same boxes from them, bit for bit.
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      INFO("detection ", k);
      CHECK(got[k].class_id == want[k].class_id);
      CHECK(got[k].score == want[k].score);
      CHECK(got[k].box.x1 == want[k].box.x1);
      CHECK(got[k].box.y2 == want[k].box.y2);
    }
    // Only the kept rows left the device, unless more rows were selected than it suppresses among.
    const int64_t expected_back = selected > gpu::kMaxNmsCandidates ? selected : static_cast<int64_t>(want.size());
    CHECK(rows_back((*back)[0], b) == expected_back);
  }
}

TEST_CASE("NMS on the device keeps exactly the CPU's detections, and only their rows come back") {
  check_case({"128x128, 3 classes, batch 2", {.batch = 2, .width = 128, .height = 128}, {}});
  check_case({"at most 5 kept", {.width = 128, .height = 96}, {.max_detections = 5}});
  check_case({"class-agnostic, one class", {.width = 96, .height = 128, .classes = 1}, {.per_class = false}});
  check_case({"a strict IoU threshold", {.width = 128, .height = 128, .classes = 2}, {.iou_threshold = 0.1f}});
  // 3549 candidates: every word of a 3552-wide mask, and word boundaries inside runs of overlaps.
  check_case({"416x416, every row selected", {.width = 416, .height = 416, .selected_fraction = 1.0f}, {}});
}

TEST_CASE("above the device's candidate capacity every selected row comes back, and the CPU suppresses") {
  // 544x544: 6069 cells, all selected: more than kMaxNmsCandidates.
  check_case({"544x544, every row selected", {.width = 544, .height = 544, .selected_fraction = 1.0f}, {}});
}

// The filter the detector sets for YOLOv5 (objectness) and YOLOv8 (channel-major, best class).
gpu::RowFilter box_filter(bool objectness, const NmsSettings& nms) {
  return gpu::RowFilter{
      .output = 0,
      .column = 4,
      .threshold = nms.score_threshold,
      .box_nms = gpu::RowFilter::BoxNms{objectness, nms.iou_threshold, nms.max_detections, nms.per_class},
      .channel_major = !objectness,
      .column_end = objectness ? 0 : gpu::RowFilter::kThroughLastColumn};
}

struct BoxCase {
  const char* name;
  BoxRowsSpec rows;
  NmsSettings nms;
};

void check_box_case(const BoxCase& c) {
  INFO("case: ", std::string(c.name));
  std::mt19937 rng(static_cast<unsigned>(c.rows.rows * 3 + c.nms.max_detections));
  const Tensor output = synthetic_box_rows(c.rows, c.nms.score_threshold, rng);
  const std::shared_ptr<const Graph> graph = pass_through_graph(output.shape());
  const std::vector<Tensor> inputs = {output};
  const gpu::LoweredPlan lowered =
      lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.row_filter = box_filter(c.rows.objectness, c.nms)});
  REQUIRE(lowered.fallback_count() == 0);
  ThreadPool pool(2);
  Result<std::vector<Tensor>> back = gpu::run_lowered_on_host(*graph, lowered, inputs, &pool);
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  REQUIRE((*back)[0].shape() == output.shape());
  for (int64_t b = 0; b < c.rows.batch; ++b) {
    const std::vector<Detection> want = box_detections(output, b, c.rows.objectness, c.nms);
    const std::vector<Detection> got = box_detections((*back)[0], b, c.rows.objectness, c.nms);
    // Rows the filter selects: YOLOv5's by objectness, YOLOv8's by their best class score.
    const bool v5 = c.rows.objectness;
    const int64_t rows = v5 ? output.dim(1) : output.dim(2), channels = v5 ? output.dim(2) : output.dim(1);
    const float* element = output.data<float>() + b * rows * channels;
    int64_t selected = 0;
    for (int64_t r = 0; r < rows; ++r) {
      float best = element[v5 ? r * channels + 4 : 4 * rows + r];
      for (int64_t ch = 5; !v5 && ch < channels; ++ch) best = std::max(best, element[ch * rows + r]);
      selected += best >= c.nms.score_threshold ? 1 : 0;
    }
    MESSAGE(std::string(c.name), " [", b, "]: ", want.size(), " kept, ",
            box_rows_back((*back)[0], b, c.rows.objectness), " rows back");
    CHECK(want.size() > 1);
    // The same rows, so the CPU decodes the same boxes from them, bit for bit.
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      INFO("detection ", k);
      CHECK(got[k].class_id == want[k].class_id);
      CHECK(got[k].score == want[k].score);
      CHECK(got[k].box.x1 == want[k].box.x1);
      CHECK(got[k].box.y2 == want[k].box.y2);
    }
    // Only the kept rows left the device, unless more rows were selected than it suppresses among.
    if (selected <= gpu::kMaxNmsCandidates) {
      CHECK(box_rows_back((*back)[0], b, c.rows.objectness) == static_cast<int64_t>(want.size()));
    }
  }
}

TEST_CASE("NMS on the device keeps exactly the CPU's detections from YOLOv5 rows, and only their rows come back") {
  check_box_case({"batch 2, 3 classes", {.batch = 2, .rows = 1008}, {}});
  check_box_case({"at most 5 kept", {.rows = 2000, .classes = 4}, {.max_detections = 5}});
  check_box_case({"class-agnostic, one class", {.rows = 1008, .classes = 1}, {.per_class = false}});
  check_box_case({"a strict IoU threshold", {.rows = 1500, .classes = 2}, {.iou_threshold = 0.1f}});
}

TEST_CASE("NMS on the device keeps exactly the CPU's detections from YOLOv8's channel-major output") {
  check_box_case({"batch 2, 3 classes", {.batch = 2, .rows = 2100, .objectness = false}, {}});
  check_box_case(
      {"80 classes, at most 7 kept", {.rows = 2100, .classes = 80, .objectness = false}, {.max_detections = 7}});
  check_box_case(
      {"class-agnostic, one class", {.rows = 1000, .classes = 1, .objectness = false}, {.per_class = false}});
  // 5000 rows all selected: more than kMaxNmsCandidates, so every selected row comes back.
  check_box_case(
      {"every row selected, above the capacity", {.rows = 5000, .objectness = false, .selected_fraction = 1.0f}, {}});
}

TEST_CASE("selected rows that all score below the threshold come back as none") {
  // YOLOv5 rows whose objectness passes the filter but whose score (objectness x best class) does
  // not: the device keeps no candidate, and no row comes back.
  const NmsSettings nms{.score_threshold = 0.3f};
  std::mt19937 rng(21);
  Tensor output = synthetic_box_rows({.batch = 2, .rows = 500, .selected_fraction = 0.5f}, nms.score_threshold, rng);
  float* data = output.data<float>();
  for (int64_t r = 0; r < 2 * 500; ++r) {
    for (int64_t c = 5; c < output.dim(2); ++c) data[r * output.dim(2) + c] *= 0.25f;  // every score below 0.25
  }
  const std::shared_ptr<const Graph> graph = pass_through_graph(output.shape());
  const std::vector<Tensor> inputs = {output};
  const gpu::LoweredPlan lowered =
      lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.row_filter = box_filter(true, nms)});
  Result<std::vector<Tensor>> back = gpu::run_lowered_on_host(*graph, lowered, inputs);
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  for (int64_t b = 0; b < 2; ++b) {
    CHECK(box_detections(output, b, true, nms).empty());
    CHECK(box_rows_back((*back)[0], b, true) == 0);
  }
}

TEST_CASE("NMS on the device refuses box outputs laid out otherwise than YOLOv5's rows and YOLOv8's columns") {
  const auto lower = [](const Shape& shape, gpu::RowFilter filter) {
    const std::shared_ptr<const Graph> graph = pass_through_graph(shape);
    const std::vector<TensorDesc> descs = {TensorDesc{DType::kF32, shape}};
    Result<MemoryPlan> plan = plan_memory(*graph, descs, gpu::gpu_plan_options());
    REQUIRE(plan.is_ok());
    return gpu::lower_plan(*graph, std::move(*plan), gpu::LoweringOptions{.row_filter = filter}).status();
  };
  const NmsSettings nms;
  CHECK(lower({1, 100, 8}, box_filter(true, nms)).is_ok());
  CHECK(lower({1, 7, 100}, box_filter(false, nms)).is_ok());
  gpu::RowFilter v5_wrong_column = box_filter(true, nms);
  v5_wrong_column.column = 5;
  CHECK(lower({1, 100, 8}, v5_wrong_column).message().find("objectness in column 4") != std::string::npos);
  gpu::RowFilter v8_one_class = box_filter(false, nms);  // the filter must take the best class
  v8_one_class.column_end = 5;
  CHECK(lower({1, 7, 100}, v8_one_class).message().find("got columns 4 to 5 of 7 channels") != std::string::npos);
  CHECK(lower({1, 4, 100}, box_filter(false, nms)).message().find("column 4 is outside the 4 channels") !=
        std::string::npos);
  gpu::RowFilter past_the_end = box_filter(true, nms);
  past_the_end.column_end = 9;
  CHECK(lower({1, 100, 8}, past_the_end).message().find("columns 4 to 9 of 8 channels") != std::string::npos);
  gpu::RowFilter grid_on_columns = box_filter(false, nms);
  grid_on_columns.box_nms.reset();
  grid_on_columns.nms = gpu::RowFilter::GridNms{64, 64, {8, 16, 32}, 0.45f, 0, true};
  CHECK(lower({1, 7, 84}, grid_on_columns).message().find("not a channel-major output") != std::string::npos);
  gpu::RowFilter two = box_filter(true, nms);
  two.nms = gpu::RowFilter::GridNms{64, 64, {8, 16, 32}, 0.45f, 0, true};
  CHECK(lower({1, 84, 8}, two).message().find("more than one of") != std::string::npos);
}

constexpr float kLeftBehind = std::numeric_limits<float>::lowest();  // the logit of rows not brought back

// BlazeFace's anchor grids and the filter the detector sets (models/detector/blazeface_rows.cpp):
// the threshold's logit less 0.01 selects, the device scores each row as the CPU does.
gpu::RowFilter anchor_filter(int input_size, const NmsSettings& nms) {
  gpu::RowFilter::AnchorNms anchors{
      input_size, {{16, 2}, {8, 6}}, nms.score_threshold, nms.iou_threshold, nms.max_detections};
  const double p = nms.score_threshold;
  return gpu::RowFilter{0, 0, static_cast<float>(std::log(p) - std::log1p(-p) - 0.01), {}, anchors, kLeftBehind};
}

struct AnchorCase {
  const char* name;
  int64_t batch;
  int input_size;
  float selected_fraction;
  NmsSettings nms;
};

void check_anchor_case(const AnchorCase& c) {
  INFO("case: ", std::string(c.name));
  std::mt19937 rng(static_cast<unsigned>(c.input_size * 7 + c.nms.max_detections));
  const Tensor input = synthetic_anchor_rows(c.batch, c.input_size, c.nms.score_threshold, c.selected_fraction, rng);
  const std::shared_ptr<const Graph> graph = pass_through_graph(input.shape());
  const std::vector<Tensor> inputs = {input};
  const gpu::LoweredPlan lowered =
      lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.row_filter = anchor_filter(c.input_size, c.nms)});
  REQUIRE(lowered.fallback_count() == 0);
  ThreadPool pool(2);
  Result<std::vector<Tensor>> back = gpu::run_lowered_on_host(*graph, lowered, inputs, &pool);
  REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  for (int64_t b = 0; b < c.batch; ++b) {
    const std::vector<Detection> want = anchor_detections(input, b, c.input_size, c.nms);
    const std::vector<Detection> got = anchor_detections((*back)[0], b, c.input_size, c.nms);
    MESSAGE(std::string(c.name), " [", b, "]: ", want.size(), " kept, ", rows_back((*back)[0], b, 0, kLeftBehind),
            " rows back");
    CHECK(want.size() > 1);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      INFO("detection ", k);
      CHECK(got[k].score == want[k].score);
      CHECK(got[k].box.x1 == want[k].box.x1);
      CHECK(got[k].box.y2 == want[k].box.y2);
      CHECK(got[k].keypoints[5].x == want[k].keypoints[5].x);
    }
    CHECK(rows_back((*back)[0], b, 0, kLeftBehind) == static_cast<int64_t>(want.size()));
  }
}

TEST_CASE("NMS on the device keeps exactly the CPU's faces from BlazeFace rows, and only their rows come back") {
  check_anchor_case({"256, batch 2", 2, 256, 0.3f, {.score_threshold = 0.5f, .iou_threshold = 0.3f}});
  check_anchor_case({"128, at most 4 kept", 1, 128, 0.3f, {.score_threshold = 0.75f, .max_detections = 4}});
  check_anchor_case({"a low threshold, every row a candidate", 1, 128, 1.0f, {.score_threshold = 0.01f}});
  check_anchor_case({"a high threshold", 1, 256, 0.2f, {.score_threshold = 0.9999f, .iou_threshold = 0.3f}});
}

TEST_CASE("NMS on the device refuses rows that are not laid out as BlazeFace anchors") {
  const std::shared_ptr<const Graph> graph = pass_through_graph({1, 896, 17});
  const std::vector<TensorDesc> descs = {TensorDesc{DType::kF32, {1, 896, 17}}};
  const auto lower = [&](gpu::RowFilter filter) {
    Result<MemoryPlan> plan = plan_memory(*graph, descs, gpu::gpu_plan_options());
    REQUIRE(plan.is_ok());
    return gpu::lower_plan(*graph, std::move(*plan), gpu::LoweringOptions{.row_filter = filter}).status();
  };
  const gpu::RowFilter good = anchor_filter(128, {.score_threshold = 0.5f});
  CHECK(lower(good).is_ok());
  gpu::RowFilter no_fill = good;  // a logit threshold below 0 lets zero rows pass
  no_fill.fill = 0;
  CHECK(lower(no_fill).message().find("is not above the fill 0") != std::string::npos);
  gpu::RowFilter wrong_column = good;
  wrong_column.column = 1;
  CHECK(lower(wrong_column).message().find("score logit in column 0") != std::string::npos);
  gpu::RowFilter one_grid = good;
  one_grid.anchor_nms.value().grids.pop_back();
  CHECK(lower(one_grid).message().find("the anchor grids have 512 anchors, the output has 896 rows") !=
        std::string::npos);
  gpu::RowFilter empty_grid = good;
  empty_grid.anchor_nms.value().grids[1].anchors_per_cell = 0;
  CHECK(lower(empty_grid).message().find("8 cells with 0 anchors") != std::string::npos);
}

TEST_CASE("NMS on the device refuses outputs that are not laid out as YOLOX grids") {
  const std::shared_ptr<const Graph> graph = pass_through_graph({1, 84, 8});
  const std::vector<TensorDesc> descs = {TensorDesc{DType::kF32, {1, 84, 8}}};
  const auto lower = [&](gpu::RowFilter filter) {
    Result<MemoryPlan> plan = plan_memory(*graph, descs, gpu::gpu_plan_options());
    REQUIRE(plan.is_ok());
    return gpu::lower_plan(*graph, std::move(*plan), gpu::LoweringOptions{.row_filter = filter}).status();
  };
  const gpu::RowFilter::GridNms grid{64, 64, {8, 16, 32}, 0.45f, 0, true};  // 64 + 16 + 4 = 84 cells
  CHECK(lower({0, 4, 0.3f, grid}).is_ok());
  gpu::RowFilter::GridNms wrong_size = grid;
  wrong_size.input_width = 72;
  CHECK(lower({0, 4, 0.3f, wrong_size}).message().find("has 92 grid cells, the output has 84 rows") !=
        std::string::npos);
  CHECK(lower({0, 3, 0.3f, grid}).message().find("objectness in column 4") != std::string::npos);
  gpu::RowFilter::GridNms no_levels = grid;
  no_levels.strides.clear();
  CHECK(lower({0, 4, 0.3f, no_levels}).message().find("0 grid levels") != std::string::npos);
}

}  // namespace
}  // namespace edgefuse::test
