// The real models through the GPU backend's lowering, emulated on the host: every node of the
// fused YOLOX-nano and BlazeFace graphs has a GPU kernel (no CPU fallback), and the emulated
// outputs match the CPU executor's.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <random>

#include <opencv2/imgcodecs.hpp>

#include "fusion/pass_manager.h"
#include "models/detect/nms.h"
#include "models/detect/yolox_decode.h"
#include "models/detector/blazeface_rows.h"
#include "models/detector/preprocess.h"
#include "models/detector/yolo_row_filter.h"
#include "models/onnx/onnx_importer.h"
#include "runtime/cuda/cudnn_conv_shape.h"
#include "runtime/cuda/fp16_calibration.h"
#include "runtime/cuda/host_runner.h"
#include "runtime/executor.h"
#include "tests/fusion/fusion_test_graphs.h"
#include "tests/gpu/gpu_op_cases.h"
#include "tests/gpu/grid_rows.h"
#include "tests/models/yolo_architectures.h"
#include "tests/support/assets.h"
#include "tests/support/numerics.h"

namespace edgefuse::test {
namespace {

std::shared_ptr<const Graph> fused(Result<std::shared_ptr<Graph>> graph) {
  REQUIRE_MESSAGE(graph.is_ok(), graph.status().to_string());
  Result<std::vector<PassReport>> reports = optimize_graph(**graph, cuda_fusion_options());
  REQUIRE_MESSAGE(reports.is_ok(), reports.status().to_string());
  return *graph;
}

std::shared_ptr<const Graph> fused_model(const std::filesystem::path& path) {
  return fused(import_onnx_file(path.string()));
}

// fp32: the emulated outputs within 1e-4 (relative L2) of the CPU executor's; fp16 storage: 1e-2.
void check_graph(const std::string& name, const std::shared_ptr<const Graph>& graph, bool fp16) {
  INFO(name, fp16 ? " fp16" : " fp32");
  std::mt19937 rng(5);
  const std::vector<Tensor> inputs = random_inputs_for(*graph, rng);
  const auto start = std::chrono::steady_clock::now();
  const gpu::LoweredPlan lowered = lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.fp16_storage = fp16});
  const double lowering_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const std::string& line : lowered.describe_fallbacks(*graph)) MESSAGE("CPU fallback: ", line);
  CHECK(lowered.fallback_count() == 0);
  MESSAGE(name, ": ", graph->nodes().size(), " nodes -> ", lowered.steps.size(), " GPU steps in ", lowering_ms,
          " ms (plan and lower), arena ", lowered.plan.arena_bytes, " bytes, constants ", lowered.constants.size(),
          " bytes");

  Result<Executor> cpu = Executor::create(graph, ExecutorOptions{});
  REQUIRE_MESSAGE(cpu.is_ok(), cpu.status().to_string());
  Result<std::vector<Tensor>> expected = cpu->run(inputs);
  REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
  ThreadPool pool(ThreadPool::hardware_threads());
  Result<std::vector<Tensor>> emulated = gpu::run_lowered_on_host(*graph, lowered, inputs, &pool);
  REQUIRE_MESSAGE(emulated.is_ok(), emulated.status().to_string());
  check_gpu_outputs(*emulated, *expected, false, fp16 ? 1e-2 : 1e-4);
}

void check_model(const std::filesystem::path& path, bool fp16) {
  check_graph(path.filename().string(), fused_model(path), fp16);
}

TEST_CASE("YOLOX-nano, fused, lowers to GPU kernels only and matches the CPU executor") {
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  check_model(path, false);  // fp16 is checked on real images below: noise inputs are far out of range
}

TEST_CASE("YOLOv5- and YOLOv8-shaped networks, fused, lower to GPU kernels only and match the CPU executor") {
  // Their heads' ops (rank-5 views and transposes, Pow, the DFL's Softmax over a middle axis) have
  // GPU kernels too (tests/models/yolo_architectures.h; small, random weights).
  for (const YoloHead head : {YoloHead::kYolov5, YoloHead::kYolov8}) {
    const std::string name = head == YoloHead::kYolov5 ? "YOLOv5-shaped" : "YOLOv8-shaped";
    const std::shared_ptr<const Graph> graph = fused(import_onnx_bytes(build_yolo_model(small_yolo(head)).bytes, ""));
    check_graph(name, graph, false);
    check_graph(name, graph, true);
  }
}

TEST_CASE("YOLOv5- and YOLOv8-shaped networks with the detector's row filter: only the kept rows come back") {
  for (const YoloHead head : {YoloHead::kYolov5, YoloHead::kYolov8}) {
    const bool v5 = head == YoloHead::kYolov5;
    INFO(std::string(v5 ? "YOLOv5-shaped" : "YOLOv8-shaped"));
    const std::shared_ptr<const Graph> graph = fused(import_onnx_bytes(build_yolo_model(small_yolo(head)).bytes, ""));
    std::mt19937 rng(9);
    const std::vector<Tensor> inputs = random_inputs_for(*graph, rng);
    ThreadPool pool(2);
    Result<std::vector<Tensor>> whole =
        gpu::run_lowered_on_host(*graph, lower_for_inputs(*graph, inputs), inputs, &pool);
    REQUIRE_MESSAGE(whole.is_ok(), whole.status().to_string());
    const Tensor& output = (*whole)[0];
    // A threshold that about 3 % of the rows' scores (random weights) reach: the best class's,
    // times the objectness for YOLOv5.
    const int64_t rows = v5 ? output.dim(1) : output.dim(2), channels = v5 ? output.dim(2) : output.dim(1);
    std::vector<float> scores;
    for (int64_t r = 0; r < rows; ++r) {
      const auto at = [&](int64_t c) { return output.data<float>()[v5 ? r * channels + c : c * rows + r]; };
      float best = at(v5 ? 5 : 4);
      for (int64_t c = v5 ? 6 : 5; c < channels; ++c) best = std::max(best, at(c));
      scores.push_back(v5 ? at(4) * best : best);
    }
    std::sort(scores.begin(), scores.end());
    const NmsSettings settings{.score_threshold = scores[scores.size() * 97 / 100]};
    const int size = static_cast<int>(inputs[0].dim(3));
    const std::optional<gpu::RowFilter> filter =
        yolo_row_filter(v5 ? DetectorFamily::kYolov5 : DetectorFamily::kYolov8, size, size, settings.score_threshold,
                        settings.iou_threshold, settings.max_detections);
    REQUIRE(filter.has_value());
    const gpu::LoweredPlan filtered = lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.row_filter = filter});
    CHECK(filtered.fallback_count() == 0);
    Result<std::vector<Tensor>> kept = gpu::run_lowered_on_host(*graph, filtered, inputs, &pool);
    REQUIRE_MESSAGE(kept.is_ok(), kept.status().to_string());
    const std::vector<Detection> want = box_detections(output, 0, v5, settings);
    const std::vector<Detection> got = box_detections((*kept)[0], 0, v5, settings);
    MESSAGE(std::string(v5 ? "YOLOv5" : "YOLOv8"), "-shaped, ", rows, " rows: ", want.size(), " kept, ",
            box_rows_back((*kept)[0], 0, v5), " rows back");
    CHECK(want.size() > 1);
    CHECK(box_rows_back((*kept)[0], 0, v5) == static_cast<int64_t>(want.size()));
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      CHECK(got[k].class_id == want[k].class_id);
      CHECK(got[k].score == want[k].score);
      CHECK(got[k].box.x1 == want[k].box.x1);
    }
  }
}

TEST_CASE("YOLOX-nano in fp16 storage: every Conv GEMM but the stem, which reads the image, may use tensor cores") {
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  const std::shared_ptr<const Graph> graph = fused_model(path);
  std::mt19937 rng(6);
  const std::vector<Tensor> inputs = random_inputs_for(*graph, rng);
  const gpu::LoweredPlan lowered =
      lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.fp16_storage = true, .tensor_cores = true});
  int gemm = 0, tensor_cores = 0;
  std::string f32_gemms;
  for (const gpu::LoweredStep& step : lowered.steps) {
    std::visit(
        [&](const auto& p) {
          using Step = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<Step, gpu::PointwiseConvStep> || std::is_same_v<Step, gpu::ConvGemmStep>) {
            ++gemm;
            tensor_cores += p.tensor_cores ? 1 : 0;
            if (!p.tensor_cores) f32_gemms += " " + graph->node(step.node).name;
          }
        },
        step.params);
  }
  MESSAGE("YOLOX-nano: ", tensor_cores, " of ", gemm, " Conv GEMM steps on tensor cores; f32:", f32_gemms);
  CHECK(gemm == 83);
  CHECK(tensor_cores == gemm - 1);
}

// Steps of YOLOX-nano's fp32 plan, bound as the device executor binds them, that cuBLAS may compute.
TEST_CASE(
    "YOLOX-nano: cuBLAS may run every 1x1 Conv in fp32 (inputs and residuals outside the outputs), none in fp16") {
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  const std::shared_ptr<const Graph> graph = fused_model(path);
  std::mt19937 rng(16);
  const std::vector<Tensor> inputs = random_inputs_for(*graph, rng);
  for (bool fp16 : {false, true}) {
    INFO("fp16 storage: ", fp16);
    const gpu::LoweredPlan lowered = lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.fp16_storage = fp16});
    const HostBoundPlan bound_plan(lowered, inputs);
    const gpu::Bindings& bindings = bound_plan.bindings;
    int pointwise = 0, eligible = 0, residuals_in_place = 0;
    for (const gpu::LoweredStep& step : lowered.steps) {
      if (!std::holds_alternative<gpu::PointwiseConvStep>(step.params)) continue;
      const auto bound = std::get<gpu::PointwiseConvStep>(gpu::bind_step(step, bindings));
      ++pointwise;
      eligible += gpu::library_gemm_eligible(bound) ? 1 : 0;
      residuals_in_place += bound.in[3] != nullptr && bound.in[3] == bound.out ? 1 : 0;
    }
    MESSAGE("YOLOX-nano ", fp16 ? "fp16" : "fp32", ": cuBLAS may run ", eligible, " of ", pointwise,
            " 1x1 Conv steps (", residuals_in_place, " write over their residual)");
    CHECK(pointwise == 82);
    // fp16 storage: only the steps calibration would keep f32; with every activation in fp16, none.
    CHECK(eligible == (fp16 ? 0 : pointwise - residuals_in_place));
  }
}

// The windowed group-1 Convs (ConvGemmStep) of each model's plan that cuDNN may compute, in fp32:
// YOLOX-nano's stem (6x6 stride 2 after the Focus fold, reading the input channels-last), but not
// BlazeFace's 5x5 stride-2 first Conv, padded as TensorFlow's SAME (1 before, 2 after), which
// cuDNN's legacy API cannot express. None when their operands are stored in fp16.
TEST_CASE("the models' windowed Convs: cuDNN may run YOLOX-nano's stem in fp32, not in fp16; not BlazeFace's") {
  ASSET_OR_SKIP(yolox, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(front, "models/blazeface_front_128.onnx");
  ASSET_OR_SKIP(back, "models/blazeface_back_256.onnx");
  for (const std::filesystem::path& path : {yolox, front, back}) {
    const std::shared_ptr<const Graph> graph = fused_model(path);
    std::mt19937 rng(17);
    const std::vector<Tensor> inputs = random_inputs_for(*graph, rng);
    for (bool fp16 : {false, true}) {
      INFO(path.filename().string(), ", fp16 storage: ", fp16);
      const gpu::LoweredPlan lowered = lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.fp16_storage = fp16});
      const HostBoundPlan bound_plan(lowered, inputs);
      int windowed = 0, eligible = 0;
      for (const gpu::LoweredStep& step : lowered.steps) {
        if (!std::holds_alternative<gpu::ConvGemmStep>(step.params)) continue;
        ++windowed;
        eligible += gpu::cudnn_conv_eligible(std::get<gpu::ConvGemmStep>(gpu::bind_step(step, bound_plan.bindings)));
      }
      MESSAGE(path.filename().string(), fp16 ? " fp16" : " fp32", ": cuDNN may run ", eligible, " of ", windowed,
              " windowed Conv steps");
      CHECK(windowed == 1);
      CHECK(eligible == (fp16 || path != yolox ? 0 : 1));
    }
  }
}

TEST_CASE("BlazeFace front and back, fused, lower to GPU kernels only and match the CPU executor") {
  ASSET_OR_SKIP(front, "models/blazeface_front_128.onnx");
  ASSET_OR_SKIP(back, "models/blazeface_back_256.onnx");
  check_model(front, false);
  check_model(back, false);
  check_model(front, true);
  check_model(back, true);
}

TEST_CASE(
    "BlazeFace's merged rows with decoding and NMS on the device: the CPU's faces, and only their rows come back") {
  ThreadPool pool(ThreadPool::hardware_threads());
  struct Model {
    const char* name;
    int size;
    float score_threshold;  // the front model, for faces close to the camera, scores these photos low
  };
  for (const Model& model :
       {Model{"models/blazeface_back_256.onnx", 256, 0.2f}, Model{"models/blazeface_front_128.onnx", 128, 0.01f}}) {
    const auto [name, size, score_threshold] = model;
    ASSET_OR_SKIP(path, name);
    INFO(std::string(name));
    const NmsSettings settings{.score_threshold = score_threshold, .iou_threshold = 0.3f, .max_detections = 100};
    Result<std::shared_ptr<Graph>> merged = merge_blazeface_heads(*fused_model(path));
    REQUIRE_MESSAGE(merged.is_ok(), merged.status().to_string());
    const std::shared_ptr<const Graph> graph = *merged;
    const std::optional<gpu::RowFilter> filter =
        blazeface_row_filter(size, settings.score_threshold, settings.iou_threshold, settings.max_detections);
    REQUIRE(filter.has_value());
    Result<Executor> cpu = Executor::create(graph, ExecutorOptions{});
    REQUIRE_MESSAGE(cpu.is_ok(), cpu.status().to_string());
    std::optional<gpu::LoweredPlan> lowered;
    int64_t faces = 0;
    for (const char* image_name : {"person.jpg", "horses.jpg", "kite.jpg"}) {
      ASSET_OR_SKIP(image_path, std::string("data/images/") + image_name);
      INFO("image ", std::string(image_name));
      const cv::Mat image = cv::imread(image_path.string());
      REQUIRE_FALSE(image.empty());
      Result<PreprocessedImage> input = preprocess_blazeface(image, size);
      REQUIRE_MESSAGE(input.is_ok(), input.status().to_string());
      const std::vector<Tensor> inputs = {input->input};
      if (!lowered) lowered = lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.row_filter = filter});
      CHECK(lowered->fallback_count() == 0);
      Result<std::vector<Tensor>> expected = cpu->run(inputs);
      REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
      Result<std::vector<Tensor>> back = gpu::run_lowered_on_host(*graph, *lowered, inputs, &pool);
      REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
      const std::vector<Detection> want = anchor_detections((*expected)[0], 0, size, settings);
      const std::vector<Detection> got = anchor_detections((*back)[0], 0, size, settings);
      const int64_t rows = rows_back((*back)[0], 0, 0, filter->fill);
      MESSAGE(std::string(name), " ", std::string(image_name), ": ", want.size(), " faces, ", rows,
              " of 896 rows back");
      CHECK(rows == static_cast<int64_t>(want.size()));
      REQUIRE(got.size() == want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        CHECK(iou(got[k].box, want[k].box) >= 0.999f);
        CHECK(std::abs(got[k].score - want[k].score) <= 1e-4f);
        CHECK(std::abs(got[k].keypoints[2].x - want[k].keypoints[2].x) <= 0.05f);
      }
      faces += static_cast<int64_t>(want.size());
    }
    CHECK(faces >= 3);
  }
}

std::vector<Detection> yolox_detections(const Tensor& output) {
  DecodeResult decoded = decode_yolox(output.data<float>(), output.dim(1), output.dim(2), 416, 416, 0.3f);
  REQUIRE_MESSAGE(decoded.ok(), decoded.error);
  return nms_per_class(std::move(decoded.detections), 0.45f, 300);
}

TEST_CASE(
    "YOLOX-nano in fp16 storage, and with only the rows above the threshold brought back, finds the same objects as "
    "the CPU") {
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  const std::shared_ptr<const Graph> graph = fused_model(path);
  Result<Executor> cpu = Executor::create(graph, ExecutorOptions{});
  REQUIRE_MESSAGE(cpu.is_ok(), cpu.status().to_string());
  ThreadPool pool(ThreadPool::hardware_threads());
  std::optional<gpu::LoweredPlan> lowered;
  std::optional<gpu::LoweredPlan> filtered;    // fp32, only rows with objectness >= 0.3 come back
  std::optional<gpu::LoweredPlan> suppressed;  // and NMS on the device: only the kept rows come back
  for (const char* name : {"dog.jpg", "person.jpg", "giraffe.jpg", "horses.jpg"}) {
    ASSET_OR_SKIP(image_path, std::string("data/images/") + name);
    INFO("image ", std::string(name));
    const cv::Mat image = cv::imread(image_path.string());
    REQUIRE_FALSE(image.empty());
    Result<PreprocessedImage> input = preprocess_yolox(image, 416, 416);
    REQUIRE_MESSAGE(input.is_ok(), input.status().to_string());
    const std::vector<Tensor> inputs = {input->input};
    if (!lowered) lowered = lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.fp16_storage = true});
    if (!filtered) {
      filtered = lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.row_filter = gpu::RowFilter{0, 4, 0.3f}});
      const gpu::RowFilter::GridNms nms{416, 416, {8, 16, 32}, 0.45f, 300, true};
      suppressed =
          lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.row_filter = gpu::RowFilter{0, 4, 0.3f, nms}});
    }
    Result<std::vector<Tensor>> expected = cpu->run(inputs);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
    Result<std::vector<Tensor>> half = gpu::run_lowered_on_host(*graph, *lowered, inputs, &pool);
    REQUIRE_MESSAGE(half.is_ok(), half.status().to_string());
    // Measured 0.2-1.4 %: one early layer of YOLOX-nano amplifies the rounding of its input many
    // times, so storing every activation in fp16 misses the 1e-2 goal on some photos; the layers
    // calibration keeps in f32 bring it within (next test). The detections agree either way.
    const ErrorStats error = compare_tensors((*half)[0], (*expected)[0]);
    MESSAGE(std::string(name), ": fp16 storage vs f32: ", error.to_string());
    CHECK(error.relative_l2 <= 2.5e-2);
    const std::vector<Detection> want = yolox_detections((*expected)[0]);

    // The row filter: the same detections from a fraction of the rows.
    Result<std::vector<Tensor>> sparse = gpu::run_lowered_on_host(*graph, *filtered, inputs, &pool);
    REQUIRE_MESSAGE(sparse.is_ok(), sparse.status().to_string());
    const Tensor& rows = (*sparse)[0];
    const int64_t kept = rows_back(rows, 0);
    MESSAGE(std::string(name), ": row filter brought back ", kept, " of ", rows.dim(1), " rows");
    CHECK(kept < rows.dim(1) / 20);
    const std::vector<Detection> from_rows = yolox_detections(rows);
    REQUIRE(from_rows.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      CHECK(from_rows[k].class_id == want[k].class_id);
      CHECK(iou(from_rows[k].box, want[k].box) >= 0.999f);
      CHECK(std::abs(from_rows[k].score - want[k].score) <= 1e-4f);
    }
    // NMS on the device too: the rows of the kept detections, and nothing else, come back.
    Result<std::vector<Tensor>> kept_rows = gpu::run_lowered_on_host(*graph, *suppressed, inputs, &pool);
    REQUIRE_MESSAGE(kept_rows.is_ok(), kept_rows.status().to_string());
    const int64_t nonzero = rows_back((*kept_rows)[0], 0);
    MESSAGE(std::string(name), ": with NMS on the device ", nonzero, " rows came back for ", want.size(), " objects");
    CHECK(nonzero == static_cast<int64_t>(want.size()));
    const std::vector<Detection> from_kept = yolox_detections((*kept_rows)[0]);
    REQUIRE(from_kept.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      CHECK(from_kept[k].class_id == want[k].class_id);
      CHECK(iou(from_kept[k].box, want[k].box) >= 0.999f);
    }

    const std::vector<Detection> got = yolox_detections((*half)[0]);
    MESSAGE(std::string(name), ": ", want.size(), " objects in f32, ", got.size(), " in fp16 storage");
    CHECK(!want.empty());
    REQUIRE(got.size() == want.size());
    for (const Detection& w : want) {
      const auto match = std::find_if(got.begin(), got.end(), [&](const Detection& g) {
        return g.class_id == w.class_id && iou(g.box, w.box) >= 0.95f && std::abs(g.score - w.score) <= 0.02f;
      });
      CHECK_MESSAGE(match != got.end(), "class ", w.class_id, " score ", w.score, " has no fp16 match");
    }
  }
}

TEST_CASE(
    "YOLOX-nano in fp16 storage, with the layers calibration keeps in f32, stays within 1e-2 of f32 on every shared "
    "photo") {
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(photo, "data/images/dog.jpg");
  const std::shared_ptr<const Graph> graph = fused_model(path);
  Result<Executor> cpu = Executor::create(graph, ExecutorOptions{});
  REQUIRE_MESSAGE(cpu.is_ok(), cpu.status().to_string());
  ThreadPool pool(ThreadPool::hardware_threads());
  const auto photo_input = [](const char* name) {
    const std::filesystem::path image_path = assets_dir() / "data/images" / name;
    const cv::Mat image = cv::imread(image_path.string());
    REQUIRE_FALSE(image.empty());
    Result<PreprocessedImage> input = preprocess_yolox(image, 416, 416);
    REQUIRE_MESSAGE(input.is_ok(), input.status().to_string());
    return std::vector<Tensor>{input->input};
  };
  const auto emulate = [&](const std::vector<Tensor>& inputs, const std::vector<uint8_t>& f32_values) {
    const gpu::LoweredPlan lowered =
        lower_for_inputs(*graph, inputs, gpu::LoweringOptions{.fp16_storage = true, .f32_values = f32_values});
    return gpu::run_lowered_on_host(*graph, lowered, inputs, &pool);
  };

  // Calibrated on one photo, the emulated GPU arithmetic deciding.
  const std::vector<Tensor> calibration_input = photo_input("dog.jpg");
  Result<std::vector<Tensor>> reference = cpu->run(calibration_input);
  REQUIRE_MESSAGE(reference.is_ok(), reference.status().to_string());
  Result<gpu::Fp16Calibration> calibration = gpu::calibrate_fp16(
      *graph, *reference, [&](const std::vector<uint8_t>& keep) { return emulate(calibration_input, keep); });
  REQUIRE_MESSAGE(calibration.is_ok(), calibration.status().to_string());
  std::string kept;
  for (size_t k = 0; k < calibration->kept_nodes.size(); ++k) {
    kept += make_message(" ", graph->node(calibration->kept_nodes[k]).name, " (", calibration->errors[k], ")");
  }
  MESSAGE("calibration on dog.jpg: all fp16 ", calibration->all_half_error, ", with", kept, " in f32 ",
          calibration->error, " (", calibration->evaluations, " runs)");
  CHECK(calibration->all_half_error > 1e-2);  // the problem this solves
  CHECK(calibration->error <= 5e-3);
  CHECK(!calibration->kept_nodes.empty());
  CHECK(calibration->kept_nodes.size() <= 4);

  // The same choice on every photo: within 1e-2 and the same objects.
  for (const char* name : {"dog.jpg", "person.jpg", "giraffe.jpg", "horses.jpg"}) {
    INFO("image ", std::string(name));
    const std::vector<Tensor> inputs = photo_input(name);
    Result<std::vector<Tensor>> expected = cpu->run(inputs);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
    Result<std::vector<Tensor>> mixed = emulate(inputs, calibration->f32_values);
    REQUIRE_MESSAGE(mixed.is_ok(), mixed.status().to_string());
    const double error = gpu::largest_relative_l2(*mixed, *expected);
    MESSAGE(std::string(name), ": fp16 storage with calibrated f32 layers vs f32: ", error);
    CHECK(error <= 1e-2);
    const std::vector<Detection> want = yolox_detections((*expected)[0]);
    const std::vector<Detection> got = yolox_detections((*mixed)[0]);
    CHECK(!want.empty());
    REQUIRE(got.size() == want.size());
    for (const Detection& w : want) {
      const auto match = std::find_if(got.begin(), got.end(), [&](const Detection& g) {
        return g.class_id == w.class_id && iou(g.box, w.box) >= 0.99f && std::abs(g.score - w.score) <= 5e-3f;
      });
      CHECK_MESSAGE(match != got.end(), "no match for class ", w.class_id, " score ", w.score);
    }
  }
}

}  // namespace
}  // namespace edgefuse::test
