// GPU latency and throughput of the detector models on the CUDA executor: fp32 (cuBLAS and cuDNN
// where timing picks them, or never) and fp16 (tensor cores or f32 math), fused vs unfused (the imported graph), CUDA
// graph replay vs step-by-step launches, the specialised Conv kernels vs the general one, YOLOX with the
// row filter and NMS on the device, batch 1, 4 and 16, with the CPU executor (fused, same run) as the
// baseline. Prints a Markdown table and one JSON object per configuration; scripts/gpu-check.sh records
// both. Exits 2 when no CUDA device is visible.
//
//   bench_cuda [--assets DIR] [--runs N] [--warmup N] [--no-cublas]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nvtx3/nvToolsExt.h>

#include "bench/bench_common.h"
#include "bench/cublas_peer.h"
#include "fusion/pass_manager.h"
#include "models/detector/batching.h"
#include "models/onnx/onnx_importer.h"
#include "pipeline/cli/bench_support.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_executor.h"
#include "runtime/cuda/lowering.h"
#include "runtime/executor.h"
#include "runtime/memory_plan.h"

namespace edgefuse::bench {
namespace {

const cli::CommandSpec& bench_spec() {
  static const cli::CommandSpec spec{
      .name = "bench_cuda",
      .summary = "CUDA executor latency and throughput on the detector models, as a Markdown table",
      .usage = "[options]",
      .options =
          {
              assets_option(),
              runs_option("200", "timed runs per configuration"),
              warmup_option("20", "untimed runs per configuration first (the first one plans and captures)"),
              {.name = "no-cublas",
               .type = cli::OptionType::kFlag,
               .description = "skip timing the first model's 1x1 Convs against cuBLAS (as under a profiler)"},
          },
  };
  return spec;
}

using RunFn = std::function<Status()>;

// `device_ms` (when given) reads the device's own time of the run just made, into `device`.
Samples time_runs(const RunFn& run, int64_t warmup, int64_t runs, const std::function<double()>& device_ms = {},
                  Samples* device = nullptr) {
  Samples samples;
  for (int64_t i = 0; i < warmup + runs; ++i) {
    // Timed runs are an NVTX range, so a profiler can take them alone (scripts/gpu-check.sh).
    if (i >= warmup) nvtxRangePushA("timed run");
    const auto start = std::chrono::steady_clock::now();
    const Status status = run();
    const auto stop = std::chrono::steady_clock::now();
    if (!status.is_ok()) {
      if (i >= warmup) nvtxRangePop();
      samples.failure = status.message();
      samples.ms.clear();
      if (device != nullptr) *device = samples;
      return samples;
    }
    if (i < warmup) continue;
    nvtxRangePop();
    samples.ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    if (device != nullptr) device->ms.push_back(device_ms());
  }
  return samples;
}

std::vector<Tensor> random_batch(const Graph& graph, int64_t batch, std::mt19937& rng) {
  std::vector<Tensor> inputs;
  std::uniform_real_distribution<float> value(0.0f, 1.0f);
  for (ValueId id : graph.inputs()) {
    Shape shape = graph.value(id).desc.shape;
    shape[0] = batch;
    Tensor t = Tensor::empty(DType::kF32, shape);
    for (float& x : std::span(t.data<float>(), static_cast<size_t>(t.numel()))) x = value(rng);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

// Wall-clock times of run(); `device` (when given) gets the device's time of each frame
// (CudaExecutorOptions::time_frames). fp16: `calibration` (when given) says what the first frame's
// calibration kept in f32.
Samples gpu_samples(std::shared_ptr<const Graph> graph, const std::vector<Tensor>& inputs, CudaExecutorOptions options,
                    int64_t warmup, int64_t runs, std::string* calibration = nullptr, Samples* device = nullptr) {
  options.time_frames = device != nullptr;
  Result<std::unique_ptr<CudaExecutor>> executor = CudaExecutor::create(graph, options);
  if (!executor.is_ok()) {
    if (device != nullptr) *device = Samples{{}, executor.status().message()};
    return Samples{{}, executor.status().message()};
  }
  Samples samples = time_runs([&]() { return (*executor)->run(inputs).status(); }, warmup, runs,
                              [&]() { return (*executor)->last_device_ms(); }, device);
  if (const gpu::Fp16Calibration* c = (*executor)->last_fp16_calibration(); c != nullptr && calibration != nullptr) {
    std::string kept;
    for (NodeId n : c->kept_nodes) kept += (kept.empty() ? "" : ", ") + graph->node(n).name;
    *calibration = make_message("fp16 calibration on the first (random) frame: relative L2 ", c->all_half_error,
                                " with every activation in fp16, ", c->error, " with ", c->kept_nodes.size(),
                                " layer(s) kept f32 (", kept.empty() ? "none" : kept, "), ", c->evaluations, " runs");
  }
  return samples;
}

// As gpu_samples, with the inputs written once into the executor's pinned staging buffers
// (CudaExecutor::staged_inputs), as a producer writing there would leave them: no copy per call.
Samples gpu_staged_samples(std::shared_ptr<const Graph> graph, const std::vector<Tensor>& inputs,
                           const CudaExecutorOptions& options, int64_t warmup, int64_t runs) {
  Result<std::unique_ptr<CudaExecutor>> executor = CudaExecutor::create(graph, options);
  if (!executor.is_ok()) return Samples{{}, executor.status().message()};
  if (Result<std::vector<Tensor>> planned = (*executor)->run(inputs); !planned.is_ok()) {
    return Samples{{}, planned.status().message()};
  }
  std::vector<TensorDesc> descs;
  for (const Tensor& input : inputs) descs.push_back(input.desc());
  Result<std::vector<Tensor>> staged = (*executor)->staged_inputs(descs);
  if (!staged.is_ok()) return Samples{{}, staged.status().message()};
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::memcpy((*staged)[i].raw_data(), inputs[i].raw_data(), inputs[i].nbytes());
  }
  return time_runs([&]() { return (*executor)->run(*staged).status(); }, warmup, runs);
}

double median(Samples samples) {
  return samples.ms.empty() ? 0.0 : cli::summarize_latencies(std::move(samples.ms)).median_ms;
}

void print_json(const char* model, const char* config, int64_t batch, const Samples& samples) {
  std::printf("{\"model\": \"%s\", \"config\": \"%s\", \"batch\": %lld, \"median_ms\": %.4f, \"failure\": \"%s\"}\n",
              model, config, static_cast<long long>(batch), median(samples), samples.failure.c_str());
}

// The distinct shapes of the 1x1 Conv steps the GPU plan of `graph` runs, with their counts.
std::vector<GemmShape> pointwise_shapes(const Graph& graph, const std::vector<Tensor>& inputs) {
  std::vector<TensorDesc> descs;
  for (const Tensor& input : inputs) descs.push_back(input.desc());
  Result<MemoryPlan> plan = plan_memory(graph, descs, gpu::gpu_plan_options());
  if (!plan.is_ok()) return {};
  Result<gpu::LoweredPlan> lowered = gpu::lower_plan(graph, std::move(*plan), gpu::LoweringOptions{});
  if (!lowered.is_ok()) return {};
  std::vector<GemmShape> shapes;
  for (const gpu::LoweredStep& step : lowered->steps) {
    const auto* p = std::get_if<gpu::PointwiseConvStep>(&step.params);
    if (p == nullptr) continue;
    const auto same = std::find_if(shapes.begin(), shapes.end(), [&](const GemmShape& s) {
      return s.out_channels == p->out_channels && s.in_channels == p->in_channels && s.positions == p->positions;
    });
    if (same != shapes.end()) {
      ++same->count;
    } else {
      shapes.push_back({p->out_channels, p->in_channels, p->positions, 1});
    }
  }
  return shapes;
}

// Each 1x1 Conv shape of `label`'s plan in our Conv GEMM and in cuBLAS (cublas_peer.h), and the
// sums over the model's Convs.
void print_gemm_peers(const char* label, const std::vector<GemmShape>& shapes) {
  constexpr int kLaunches = 50;
  std::printf("\n## Conv GEMM against cuBLAS: %s's 1x1 Convs, mean of %d back-to-back launches (us)\n\n", label,
              kLaunches);
  Result<std::vector<GemmPeerTiming>> timings = time_gemm_peers(shapes, kLaunches);
  if (!timings.is_ok()) {
    std::printf("not measured: %s\n", timings.status().message().c_str());
    return;
  }
  std::printf(
      "| M x K x P | Convs | ours f32 | cuBLAS f32 | ours / cuBLAS | ours fp16 | on tensor cores | cuBLAS fp16 | ours "
      "/ "
      "cuBLAS |\n|---|---|---|---|---|---|---|---|---|\n");
  double sums[4] = {};
  for (const GemmPeerTiming& t : *timings) {
    const GemmShape& s = t.shape;
    std::printf("| %lld x %lld x %lld | %d | %.2f | %.2f | %.2f | %.2f | %s | %.2f | %.2f |\n",
                static_cast<long long>(s.out_channels), static_cast<long long>(s.in_channels),
                static_cast<long long>(s.positions), s.count, t.ours_f32_us, t.cublas_f32_us,
                t.ours_f32_us / t.cublas_f32_us, t.ours_fp16_us, t.ours_fp16_tensor_cores ? "yes" : "no",
                t.cublas_fp16_us, t.ours_fp16_us / t.cublas_fp16_us);
    sums[0] += s.count * t.ours_f32_us;
    sums[1] += s.count * t.cublas_f32_us;
    sums[2] += s.count * t.ours_fp16_us;
    sums[3] += s.count * t.cublas_fp16_us;
  }
  std::printf("| all %zu shapes, each times its Convs | | %.1f | %.1f | %.2f | %.1f | | %.1f | %.2f |\n",
              timings->size(), sums[0], sums[1], sums[0] / sums[1], sums[2], sums[3], sums[2] / sums[3]);
  std::printf(
      "{\"model\": \"%s\", \"config\": \"1x1 Convs, GEMM only\", \"ours_f32_us\": %.1f, \"cublas_f32_us\": "
      "%.1f, \"ours_fp16_us\": %.1f, \"cublas_fp16_us\": %.1f}\n",
      label, sums[0], sums[1], sums[2], sums[3]);
}

int run(const cli::ParsedArgs& args) {
  const std::vector<CudaDeviceInfo> devices = cuda_devices();
  if (devices.empty()) {
    std::fprintf(stderr, "bench_cuda: no CUDA device is visible\n");
    return 2;
  }
  const std::filesystem::path assets = bench_assets_dir(args, EDGEFUSE_DEFAULT_ASSETS_DIR);
  const int64_t runs = args.get_int("runs");
  const int64_t warmup = args.get_int("warmup");
  std::printf("## CUDA executor on %s (sm_%d%d), %s, median of %lld runs after %lld warm-up\n\n",
              devices[0].name.c_str(), devices[0].compute_major, devices[0].compute_minor, compiler_description(),
              static_cast<long long>(runs), static_cast<long long>(warmup));
  std::printf(
      "| model | CPU fused (ms) | GPU fused, CUDA graph (ms) | GPU fused, CUDA graph, without cuBLAS or cuDNN (ms) | "
      "GPU fused, "
      "CUDA graph, input already in pinned staging "
      "(ms) | GPU fused fp16, CUDA graph (ms) | GPU fused fp16, f32 math (no tensor cores) (ms) | device time fp32 / "
      "fp16 (ms) | GPU fused, CUDA graph, GEMM tiles by cost model, "
      "not timed (ms) | GPU fused, launches (ms) | GPU "
      "fused, general conv kernel only (ms) | GPU unfused, CUDA graph (ms) | unfused / fused | CPU / GPU | batch 4 "
      "(img/s) | batch 16 (img/s) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<std::string> notes;
  std::vector<GemmShape> peer_shapes;
  const char* peer_label = "";
  for (const BenchModel& model : kBenchModels) {
    const std::filesystem::path path = assets / model.relative_path;
    Result<std::shared_ptr<Graph>> imported = import_onnx_file(path.string());
    if (!imported.is_ok()) {
      std::printf("| %s | %s |\n", model.label, imported.status().message().c_str());
      continue;
    }
    std::shared_ptr<const Graph> unfused = *imported;
    auto fused_graph = std::make_shared<Graph>(**imported);
    if (Result<std::vector<PassReport>> passes = optimize_graph(*fused_graph, cuda_fusion_options()); !passes.is_ok()) {
      std::printf("| %s | fusion failed: %s |\n", model.label, passes.status().message().c_str());
      continue;
    }
    std::shared_ptr<const Graph> fused = fused_graph;
    std::mt19937 rng(1);
    const std::vector<Tensor> one = random_batch(*fused, 1, rng);
    if (peer_shapes.empty()) {  // the first model's (YOLOX-nano's) 1x1 Convs, against cuBLAS after the table
      peer_shapes = pointwise_shapes(*fused, one);
      peer_label = model.label;
    }

    Result<Executor> cpu = Executor::create(fused, ExecutorOptions{});
    const Samples cpu_fused =
        cpu.is_ok() ? time_runs([&]() { return cpu->run(one).status(); }, 2, 10) : Samples{{}, cpu.status().message()};
    const CudaExecutorOptions graphed{.device = 0, .use_cuda_graph = true};
    Samples device_graph, device_fp16;
    CudaExecutorOptions reported = graphed;  // says how long tuning the GEMM tilings took
    reported.progress = [&](const std::string& message) {
      if (message.starts_with("tuned")) notes.push_back(make_message(model.label, ": ", message));
    };
    const Samples gpu_graph = gpu_samples(fused, one, reported, warmup, runs, nullptr, &device_graph);
    const Samples gpu_staged = gpu_staged_samples(fused, one, graphed, warmup, runs);
    // Our tilings only: what the libraries buy where tuning picked them (cuBLAS for some 1x1
    // Convs, cuDNN for windowed ones).
    CudaExecutorOptions no_libraries = graphed;
    no_libraries.cublas = LibraryUse::kNever;
    no_libraries.cudnn = LibraryUse::kNever;
    const Samples gpu_no_libraries = gpu_samples(fused, one, no_libraries, warmup, runs);
    CudaExecutorOptions untuned = graphed;
    untuned.tune_gemm = false;
    const Samples gpu_untuned = gpu_samples(fused, one, untuned, warmup, runs);
    std::string calibration;
    CudaExecutorOptions fp16 = graphed;
    fp16.fp16 = true;
    const Samples gpu_fp16 = gpu_samples(fused, one, fp16, warmup, runs, &calibration, &device_fp16);
    if (!calibration.empty()) notes.push_back(make_message(model.label, ": ", calibration));
    CudaExecutorOptions fp16_f32_math = fp16;
    fp16_f32_math.tensor_cores = false;
    const Samples gpu_fp16_f32_math = gpu_samples(fused, one, fp16_f32_math, warmup, runs);
    CudaExecutorOptions launches = graphed;
    launches.use_cuda_graph = false;
    const Samples gpu_launches = gpu_samples(fused, one, launches, warmup, runs);
    // The 1x1 and depthwise Convs through the general ConvStep: what their own kernels buy.
    CudaExecutorOptions general = graphed;
    general.generic_conv = true;
    const Samples gpu_general = gpu_samples(fused, one, general, warmup, runs);
    const Samples gpu_unfused = gpu_samples(unfused, one, graphed, warmup, runs);
    // YOLOX as the detector runs it: only the rows above the threshold, then (NMS on the device) only
    // the kept ones, come back (gpu::RowFilter). A JSON line each; random input keeps few rows.
    Samples gpu_filtered, gpu_nms;
    const bool yolox = std::string_view(model.relative_path).find("yolox") != std::string_view::npos;
    if (yolox) {
      CudaExecutorOptions filtered = graphed;
      filtered.row_filter = gpu::RowFilter{0, 4, 0.3f};
      gpu_filtered = gpu_samples(fused, one, filtered, warmup, runs);
      filtered.row_filter->nms = gpu::RowFilter::GridNms{416, 416, {8, 16, 32}, 0.45f, 300, true};
      gpu_nms = gpu_samples(fused, one, filtered, warmup, runs);
    }
    std::string throughput[2];
    int column = 0;
    // Batched as the detector does it: the batch freed before fusion, which then leaves alone what
    // holds only at batch 1 (a Concat fused into a Transpose).
    Result<std::shared_ptr<Graph>> batched = make_batch_dynamic(*unfused);
    if (batched.is_ok()) {
      if (Result<std::vector<PassReport>> passes = optimize_graph(**batched, cuda_fusion_options()); !passes.is_ok()) {
        batched = passes.status();
      }
    }
    for (int64_t batch : {4, 16}) {
      CudaExecutorOptions batch_options = graphed;  // notes what tuning chose at this batch
      batch_options.progress = [&](const std::string& message) {
        if (message.starts_with("tuned")) notes.push_back(make_message(model.label, " batch ", batch, ": ", message));
      };
      Samples samples = batched.is_ok()
                            ? gpu_samples(*batched, random_batch(*fused, batch, rng), batch_options, warmup, runs)
                            : Samples{{}, batched.status().message()};
      const double ms = median(samples);
      throughput[column++] = ms > 0 ? make_message(static_cast<int64_t>(1000.0 * static_cast<double>(batch) / ms))
                                    : "n/a: " + samples.failure;
      print_json(model.label, "fused, CUDA graph", batch, samples);
    }
    print_json(model.label, "CPU fused", 1, cpu_fused);
    print_json(model.label, "fused, CUDA graph", 1, gpu_graph);
    print_json(model.label, "fused, CUDA graph, without cuBLAS or cuDNN", 1, gpu_no_libraries);
    print_json(model.label, "fused, CUDA graph, input in pinned staging", 1, gpu_staged);
    print_json(model.label, "fused fp16, CUDA graph", 1, gpu_fp16);
    print_json(model.label, "fused fp16, f32 math, CUDA graph", 1, gpu_fp16_f32_math);
    print_json(model.label, "fused, CUDA graph, device time", 1, device_graph);
    print_json(model.label, "fused fp16, CUDA graph, device time", 1, device_fp16);
    print_json(model.label, "fused, CUDA graph, GEMM tiles by cost model", 1, gpu_untuned);
    print_json(model.label, "fused, launches", 1, gpu_launches);
    print_json(model.label, "fused, general conv kernel, CUDA graph", 1, gpu_general);
    print_json(model.label, "unfused, CUDA graph", 1, gpu_unfused);
    if (yolox) {
      print_json(model.label, "fused, CUDA graph, row filter", 1, gpu_filtered);
      print_json(model.label, "fused, CUDA graph, row filter + NMS", 1, gpu_nms);
    }
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %.3f / %.3f | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                model.label, latency_cell(cpu_fused, 2).c_str(), latency_cell(gpu_graph, 3).c_str(),
                latency_cell(gpu_no_libraries, 3).c_str(), latency_cell(gpu_staged, 3).c_str(),
                latency_cell(gpu_fp16, 3).c_str(), latency_cell(gpu_fp16_f32_math, 3).c_str(), median(device_graph),
                median(device_fp16), latency_cell(gpu_untuned, 3).c_str(), latency_cell(gpu_launches, 3).c_str(),
                latency_cell(gpu_general, 3).c_str(), latency_cell(gpu_unfused, 3).c_str(),
                median_ratio_cell(gpu_unfused, gpu_graph).c_str(), median_ratio_cell(cpu_fused, gpu_graph).c_str(),
                throughput[0].c_str(), throughput[1].c_str());
  }
  if (!notes.empty()) std::printf("\n");
  for (const std::string& note : notes) std::printf("- %s\n", note.c_str());
  if (!peer_shapes.empty() && !args.flag("no-cublas")) print_gemm_peers(peer_label, peer_shapes);
  return 0;
}

}  // namespace
}  // namespace edgefuse::bench

int main(int argc, char** argv) {
  int exit_code = 0;
  std::optional<edgefuse::cli::ParsedArgs> args =
      edgefuse::bench::parse_bench_args(edgefuse::bench::bench_spec(), "bench_cuda", argc, argv, exit_code);
  if (!args) return exit_code;
  return edgefuse::bench::run(*args);
}
