// The real models through the GPU backend's lowering, emulated on the host: every node of the
// fused YOLOX-nano and BlazeFace graphs has a GPU kernel (no CPU fallback), and the emulated
// outputs match the CPU executor's.
#include <doctest/doctest.h>

#include <random>

#include "fusion/pass_manager.h"
#include "models/onnx/onnx_importer.h"
#include "runtime/cuda/host_runner.h"
#include "runtime/executor.h"
#include "tests/fusion/fusion_test_graphs.h"
#include "tests/gpu/gpu_op_cases.h"
#include "tests/support/assets.h"

namespace edgefuse::test {
namespace {

std::shared_ptr<const Graph> fused_model(const std::filesystem::path& path) {
  Result<std::shared_ptr<Graph>> graph = import_onnx_file(path.string());
  REQUIRE_MESSAGE(graph.is_ok(), graph.status().to_string());
  Result<std::vector<PassReport>> reports = optimize_graph(**graph);
  REQUIRE_MESSAGE(reports.is_ok(), reports.status().to_string());
  return *graph;
}

void check_model(const std::filesystem::path& path) {
  const std::shared_ptr<const Graph> graph = fused_model(path);
  std::mt19937 rng(5);
  const std::vector<Tensor> inputs = random_inputs_for(*graph, rng);
  const gpu::LoweredPlan lowered = lower_for_inputs(*graph, inputs);
  for (const std::string& line : lowered.describe_fallbacks(*graph)) MESSAGE("CPU fallback: ", line);
  CHECK(lowered.fallback_count() == 0);
  MESSAGE(path.filename().string(), ": ", graph->nodes().size(), " nodes -> ", lowered.steps.size(),
          " GPU steps, arena ", lowered.plan.arena_bytes, " bytes, constants ", lowered.constants.size(), " bytes");

  Result<Executor> cpu = Executor::create(graph, ExecutorOptions{});
  REQUIRE_MESSAGE(cpu.is_ok(), cpu.status().to_string());
  Result<std::vector<Tensor>> expected = cpu->run(inputs);
  REQUIRE_MESSAGE(expected.is_ok(), expected.status().to_string());
  ThreadPool pool(ThreadPool::hardware_threads());
  Result<std::vector<Tensor>> emulated = gpu::run_lowered_on_host(*graph, lowered, inputs, &pool);
  REQUIRE_MESSAGE(emulated.is_ok(), emulated.status().to_string());
  check_gpu_outputs(*emulated, *expected, false, 1e-4);
}

TEST_CASE("YOLOX-nano, fused, lowers to GPU kernels only and matches the CPU executor") {
  ASSET_OR_SKIP(path, "models/yolox_nano.onnx");
  check_model(path);
}

TEST_CASE("BlazeFace front and back, fused, lower to GPU kernels only and match the CPU executor") {
  ASSET_OR_SKIP(front, "models/blazeface_front_128.onnx");
  ASSET_OR_SKIP(back, "models/blazeface_back_256.onnx");
  check_model(front);
  check_model(back);
}

}  // namespace
}  // namespace edgefuse::test
