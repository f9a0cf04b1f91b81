// Latency of edgefuse against OpenCV DNN on the real detector models, same random input, same
// thread count. Runs of the engines alternate (and swap order each round) so that a noisy,
// shared machine slows them alike (bench_engines.h). Prints a Markdown table; see bench/RESULTS.md.
//
//   bench_models [--assets DIR] [--runs N] [--warmup N] [--threads 1,2] [--model FILE ...]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/dnn.hpp>

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

using cli::LatencyStats;

const cli::CommandSpec& bench_spec() {
  static const cli::CommandSpec spec{
      .name = "bench_models",
      .summary = "edgefuse vs OpenCV DNN latency on the detector models, as a Markdown table",
      .usage = "[options]",
      .options =
          {
              assets_option(),
              runs_option("50", "timed runs per engine"),
              warmup_option("5", "untimed runs per engine first"),
              thread_list_option("1,2"),
              model_option(),
          },
  };
  return spec;
}

class OpenCvEngine final : public Engine {
 public:
  // `inputs` (the same tensors edgefuse runs on) must outlive the engine: the blobs view them.
  OpenCvEngine(const std::string& model_path, const Graph& graph, const std::vector<Tensor>& inputs) {
    try {
      net_ = cv::dnn::readNetFromONNX(model_path);
      net_.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
      net_.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
      for (size_t i = 0; i < inputs.size(); ++i) {
        std::vector<int> dims(inputs[i].shape().begin(), inputs[i].shape().end());
        if (inputs[i].dtype() != DType::kF32) throw std::runtime_error("non-f32 inputs are not benchmarked");
        cv::Mat blob(static_cast<int>(dims.size()), dims.data(), CV_32F, const_cast<void*>(inputs[i].raw_data()));
        // One input: OpenCV's default slot, which avoids depending on how it renames inputs.
        net_.setInput(blob, inputs.size() == 1 ? "" : graph.value(graph.inputs()[i]).name);
      }
      output_names_ = net_.getUnconnectedOutLayersNames();
    } catch (const cv::Exception& error) {
      load_error_ = "load failed: " + one_line(error.err);
    } catch (const std::exception& error) {
      load_error_ = error.what();
    }
  }

  std::string prepare(int threads) override {
    cv::setNumThreads(threads);
    return load_error_;
  }

  std::string run() override {
    try {
      std::vector<cv::Mat> outputs;
      net_.forward(outputs, output_names_);
      return "";
    } catch (const cv::Exception& error) {
      return "forward failed: " + one_line(error.err);
    }
  }

 private:
  cv::dnn::Net net_;
  std::vector<std::string> output_names_;
  std::string load_error_;
};

void print_row(const std::string& model, int threads, const std::vector<std::string>& cells) {
  std::printf("| %s | %d |", model.c_str(), threads);
  for (const std::string& c : cells) std::printf(" %s |", c.c_str());
  std::printf("\n");
}

// Memory figures from the plans (no timing): the eager baseline is the imported graph with one
// buffer per tensor and no in-place or aliasing; the fused one is the optimised graph's arena.
std::vector<std::string> memory_rows_;

std::string megabytes(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", static_cast<double>(bytes) / 1e6);
  return text;
}

std::string memory_row(const std::string& label, const Graph& eager, const Graph& fused,
                       const std::vector<Tensor>& inputs) {
  std::vector<TensorDesc> descs;
  for (const Tensor& t : inputs) descs.push_back(t.desc());
  PlanOptions baseline;
  baseline.in_place = false;
  baseline.alias_concat = false;
  Result<MemoryPlan> eager_plan = plan_memory(eager, descs, baseline);
  Result<MemoryPlan> fused_plan = plan_memory(fused, descs, Executor::plan_options(ExecutorOptions{}));  // as run
  if (!eager_plan.is_ok() || !fused_plan.is_ok()) return "| " + label + " | n/a | n/a | n/a | n/a | n/a | n/a |";
  char text[512];
  std::snprintf(text, sizeof(text), "| %s | %zu -> %zu | %s | %s | %s | %s | %.2f |", label.c_str(),
                eager.nodes().size(), fused.nodes().size(), megabytes(eager_plan->activation_bytes_moved).c_str(),
                megabytes(fused_plan->activation_bytes_moved).c_str(), megabytes(eager_plan->unplanned_bytes).c_str(),
                megabytes(fused_plan->arena_bytes).c_str(),
                static_cast<double>(fused_plan->activation_bytes_moved) /
                    static_cast<double>(eager_plan->activation_bytes_moved));
  return text;
}

void bench_model(const std::string& label, const std::string& path, const std::vector<int>& thread_counts,
                 int64_t warmup, int64_t runs) {
  auto all_rows = [&](const std::string& reason) {
    for (int threads : thread_counts) print_row(label, threads, {"n/a (" + reason + ")", "n/a", "n/a", "n/a", "n/a"});
  };
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return all_rows("model file " + path + " not found");
  Result<std::shared_ptr<Graph>> graph = import_onnx_file(path);
  if (!graph.is_ok()) return all_rows(one_line(graph.status().message()));
  Result<std::vector<Tensor>> inputs = cli::random_inputs(**graph);
  if (!inputs.is_ok()) return all_rows(one_line(inputs.status().message()));

  auto fused_graph = std::make_shared<Graph>(**graph);
  Result<std::vector<PassReport>> passes = optimize_graph(*fused_graph);
  if (!passes.is_ok()) return all_rows(one_line(passes.status().message()));

  memory_rows_.push_back(memory_row(label, **graph, *fused_graph, *inputs));

  EdgefuseEngine fused(fused_graph, *inputs, ExecutorOptions{});
  EdgefuseEngine eager(*graph, *inputs, ExecutorOptions{.plan_memory = false});
  OpenCvEngine opencv(path, **graph, *inputs);
  Engine* const engines[] = {&fused, &eager, &opencv};
  for (int threads : thread_counts) {
    const std::vector<Samples> r = measure_alternating(engines, threads, warmup, runs);
    print_row(label, threads,
              {bench::latency_cell(r[0], 2), bench::latency_cell(r[1], 2), bench::latency_cell(r[2], 2),
               bench::median_ratio_cell(r[0], r[1]), bench::median_ratio_cell(r[0], r[2])});
    std::fflush(stdout);
  }
}

int run(int argc, char** argv) {
  int exit_code = 0;
  const std::optional<cli::ParsedArgs> parsed =
      bench::parse_bench_args(bench_spec(), "bench_models", argc, argv, exit_code);
  if (!parsed) return exit_code;
  Result<std::vector<int>> thread_counts = parse_thread_list(parsed->get("threads"));
  if (!thread_counts.is_ok()) {
    std::fprintf(stderr, "bench_models: error: %s\n", thread_counts.status().message().c_str());
    return 1;
  }
  const std::filesystem::path assets = bench_assets_dir(*parsed, EDGEFUSE_DEFAULT_ASSETS_DIR);
  const int64_t runs = parsed->get_int("runs");
  const int64_t warmup = parsed->get_int("warmup");

  std::printf("edgefuse vs OpenCV DNN %s (DNN_BACKEND_OPENCV, DNN_TARGET_CPU); %s build, %s; %d hardware threads\n",
              CV_VERSION, EDGEFUSE_BUILD_TYPE, bench::compiler_description(), ThreadPool::hardware_threads());
  std::printf("latency in ms: median [min-max] of %lld interleaved runs after %lld warm-up runs; assets %s\n\n",
              static_cast<long long>(runs), static_cast<long long>(warmup), assets.string().c_str());
  std::printf("fused: graph passes + planned arena; eager: imported graph, one buffer per tensor\n\n");
  std::printf("| model | threads | fused ms | eager ms | OpenCV DNN ms | fused / eager | fused / OpenCV |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  const std::vector<ModelToBench> models = models_to_bench(*parsed, assets);
  for (const ModelToBench& model : models) bench_model(model.label, model.path, *thread_counts, warmup, runs);
  std::printf(
      "\nmemory per inference (MB = 1e6 bytes), from the plans: activation bytes moved = each kernel's\n"
      "reads + writes of activations; eager buffers = one buffer per intermediate tensor\n\n");
  std::printf(
      "| model | nodes eager -> fused | bytes moved eager | bytes moved fused | eager buffers | fused arena | "
      "moved fused / eager |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  for (const std::string& row : memory_rows_) std::printf("%s\n", row.c_str());
  return 0;
}

}  // namespace
}  // namespace edgefuse::bench

int main(int argc, char** argv) {
  return edgefuse::bench::run(argc, argv);
}
