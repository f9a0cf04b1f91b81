// The CUDA executor on a GPU: every kernel step on the awkward graphs of gpu_op_cases, and the
// real models, against the CPU; CUDA graph replay against step-by-step launches. Every test
// skips (saying so) when no CUDA device is visible.
#include "runtime/cuda/cuda_executor.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "fusion/pass_manager.h"
#include "models/onnx/onnx_importer.h"
#include "runtime/cuda/conv_gemm.h"
#include "runtime/cuda/conv_libraries.h"
#include "runtime/cuda/cublas_library.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cudnn_conv.h"
#include "runtime/executor.h"
#include "tests/fusion/fusion_test_graphs.h"
#include "tests/gpu/gpu_op_cases.h"
#include "tests/gpu/grid_rows.h"
#include "tests/support/assets.h"
#include "tests/support/numerics.h"

namespace edgefuse::test {
namespace {

#define REQUIRE_CUDA_DEVICE()                                                                  \
  do {                                                                                         \
    if (cuda_devices().empty()) {                                                              \
      MESSAGE("SKIPPED: no CUDA device visible (the cuda tests run on a machine with a GPU)"); \
      return;                                                                                  \
    }                                                                                          \
  } while (0)

// GEMM tilings by the cost model, not by timing: timing can choose differently from one executor
// to the next (another summation order), and these tests compare executors bit for bit.
std::unique_ptr<CudaExecutor> make_executor(std::shared_ptr<const Graph> graph, bool use_cuda_graph) {
  Result<std::unique_ptr<CudaExecutor>> executor = CudaExecutor::create(
      std::move(graph), CudaExecutorOptions{.device = 0, .use_cuda_graph = use_cuda_graph, .tune_gemm = false});
  REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
  return std::move(*executor);
}

// Pixel-range noise for YOLOX-nano (0-255 BGR, [1, 3, 416, 416]).
Tensor yolox_noise_frame(std::mt19937& rng) {
  std::uniform_real_distribution<float> pixel(0.0f, 255.0f);
  Tensor t = Tensor::empty(DType::kF32, {1, 3, 416, 416});
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = pixel(rng);
  return t;
}

std::vector<Tensor> run_on_gpu(CudaExecutor& executor, const std::vector<Tensor>& inputs) {
  Result<std::vector<Tensor>> outputs = executor.run(inputs);
  REQUIRE_MESSAGE(outputs.is_ok(), outputs.status().to_string());
  return std::move(*outputs);
}

// The kGemmTilings index and tensor-core flag of each Conv GEMM step of the last run's plan.
std::vector<std::pair<int, bool>> gemm_steps(const CudaExecutor& executor) {
  std::vector<std::pair<int, bool>> steps;
  REQUIRE(executor.last_plan() != nullptr);
  for (const gpu::LoweredStep& step : executor.last_plan()->steps) {
    if (const auto* p = std::get_if<gpu::PointwiseConvStep>(&step.params))
      steps.emplace_back(p->gemm_tiling, p->tensor_cores);
    if (const auto* p = std::get_if<gpu::ConvGemmStep>(&step.params))
      steps.emplace_back(p->gemm_tiling, p->tensor_cores);
  }
  return steps;
}

TEST_CASE("every GPU kernel step on the device matches the CPU reference kernels") {
  REQUIRE_CUDA_DEVICE();
  for (const GpuOpCase& c : gpu_op_cases()) {
    INFO("case: ", c.name);
    const std::vector<Tensor> expected = run_graph(*c.graph, c.inputs, true);
    std::unique_ptr<CudaExecutor> executor = make_executor(c.graph, true);
    check_gpu_outputs(run_on_gpu(*executor, c.inputs), expected, c.exact, 1e-5);
    REQUIRE(executor->last_plan() != nullptr);
    CHECK(executor->last_plan()->fallback_count() == c.fallbacks);
    // A plan with a CPU fallback is launched step by step; any other is one CUDA graph.
    CHECK(executor->last_run_used_cuda_graph() == (c.fallbacks == 0));
  }
}

TEST_CASE("the Conv GEMM in every tiling, and as tuned, matches the CPU on every op case with a Conv") {
  REQUIRE_CUDA_DEVICE();
  int cases = 0;
  for (const GpuOpCase& c : gpu_op_cases()) {
    const auto& nodes = c.graph->nodes();
    if (std::none_of(nodes.begin(), nodes.end(), [](const Node& n) { return n.op == OpKind::kConv; })) continue;
    ++cases;
    const std::vector<Tensor> expected = run_graph(*c.graph, c.inputs, true);
    for (int tiling = -1; tiling < gpu::kGemmTilingCount; ++tiling) {
      INFO("case: ", c.name, ", tiling ", tiling < 0 ? std::string("tuned") : std::to_string(tiling));
      Result<std::unique_ptr<CudaExecutor>> executor =
          CudaExecutor::create(c.graph, CudaExecutorOptions{.device = 0, .gemm_tiling = tiling});
      REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
      // Tuned, a library may run a step: within kLibraryTolerance of our kernel, itself within 1e-5.
      const double tolerance = tiling < 0 ? 1e-5 + gpu::kLibraryTolerance : 1e-5;
      check_gpu_outputs(run_on_gpu(**executor, c.inputs), expected, false, tolerance);
      // f32 storage: a tensor-core tiling is not allowed, and the cost model's runs instead.
      if (tiling >= 0 && gpu::kGemmTilings[tiling].tensor_cores) {
        for (const auto& [index, may] : gemm_steps(**executor)) CHECK(index == -1);
      }
    }
  }
  CHECK(cases >= 10);
  Result<std::unique_ptr<CudaExecutor>> out_of_range = CudaExecutor::create(
      gpu_op_cases().front().graph, CudaExecutorOptions{.device = 0, .gemm_tiling = gpu::kGemmTilingCount});
  CHECK_FALSE(out_of_range.is_ok());
}

#define REQUIRE_CUBLAS()                                                                   \
  do {                                                                                     \
    Result<std::shared_ptr<const gpu::CublasLibrary>> cublas = gpu::CublasLibrary::load(); \
    if (!cublas.is_ok()) {                                                                 \
      MESSAGE("SKIPPED: ", cublas.status().message());                                     \
      return;                                                                              \
    }                                                                                      \
    MESSAGE("cuBLAS ", (*cublas)->version, " from ", (*cublas)->path);                     \
  } while (0)

// Every op case with a Conv on the GPU with `options` (a library allowed on every step it may
// take), captured and launched step by step, against the CPU; returns the steps `steps_through`
// counts over all cases, the same in both. `launched_exact`: the launched run must equal the
// captured one bit for bit (the same library calls), else each is checked against the CPU.
int library_steps_over_op_cases(CudaExecutorOptions options, int (CudaExecutor::*steps_through)() const,
                                bool launched_exact, double tolerance) {
  int steps = 0;
  for (const GpuOpCase& c : gpu_op_cases()) {
    const auto& nodes = c.graph->nodes();
    if (std::none_of(nodes.begin(), nodes.end(), [](const Node& n) { return n.op == OpKind::kConv; })) continue;
    INFO("case: ", c.name);
    const std::vector<Tensor> expected = run_graph(*c.graph, c.inputs, true);
    options.use_cuda_graph = true;
    Result<std::unique_ptr<CudaExecutor>> graphed = CudaExecutor::create(c.graph, options);
    REQUIRE_MESSAGE(graphed.is_ok(), graphed.status().to_string());
    const std::vector<Tensor> outputs = run_on_gpu(**graphed, c.inputs);
    check_gpu_outputs(outputs, expected, false, tolerance);
    steps += ((**graphed).*steps_through)();
    options.use_cuda_graph = false;
    Result<std::unique_ptr<CudaExecutor>> launched = CudaExecutor::create(c.graph, options);
    REQUIRE_MESSAGE(launched.is_ok(), launched.status().to_string());
    if (launched_exact) {
      check_gpu_outputs(run_on_gpu(**launched, c.inputs), outputs, true, 0);
    } else {
      check_gpu_outputs(run_on_gpu(**launched, c.inputs), expected, false, tolerance);
    }
    CHECK(((**launched).*steps_through)() == ((**graphed).*steps_through)());
  }
  return steps;
}

// With the library never allowed, not one step, whatever the options say otherwise.
void check_never(const CudaExecutorOptions& never, int (CudaExecutor::*steps_through)() const) {
  Result<std::unique_ptr<CudaExecutor>> executor = CudaExecutor::create(gpu_op_cases().front().graph, never);
  REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
  run_on_gpu(**executor, gpu_op_cases().front().inputs);
  CHECK(((**executor).*steps_through)() == 0);
}

TEST_CASE("1x1 Convs through cuBLAS and the epilogue kernel match the CPU on every op case, captured or launched") {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_CUBLAS();
  const int steps =
      library_steps_over_op_cases(CudaExecutorOptions{.device = 0, .tune_gemm = false, .cublas = LibraryUse::kAlways},
                                  &CudaExecutor::last_cublas_steps, true, 1e-5);
  MESSAGE("1x1 Conv steps on cuBLAS over the op cases: ", steps);
  CHECK(steps >= 3);
  check_never(CudaExecutorOptions{.device = 0, .cublas = LibraryUse::kNever}, &CudaExecutor::last_cublas_steps);
}

#define REQUIRE_CUDNN()                                                              \
  do {                                                                               \
    Result<std::unique_ptr<gpu::CudnnConv>> cudnn = gpu::CudnnConv::create(nullptr); \
    if (!cudnn.is_ok()) {                                                            \
      MESSAGE("SKIPPED: ", cudnn.status().message());                                \
      return;                                                                        \
    }                                                                                \
    MESSAGE("cuDNN ", (*cudnn)->version());                                          \
  } while (0)

TEST_CASE("windowed Convs through cuDNN and the epilogue kernel match the CPU on every op case, captured or launched") {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_CUDNN();
  // cuDNN's fastest algorithm is found again for each executor and may differ between them; used
  // always, it is not checked against our kernel, and a Winograd or FFT algorithm rounds more.
  const int steps = library_steps_over_op_cases(
      CudaExecutorOptions{.device = 0, .tune_gemm = false, .cublas = LibraryUse::kNever, .cudnn = LibraryUse::kAlways},
      &CudaExecutor::last_cudnn_steps, false, 1e-4);
  // The f32 2-d and 1-d group-1 Convs with a window (5 of the op cases' 6: cudnn_conv_shape_test).
  MESSAGE("windowed Conv steps on cuDNN over the op cases: ", steps);
  CHECK(steps >= 3);
  check_never(CudaExecutorOptions{.device = 0, .cudnn = LibraryUse::kNever}, &CudaExecutor::last_cudnn_steps);
}

bool device_has_tensor_cores() {
  return !cuda_devices().empty() && cuda_devices().front().compute_major >= 7;
}

TEST_CASE("on tensor cores, in every tiling, a Conv GEMM computes what the f32 tilings do on the same fp16 plan") {
  REQUIRE_CUDA_DEVICE();
  if (!device_has_tensor_cores()) {
    MESSAGE("SKIPPED: device 0 has no tensor cores (before sm_70)");
    return;
  }
  int tilings = 0;
  for (const GpuOpCase& c : tensor_core_cases()) {
    // The reference: the same fp16 storage (every activation binary16, the graph's inputs and
    // outputs f32) with f32 math.
    const CudaExecutorOptions f32_math{
        .device = 0, .fp16 = true, .tensor_cores = false, .fp16_calibration = false, .tune_gemm = false};
    Result<std::unique_ptr<CudaExecutor>> reference = CudaExecutor::create(c.graph, f32_math);
    REQUIRE_MESSAGE(reference.is_ok(), reference.status().to_string());
    const std::vector<Tensor> expected = run_on_gpu(**reference, c.inputs);
    CHECK(gemm_steps(**reference) == std::vector<std::pair<int, bool>>{{-1, false}});
    // fp16 storage itself against the CPU: X rounds to binary16.
    check_gpu_outputs(expected, run_graph(*c.graph, c.inputs, true), false, 2e-3);
    for (int tiling = -1; tiling < gpu::kGemmTilingCount; ++tiling) {
      if (tiling >= 0 && !gpu::kGemmTilings[tiling].tensor_cores) continue;
      INFO("case: ", c.name, ", tiling ", tiling < 0 ? std::string("tuned") : std::to_string(tiling));
      Result<std::unique_ptr<CudaExecutor>> executor = CudaExecutor::create(
          c.graph, CudaExecutorOptions{.device = 0, .fp16 = true, .fp16_calibration = false, .gemm_tiling = tiling});
      REQUIRE_MESSAGE(executor.is_ok(), executor.status().to_string());
      // Products of binary16 X and W's two binary16 parts are exact; only the order of the f32
      // sums and W's bits past the 22nd differ (about 3e-7 relative in a host emulation of the
      // kernel, weights from 1 down to 1e-3). W rounded to binary16 alone would differ by about 2e-4.
      check_gpu_outputs(run_on_gpu(**executor, c.inputs), expected, false, 1e-5);
      const std::vector<std::pair<int, bool>> steps = gemm_steps(**executor);
      REQUIRE(steps.size() == 1);
      CHECK(steps[0].second);
      if (tiling >= 0) CHECK(steps[0].first == tiling);
      ++tilings;
    }
  }
  CHECK(tilings == 10 * 6);  // 10 cases, each in 5 tensor-core tilings and as tuned
}

std::shared_ptr<const Graph> fused_model(const std::filesystem::path& path) {
  Result<std::shared_ptr<Graph>> graph = import_onnx_file(path.string());
  REQUIRE_MESSAGE(graph.is_ok(), graph.status().to_string());
  Result<std::vector<PassReport>> reports = optimize_graph(**graph, cuda_fusion_options());
  REQUIRE_MESSAGE(reports.is_ok(), reports.status().to_string());
  return *graph;
}

void check_model_on_gpu(const std::filesystem::path& path) {
  INFO("model: ", path.filename().string());
  const std::shared_ptr<const Graph> graph = fused_model(path);
  std::mt19937 rng(5);
  const std::vector<Tensor> inputs = random_inputs_for(*graph, rng);
  Result<Executor> cpu = Executor::create(graph, ExecutorOptions{});
  REQUIRE_MESSAGE(cpu.is_ok(), cpu.status().to_string());
  Result<std::vector<Tensor>> expected = cpu->run(inputs);
  REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());

  std::unique_ptr<CudaExecutor> graphed = make_executor(graph, true);
  std::unique_ptr<CudaExecutor> eager = make_executor(graph, false);
  const std::vector<Tensor> first = run_on_gpu(*graphed, inputs);
  CHECK(graphed->last_run_used_cuda_graph());
  check_gpu_outputs(first, *expected, false, 1e-4);
  // Replaying the captured graph gives the same bits as the first replay and as eager launches.
  check_gpu_outputs(run_on_gpu(*graphed, inputs), first, true, 0);
  check_gpu_outputs(run_on_gpu(*eager, inputs), first, true, 0);
  CHECK_FALSE(eager->last_run_used_cuda_graph());
  MESSAGE(path.filename().string(), ": device bytes ", graphed->last_device_bytes());
  // With the tilings timing picks (the default), within the same tolerance.
  Result<std::unique_ptr<CudaExecutor>> tuned = CudaExecutor::create(graph, CudaExecutorOptions{.device = 0});
  REQUIRE_MESSAGE(tuned.is_ok(), tuned.status().to_string());
  check_gpu_outputs(run_on_gpu(**tuned, inputs), *expected, false, 1e-4);
}

// YOLOX-nano on the GPU against the CPU, first with a library allowed on every step it may take
// (`always`), then with the defaults, where timing decides: how many steps `steps_through` counts
// in each, and the tuning report that mentions `timed_marker`.
struct LibraryRuns {
  int always = 0;
  int timed = 0;
  std::string tuning;
};

LibraryRuns yolox_through_library(const std::filesystem::path& path, const CudaExecutorOptions& always,
                                  int (CudaExecutor::*steps_through)() const, const std::string& timed_marker) {
  const std::shared_ptr<const Graph> graph = fused_model(path);
  std::mt19937 rng(15);
  const std::vector<Tensor> inputs = {yolox_noise_frame(rng)};
  Result<Executor> cpu = Executor::create(graph, ExecutorOptions{});
  REQUIRE_MESSAGE(cpu.is_ok(), cpu.status().to_string());
  Result<std::vector<Tensor>> expected = cpu->run(inputs);
  REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());

  LibraryRuns runs;
  Result<std::unique_ptr<CudaExecutor>> everywhere = CudaExecutor::create(graph, always);
  REQUIRE_MESSAGE(everywhere.is_ok(), everywhere.status().to_string());
  check_gpu_outputs(run_on_gpu(**everywhere, inputs), *expected, false, 1e-4);
  CHECK((*everywhere)->last_run_used_cuda_graph());
  runs.always = ((**everywhere).*steps_through)();

  std::vector<std::string> progress;
  Result<std::unique_ptr<CudaExecutor>> timed = CudaExecutor::create(
      graph, CudaExecutorOptions{.device = 0, .progress = [&](const std::string& m) { progress.push_back(m); }});
  REQUIRE_MESSAGE(timed.is_ok(), timed.status().to_string());
  check_gpu_outputs(run_on_gpu(**timed, inputs), *expected, false, 1e-4);
  runs.timed = ((**timed).*steps_through)();
  for (const std::string& m : progress) {
    if (m.find(timed_marker) != std::string::npos) runs.tuning = m;
  }
  return runs;
}

TEST_CASE("YOLOX-nano with its 1x1 Convs on cuBLAS matches the CPU; tuning keeps cuBLAS only where it timed faster") {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_CUBLAS();
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  const LibraryRuns runs =
      yolox_through_library(path, CudaExecutorOptions{.device = 0, .tune_gemm = false, .cublas = LibraryUse::kAlways},
                            &CudaExecutor::last_cublas_steps, "cuBLAS timed on");
  // Every one of the 82 1x1 Convs (gpu_model_test checks that each may).
  MESSAGE("YOLOX-nano 1x1 Convs on cuBLAS when allowed everywhere: ", runs.always);
  CHECK(runs.always == 82);
  MESSAGE(runs.tuning);
  CHECK_FALSE(runs.tuning.empty());
  CHECK(runs.timed <= runs.always);
}

// Its stem is the one windowed Conv of the three models cuDNN can express (gpu_model_test).
TEST_CASE("YOLOX-nano with its stem on cuDNN matches the CPU; tuning keeps cuDNN only where it timed faster") {
  REQUIRE_CUDA_DEVICE();
  REQUIRE_CUDNN();
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  const LibraryRuns runs =
      yolox_through_library(path, CudaExecutorOptions{.device = 0, .tune_gemm = false, .cudnn = LibraryUse::kAlways},
                            &CudaExecutor::last_cudnn_steps, "cuDNN timed on");
  CHECK(runs.always == 1);
  MESSAGE(runs.tuning);
  CHECK_FALSE(runs.tuning.empty());
  CHECK(runs.timed <= runs.always);
}

TEST_CASE("YOLOX-nano and BlazeFace on the GPU match the CPU, CUDA graph replay equals eager launches") {
  REQUIRE_CUDA_DEVICE();
  ASSET_OR_SKIP(yolox, "models/yolox_nano.onnx");
  ASSET_OR_SKIP(front, "models/blazeface_front_128.onnx");
  ASSET_OR_SKIP(back, "models/blazeface_back_256.onnx");
  check_model_on_gpu(yolox);
  check_model_on_gpu(front);
  check_model_on_gpu(back);
}

TEST_CASE("YOLOX-nano on the GPU with a row filter brings back the rows above the threshold, the rest as zeros") {
  REQUIRE_CUDA_DEVICE();
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  const std::shared_ptr<const Graph> graph = fused_model(path);
  std::mt19937 rng(8);
  const std::vector<Tensor> inputs = random_inputs_for(*graph, rng);
  Result<Executor> cpu = Executor::create(graph, ExecutorOptions{});
  REQUIRE_MESSAGE(cpu.is_ok(), cpu.status().to_string());
  Result<std::vector<Tensor>> expected = cpu->run(inputs);
  REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
  for (const bool cuda_graph : {true, false}) {
    Result<std::unique_ptr<CudaExecutor>> gpu = CudaExecutor::create(
        graph, CudaExecutorOptions{.use_cuda_graph = cuda_graph, .row_filter = gpu::RowFilter{0, 4, 0.05f}});
    REQUIRE_MESSAGE(gpu.is_ok(), gpu.status().to_string());
    std::vector<Tensor> actual = run_on_gpu(**gpu, inputs);
    Tensor want = (*expected)[0].clone();
    Tensor& got = actual[0];
    const int64_t channels = want.dim(2);
    int64_t kept = 0;
    for (int64_t r = 0; r < want.dim(1); ++r) {
      float* w = want.data<float>() + r * channels;
      float* g = got.data<float>() + r * channels;
      if (std::abs(w[4] - 0.05f) < 1e-3f) {  // too close to call: either side may keep it
        std::fill(w, w + channels, 0.0f);
        std::fill(g, g + channels, 0.0f);
      } else if (w[4] < 0.05f) {
        std::fill(w, w + channels, 0.0f);
      } else {
        ++kept;
      }
    }
    MESSAGE("row filter kept ", kept, " of ", want.dim(1), " rows");
    check_gpu_outputs(actual, {want}, false, 1e-4);
  }
}

TEST_CASE("NMS on the GPU brings back only the kept rows, which decode to the CPU's detections") {
  REQUIRE_CUDA_DEVICE();
  const GridRowsSpec spec{.batch = 2, .width = 128, .height = 128};
  const NmsSettings settings;
  std::mt19937 rng(12);
  const Tensor rows = synthetic_grid_rows(spec, settings.score_threshold, rng);
  const std::vector<Tensor> inputs = {rows};
  const gpu::RowFilter::GridNms grid{spec.width, spec.height, {8, 16, 32}, settings.iou_threshold, 0, true};
  for (const bool cuda_graph : {true, false}) {
    Result<std::unique_ptr<CudaExecutor>> gpu =
        CudaExecutor::create(pass_through_graph(rows.shape()),
                             CudaExecutorOptions{.use_cuda_graph = cuda_graph,
                                                 .row_filter = gpu::RowFilter{0, 4, settings.score_threshold, grid}});
    REQUIRE_MESSAGE(gpu.is_ok(), gpu.status().to_string());
    for (int frame = 0; frame < 2; ++frame) {  // a replay starts from fresh counts
      const std::vector<Tensor> back = run_on_gpu(**gpu, inputs);
      for (int64_t b = 0; b < spec.batch; ++b) {
        // The device's expf may differ from the host's by an ulp, which moves a box by as much:
        // an overlap within that of the IoU threshold could be called either way (not seen here).
        const std::vector<Detection> want = grid_detections(rows, b, spec.width, spec.height, settings);
        const std::vector<Detection> got = grid_detections(back[0], b, spec.width, spec.height, settings);
        MESSAGE("batch element ", b, ": ", want.size(), " kept, ", rows_back(back[0], b), " rows back");
        CHECK(rows_back(back[0], b) == static_cast<int64_t>(want.size()));
        REQUIRE(got.size() == want.size());
        for (size_t k = 0; k < want.size(); ++k) {
          CHECK(got[k].class_id == want[k].class_id);
          CHECK(got[k].score == want[k].score);
        }
      }
    }
  }
}

TEST_CASE("NMS on the GPU over YOLOv5 rows and YOLOv8's channel-major output brings back only the kept rows") {
  REQUIRE_CUDA_DEVICE();
  const NmsSettings settings;
  for (const bool objectness : {true, false}) {
    INFO(std::string(objectness ? "YOLOv5 rows" : "YOLOv8 columns"));
    std::mt19937 rng(14);
    const BoxRowsSpec spec{.batch = 2, .rows = 2100, .objectness = objectness};
    const Tensor output = synthetic_box_rows(spec, settings.score_threshold, rng);
    const std::vector<Tensor> inputs = {output};
    const gpu::RowFilter filter{.output = 0,
                                .column = 4,
                                .threshold = settings.score_threshold,
                                .box_nms = gpu::RowFilter::BoxNms{objectness, settings.iou_threshold, 0, true},
                                .channel_major = !objectness,
                                .column_end = objectness ? 0 : gpu::RowFilter::kThroughLastColumn};
    for (const bool cuda_graph : {true, false}) {
      Result<std::unique_ptr<CudaExecutor>> gpu = CudaExecutor::create(
          pass_through_graph(output.shape()), CudaExecutorOptions{.use_cuda_graph = cuda_graph, .row_filter = filter});
      REQUIRE_MESSAGE(gpu.is_ok(), gpu.status().to_string());
      for (int frame = 0; frame < 2; ++frame) {  // a replay starts from fresh counts
        const std::vector<Tensor> back = run_on_gpu(**gpu, inputs);
        for (int64_t b = 0; b < spec.batch; ++b) {
          // Boxes decoded already: no expf, so the device's candidates are the host's bit for bit.
          const std::vector<Detection> want = box_detections(output, b, objectness, settings);
          const std::vector<Detection> got = box_detections(back[0], b, objectness, settings);
          MESSAGE("batch element ", b, ": ", want.size(), " kept, ", box_rows_back(back[0], b, objectness),
                  " rows back");
          CHECK(box_rows_back(back[0], b, objectness) == static_cast<int64_t>(want.size()));
          REQUIRE(got.size() == want.size());
          for (size_t k = 0; k < want.size(); ++k) {
            CHECK(got[k].class_id == want[k].class_id);
            CHECK(got[k].score == want[k].score);
            CHECK(got[k].box.x1 == want[k].box.x1);
          }
        }
      }
    }
  }
}

TEST_CASE("NMS on the GPU over BlazeFace rows brings back only the kept faces' rows") {
  REQUIRE_CUDA_DEVICE();
  const NmsSettings settings{.score_threshold = 0.5f, .iou_threshold = 0.3f};
  std::mt19937 rng(13);
  const Tensor rows = synthetic_anchor_rows(2, 256, settings.score_threshold, 0.3f, rng);
  const std::vector<Tensor> inputs = {rows};
  // As models/detector/blazeface_rows.cpp sets it: the threshold's logit less 0.01 selects.
  const gpu::RowFilter::AnchorNms anchors{256, {{16, 2}, {8, 6}}, settings.score_threshold, settings.iou_threshold, 0};
  const float left_behind = std::numeric_limits<float>::lowest();
  for (const bool cuda_graph : {true, false}) {
    Result<std::unique_ptr<CudaExecutor>> gpu =
        CudaExecutor::create(pass_through_graph(rows.shape()),
                             CudaExecutorOptions{.use_cuda_graph = cuda_graph,
                                                 .row_filter = gpu::RowFilter{0, 0, -0.01f, {}, anchors, left_behind}});
    REQUIRE_MESSAGE(gpu.is_ok(), gpu.status().to_string());
    for (int frame = 0; frame < 2; ++frame) {
      const std::vector<Tensor> back = run_on_gpu(**gpu, inputs);
      for (int64_t b = 0; b < 2; ++b) {
        // The device's expf may differ from the host's by an ulp, so a score that close to the
        // threshold could be called either way; at 0.5 the rows near it (logits of a few
        // denormal ulps around 0) score exactly 0.5 on both.
        const std::vector<Detection> want = anchor_detections(rows, b, 256, settings);
        const std::vector<Detection> got = anchor_detections(back[0], b, 256, settings);
        MESSAGE("batch element ", b, ": ", want.size(), " kept, ", rows_back(back[0], b, 0, left_behind), " rows back");
        CHECK(rows_back(back[0], b, 0, left_behind) == static_cast<int64_t>(want.size()));
        REQUIRE(got.size() == want.size());
        for (size_t k = 0; k < want.size(); ++k) {
          CHECK(got[k].box.x1 == want[k].box.x1);
          CHECK(std::abs(got[k].score - want[k].score) <= 1e-6f);
        }
      }
    }
  }
}

TEST_CASE("YOLOX-nano in fp16 on the GPU: the first frame calibrates which layers stay f32, then frames replay") {
  REQUIRE_CUDA_DEVICE();
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  const std::shared_ptr<const Graph> graph = fused_model(path);
  // Two frames, the first calibrates.
  std::mt19937 rng(11);
  std::vector<std::vector<Tensor>> frames;
  for (int f = 0; f < 2; ++f) frames.push_back({yolox_noise_frame(rng)});
  Result<Executor> cpu = Executor::create(graph, ExecutorOptions{});
  REQUIRE_MESSAGE(cpu.is_ok(), cpu.status().to_string());
  Result<std::unique_ptr<CudaExecutor>> gpu = CudaExecutor::create(graph, CudaExecutorOptions{.fp16 = true});
  REQUIRE_MESSAGE(gpu.is_ok(), gpu.status().to_string());
  for (const std::vector<Tensor>& frame : frames) {
    Result<std::vector<Tensor>> expected = cpu->run(frame);
    REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
    const std::vector<Tensor> actual = run_on_gpu(**gpu, frame);
    const gpu::Fp16Calibration* calibration = (*gpu)->last_fp16_calibration();
    REQUIRE(calibration != nullptr);
    MESSAGE("fp16 calibration: all fp16 ", calibration->all_half_error, ", ", calibration->kept_nodes.size(),
            " layers kept f32: ", calibration->error, " (", calibration->evaluations, " runs)");
    CHECK((calibration->error <= 5e-3 || static_cast<int>(calibration->kept_nodes.size()) == 8));
    const double error = gpu::largest_relative_l2(actual, *expected);
    MESSAGE("fp16 with calibrated f32 layers vs CPU f32: ", error);
    CHECK(error <= 1e-2);
    CHECK((*gpu)->last_run_used_cuda_graph());
  }
}

TEST_CASE("YOLOX-nano in fp16 on tensor cores: every Conv GEMM but the stem, within fp16 noise of f32 math") {
  REQUIRE_CUDA_DEVICE();
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  if (!device_has_tensor_cores()) {
    MESSAGE("SKIPPED: device 0 has no tensor cores (before sm_70)");
    return;
  }
  const std::shared_ptr<const Graph> graph = fused_model(path);
  std::mt19937 rng(13);
  const std::vector<Tensor> frame = {yolox_noise_frame(rng)};
  // Every activation binary16 (no calibration), so both executors store the same values up to
  // the arithmetic's order.
  const auto outputs = [&](bool tensor_cores, std::vector<std::pair<int, bool>>& steps) {
    Result<std::unique_ptr<CudaExecutor>> gpu = CudaExecutor::create(
        graph, CudaExecutorOptions{.fp16 = true, .tensor_cores = tensor_cores, .fp16_calibration = false});
    REQUIRE_MESSAGE(gpu.is_ok(), gpu.status().to_string());
    std::vector<Tensor> result = run_on_gpu(**gpu, frame);
    steps = gemm_steps(**gpu);
    return result;
  };
  std::vector<std::pair<int, bool>> f32_steps, tensor_core_steps;
  const std::vector<Tensor> f32_math = outputs(false, f32_steps);
  const std::vector<Tensor> tensor_cores = outputs(true, tensor_core_steps);
  REQUIRE(tensor_core_steps.size() == 83);
  int allowed = 0, chosen = 0;
  for (const auto& [tiling, may] : tensor_core_steps) {
    allowed += may ? 1 : 0;
    chosen += tiling >= 0 && gpu::kGemmTilings[tiling].tensor_cores ? 1 : 0;
  }
  for (const auto& [tiling, may] : f32_steps) CHECK_FALSE(may);
  MESSAGE("YOLOX-nano fp16: ", allowed, " Conv GEMM steps may use tensor cores, timing chose them for ",
          chosen);  // a speed figure, not checked
  CHECK(allowed == 82);
  // Stored activations round to binary16 after every layer, so an ulp flipped by the order of a
  // sum carries on; W rounded to binary16 alone costs about 1 % here.
  const double error = gpu::largest_relative_l2(tensor_cores, f32_math);
  MESSAGE("fp16 storage, tensor cores vs f32 math: relative L2 ", error);
  CHECK(error <= 2e-3);
}

// A plan cache directory of a test's own, removed afterwards, and the lines executors report.
struct PlanCacheScratch {
  std::filesystem::path dir;
  std::vector<std::string> progress;

  explicit PlanCacheScratch(uint32_t seed)
      : dir(std::filesystem::temp_directory_path() / ("edgefuse-cuda-plan-cache-" + std::to_string(seed))) {}
  ~PlanCacheScratch() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  std::function<void(const std::string&)> reporter() {
    return [this](const std::string& line) { progress.push_back(line); };
  }
  bool said(const char* what) const {
    return std::any_of(progress.begin(), progress.end(),
                       [&](const std::string& line) { return line.find(what) != std::string::npos; });
  }
};

TEST_CASE("an fp16 calibration is stored in the plan cache, and a second executor loads it instead of running") {
  REQUIRE_CUDA_DEVICE();
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  const std::shared_ptr<const Graph> graph = fused_model(path);
  std::mt19937 rng(12);
  const Tensor frame = yolox_noise_frame(rng);
  PlanCacheScratch cache(rng());
  const std::vector<std::string>& progress = cache.progress;
  // GEMM tilings by the cost model: timing could choose differently for the second executor.
  const CudaExecutorOptions options{
      .fp16 = true, .plan_cache_dir = cache.dir, .progress = cache.reporter(), .tune_gemm = false};
  std::vector<Tensor> first_outputs;
  gpu::Fp16Calibration first;
  {
    Result<std::unique_ptr<CudaExecutor>> gpu = CudaExecutor::create(graph, options);
    REQUIRE_MESSAGE(gpu.is_ok(), gpu.status().to_string());
    first_outputs = run_on_gpu(**gpu, {frame});
    REQUIRE((*gpu)->last_fp16_calibration() != nullptr);
    CHECK_FALSE((*gpu)->last_fp16_calibration_cached());
    first = *(*gpu)->last_fp16_calibration();
  }
  Result<std::unique_ptr<CudaExecutor>> again = CudaExecutor::create(graph, options);
  REQUIRE_MESSAGE(again.is_ok(), again.status().to_string());
  const std::vector<Tensor> second_outputs = run_on_gpu(**again, {frame});
  REQUIRE((*again)->last_fp16_calibration() != nullptr);
  CHECK((*again)->last_fp16_calibration_cached());
  CHECK((*again)->last_fp16_calibration()->f32_values == first.f32_values);
  CHECK(gpu::largest_relative_l2(second_outputs, first_outputs) == 0.0);  // the same plan, the same arithmetic
  for (const std::string& line : progress) MESSAGE(line);
  REQUIRE(progress.size() >= 3);
  // The second executor's calibration line.
  const auto last_calibration = std::find_if(progress.rbegin(), progress.rend(), [](const std::string& line) {
    return line.find("fp16 calibration") != std::string::npos;
  });
  REQUIRE(last_calibration != progress.rend());
  CHECK(last_calibration->find("loaded from") != std::string::npos);
}

TEST_CASE(
    "the GEMM tilings timing picks are stored in the plan cache; a restart loads them and computes the same bits") {
  REQUIRE_CUDA_DEVICE();
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  const std::shared_ptr<const Graph> graph = fused_model(path);
  std::mt19937 rng(14);
  const Tensor frame = yolox_noise_frame(rng);
  PlanCacheScratch cache(rng());
  const CudaExecutorOptions options{.plan_cache_dir = cache.dir, .progress = cache.reporter()};
  const auto said = [&](const char* what) { return cache.said(what); };
  std::vector<Tensor> first;
  {
    Result<std::unique_ptr<CudaExecutor>> gpu = CudaExecutor::create(graph, options);
    REQUIRE_MESSAGE(gpu.is_ok(), gpu.status().to_string());
    first = run_on_gpu(**gpu, {frame});
  }
  CHECK(said("tuned the tiling of"));
  CHECK(said("GEMM tilings stored in"));
  CHECK_FALSE(said("GEMM tilings loaded from"));
  cache.progress.clear();
  Result<std::unique_ptr<CudaExecutor>> again = CudaExecutor::create(graph, options);
  REQUIRE_MESSAGE(again.is_ok(), again.status().to_string());
  check_gpu_outputs(run_on_gpu(**again, {frame}), first, true, 0);
  CHECK(said("GEMM tilings loaded from"));
  CHECK_FALSE(said("tuned the tiling of"));
}

TEST_CASE("inputs written into the executor's staging buffers run as frames without a copy") {
  REQUIRE_CUDA_DEVICE();
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  const std::shared_ptr<const Graph> graph = fused_model(path);
  std::mt19937 rng(16);
  const std::vector<Tensor> first = {yolox_noise_frame(rng)}, second = {yolox_noise_frame(rng)};
  std::unique_ptr<CudaExecutor> executor = make_executor(graph, true);
  const std::vector<TensorDesc> descs = {first[0].desc()};
  CHECK_FALSE(executor->staged_inputs(descs).is_ok());  // no frame of this shape yet
  const std::vector<Tensor> expected_first = run_on_gpu(*executor, first);
  const std::vector<Tensor> expected_second = run_on_gpu(*executor, second);
  Result<std::vector<Tensor>> staged = executor->staged_inputs(descs);
  REQUIRE_MESSAGE(staged.is_ok(), staged.status().to_string());
  REQUIRE(staged->size() == 1);
  CHECK((*staged)[0].desc() == first[0].desc());
  for (const std::vector<Tensor>* frame : {&first, &second}) {
    std::memcpy((*staged)[0].raw_data(), (*frame)[0].raw_data(), (*frame)[0].nbytes());
    check_gpu_outputs(run_on_gpu(*executor, *staged), frame == &first ? expected_first : expected_second, true, 0);
  }
  // Another shape or dtype is refused.
  CHECK_FALSE(executor->staged_inputs({{TensorDesc{DType::kF32, {1, 3, 320, 320}}}}).is_ok());
  CHECK_FALSE(executor->staged_inputs({{TensorDesc{DType::kU8, {1, 3, 416, 416}}}}).is_ok());
}

TEST_CASE("a new input shape is planned and captured once, then reused") {
  REQUIRE_CUDA_DEVICE();
  GraphMaker m;
  std::mt19937 rng(3);
  Shape any = {-1, 3, 8, 8};
  const ValueId x = m.input(any);
  m.output(m.node(OpKind::kRelu, {m.node(OpKind::kConv, {x, m.random_constant({4, 3, 3, 3}, rng)}, {})}));
  auto graph = std::make_shared<const Graph>(std::move(m.graph()));
  std::unique_ptr<CudaExecutor> executor = make_executor(graph, true);
  for (int64_t batch : {1, 3, 1}) {
    const std::vector<Tensor> inputs = {random_tensor(DType::kF32, {batch, 3, 8, 8}, rng)};
    check_gpu_outputs(run_on_gpu(*executor, inputs), run_graph(*graph, inputs, true), false, 1e-5);
  }
}

TEST_CASE("time_frames reads the device's time of each frame, which fits inside the call's wall-clock time") {
  REQUIRE_CUDA_DEVICE();
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  const std::shared_ptr<const Graph> graph = fused_model(path);
  std::mt19937 rng(8);
  const std::vector<Tensor> inputs = {yolox_noise_frame(rng)};
  for (const bool use_cuda_graph : {true, false}) {
    INFO("CUDA graph: ", use_cuda_graph);
    Result<std::unique_ptr<CudaExecutor>> timed = CudaExecutor::create(
        graph, CudaExecutorOptions{.device = 0, .use_cuda_graph = use_cuda_graph, .time_frames = true});
    REQUIRE(timed.is_ok());
    CHECK((*timed)->last_device_ms() == 0.0);
    run_on_gpu(**timed, inputs);  // plans and captures
    const auto start = std::chrono::steady_clock::now();
    run_on_gpu(**timed, inputs);
    const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    MESSAGE("YOLOX-nano frame: device ", (*timed)->last_device_ms(), " ms, call ", wall_ms, " ms");
    CHECK((*timed)->last_device_ms() > 0.0);
    CHECK((*timed)->last_device_ms() <= wall_ms);
  }
  std::unique_ptr<CudaExecutor> untimed = make_executor(graph, true);
  run_on_gpu(*untimed, inputs);
  CHECK(untimed->last_device_ms() == 0.0);
}

TEST_CASE("the executor refuses a device that does not exist") {
  GraphMaker m;
  m.output(m.node(OpKind::kRelu, {m.input({2})}));
  Result<std::unique_ptr<CudaExecutor>> executor =
      CudaExecutor::create(std::make_shared<const Graph>(std::move(m.graph())), CudaExecutorOptions{.device = 64});
  REQUIRE_FALSE(executor.is_ok());
  CHECK(executor.status().code() == StatusCode::kUnsupported);
  CHECK(executor.status().message().find("CUDA device 64") != std::string::npos);
}

}  // namespace
}  // namespace edgefuse::test
