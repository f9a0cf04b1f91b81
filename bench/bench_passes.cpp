// What each fusion pass is worth on the real detector models: for every pass that rewrites a
// model, the model fused without that pass (FusionOptions::skipped_passes) against the model
// fully fused, and the memory plan's Conv pairs (ExecutorOptions::conv_pairs) likewise; both
// planned as the CPU executor runs them, in one process with their runs
// alternating (bench_engines.h): on these noisy VMs, medians of separate runs minutes apart drift
// by more than most passes are worth. Also the activation bytes moved and the kernels run, from
// the two plans. Prints a Markdown table; see bench/RESULTS.md.
//
//   bench_passes [--assets DIR] [--runs N] [--warmup N] [--threads 1] [--model FILE ...]
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "bench/bench_engines.h"
#include "fusion/pass_manager.h"
#include "models/onnx/onnx_importer.h"
#include "pipeline/cli/args.h"
#include "pipeline/cli/bench_support.h"
#include "runtime/executor.h"
#include "runtime/memory_plan.h"
#include "runtime/thread_pool.h"

namespace edgefuse::bench {
namespace {

const cli::CommandSpec& bench_spec() {
  static const cli::CommandSpec spec{
      .name = "bench_passes",
      .summary = "latency and bytes moved of each model fused without one pass (or Conv pair) against fully fused",
      .usage = "[options]",
      .options =
          {
              assets_option(),
              runs_option("100", "timed runs per variant"),
              warmup_option("5", "untimed runs per variant first"),
              thread_list_option("1"),
              model_option(),
          },
  };
  return spec;
}

// A graph fused with `fusion` and run with `run` (planned as the executor plans it), and what its
// plan moves and runs.
struct Variant {
  std::shared_ptr<Graph> graph;
  ExecutorOptions run;
  std::vector<PassReport> reports;
  size_t bytes_moved = 0;
  int kernels = 0;  // nodes run (pairs count once)
};

Result<Variant> fused_variant(const Graph& imported, const std::vector<Tensor>& inputs, const FusionOptions& fusion,
                              const ExecutorOptions& run = {}) {
  Variant v;
  v.graph = std::make_shared<Graph>(imported);
  v.run = run;
  EF_ASSIGN_OR_RETURN(v.reports, optimize_graph(*v.graph, fusion));
  std::vector<TensorDesc> descs;
  for (const Tensor& t : inputs) descs.push_back(t.desc());
  EF_ASSIGN_OR_RETURN(const MemoryPlan plan, plan_memory(*v.graph, descs, Executor::plan_options(run)));
  v.bytes_moved = plan.activation_bytes_moved;
  for (size_t n = 0; n < v.graph->nodes().size(); ++n) v.kernels += plan.node_skipped[n] ? 0 : 1;
  v.kernels -= plan.kernel_pairs;
  return v;
}

std::string megabytes(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", static_cast<double>(bytes) / 1e6);
  return text;
}

// One row per thread count: `without` against `with`, their runs interleaved.
void compare(const char* model, const std::string& feature, const Result<Variant>& without, const Variant& with,
             const std::vector<Tensor>& inputs, const std::vector<int>& thread_counts, int64_t warmup, int64_t runs) {
  if (!without.is_ok()) {
    std::printf("| %s | %s | n/a (%s) | | | | | |\n", model, feature.c_str(),
                one_line(without.status().message()).c_str());
    return;
  }
  EdgefuseEngine with_engine(with.graph, inputs, with.run);
  EdgefuseEngine without_engine(without->graph, inputs, without->run);
  Engine* const engines[] = {&without_engine, &with_engine};
  for (int threads : thread_counts) {
    const std::vector<Samples> r = measure_alternating(engines, threads, warmup, runs);
    std::printf("| %s | %s | %d | %d -> %d | %s -> %s | %s | %s | %s |\n", model, feature.c_str(), threads,
                without->kernels, with.kernels, megabytes(without->bytes_moved).c_str(),
                megabytes(with.bytes_moved).c_str(), latency_cell(r[0], 3).c_str(), latency_cell(r[1], 3).c_str(),
                median_ratio_cell(r[1], r[0]).c_str());
    std::fflush(stdout);
  }
}

void bench_model(const ModelToBench& model, const std::vector<int>& thread_counts, int64_t warmup, int64_t runs) {
  const std::string& path = model.path;
  const char* label = model.label.c_str();
  const auto skip_model = [&](const std::string& reason) {
    std::printf("| %s | n/a (%s) | | | | | | |\n", label, one_line(reason).c_str());
  };
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return skip_model("model file " + path + " not found");
  Result<std::shared_ptr<Graph>> imported = import_onnx_file(path);
  if (!imported.is_ok()) return skip_model(imported.status().message());
  Result<std::vector<Tensor>> inputs = cli::random_inputs(**imported);
  if (!inputs.is_ok()) return skip_model(inputs.status().message());
  Result<Variant> full = fused_variant(**imported, *inputs, FusionOptions{});
  if (!full.is_ok()) return skip_model(full.status().message());

  for (const PassReport& report : full->reports) {
    if (report.changes == 0) continue;
    FusionOptions without_pass;
    without_pass.skipped_passes = {report.pass};
    compare(label, report.pass + " (" + std::to_string(report.changes) + ")",
            fused_variant(**imported, *inputs, without_pass), *full, *inputs, thread_counts, warmup, runs);
  }
  // The memory plan's Conv pairs (conv_pair.h), the other kernel fusion.
  compare(label, "memory plan: Conv pairs",
          fused_variant(**imported, *inputs, FusionOptions{}, ExecutorOptions{.conv_pairs = false}), *full, *inputs,
          thread_counts, warmup, runs);
}

int run(int argc, char** argv) {
  int exit_code = 0;
  const std::optional<cli::ParsedArgs> parsed = parse_bench_args(bench_spec(), "bench_passes", argc, argv, exit_code);
  if (!parsed) return exit_code;
  Result<std::vector<int>> thread_counts = parse_thread_list(parsed->get("threads"));
  if (!thread_counts.is_ok()) {
    std::fprintf(stderr, "bench_passes: error: %s\n", thread_counts.status().message().c_str());
    return 1;
  }
  const std::filesystem::path assets = bench_assets_dir(*parsed, EDGEFUSE_DEFAULT_ASSETS_DIR);
  const int64_t runs = parsed->get_int("runs");
  const int64_t warmup = parsed->get_int("warmup");
  std::printf("bench_passes: %s build, %s; %d hardware threads; assets %s\n", EDGEFUSE_BUILD_TYPE,
              compiler_description(), ThreadPool::hardware_threads(), assets.string().c_str());
  std::printf("latency in ms: median [min-max] of %lld interleaved runs after %lld warm-up runs\n\n",
              static_cast<long long>(runs), static_cast<long long>(warmup));
  std::printf(
      "| model | pass (rewrites) or plan feature | threads | kernels without -> with | MB moved without -> with | "
      "without ms | "
      "with ms | with / without |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const ModelToBench& model : models_to_bench(*parsed, assets)) bench_model(model, *thread_counts, warmup, runs);
  return 0;
}

}  // namespace
}  // namespace edgefuse::bench

int main(int argc, char** argv) {
  return edgefuse::bench::run(argc, argv);
}
