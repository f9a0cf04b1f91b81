// Throughput of the detector models in batches on several threads: one image at a time, a batch
// with every kernel split across the threads, and the same batch in lanes (whole images per
// thread, ExecutorOptions::batch_lanes), as the daemon runs a model with max-batch > 1. Runs
// alternate (bench_engines.h); times are per image. Prints a Markdown table; see bench/RESULTS.md.
//
//   bench_batch [--assets DIR] [--runs N] [--warmup N] [--threads 2] [--batch N]
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "bench/bench_engines.h"
#include "fusion/pass_manager.h"
#include "models/detector/batching.h"
#include "models/onnx/onnx_importer.h"
#include "pipeline/cli/args.h"
#include "pipeline/cli/bench_support.h"
#include "runtime/executor.h"
#include "runtime/thread_pool.h"

namespace edgefuse::bench {
namespace {

const cli::CommandSpec& bench_spec() {
  static const cli::CommandSpec spec{
      .name = "bench_batch",
      .summary =
          "edgefuse throughput per image on the detector models: one at a time, a batch split per kernel, "
          "a batch in lanes",
      .usage = "[options]",
      .options =
          {
              assets_option(),
              runs_option("50", "timed runs per variant"),
              warmup_option("5", "untimed runs per variant first"),
              thread_list_option("2"),
              {.name = "batch",
               .type = cli::OptionType::kInt,
               .value_name = "N",
               .default_value = "0",
               .description = "images per batch; 0: as many as threads",
               .min = 0,
               .max = 256},
          },
  };
  return spec;
}

Samples per_image(Samples samples, int64_t images) {
  for (double& ms : samples.ms) ms /= static_cast<double>(images);
  return samples;
}

void print_row(const std::string& model, int threads, int64_t batch, const std::vector<std::string>& cells) {
  std::printf("| %s | %d | %lld |", model.c_str(), threads, static_cast<long long>(batch));
  for (const std::string& c : cells) std::printf(" %s |", c.c_str());
  std::printf("\n");
}

void bench_model(const BenchModel& model, const std::filesystem::path& assets, const std::vector<int>& thread_counts,
                 int64_t batch_option, int64_t warmup, int64_t runs) {
  const std::string path = (assets / model.relative_path).string();
  const auto all_rows = [&](const std::string& reason) {
    for (int threads : thread_counts) {
      print_row(model.label, threads, batch_option > 0 ? batch_option : threads,
                {"n/a (" + one_line(reason) + ")", "n/a", "n/a", "n/a", "n/a"});
    }
  };
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return all_rows("model file " + path + " not found");
  Result<std::shared_ptr<Graph>> imported = import_onnx_file(path);
  if (!imported.is_ok()) return all_rows(imported.status().message());
  // As the detector runs a model with max-batch > 1: the batch made dynamic, then fused.
  Result<std::shared_ptr<Graph>> batched = make_batch_dynamic(**imported);
  if (!batched.is_ok()) return all_rows(batched.status().message());
  Result<std::vector<PassReport>> passes = optimize_graph(**batched);
  if (!passes.is_ok()) return all_rows(passes.status().message());
  Result<std::vector<Tensor>> one = cli::random_batch_inputs(**imported, 1);
  if (!one.is_ok()) return all_rows(one.status().message());

  for (int threads : thread_counts) {
    const int64_t batch = batch_option > 0 ? batch_option : threads;
    Result<std::vector<Tensor>> images = cli::random_batch_inputs(**imported, batch);
    if (!images.is_ok()) return all_rows(images.status().message());
    EdgefuseEngine single(*batched, *one, ExecutorOptions{});
    EdgefuseEngine split(*batched, *images, ExecutorOptions{});
    EdgefuseEngine lanes(*batched, *images, ExecutorOptions{.batch_lanes = true});
    Engine* const engines[] = {&single, &split, &lanes};
    const std::vector<Samples> r = measure_alternating(engines, threads, warmup, runs);
    const Samples split_ms = per_image(r[1], batch), lanes_ms = per_image(r[2], batch);
    print_row(model.label, threads, batch,
              {bench::latency_cell(r[0], 3), bench::latency_cell(split_ms, 3), bench::latency_cell(lanes_ms, 3),
               bench::median_ratio_cell(lanes_ms, r[0]), bench::median_ratio_cell(lanes_ms, split_ms)});
    std::fflush(stdout);
  }
}

int run(int argc, char** argv) {
  int exit_code = 0;
  const std::optional<cli::ParsedArgs> parsed =
      bench::parse_bench_args(bench_spec(), "bench_batch", argc, argv, exit_code);
  if (!parsed) return exit_code;
  Result<std::vector<int>> thread_counts = parse_thread_list(parsed->get("threads"));
  if (!thread_counts.is_ok()) {
    std::fprintf(stderr, "bench_batch: error: %s\n", thread_counts.status().message().c_str());
    return 1;
  }
  const std::filesystem::path assets = bench_assets_dir(*parsed, EDGEFUSE_DEFAULT_ASSETS_DIR);
  std::printf("edgefuse throughput per image; %s build, %s; %d hardware threads\n", EDGEFUSE_BUILD_TYPE,
              bench::compiler_description(), ThreadPool::hardware_threads());
  std::printf("ms per image: median [min-max] of %lld interleaved runs after %lld warm-up runs; assets %s\n\n",
              static_cast<long long>(parsed->get_int("runs")), static_cast<long long>(parsed->get_int("warmup")),
              assets.string().c_str());
  std::printf(
      "one: batch of one, kernels split across the threads; split: the batch, kernels split across the threads;\n"
      "lanes: the batch, whole images per thread (ExecutorOptions::batch_lanes)\n\n");
  std::printf("| model | threads | batch | one ms | split ms/image | lanes ms/image | lanes / one | lanes / split |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const BenchModel& model : kBenchModels) {
    bench_model(model, assets, *thread_counts, parsed->get_int("batch"), parsed->get_int("warmup"),
                parsed->get_int("runs"));
  }
  return 0;
}

}  // namespace
}  // namespace edgefuse::bench

int main(int argc, char** argv) {
  return edgefuse::bench::run(argc, argv);
}
