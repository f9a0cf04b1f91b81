// edgefuse bench: times a model on random inputs (warm-up runs, then timed runs) and prints the
// median, min and max latency.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <thread>

#include "models/detector/batching.h"
#include "pipeline/cli/bench_support.h"
#include "pipeline/cli/commands.h"
#include "pipeline/cli/common.h"
#include "pipeline/json/json_writer.h"

namespace edgefuse::cli {

const CommandSpec& bench_spec() {
  static const CommandSpec spec{
      .name = "bench",
      .summary = "time a model on random inputs and print its median, min and max latency",
      .usage = "--model FILE [options]",
      .options =
          {
              model_option(),
              input_size_option(),
              threads_option(),
              {.name = "runs",
               .type = OptionType::kInt,
               .value_name = "N",
               .default_value = "50",
               .description = "timed runs",
               .min = 1,
               .max = 1000000},
              {.name = "warmup",
               .type = OptionType::kInt,
               .value_name = "N",
               .default_value = "5",
               .description = "untimed runs first",
               .min = 0,
               .max = 1000000},
              {.name = "batch",
               .type = OptionType::kInt,
               .value_name = "N",
               .default_value = "1",
               .description = "images per run, the model's batch of one made dynamic as max-batch does (on the "
                              "CPU a batch of at least one image per thread runs whole images per thread); "
                              "times are also given per image",
               .min = 1,
               .max = 256},
              {.name = "interval",
               .type = OptionType::kInt,
               .value_name = "MS",
               .default_value = "0",
               .description = "start each run MS milliseconds after the previous one started, as a camera's "
                              "frames arrive (33 at 30 fps): the latency the daemon sees, its worker threads "
                              "idle between frames; 0: back to back",
               .min = 0,
               .max = 10000},
              {.name = "preprocess-us",
               .type = OptionType::kInt,
               .value_name = "US",
               .default_value = "300",
               .description = "with --interval, keep the caller busy this long before each run, as the daemon is "
                              "while it preprocesses a frame (about 300 us at 1080p), its worker threads woken as "
                              "that starts",
               .min = 0,
               .max = 1000000},
              {.name = "no-prewake",
               .type = OptionType::kFlag,
               .description = "with --interval, leave the worker threads asleep until the run starts instead"},
              reference_option(),
              no_fuse_option(),
              device_option(),
              precision_option(),
              {.name = "profile",
               .type = OptionType::kFlag,
               .description = "also print time per op type (summed over the timed runs' nodes, median run)"},
              {.name = "top",
               .type = OptionType::kInt,
               .value_name = "N",
               .default_value = "0",
               .description = "with --profile, also list the N slowest nodes with their shapes",
               .min = 0,
               .max = 100000},
              {.name = "json", .type = OptionType::kFlag, .description = "print one JSON object instead of text"},
          },
      .notes =
          "The model needs fixed input shapes. Each timed run covers one inference alone (inputs are made once; on\n"
          "cuda it includes the upload and download).",
  };
  return spec;
}

namespace {

// "dw_name + pw_name" for a pair.
std::string node_names(const Graph& graph, const NodeTime& node) {
  std::string names = graph.node(node.node).name;
  if (node.partner >= 0) names += " + " + graph.node(node.partner).name;
  return names;
}

}  // namespace

Status run_bench(const ParsedArgs& args) {
  const std::string& model = args.get("model");
  EF_ASSIGN_OR_RETURN(std::shared_ptr<Graph> graph, load_detector_model(model, args));
  EF_ASSIGN_OR_RETURN(const bool fused, optimize_model(*graph, args));
  const int64_t batch = args.get_int("batch");
  EF_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                      batch > 1 ? random_batch_inputs(*graph, batch) : random_inputs(*graph));
  ExecutorOptions options = executor_options(args, true);
  if (batch > 1) {
    // As the daemon runs a model with max-batch > 1 (models/detector/detector.cpp).
    EF_ASSIGN_OR_RETURN(graph, make_batch_dynamic(*graph));
    options.batch_lanes = true;
  }
  options.profile = args.flag("profile");
  EF_ASSIGN_OR_RETURN(const InferenceDevice device, device_from_args(args));
  EF_ASSIGN_OR_RETURN(const GpuBackendOptions gpu, gpu_options_from_args(args));
  if (options.profile && device != InferenceDevice::kCpu) {
    return invalid_argument("--profile times the CPU executor's kernels; use it with --device cpu");
  }
  // The CPU executor directly (its per-node profile), or the backend --device picks.
  std::optional<Executor> executor;
  std::unique_ptr<InferenceBackend> backend;
  if (device == InferenceDevice::kCpu) {
    EF_ASSIGN_OR_RETURN(executor, Executor::create(graph, options));
  } else {
    EF_ASSIGN_OR_RETURN(backend, create_inference_backend(graph, device, options, gpu));
  }
  const auto run_once = [&]() { return executor ? executor->run(inputs) : backend->run(inputs); };
  const std::string device_description =
      executor ? make_message(executor->threads(), executor->threads() == 1 ? " thread" : " threads")
               : backend->description();
  // With --interval: the next run's start on a frame clock, the caller busy `preprocess` before it
  // (with the threads woken as the daemon wakes them, InferenceBackend::prepare).
  const auto interval = std::chrono::milliseconds(args.get_int("interval"));
  const auto preprocess = std::chrono::microseconds(args.get_int("preprocess-us"));
  const bool prewake = !args.flag("no-prewake");
  auto next_frame = std::chrono::steady_clock::now();
  const auto wait_for_frame = [&] {
    if (interval.count() == 0) return;
    // A run longer than the interval drops the frames it overlapped, as the daemon's queues do.
    next_frame = std::max(next_frame + interval, std::chrono::steady_clock::now() + preprocess);
    std::this_thread::sleep_until(next_frame - preprocess);
    if (prewake) {
      if (executor) {
        executor->wake_threads(std::chrono::milliseconds(5));
      } else {
        backend->prepare();
      }
    }
    while (std::chrono::steady_clock::now() < next_frame) {
    }
  };

  for (int64_t i = 0; i < args.get_int("warmup"); ++i) {
    Result<std::vector<Tensor>> outputs = run_once();
    if (!outputs.is_ok()) return outputs.status();
  }
  const int64_t runs = args.get_int("runs");
  std::vector<double> samples_ms;
  samples_ms.reserve(static_cast<size_t>(runs));
  std::vector<std::vector<double>> node_ms(graph->nodes().size());  // per node, one sample per run
  next_frame = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < runs; ++i) {
    wait_for_frame();
    const auto start = std::chrono::steady_clock::now();
    Result<std::vector<Tensor>> outputs = run_once();
    const auto stop = std::chrono::steady_clock::now();
    if (!outputs.is_ok()) return outputs.status();
    samples_ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    if (!executor) continue;
    for (size_t n = 0; n < executor->last_profile_ms().size(); ++n)
      node_ms[n].push_back(executor->last_profile_ms()[n]);
  }
  const std::vector<OpTime> op_times =
      options.profile ? time_per_op(*graph, node_ms, executor->memory_plan(), executor->last_kernel_pairs())
                      : std::vector<OpTime>{};
  const std::vector<NodeTime> slowest =
      options.profile && executor->memory_plan() != nullptr
          ? slowest_nodes(*graph, node_ms, *executor->memory_plan(), static_cast<size_t>(args.get_int("top")),
                          executor->last_kernel_pairs())
          : std::vector<NodeTime>{};
  const LatencyStats stats = summarize_latencies(std::move(samples_ms));

  if (args.flag("json")) {
    JsonWriter json;
    json.begin_object();
    json.key("model").value(model);
    json.key("median_ms").value(stats.median_ms, 3);
    json.key("min_ms").value(stats.min_ms, 3);
    json.key("max_ms").value(stats.max_ms, 3);
    json.key("runs").value(runs);
    json.key("batch").value(batch);
    json.key("median_ms_per_image").value(stats.median_ms / static_cast<double>(batch), 3);
    json.key("interval_ms").value(args.get_int("interval"));
    if (interval.count() > 0) {
      json.key("preprocess_us").value(args.get_int("preprocess-us"));
      json.key("prewake").value(prewake);
    }
    json.key("threads").value(executor ? executor->threads() : 0);
    json.key("device").value(device_description);
    json.key("reference").value(args.flag("reference"));
    json.key("fused").value(fused);
    json.key("nodes").value(static_cast<int64_t>(graph->nodes().size()));
    if (options.profile) {
      json.key("ops").begin_object();
      for (const OpTime& op : op_times) {
        json.key(op.op).begin_object();
        json.key("nodes").value(static_cast<int64_t>(op.nodes));
        json.key("median_ms").value(op.median_ms, 3);
        if (op.flops > 0) json.key("gflops_per_s").value(op.gflops_per_s(), 2);
        json.end_object();
      }
      json.end_object();
      json.key("slowest_nodes").begin_array();
      for (const NodeTime& node : slowest) {
        json.begin_object();
        json.key("name").value(node_names(*graph, node));
        json.key("kernel").value(node.kernel);
        json.key("shapes").value(node.shapes);
        json.key("median_ms").value(node.median_ms, 4);
        if (node.flops > 0) json.key("gflops_per_s").value(node.gflops_per_s(), 2);
        json.end_object();
      }
      json.end_array();
    }
    json.end_object();
    std::cout << json.str() << "\n";
  } else {
    std::printf("%s: median %.3f ms, min %.3f ms, max %.3f ms (%lld runs after %lld warm-up, %s%s)\n", model.c_str(),
                stats.median_ms, stats.min_ms, stats.max_ms, static_cast<long long>(runs),
                static_cast<long long>(args.get_int("warmup")), device_description.c_str(),
                args.flag("reference") ? ", reference kernels" : "");
    if (interval.count() > 0) {
      std::printf("  a run every %lld ms after %lld us busy, %s\n", static_cast<long long>(interval.count()),
                  static_cast<long long>(preprocess.count()),
                  prewake ? "threads woken as that starts" : "threads not woken first");
    }
    if (batch > 1) {
      std::printf("  batch of %lld: median %.3f ms per image\n", static_cast<long long>(batch),
                  stats.median_ms / static_cast<double>(batch));
    }
    std::printf("  graph: %zu nodes, %s\n", graph->nodes().size(), fused ? "fused" : "not fused");
    for (const OpTime& op : op_times) {
      std::printf("  %-20s %4zu nodes %9.3f ms", op.op.c_str(), op.nodes, op.median_ms);
      if (op.flops > 0) std::printf(" %8.1f GFLOP/s", op.gflops_per_s());
      std::printf("\n");
    }
    if (!slowest.empty()) std::printf("  slowest nodes:\n");
    for (const NodeTime& node : slowest) {
      std::printf("  %8.4f ms %8.1f GFLOP/s  %-16s %-36s %s\n", node.median_ms, node.gflops_per_s(),
                  node.kernel.c_str(), node.shapes.c_str(), node_names(*graph, node).c_str());
    }
  }
  return Status::ok();
}

}  // namespace edgefuse::cli
